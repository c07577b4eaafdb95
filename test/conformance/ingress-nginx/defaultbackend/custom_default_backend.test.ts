// ingress-nginx test/e2e/defaultbackend/custom_default_backend.go, ported: with
// --default-backend-service naming the echo Service, a request no Ingress serves is its.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('custom-default-backend', { args: ['--default-backend-service', 'custom-default-backend/echo'] });
  await fx.ctl.until('127.0.0.1', '/', (r) => r.backend !== undefined, { what: 'the default server answered by the echo Service' });
});
test.after(async () => {
  await fx.stop();
});

its.both('defaultbackend/custom_default_backend.go:36', async (p) => {
  for (const host of ['127.0.0.1', 'unknown.foo.com']) {
    const r = await p.request(host, '/');
    assert.is(r.status, 200, host);
    assert.ok(r.backend?.startsWith('echo-'), `${host}: the echo answered, not ${r.backend}`);
  }
});

test.run();
