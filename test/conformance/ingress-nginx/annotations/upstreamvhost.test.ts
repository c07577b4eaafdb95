// ingress-nginx test/e2e/annotations/upstreamvhost.go, ported: where the e2e test reads the
// proxy_set_header Host line, the echo upstream says which Host it was sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('upstreamvhost');
  await fx.applyAndWait('ingresses.json', [fx.single('upstreamvhost', 'upstreamvhost.foo.com', { 'upstream-vhost': 'upstreamvhost.bar.com' })], 'upstreamvhost.foo.com');
});
test.after(async () => {
  await fx.stop();
});

its.both('annotations/upstreamvhost.go:34', async (p) => {
  const r = await p.request('upstreamvhost.foo.com', '/');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).host, 'upstreamvhost.bar.com');
});

test.run();
