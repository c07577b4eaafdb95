// test/e2e/budgets.test.ts again with --enable-dynamic-routes=false: every host a server block, so
// the payload that fills is the backends and the paths are NGINX locations.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./budgets.test.js');
