// test/e2e/fidelity-proxy-details.test.ts again with --enable-dynamic-routes=false: every answer
// (the redirects NGINX writes under the ConfigMap's relative-redirects among them) must be the
// same whether a host is served by the Lua router (the default) or by its server block.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./fidelity-proxy-details.test.js');
