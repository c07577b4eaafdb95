// ingress-nginx test/e2e/annotations/forcesslredirect.go, ported: force-ssl-redirect on a host
// without TLS redirects plain HTTP to HTTPS (without the path's trailing slash, as
// preserve-trailing-slash is off); a request that came over TLS is served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { redirectPort, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'forcesslredirect.bar.com';

test.before(async () => {
  fx = await startFixture('forcesslredirect');
  await fx.applyAndWait('ingresses.json', [fx.single('forcesslredirect', HOST, { 'force-ssl-redirect': 'true' })], HOST, '/', (r) => r.status === 308);
});
test.after(() => fx.stop());

its.both('annotations/forcesslredirect.go:34', async (p) => {
  if (p.protocol === 'HTTP/1.1') {
    const r = await p.request(HOST, '/');
    assert.is(r.status, 308);
    assert.is(r.headers.location, `https://${HOST}${redirectPort(fx)}`);
  }
  // HTTP/2 runs over TLS: the request is already secure and is served.
  const secure = await p.request(HOST, '/', { https: true });
  assert.is(secure.status, 200);
  assert.ok(secure.backend?.startsWith('echo-'));
});

test.run();
