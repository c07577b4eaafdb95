// test/e2e/local-live.test.ts again with --enable-dynamic-routes=false: every answer must be the same
// whether a host is served by the Lua router (the default) or by its server block
// (docs/dynamic-routes.md).
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./local-live.test.js');
