// ingress-nginx test/e2e/servicebackend/{service_backend,service_nil_backend}.go, ported on one
// controller: a path whose Service does not exist and one whose Service has no ready endpoint
// answer 503; a path whose backend is a resource (no Service) answers 404 while a valid host
// beside it is served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('service-backend');
  const resourceBackend = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'nilbackend.svc.com', namespace: fx.ns },
    spec: {
      rules: [{
        host: 'nilbackend.svc.com',
        http: { paths: [{ path: '/', pathType: 'Prefix', backend: { resource: { apiGroup: 'otherobj.testingress.com', kind: 'Anything', name: 'mytest' } } }] },
      }],
    },
  };
  fx.apply('ingresses.json', [
    fx.single('nonexistent.svc.com', 'nonexistent.svc.com', {}, { svc: 'nonexistent-svc' }),
    // The Service exists; its only endpoint is not ready.
    service(fx.ns, 'unavailable-svc'), ...slices(fx.ns, 'unavailable-svc', [fx.echo[0]!], { ready: false }),
    fx.single('unavailable.svc.com', 'unavailable.svc.com', {}, { svc: 'unavailable-svc' }),
    resourceBackend,
    fx.single('valid.svc.com', 'valid.svc.com'),
  ]);
  await Promise.all([
    fx.ctl.until('valid.svc.com', '/', (r) => r.backend !== undefined, { what: 'valid.svc.com served' }),
    fx.ctl.until('nonexistent.svc.com', '/', (r) => r.status === 503, { what: 'nonexistent.svc.com served' }),
    fx.ctl.until('unavailable.svc.com', '/', (r) => r.status === 503, { what: 'unavailable.svc.com served' }),
  ]);
});
test.after(async () => {
  await fx.stop();
});

its.both('servicebackend/service_backend.go:37', async (p) => {
  assert.is((await p.request('nonexistent.svc.com', '/')).status, 503);
});

its.both('servicebackend/service_backend.go:55', async (p) => {
  const r = await p.request('unavailable.svc.com', '/');
  assert.is(r.status, 503);
  assert.is(r.backend, undefined, 'the not-ready endpoint is not asked');
});

its.both('servicebackend/service_nil_backend.go:38', async (p) => {
  assert.is((await p.request('valid.svc.com', '/')).status, 200);
  const r = await p.request('nilbackend.svc.com', '/');
  assert.is(r.status, 404);
  assert.is(r.backend, undefined);
});

test.run();
