// ingress-nginx test/e2e/annotations/xforwardedprefix.go, ported: the X-Forwarded-Prefix header
// the upstream receives with a rewrite-target.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('xforwardedprefix');
  fx.apply('ingresses.json', [
    fx.single('xfp', 'xfp.baz.com', { 'x-forwarded-prefix': '/test/value', 'rewrite-target': '/foo' }),
    fx.single('noxfp', 'noxfp.baz.com', { 'x-forwarded-prefix': '', 'rewrite-target': '/foo' }),
  ]);
  await Promise.all(['xfp.baz.com', 'noxfp.baz.com'].map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

its.both('annotations/xforwardedprefix.go:35', async (p) => {
  const r = await p.request('xfp.baz.com', '/');
  assert.is(r.status, 200);
  assert.is(r.json?.path, '/foo');
  assert.is(upstreamHeaders(r)['x-forwarded-prefix'], '/test/value');
});

its.both('annotations/xforwardedprefix.go:57', async (p) => {
  const r = await p.request('noxfp.baz.com', '/');
  assert.is(r.status, 200);
  assert.is(r.json?.path, '/foo', 'the rewrite still applies');
  assert.is(upstreamHeaders(r)['x-forwarded-prefix'], undefined);
});

test.run();
