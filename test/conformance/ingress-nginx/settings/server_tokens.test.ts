// ingress-nginx test/e2e/settings/server_tokens.go, ported: with server-tokens false (the
// default) an answer has no Server header at all; true, NGINX names itself and its version.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'server-tokens.test';

test.before(async () => {
  fx = await startFixture('server-tokens', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('server-tokens', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/server_tokens.go:38', async (p) => {
  await fx.configure({ 'server-tokens': 'false' });
  const r = await p.request(HOST, '/');
  assert.is(r.status, 200);
  assert.is(r.headers.server, undefined, 'no Server header from NGINX (nor the upstream\'s)');
  const missing = await p.request('unknown.server-tokens.test', '/');
  assert.is(missing.status, 404);
  assert.is(missing.headers.server, undefined, 'nor on the default server\'s answer');
});

its.both('settings/server_tokens.go:50', async (p) => {
  await fx.configure({ 'server-tokens': 'true' });
  const r = await p.request(HOST, '/');
  assert.is(r.status, 200);
  assert.match(String(r.headers.server), /^nginx\/\d+\.\d+\.\d+$/, 'NGINX and its version');
});

test.run();
