// The webhook's review of HTTPRoutes and Gateways without the HTTPS server: the candidate takes its
// stored version's place among the store's Gateway API objects, the real model is built, and what
// the controller would set aside is refused or warned about, naming the object, the field and
// the reason. A hostile tenant's route onto another namespace's host, through a listener that
// does not admit it, or to another namespace's Service or Secret without the owner's ReferenceGrant
// is refused; an object not created yet (a Service, a Secret) only warns.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Gateway, GatewayClass, GatewayListener, HTTPRoute, HTTPRouteRule, Namespace, ReferenceGrant } from '../../../src/store/kube-types.js';
import { createReviewer, type ReviewResult } from '../../../src/admission/review.js';
import { WARN_RULES } from '../../../src/admission/verdict.js';
import { PREFIX, ingress, service, slice, testStore } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const OLD = '2026-01-01T00:00:00Z';
const ourClass: GatewayClass = { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } };

function gateway(listeners: Array<Partial<GatewayListener>>, o: { name?: string; ns?: string; className?: string } = {}): Gateway {
  return {
    apiVersion: V1, kind: 'Gateway', metadata: { name: o.name ?? 'gw', namespace: o.ns ?? 'infra', creationTimestamp: OLD },
    spec: { gatewayClassName: o.className ?? 'rx', listeners: listeners.map((l, i) => ({ name: `l${i}`, port: 80, protocol: 'HTTP', ...l })) },
  };
}

function route(ns: string, name: string, hostnames: string[], rules: HTTPRouteRule[], parent: Record<string, unknown> = {}): HTTPRoute {
  return { apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns }, spec: { parentRefs: [{ name: 'gw', namespace: 'infra', ...parent }], hostnames, rules } };
}

const toService = (svc: string, path = '/', extra: Record<string, unknown> = {}): HTTPRouteRule => ({
  matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: svc, port: 80, ...extra }],
});

const ns = (name: string, labels: Record<string, string> = {}): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });

function cluster() {
  const store = testStore();
  store.put('GatewayClass', ourClass);
  for (const n of ['team-a', 'team-b', 'infra']) store.put('Namespace', ns(n, n === 'team-a' ? { gateway: 'yes' } : {}));
  for (const [n, svc] of [['team-a', 'web'], ['team-b', 'db'], ['team-b', 'web']] as const) {
    store.put('Service', service(svc, n));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, ['10.0.1.1'], n));
  }
  store.put('Gateway', gateway([{ allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { gateway: 'yes' } } } } }]));
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z') });
  const reviewRoute = (r: HTTPRoute) => record(reviewer.reviewGatewayAPI!({ kind: 'HTTPRoute', object: r }));
  const reviewGateway = (g: Gateway) => record(reviewer.reviewGatewayAPI!({ kind: 'Gateway', object: g }));
  return { store, reviewRoute, reviewGateway };
}

const denials = (r: ReviewResult) => r.findings.filter((f) => f.severity === 'deny').map((f) => `${f.object} ${f.field}: ${f.message}`);
const warned = (r: ReviewResult) => r.findings.filter((f) => f.severity === 'warn').map((f) => `${f.rule} ${f.field}: ${f.message}`);

const rulesHit = new Set<string>();
function record(r: ReviewResult): ReviewResult {
  for (const f of r.findings) if (f.rule) rulesHit.add(f.rule);
  return r;
}

test('a valid HTTPRoute through our Gateway is allowed; routes and Gateways of other controllers are not looked at', () => {
  const { reviewRoute, reviewGateway } = cluster();
  const ok = reviewRoute(route('team-a', 'shop', ['shop.example.com'], [toService('web')]));
  assert.ok(ok.served);
  assert.ok(ok.allowed, denials(ok).join('\n'));
  assert.equal(ok.findings, []);
  // A parent of another controller (no Gateway of ours by that name): none of our business, however bad.
  const theirs = reviewRoute(route('team-a', 'theirs', ['bad host!'], [toService('web')], { name: 'envoy-gw' }));
  assert.is(theirs.served, false);
  assert.ok(theirs.allowed);
  const otherClass = reviewGateway(gateway([{ port: 12345 }], { name: 'other', className: 'envoy' }));
  assert.is(otherClass.served, false);
  assert.match(otherClass.reason, /GatewayClass "envoy" is not of this controller/);
});

test('what the controller would set aside is refused, naming the route, the field and the reason', () => {
  const { reviewRoute } = cluster();
  const r = reviewRoute(route('team-a', 'bad', ['bad.example.com'], [
    toService('web', '/a b'),
    { matches: [{ path: { type: 'PathPrefix', value: '/h' }, headers: [{ name: 'x\r\ny', value: 'v' }] }], backendRefs: [{ name: 'web', port: 80 }] },
    { matches: [{ path: { type: 'PathPrefix', value: '/f' } }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Host', value: 'evil' }] } }], backendRefs: [{ name: 'web', port: 80 }] },
  ]));
  assert.not.ok(r.allowed);
  const d = denials(r);
  assert.ok(d.some((x) => /^HTTPRoute team-a\/bad spec\.rules\[0\]\.matches\[0\]\.path\.value: .*"\/a b"/.test(x)), d.join('\n'));
  assert.ok(d.some((x) => x.startsWith('HTTPRoute team-a/bad spec.rules[1].matches[0].headers[0]')), d.join('\n'));
  assert.ok(d.some((x) => /^HTTPRoute team-a\/bad spec\.rules\[2\]\.filters\[0\]\.requestHeaderModifier.*header Host is not edited by filters/.test(x)), d.join('\n'));
  const host = reviewRoute(route('team-a', 'host', ['-bad-.example.com'], [toService('web')]));
  assert.not.ok(host.allowed);
  assert.match(denials(host)[0]!, /^HTTPRoute team-a\/host spec\.hostnames\[0\]: .*route set aside/);
});

test("attacker: a route onto a host another namespace's Ingress serves is refused; the route's own namespace's Ingress (a migration) only warns", () => {
  const { store, reviewRoute } = cluster();
  store.put('Ingress', ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', 80]], { ns: 'team-b', ts: OLD }));
  store.put('Ingress', ingress('blog', 'blog.example.com', [['/', 'Prefix', 'web', 80]], { ns: 'team-a', ts: OLD }));
  const takeover = reviewRoute(route('team-a', 'grab', ['shop.example.com', 'mine.example.com'], [toService('web')]));
  assert.not.ok(takeover.allowed);
  assert.equal(denials(takeover), ['HTTPRoute team-a/grab spec.hostnames: host shop.example.com is served by Ingress team-b/shop of another namespace, which takes precedence over HTTPRoutes on a host; not served on it']);
  const migration = reviewRoute(route('team-a', 'blog', ['blog.example.com'], [toService('web')]));
  assert.ok(migration.allowed, denials(migration).join('\n'));
  assert.equal(warned(migration), ['ingress-host-migration spec.hostnames: host blog.example.com is served by Ingress team-a/blog, an Ingress of this namespace, which takes precedence over HTTPRoutes on a host until it no longer names it; not served on it yet']);
});

test('attacker: a listener that does not admit the namespace refuses the route, and so does a backend in another namespace until its owner grants it', () => {
  const { store, reviewRoute } = cluster();
  // team-b's namespace has no gateway=yes label: the listener's selector does not admit it.
  const outsider = reviewRoute(route('team-b', 'sneak', ['sneak.example.com'], [toService('web')]));
  assert.not.ok(outsider.allowed);
  assert.match(denials(outsider)[0]!, /^HTTPRoute team-b\/sneak spec\.parentRefs\[0\]: listener infra\/gw\/l0: allowedRoutes\.namespaces \(from: Selector\) does not admit routes of namespace "team-b"; not attached$/);
  const typo = reviewRoute(route('team-a', 'typo', ['typo.example.com'], [toService('web')], { sectionName: 'nope' }));
  assert.match(denials(typo)[0]!, /spec\.parentRefs\[0\]: Gateway infra\/gw has no listener named "nope"/);

  const cross = route('team-a', 'cross', ['cross.example.com'], [toService('db', '/', { namespace: 'team-b' })]);
  const r = reviewRoute(cross);
  assert.not.ok(r.allowed);
  assert.equal(denials(r), ['HTTPRoute team-a/cross spec.rules[0].backendRefs[0]: Service team-b/db is in another namespace and no ReferenceGrant in "team-b" allows HTTPRoutes of "team-a" to refer to it; refused; the rule answers 500']);
  // The owner's grant: nothing to say.
  const grant: ReferenceGrant = {
    apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'let-a', namespace: 'team-b' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }], to: [{ group: '', kind: 'Service', name: 'db' }] },
  };
  store.put('ReferenceGrant', grant);
  assert.equal(reviewRoute(cross).findings, []);
  // Not a Service: refused (the object itself is wrong, nothing can make it right).
  const kind = reviewRoute(route('team-a', 'kind', ['kind.example.com'], [toService('web', '/', { group: 'example.com', kind: 'Bucket' })]));
  assert.not.ok(kind.allowed);
  assert.match(denials(kind)[0]!, /spec\.rules\[0\]\.backendRefs\[0\]: backendRef example\.com\/Bucket is not a Service/);
  const missing = reviewRoute(route('team-a', 'missing', ['missing.example.com'], [toService('later')]));
  assert.ok(missing.allowed, denials(missing).join('\n'));
  assert.ok(warned(missing).every((w) => w.startsWith('missing-object ')), warned(missing).join('\n'));
});

test('a path an older route holds is refused; features not served yet only warn', () => {
  const { store, reviewRoute } = cluster();
  store.put('HTTPRoute', { ...route('team-a', 'first', ['dup.example.com'], [toService('web', '/api')]), metadata: { name: 'first', namespace: 'team-a', creationTimestamp: OLD } });
  const dup = reviewRoute(route('team-a', 'second', ['dup.example.com'], [toService('web', '/api')]));
  assert.not.ok(dup.allowed, JSON.stringify(dup.findings));
  assert.match(denials(dup)[0]!, /^HTTPRoute team-a\/second spec\.rules\[0\]\.matches: Prefix path "\/api" on host dup\.example\.com is already routed by .*team-a\/first/);
  // The stored route reviewed again (an update) is its own version, not a rival.
  assert.ok(reviewRoute(store.gatewayResources!().httpRoutes[0]!).allowed);
  const cors = reviewRoute(route('team-a', 'cors', ['c.example.com'], [
    toService('web'),
    { matches: [{ path: { type: 'PathPrefix', value: '/copy' } }], filters: [{ type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Cors', name: 'c' } }], backendRefs: [{ name: 'web', port: 80 }] },
  ]));
  assert.ok(cors.allowed, denials(cors).join('\n'));
  assert.equal(warned(cors).map((w) => w.split(' ')[0]), ['gateway-api-not-built-yet']);
});

test('a Gateway: a listener that cannot be served is refused, TLS and Passthrough not served yet warn, and the routes a change detaches are named', () => {
  const { store, reviewRoute, reviewGateway } = cluster();
  store.put('HTTPRoute', { ...route('team-a', 'shop', ['shop.example.com'], [toService('web')]), metadata: { name: 'shop', namespace: 'team-a', creationTimestamp: OLD } });
  assert.ok(reviewRoute(store.gatewayResources!().httpRoutes[0]!).allowed);
  const bad = reviewGateway(gateway([{ allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'alt', port: 443 }, { name: 'tls', protocol: 'TLS', port: 443 }, { name: 'other', port: 8080 }]));
  assert.not.ok(bad.allowed);
  assert.equal(denials(bad), ['Gateway infra/gw spec.listeners[1]: listener alt: port 443 serves TLS (--https-port): an HTTP listener cannot use it; the listener is not served']);
  assert.equal(warned(bad), ['gateway-api-not-built-yet spec.listeners[2]: listener tls: protocol TLS is not served yet (HTTP and HTTPS only); the listener is not served']);
  // Narrowing allowedRoutes to Same would detach team-a's route: allowed, and the route is named.
  const narrowed = reviewGateway(gateway([{}]));
  assert.ok(narrowed.allowed, denials(narrowed).join('\n'));
  assert.equal(warned(narrowed), ['routes-detached spec.listeners: HTTPRoute team-a/shop would no longer be attached: listener infra/gw/l0: allowedRoutes.namespaces (from: Same) does not admit routes of namespace "team-a"']);
});

test("attacker: a Gateway's certificateRef to another namespace's Secret without the owner's grant is refused; a Secret that does not exist yet warns", () => {
  const { reviewGateway } = cluster();
  const https = (ref: Record<string, unknown>) => gateway([{ allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'https', protocol: 'HTTPS', port: 443, tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert', ...ref }] } }]);
  const theirs = reviewGateway(https({ namespace: 'team-b' }));
  assert.not.ok(theirs.allowed);
  assert.ok(denials(theirs).some((d) => /^Gateway infra\/gw spec\.listeners\[1\]\.tls\.certificateRefs\[0\]: listener https .*Secret team-b\/cert is in another namespace and no ReferenceGrant/.test(d)), denials(theirs).join('\n'));
  const later = reviewGateway(https({}));
  assert.ok(later.allowed);
  assert.ok(warned(later).some((w) => w.startsWith('missing-object spec.listeners[1].tls.certificateRefs[0]')), warned(later).join('\n'));
});

test("careless or hostile: a Gateway's spec.tls.frontend CA ConfigMap of another namespace without a grant, or of a wrong kind, is refused with the status's message; one not created yet warns", () => {
  const { reviewGateway } = cluster();
  const withFrontend = (ref: Record<string, unknown>, perPort = false) => {
    const g = gateway([{ allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'https', protocol: 'HTTPS', port: 443, tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] } }]);
    const validation = { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca', ...ref }] };
    return { ...g, spec: { ...g.spec, tls: { frontend: perPort ? { perPort: [{ port: 443, tls: { validation } }] } : { default: { validation } } } } } as Gateway;
  };
  const cases: Array<[Gateway, RegExp]> = [
    [withFrontend({ namespace: 'team-b' }), /spec\.listeners\[1\]: listener https: spec\.tls\.frontend\.default\.validation\.caCertificateRefs\[0\]: ConfigMap team-b\/ca is in another namespace and no ReferenceGrant/],
    [withFrontend({ namespace: 'team-b' }, true), /spec\.listeners\[1\]: listener https: spec\.tls\.frontend\.perPort\[0\]\.tls\.validation\.caCertificateRefs\[0\]: ConfigMap team-b\/ca is in another namespace/],
    [withFrontend({ kind: 'Secret' }), /caCertificateRefs\[0\]: Secret is not supported \(only core ConfigMaps\)/],
  ];
  for (const [g, expected] of cases) {
    const r = reviewGateway(g);
    assert.not.ok(r.allowed, String(expected));
    assert.ok(denials(r).some((d) => expected.test(d)), `${String(expected)}\n${denials(r).join('\n')}`);
  }
  // A ConfigMap not created yet only warns, as a Secret not created yet does.
  const later = reviewGateway(withFrontend({}));
  assert.ok(later.allowed, denials(later).join('\n'));
  assert.ok(warned(later).some((w) => /caCertificateRefs\[0\]: ConfigMap infra\/ca not found; its handshakes are refused/.test(w)), warned(later).join('\n'));
});

test('every warn rule about HTTPRoutes and Gateways is reached through the model', () => {
  const gatewayRules = ['gateway-api-not-built-yet', 'ingress-host-migration', 'routes-detached'];
  assert.ok(gatewayRules.every((n) => WARN_RULES.some((r) => r.name === n)));
  assert.equal(gatewayRules.filter((n) => !rulesHit.has(n)), []);
});

test.run();
