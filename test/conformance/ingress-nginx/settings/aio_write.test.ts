// ingress-nginx test/e2e/settings/aio_write.go, ported. aio_write makes NGINX write temporary
// files (buffered bodies) through its thread pool: the bytes a client sends or receives are the
// same either way, so the port reads the configuration NGINX runs after each ConfigMap state, and
// a request shows NGINX serves with it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'aio-write.test';
const WHY = 'how NGINX writes temporary files, which no request can observe';

test.before(async () => {
  fx = await startFixture('aio-write', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('aio-write', HOST)], HOST);
});
test.after(() => fx.stop());

/** The running configuration once `data` is the ConfigMap, after a request was served with it. */
async function runningWith(data: Record<string, string>): Promise<string> {
  await fx.configure(data);
  await fx.ctl.until(HOST, '/', (r) => r.status === 200);
  return (await fx.ctl.control('/nginx.conf')).body;
}

its.noClient('settings/aio_write.go:30', WHY, async () => {
  assert.match(await runningWith({}), /\n\s*aio_write on;/);
});

its.noClient('settings/aio_write.go:37', WHY, async () => {
  assert.match(await runningWith({ 'enable-aio-write': 'true' }), /\n\s*aio_write on;/);
});

its.noClient('settings/aio_write.go:46', WHY, async () => {
  assert.not.match(await runningWith({ 'enable-aio-write': 'false' }), /aio_write/);
});

test.run();
