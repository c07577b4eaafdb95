// ingress-nginx test/e2e/annotations/ipallowlist.go, ported. The e2e test reads `allow`/`deny all`
// in nginx.conf; the port asks NGINX which client addresses pass, with the ConfigMap trusting
// X-Forwarded-For so a request can name the client address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'ipallowlist.foo.com';

test.before(async () => {
  fx = await startFixture('ipallowlist', { configmap: { 'use-forwarded-headers': 'true' } });
  await fx.applyAndWait('ingresses.json', [fx.single('allow', HOST, { 'allowlist-source-range': '18.0.0.0/8, 56.0.0.0/8' })], HOST, '/', (r) => r.status === 403);
});
test.after(() => fx.stop());

its.both('annotations/ipallowlist.go:34', async (p) => {
  const from = async (address: string) => (await p.request(HOST, '/', { headers: { 'X-Forwarded-For': address } })).status;
  assert.is(await from('18.2.3.4'), 200);
  assert.is(await from('56.0.0.1'), 200);
  assert.is(await from('10.0.0.1'), 403, 'deny all others');
  assert.is((await p.request(HOST, '/')).status, 403, 'the loopback client itself is not in the list');
});

test.run();
