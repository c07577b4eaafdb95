// ingress-nginx test/e2e/annotations/ipdenylist.go, ported: which client addresses a denylist
// (and a denylist with an allowlist) lets through. As in the e2e test, the ConfigMap trusts
// X-Forwarded-For, so a request can name the client address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('ipdenylist', { configmap: { 'use-forwarded-headers': 'true' } });
  fx.apply('ingresses.json', [
    fx.single('deny', 'deny.ipdenylist.test', { 'denylist-source-range': '18.0.0.0/8, 56.0.0.1' }),
    fx.single('both', 'both.ipdenylist.test', { 'denylist-source-range': '18.1.0.0/16, 56.0.0.0/8', 'whitelist-source-range': '18.0.0.0/8, 55.0.0.0/8' }),
  ]);
  await fx.ctl.until('deny.ipdenylist.test', '/', (r) => r.backend !== undefined, { what: 'deny.ipdenylist.test served' });
  await fx.ctl.until('both.ipdenylist.test', '/', (r) => r.status === 403, { what: 'both.ipdenylist.test applied' });
});
test.after(() => fx.stop());

const from = async (p: ProtocolClient, host: string, address: string) => (await p.request(host, '/', { headers: { 'X-Forwarded-For': address } })).status;

its.both('annotations/ipdenylist.go:35', async (p) => {
  assert.is(await from(p, 'deny.ipdenylist.test', '18.0.0.1'), 403, 'a denied range');
  assert.is(await from(p, 'deny.ipdenylist.test', '56.0.0.1'), 403, 'a denied address');
  assert.is(await from(p, 'deny.ipdenylist.test', '56.0.0.2'), 200, 'any other address');
});

its.both('annotations/ipdenylist.go:86', async (p) => {
  assert.is(await from(p, 'both.ipdenylist.test', '18.1.0.1'), 403, 'denied inside an allowed range: the denylist first');
  assert.is(await from(p, 'both.ipdenylist.test', '10.10.10.10'), 403, 'in neither list');
  assert.is(await from(p, 'both.ipdenylist.test', '18.4.0.1'), 200, 'an allowed range');
  assert.is(await from(p, 'both.ipdenylist.test', '55.0.0.1'), 200, 'the other allowed range');
});

test.run();
