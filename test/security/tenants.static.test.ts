// test/security/tenants.test.ts again with --enable-dynamic-routes=false: each attack must fail the
// same way whether the victim's host is served by the Lua router (the default) or by its server
// block (docs/dynamic-routes.md).
process.env.IRX_TEST_DYNAMIC_ROUTES = '0';
await import('./tenants.test.js');
