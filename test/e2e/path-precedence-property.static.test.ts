// test/e2e/path-precedence-property.test.ts again with --enable-dynamic-routes=false: every
// shared host is a server block of nginx.conf instead of the Lua router's.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./path-precedence-property.test.js');
