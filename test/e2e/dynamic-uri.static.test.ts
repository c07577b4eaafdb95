// test/e2e/dynamic-uri.test.ts again with --enable-dynamic-routes=false: every answer must be the
// same whether a host is served by the Lua router (the default) or by its server block.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./dynamic-uri.test.js');
