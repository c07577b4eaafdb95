// ingress-nginx test/e2e/settings/limit_rate.go, ported: limit-rate (KB/s) slows every answer
// to a client: 4000 bytes at 1 KB/s take at least two seconds (NGINX lets a second's worth go
// per started second). A change of the key is applied (90 KB/s, read in the running
// configuration: the faster answer's time proves nothing on a loaded machine).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'limit-rate.test';

test.before(async () => {
  fx = await startFixture('limit-rate', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('limit-rate', HOST, { 'proxy-buffering': 'on' })], HOST);
});
test.after(() => fx.stop());

its.both('settings/limit_rate.go:36', async (p) => {
  await fx.configure({ 'limit-rate': '1' });
  const started = Date.now();
  const r = await p.request(HOST, '/__bytes/4000');
  const tookMs = Date.now() - started;
  assert.is(r.status, 200);
  assert.is(r.bytes.length, 4000);
  assert.ok(tookMs >= 1500, `4000 bytes at 1 KB/s took ${tookMs} ms`);
  await fx.configure({ 'limit-rate': '90' });
  assert.match((await fx.ctl.control('/nginx.conf')).body, /\n\s*limit_rate 90k;/);
  assert.is((await p.request(HOST, '/__bytes/4000')).status, 200);
});

test.run();
