// ingress-nginx test/e2e/settings/no_tls_redirect_locations.go, ported: a host with TLS redirects
// plain HTTP to HTTPS (ssl-redirect), until no-tls-redirect-locations names its location's path:
// then /check-no-tls answers over HTTP, and a location not named keeps redirecting.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'no-tls-redirect-locations';
const HOST = 'no-tls-redirect-locations';

test.before(async () => {
  fx = await startFixture(NS, { configmap: {} });
  const { cert, key } = await certificate([HOST]);
  fx.apply('ingress.json', [
    tlsSecret(NS, 'tls', cert, key),
    ingress(NS, 'tls', { host: HOST, tls: [{ hosts: [HOST], secretName: 'tls' }], paths: [{ path: '/check-no-tls', service: 'echo' }, { path: '/other', service: 'echo' }] }),
  ]);
  await fx.ctl.until(HOST, '/check-no-tls', (r) => r.status === 308);
});
test.after(() => fx.stop());

its.http1Only('settings/no_tls_redirect_locations.go:30', 'the redirect is from the plain-HTTP port', async (p) => {
  assert.is((await p.request(HOST, '/check-no-tls')).status, 308, 'redirected before the ConfigMap names it');
  await fx.configure({ 'no-tls-redirect-locations': '/check-no-tls' });
  const r = await p.request(HOST, '/check-no-tls');
  assert.is(r.status, 200);
  assert.ok(r.backend !== undefined, 'answered by the echo Service over HTTP');
  assert.is((await p.request(HOST, '/other')).status, 308, 'a location not named still redirects');
});

test.run();
