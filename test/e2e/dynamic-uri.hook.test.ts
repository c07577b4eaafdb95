// test/e2e/dynamic-uri.test.ts again with a host-less Ingress path in the default server: the Lua
// router is then asked in the server rewrite phase and serves from its own internal location, and
// redirects, rewrites and upstream headers must answer the same (src/render/dynamic-routes.ts, routerPlacement).
process.env.IRX_TEST_ROUTER_HOOK = '1';
await import('./dynamic-uri.test.js');
