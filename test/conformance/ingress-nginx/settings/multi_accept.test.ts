// ingress-nginx test/e2e/settings/multi_accept.go, ported: enable-multi-accept (on by default)
// is NGINX's multi_accept, how many connections a worker takes per wake-up, which no request can
// tell apart: the port reads the configuration NGINX runs, after a request shows it serves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'multi-accept.test';
const WHY = 'how a worker accepts connections, which no request can observe';

test.before(async () => {
  fx = await startFixture('multi-accept', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('multi-accept', HOST)], HOST);
});
test.after(() => fx.stop());

async function runs(directive: string): Promise<void> {
  assert.is((await fx.ctl.request(HOST, '/')).status, 200);
  assert.match((await fx.ctl.control('/nginx.conf')).body, new RegExp(`\\n\\s*${directive}`));
}

its.noClient('settings/multi_accept.go:31', WHY, async () => {
  await fx.configure({});
  await runs('multi_accept on;');
});

its.noClient('settings/multi_accept.go:39', WHY, async () => {
  await fx.configure({ 'enable-multi-accept': 'true' });
  await runs('multi_accept on;');
});

its.noClient('settings/multi_accept.go:49', WHY, async () => {
  await fx.configure({ 'enable-multi-accept': 'false' });
  await runs('multi_accept off;');
});

test.run();
