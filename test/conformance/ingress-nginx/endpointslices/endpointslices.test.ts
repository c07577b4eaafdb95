// ingress-nginx test/e2e/endpointslices/{longname,topology}.go, ported on one controller: a
// Service whose name has the 63 characters a DNS label allows is served; a Service whose
// EndpointSlices carry zone hints (topology-mode auto) is served by all its endpoints, which is
// what ingress-nginx does while it knows no zone of its own (its e2e cluster's node has no zone
// label, and the It accepts both endpoints then). ingress-rx reads no hints at all
// (--enable-topology-aware-routing is refused, docs/flags.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'endpointslices';
const LONG = 'long-name-foobar-foobar-foobar-foobar-foobar-bar-foo-bar-foobuz';

test.before(async () => {
  fx = await startFixture(NS);
  const hinted = slices(NS, 'topology', [...fx.echo]).map((s, i) => ({
    ...s, endpoints: s.endpoints.map((e) => ({ ...e, zone: `zone-${i}`, hints: { forZones: [{ name: `zone-${i}` }] } })),
  }));
  fx.apply('objects.json', [
    ...fx.echoService(LONG), fx.single('longsvcname', 'longsvcname.foo.com', {}, { svc: LONG }),
    { ...service(NS, 'topology'), metadata: { name: 'topology', namespace: NS, annotations: { 'service.kubernetes.io/topology-mode': 'auto' } } },
    ...hinted, fx.single('topology', 'topology-svc.foo.com', {}, { svc: 'topology' }),
  ]);
  await Promise.all(['longsvcname.foo.com', 'topology-svc.foo.com'].map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

its.both('endpointslices/longname.go:38', async (p) => {
  assert.equal(LONG.length, 63);
  const r = await p.request('longsvcname.foo.com', '/');
  assert.is(r.status, 200);
  assert.ok(r.backend?.startsWith('echo-'));
});

its.both('endpointslices/topology.go:42', async (p) => {
  assert.is((await p.request('topology-svc.foo.com', '/')).status, 200);
  const backends = JSON.parse((await fx.ctl.control('/configuration/backends')).body) as Array<{ name: string; endpoints: unknown[] }>;
  assert.is(backends.find((b) => b.name === `${NS}-topology-80`)?.endpoints.length, 2);
});

test.run();
