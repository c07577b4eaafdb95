// ingress-nginx test/e2e/settings/configmap_change.go, ported: a ConfigMap update reloads NGINX.
// The port shows each update take effect: whitelist-source-range 1.1.1.1 refuses our loopback
// client, then error-log-level debug changes the configuration's checksum, NGINX runs it, and the
// controller counts a successful reload (ingress-nginx's nginx_ingress_controller_success).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'configmap-change.test';

test.before(async () => {
  fx = await startFixture('configmap-change', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('configmap-change', HOST)], HOST);
});
test.after(() => fx.stop());

const runningChecksum = async () => (await fx.ctl.control('/configuration-checksum')).body;

its.both('settings/configmap_change.go:36', async (p) => {
  await fx.configure({});
  assert.is((await p.request(HOST, '/')).status, 200);

  await fx.configure({ 'whitelist-source-range': '1.1.1.1' });
  assert.is((await p.request(HOST, '/')).status, 403, 'only 1.1.1.1 is allowed');
  const checksum = await runningChecksum();
  const reloads = await fx.ctl.metric('nginx_ingress_controller_success');

  await fx.configure({ 'whitelist-source-range': '1.1.1.1', 'error-log-level': 'debug' });
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.match(conf, /\nerror_log \S+ debug;/);
  assert.is.not(await runningChecksum(), checksum, 'NGINX runs a configuration with another checksum');
  assert.ok(await fx.ctl.metric('nginx_ingress_controller_success') > reloads, 'a successful reload was counted');
  assert.is((await p.request(HOST, '/')).status, 403, 'the allowlist still applies');
});

test.run();
