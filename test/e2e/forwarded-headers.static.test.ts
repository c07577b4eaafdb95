// test/e2e/forwarded-headers.test.ts again with --enable-dynamic-routes=false: what ingress-nginx's
// Lua derives per request is the same whether a host is served by the Lua router or by its server
// block.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./forwarded-headers.test.js');
