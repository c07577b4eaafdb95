// test/e2e/fidelity-configmap.test.ts again with --enable-dynamic-routes=false: the ConfigMap's
// defaults (its source ranges judged after real-IP and PROXY-protocol handling among them) must
// answer the same whether a host is served by the Lua router or by its server block.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./fidelity-configmap.test.js');
