// test/e2e/budgets-namespace.test.ts again with --enable-dynamic-routes=false: every host a server
// block, so the bytes that count are the namespace's locations in nginx.conf.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./budgets-namespace.test.js');
