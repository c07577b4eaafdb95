// ingress-nginx test/e2e/annotations/preservetrailingslash.go, ported: the HTTPS redirect of a
// TLS host keeps the path's trailing slash with preserve-trailing-slash; a request that came over
// TLS is served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingress, tlsSecret } from '../../../support/local-harness.js';
import { annotations, certificate, redirectPort, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitForSteady } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'preservetrailingslash';
const HOST = 'forcesslredirect.bar.com';

test.before(async () => {
  fx = await startFixture(NS);
  const { cert, key } = await certificate([HOST]);
  await fx.applyAndWait('ingresses.json', [
    tlsSecret(NS, HOST, cert, key),
    ingress(NS, 'preserve', {
      host: HOST, annotations: annotations({ 'ssl-redirect': 'true', 'preserve-trailing-slash': 'true' }),
      tls: [{ hosts: [HOST], secretName: HOST }], paths: [{ path: '/', service: 'echo' }],
    }),
  ], HOST, '/', (r) => r.status === 308);
  // Which hosts hold a certificate (what the redirect needs) each worker learns on its own timer.
  await waitForSteady(async () => (await fx.ctl.request(HOST, '/')).status === 308, { what: 'the redirect from every worker' });
});
test.after(() => fx.stop());

its.both('annotations/preservetrailingslash.go:34', async (p) => {
  if (p.protocol === 'HTTP/1.1') {
    const r = await p.request(HOST, '/');
    assert.is(r.status, 308);
    assert.is(r.headers.location, `https://${HOST}${redirectPort(fx)}/`);
  }
  const secure = await p.request(HOST, '/', { https: true });
  assert.is(secure.status, 200);
  assert.ok(secure.backend?.startsWith('echo-'));
});

test.run();
