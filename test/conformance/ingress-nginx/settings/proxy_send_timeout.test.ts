// ingress-nginx test/e2e/settings/proxy_send_timeout.go, ported: proxy-send-timeout bounds the
// wait between two writes of a request to the upstream. Provoking it needs an upstream that
// stops reading a body larger than the kernel's socket buffers, so the port reads the
// configuration NGINX runs, after a request shows NGINX serves with it. A value that is not a
// number of seconds is refused with a warning naming the key, and the default (60s) stays.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'proxy-send-timeout.test';

test.before(async () => {
  fx = await startFixture('proxy-send-timeout', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('proxy-send-timeout', HOST)], HOST);
});
test.after(() => fx.stop());

const conf = async () => (await fx.ctl.control('/nginx.conf')).body;

its.both('settings/proxy_send_timeout.go:37', async (p) => {
  await fx.configure({ 'proxy-send-timeout': '20' });
  assert.is((await p.request(HOST, '/', { method: 'POST', body: 'x'.repeat(1000) })).status, 200);
  assert.match(await conf(), /\n\s*proxy_send_timeout 20s;/);
});

its.both('settings/proxy_send_timeout.go:53', async (p) => {
  await fx.configure({ 'proxy-send-timeout': '20k' });
  await fx.warned((w) => w.includes(`data["proxy-send-timeout"]: "20k" is not an integer; default "60" kept`), 'the refused value is named, and the default kept');
  assert.is((await p.request(HOST, '/', { method: 'POST', body: 'x'.repeat(1000) })).status, 200);
  const c = await conf();
  assert.not.match(c, /proxy_send_timeout 20ks?;/);
  assert.match(c, /\n\s*proxy_send_timeout 60s;/);
});

test.run();
