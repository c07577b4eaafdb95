// test/e2e/sni-precedence.test.ts again with --enable-dynamic-routes=false (every host a server
// block) and --host-ownership: the strict mode does not change who owns a name under a wildcard.
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
process.env.IRX_TEST_SNI_HOST_OWNERSHIP = '1';
await import('./sni-precedence.test.js');
