// ingress-nginx test/e2e/settings/reuse-port.go, ported: reuse-port (on by default) puts
// `reuseport` on the listeners, so each worker has its own accept queue; a request cannot tell,
// so the port reads the configuration NGINX runs, after a request shows it serves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'reuse-port.test';
const WHY = 'how the listening sockets are shared between workers, which no request can observe';

test.before(async () => {
  fx = await startFixture('reuse-port', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('reuse-port', HOST)], HOST);
});
test.after(() => fx.stop());

async function listens(): Promise<string[]> {
  assert.is((await fx.ctl.request(HOST, '/')).status, 200);
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  return [...conf.matchAll(new RegExp(`\\blisten [^;]*:${fx.ctl.ports.http}\\b[^;]*;`, 'g'))].map((m) => m[0]);
}

its.noClient('settings/reuse-port.go:38', WHY, async () => {
  await fx.configure({});
  const l = await listens();
  assert.ok(l.length > 0 && l.every((x) => x.includes(' reuseport')), l.join('\n'));
});

its.noClient('settings/reuse-port.go:44', WHY, async () => {
  await fx.configure({ 'reuse-port': 'false' });
  assert.not.match((await fx.ctl.control('/nginx.conf')).body, /reuseport/);
  assert.is((await fx.ctl.request(HOST, '/')).status, 200);
});

its.noClient('settings/reuse-port.go:52', WHY, async () => {
  await fx.configure({ 'reuse-port': 'true' });
  const l = await listens();
  assert.ok(l.length > 0 && l.every((x) => x.includes(' reuseport')), l.join('\n'));
});

test.run();
