// The validating webhook reviews HTTPRoutes and Gateways (issue 28): `ingress-rx controller
// --enable-gateway-api --validating-webhook` against the in-process fake API server, its webhook
// thread's store fed by the real watches, AdmissionReviews sent over real HTTPS as the API server
// sends them. A tenant's route onto a host another namespace's Ingress serves, through a listener
// that does not admit it, or with a mis-shaped object is refused naming the object, the field and
// the reason; so is a backend in another namespace until its owner's ReferenceGrant exists, which
// the review sees as soon as the watch brings it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer, FakeObject } from '../support/fake-apiserver.js';
import { ingress, service } from '../support/local-harness.js';
import { NGINX_CLASS, startClusterController, WEBHOOK_CA as CA, type ClusterController } from '../support/cluster-controller.js';
import { admissionReview, type ReviewedKind } from '../support/admission-review.js';
import { waitFor } from '../support/wait.js';

const V1 = 'gateway.networking.k8s.io/v1';
const HTTPROUTE: ReviewedKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute', resource: 'httproutes' };
const GATEWAY: ReviewedKind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'Gateway', resource: 'gateways' };
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let webhookPort: number;

const route = (ns: string, name: string, hosts: string[], backend: { name: string; namespace?: string }, parent: Record<string, unknown> = {}): FakeObject => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http', ...parent }], hostnames: hosts, rules: [{ backendRefs: [{ ...backend, port: 80 }] }] },
});
const gateway = (listeners: Array<Record<string, unknown>>): FakeObject => ({ apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' }, spec: { gatewayClassName: 'rx', listeners } });
const HTTP_ALL = { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } };
const SAME = { name: 'same', port: 80, protocol: 'HTTP', hostname: 'same.test' };

const review = (kind: ReviewedKind, object: FakeObject, operation = 'CREATE') =>
  admissionReview({ port: webhookPort, ca: CA, namespace: object.metadata.namespace ?? '', object, kind, operation });

test.before(async () => {
  cluster = await startClusterController({
    webhook: true,
    objects: [
      NGINX_CLASS,
      { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
      gateway([HTTP_ALL, SAME]),
      ...[['team-a', 'web'], ['team-b', 'db'], ['team-b', 'web']].map(([ns, name]) => service(ns!, name!)),
      ingress('team-b', 'shop', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }),
      route('team-a', 'attached', ['attached.test'], { name: 'web' }),
    ],
    flags: ['--enable-gateway-api', '--disable-leader-election', '--update-status=false', '--allow-upstream-addresses=loopback'],
  });
  ({ fake, webhookPort } = cluster);
  // Until the webhook's store holds the cluster, reviews answer "retry".
  await waitFor(async () => (await review(HTTPROUTE, route('team-a', 'probe', ['probe.test'], { name: 'web' }))).allowed, { what: 'the webhook ready', timeoutMs: 20_000 });
});

test.after(() => cluster?.stop());

test('a valid HTTPRoute through our Gateway is allowed without warnings; a route of another controller\'s Gateway is not looked at', async () => {
  const ok = await review(HTTPROUTE, route('team-a', 'fine', ['fine.test'], { name: 'web' }));
  assert.equal([ok.allowed, ok.warnings ?? []], [true, []]);
  const theirs = await review(HTTPROUTE, route('team-a', 'theirs', ['bad host!'], { name: 'web' }, { name: 'envoy' }));
  assert.is(theirs.allowed, true);
});

test("attacker: a route onto a host another namespace's Ingress serves is refused, naming the route, the field and the Ingress", async () => {
  const r = await review(HTTPROUTE, route('team-a', 'grab', ['shop.test'], { name: 'web' }));
  assert.is(r.allowed, false);
  assert.is(r.status!.message, 'ingress-rx refuses HTTPRoute team-a/grab:\n- spec.hostnames: host shop.test is served by Ingress team-b/shop of another namespace, which takes precedence over HTTPRoutes on a host; not served on it');
  // The Ingress's own namespace migrating to a route: allowed, and told the Ingress still holds the host.
  const migrate = await review(HTTPROUTE, route('team-b', 'shop', ['shop.test'], { name: 'web' }));
  assert.is(migrate.allowed, true);
  assert.match(migrate.warnings?.[0] ?? '', /^spec\.hostnames: host shop\.test is served by Ingress team-b\/shop, an Ingress of this namespace/);
});

test('attacker: a listener that does not admit the namespace refuses the route; a hostile, mis-shaped object is refused naming the field', async () => {
  const r = await review(HTTPROUTE, route('team-a', 'outside', ['same.test'], { name: 'web' }, { sectionName: 'same' }));
  assert.is(r.allowed, false);
  assert.match(r.status!.message, /^ingress-rx refuses HTTPRoute team-a\/outside:\n- spec\.parentRefs\[0\]: listener infra\/gw\/same: allowedRoutes\.namespaces \(from: Same\) does not admit routes of namespace "team-a"; not attached$/);
  const hostile = route('team-a', 'hostile', ['h.test'], { name: 'web' });
  for (const [edit, why] of [
    [(o: any) => { o.spec.parentRefs = 'everything'; }, /request\.object\.spec\.parentRefs must be a list/],
    [(o: any) => { o.spec.rules[0].backendRefs[0].port = '80'; }, /request\.object\.spec\.rules\[0\]\.backendRefs\[0\]\.port must be an integer/],
    [(o: any) => { o.spec.hostnames = [null]; }, /request\.object\.spec\.hostnames\[0\] must be a string, not null/],
    [(o: any) => { o.metadata.name = 'Not/A/Name'; }, /metadata\.name "Not\/A\/Name" is not a name the API server accepts/],
    [(o: any) => { o.spec.rules[0].matches = [{ path: { type: 'PathPrefix', value: '/a\r\nX-Injected: 1' } }]; }, /^ingress-rx refuses HTTPRoute team-a\/hostile:\n- spec\.rules\[0\]\.matches\[0\]\.path\.value: /],
  ] as const) {
    const o = structuredClone(hostile);
    edit(o);
    const res = await review(HTTPROUTE, o);
    assert.is(res.allowed, false);
    assert.match(res.status!.message, why);
  }
  const grpc = await admissionReview({ port: webhookPort, ca: CA, namespace: 'team-a', object: hostile, kind: { ...HTTPROUTE, kind: 'GRPCRoute', resource: 'grpcroutes' } });
  assert.is(grpc.allowed, false);
  assert.match(grpc.status!.message, /reviews networking\.k8s\.io\/v1 Ingresses and gateway\.networking\.k8s\.io\/v1 HTTPRoutes and Gateways, not gateway\.networking\.k8s\.io\/v1 GRPCRoute/);
});

test("attacker: a backend in another namespace is refused until its owner's ReferenceGrant exists; then the route is allowed", async () => {
  const cross = route('team-a', 'cross', ['cross.test'], { name: 'db', namespace: 'team-b' });
  const before = await review(HTTPROUTE, cross);
  assert.is(before.allowed, false);
  assert.is(before.status!.message, 'ingress-rx refuses HTTPRoute team-a/cross:\n- spec.rules[0].backendRefs[0]: Service team-b/db is in another namespace and no ReferenceGrant in "team-b" allows HTTPRoutes of "team-a" to refer to it; refused; the rule answers 500');
  fake.create({
    apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'let-a', namespace: 'team-b' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }], to: [{ group: '', kind: 'Service', name: 'db' }] },
  });
  await waitFor(async () => { const r = await review(HTTPROUTE, cross); return r.allowed && (r.warnings ?? []).length === 0; }, { what: 'the grant seen by the review', timeoutMs: 10_000 });
});

test('a Gateway: a listener that cannot be served is refused; narrowing allowedRoutes names the route it detaches', async () => {
  const bad = await review(GATEWAY, gateway([HTTP_ALL, SAME, { name: 'alt', port: 443, protocol: 'HTTP' }]), 'UPDATE');
  assert.is(bad.allowed, false);
  assert.is(bad.status!.message, 'ingress-rx refuses Gateway infra/gw:\n- spec.listeners[2]: listener alt: port 443 serves TLS (--https-port): an HTTP listener cannot use it; the listener is not served');
  const narrowed = await review(GATEWAY, gateway([{ name: 'http', port: 80, protocol: 'HTTP' }, SAME]), 'UPDATE');
  assert.is(narrowed.allowed, true);
  assert.ok(narrowed.warnings?.includes('spec.listeners: HTTPRoute team-a/attached would no longer be attached: listener infra/gw/http: allowedRoutes.namespaces (from: Same) does not admit routes of namespace "team-a"'), JSON.stringify(narrowed.warnings));
  const otherClass = await review(GATEWAY, { ...gateway([{ name: 'x', port: 1, protocol: 'UDP' }]), spec: { gatewayClassName: 'envoy', listeners: [] } });
  assert.is(otherClass.allowed, true);
});

test.run();
