// ingress-nginx test/e2e/settings/proxy_connect_timeout.go, ported: proxy-connect-timeout bounds
// the TCP handshake with the upstream. On loopback a handshake completes or is refused at once,
// so no request can reach the timeout: the port reads the configuration NGINX runs, after a
// request shows NGINX serves with it. A value that is not a number of seconds is refused with a
// warning naming the key, and the default (5s) stays.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'proxy-connect-timeout.test';

test.before(async () => {
  fx = await startFixture('proxy-connect-timeout', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('proxy-connect-timeout', HOST)], HOST);
});
test.after(() => fx.stop());

const conf = async () => (await fx.ctl.control('/nginx.conf')).body;

its.both('settings/proxy_connect_timeout.go:37', async (p) => {
  await fx.configure({ 'proxy-connect-timeout': '50' });
  assert.is((await p.request(HOST, '/')).status, 200);
  assert.match(await conf(), /\n\s*proxy_connect_timeout 50s;/);
});

its.both('settings/proxy_connect_timeout.go:53', async (p) => {
  await fx.configure({ 'proxy-connect-timeout': '50k' });
  await fx.warned((w) => w.includes(`data["proxy-connect-timeout"]: "50k" is not an integer; default "5" kept`), 'the refused value is named, and the default kept');
  assert.is((await p.request(HOST, '/')).status, 200);
  const c = await conf();
  assert.not.match(c, /proxy_connect_timeout 50ks?;/);
  assert.match(c, /\n\s*proxy_connect_timeout 5s;/);
});

test.run();
