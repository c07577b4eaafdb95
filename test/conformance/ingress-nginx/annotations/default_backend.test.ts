// ingress-nginx test/e2e/annotations/default_backend.go, ported: an Ingress whose Service does not
// exist, with the default-backend annotation naming the echo Service. What the e2e test reads in
// the echo's body (the X-Code, X-Ingress-Name, X-Service-Name and X-Request-ID headers it
// received) is read from the echo's JSON here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('default-backend');
  await fx.applyAndWait('ingresses.json', [fx.single('default-backend', 'default-backend.foo.com', { 'default-backend': 'echo' }, { svc: 'invalid' })], 'default-backend.foo.com');
});
test.after(async () => {
  await fx.stop();
});

its.both('annotations/default_backend.go:37', async (p) => {
  const r = await p.request('default-backend.foo.com', '/alma/armud', { headers: { 'x-request-id': 'something-unique' } });
  assert.is(r.status, 200);
  assert.ok(r.backend?.startsWith('echo-'), `the annotation's Service answered: ${r.backend}`);
  const h = upstreamHeaders(r);
  assert.equal([h['x-code'], h['x-ingress-name'], h['x-service-name'], h['x-request-id']], ['503', 'default-backend', 'invalid', 'something-unique']);
});

test.run();
