// test/e2e/client-behaviours.test.ts again with --enable-dynamic-routes=false: every host a server block.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./client-behaviours.test.js');
