// ingress-nginx test/e2e/settings/custom_header.go, ported: add-headers names a ConfigMap whose
// entries NGINX adds to every answer. Each It names its own ConfigMap from the main one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configMap, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'custom-header.test';
const NS = 'custom-header';

test.before(async () => {
  fx = await startFixture(NS, {
    configmap: {},
    files: {
      'headers.json': [
        configMap(NS, 'add-headers-configmap', { 'X-A-Custom-Header': 'customHeaderValue' }),
        configMap(NS, 'add-headers-configmap-two', { 'X-First': 'Prepare for trouble!', 'X-Second': 'And make it double!' }),
      ],
    },
  });
  await fx.applyAndWait('ingress.json', [fx.single('custom-header', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/custom_header.go:40', async (p) => {
  await fx.configure({ 'add-headers': `${NS}/add-headers-configmap` });
  const r = await p.until(HOST, '/', (x) => x.headers['x-a-custom-header'] !== undefined);
  assert.is(r.status, 200);
  assert.is(r.headers['x-a-custom-header'], 'customHeaderValue');
});

its.both('settings/custom_header.go:65', async (p) => {
  await fx.configure({ 'add-headers': `${NS}/add-headers-configmap-two` });
  const r = await p.until(HOST, '/', (x) => x.headers['x-first'] !== undefined);
  assert.is(r.status, 200);
  assert.is(r.headers['x-first'], 'Prepare for trouble!');
  assert.is(r.headers['x-second'], 'And make it double!');
  assert.is(r.headers['x-a-custom-header'], undefined, 'the headers of the ConfigMap named before are gone');
});

test.run();
