// ingress-nginx test/e2e/annotations/approot.go, ported: the redirect NGINX answers for `/`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'approot.bar.com';

test.before(async () => {
  fx = await startFixture('approot');
  await fx.applyAndWait('ingresses.json', [fx.single('approot', HOST, { 'app-root': '/foo' })], HOST, '/', (r) => r.status === 302);
});
test.after(() => fx.stop());

its.both('annotations/approot.go:35', async (p) => {
  const r = await p.request(HOST, '/');
  assert.is(r.status, 302);
  // The scheme is the request's: HTTP/2 clients speak TLS here.
  assert.is(r.headers.location, `${p.protocol === 'HTTP/2' ? 'https' : 'http'}://${HOST}/foo`);
  // Only `/` is redirected; the app's own paths are served.
  assert.ok((await p.request(HOST, '/foo')).backend?.startsWith('echo-'));
});

test.run();
