// test/e2e/dynamic-routes.test.ts again with a host-less Ingress path in the default server: the
// router is then asked in the server rewrite phase, before the default server's own locations,
// and every answer must be the same (src/render/dynamic-routes.ts, routerPlacement).
process.env.IRX_TEST_ROUTER_HOOK = '1';
await import('./dynamic-routes.test.js');
