// test/e2e/path-precedence.test.ts again with --enable-dynamic-routes=false: the shared host is a
// server block of nginx.conf instead of the Lua router's, and the same rule holds.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./path-precedence.test.js');
