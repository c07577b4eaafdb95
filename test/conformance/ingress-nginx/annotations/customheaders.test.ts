// ingress-nginx test/e2e/annotations/customheaders.go, ported: response headers from a ConfigMap
// the annotation names, allowed by global-allowed-response-headers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configMap, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('customheaders', { configmap: { 'global-allowed-response-headers': 'My-Custom-Header,My-Custom-Header-Dollar' } });
  fx.apply('ingresses.json', [
    configMap(fx.ns, 'custom-headers', { 'My-Custom-Header': '42', 'My-Custom-Header-Dollar': '$remote_addr' }),
    fx.single('plain', 'plain.custom-headers.test'),
    fx.single('missing', 'missing.custom-headers.test', { 'custom-headers': `${fx.ns}/absent` }),
    fx.single('set', 'set.custom-headers.test', { 'custom-headers': `${fx.ns}/custom-headers` }),
  ]);
  await Promise.all([
    fx.ctl.until('plain.custom-headers.test', '/', (r) => r.backend !== undefined, { what: 'plain served' }),
    fx.ctl.until('missing.custom-headers.test', '/', (r) => r.status === 503, { what: 'missing denied' }),
    fx.ctl.until('set.custom-headers.test', '/', (r) => r.headers['my-custom-header'] === '42', { what: 'set served' }),
  ]);
});
test.after(() => fx.stop());

its.both('annotations/customheaders.go:40', async (p) => {
  const r = await p.request('plain.custom-headers.test', '/');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).host, 'plain.custom-headers.test');
});

its.both('annotations/customheaders.go:57', async (p) => {
  const r = await p.request('missing.custom-headers.test', '/');
  assert.is(r.status, 503);
  assert.match(r.body, '503 Service Temporarily Unavailable');
});

its.both('annotations/customheaders.go:78', async (p) => {
  const r = await p.request('set.custom-headers.test', '/');
  assert.is(r.status, 200);
  assert.is(r.headers['my-custom-header'], '42');
  // The value is a literal: `$` is not a variable there.
  assert.is(r.headers['my-custom-header-dollar'], '$remote_addr');
});

test.run();
