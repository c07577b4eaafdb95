// The Gateway API front end in the model: HTTPRoutes attached to our Gateways become servers,
// locations and backends; a hostile tenant's references to another namespace, routes a listener
// does not admit and hosts an Ingress holds are named and set aside, and the rest still applies.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { intersectHostnames, type Condition, type GatewayAPIStatus } from '../../../src/model/gateway/index.js';
import type { Configuration, ModelWarning } from '../../../src/model/core/types.js';
import { stableJSON } from '../../../src/model/core/json.js';
import { decide } from '../../../src/model/core/decide.js';
import { snapshot } from '../../../src/model/core/hash.js';
import { createRoutesSerialiser, routesPayload } from '../../../src/model/core/routes-payload.js';
import type { Gateway, GatewayClass, GatewayListener, HTTPRoute, HTTPRouteRule, KubeObject, Namespace, ReferenceGrant } from '../../../src/store/kube-types.js';
import { PREFIX, ingress, service, slice, testStore } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const NOW = new Date('2026-06-01T00:00:00Z');

const ourClass: GatewayClass = { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } };

function gateway(listeners: Array<Partial<GatewayListener>>, name = 'gw', ns = 'infra', className = 'rx'): Gateway {
  return {
    apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: ns, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { gatewayClassName: className, listeners: listeners.map((l, i) => ({ name: `l${i}`, port: 80, protocol: 'HTTP', ...l })) },
  };
}

const ALL = { namespaces: { from: 'All' } };

function route(ns: string, name: string, hostnames: string[], rules: HTTPRouteRule[], o: { parent?: Record<string, unknown>; ts?: string } = {}): HTTPRoute {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns, creationTimestamp: o.ts ?? '2026-01-02T00:00:00Z' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra', ...o.parent }], hostnames, rules },
  };
}

const toService = (svc: string, path = '/', extra: Record<string, unknown> = {}): HTTPRouteRule => ({
  matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: svc, port: 80, ...extra }],
});

function grant(ns: string, from: { kind: string; namespace: string; group?: string }, to: { kind: string; name?: string; group?: string }): ReferenceGrant {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: `g-${from.namespace}-${to.kind}`, namespace: ns },
    spec: { from: [{ group: from.group ?? 'gateway.networking.k8s.io', kind: from.kind, namespace: from.namespace }], to: [{ group: to.group ?? '', kind: to.kind, ...(to.name ? { name: to.name } : {}) }] },
  };
}

function world(objects: Array<[Parameters<ReturnType<typeof testStore>['put']>[0], KubeObject]>) {
  const store = testStore();
  store.put('GatewayClass', ourClass);
  for (const [ns, svc] of [['team-a', 'web'], ['team-a', 'canary'], ['team-a', 'idle'], ['team-b', 'db'], ['team-b', 'web']] as const) {
    store.put('Service', service(svc, ns));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, [ns === 'team-a' ? '10.0.1.1' : '10.0.2.1'], ns));
  }
  for (const [kind, obj] of objects) store.put(kind, obj);
  return store;
}

function build(store: ReturnType<typeof testStore>): { config: Configuration; warnings: ModelWarning[]; gatewayStatus?: GatewayAPIStatus } {
  return createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true }).build(store);
}

const serverOf = (c: Configuration, host: string) => c.servers.find((s) => s.hostname === host);
const locationsOf = (c: Configuration, host: string) => serverOf(c, host)?.locations.map((l) => `${l.pathType === 'Exact' ? '= ' : ''}${l.path} → ${l.denied !== null ? 'denied' : l.backend}`);
const warningsOf = (w: ModelWarning[], object: string) => w.filter((x) => x.object === object).map((x) => `${x.field}: ${x.message}`);

const test = suite('gateway api: translation');

test('an HTTPRoute on an HTTP listener: its host, PathPrefix and Exact paths, a backend with the Service\'s endpoints, served by the Lua router', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'web', ['A.Example.com'], [
    toService('web', '/app'),
    { matches: [{ path: { type: 'Exact', value: '/exact' } }], backendRefs: [{ name: 'web', port: 80 }] },
  ])]]);
  const { config, warnings } = build(store);
  assert.equal(warnings.filter((w) => w.object.startsWith('HTTPRoute')), []);
  const b0 = 'httproute.team-a.web.80';
  assert.equal(locationsOf(config, 'a.example.com'), [
    '= /exact → httproute.team-a.web.80', `/app/ → ${b0}`, `= /app → ${b0}`, '/ → upstream-default-backend',
  ]);
  assert.is(serverOf(config, 'a.example.com')!.staticBecause, null, 'dynamic: served by the Lua router');
  assert.equal(serverOf(config, 'a.example.com')!.locations[0]!.ingress, { namespace: 'team-a', name: 'web', rule: 1 }, 'the route and its rule (spec.rules[1]: /exact) name the location');
  const backend = config.backends.find((b) => b.name === b0)!;
  assert.equal(backend.endpoints, [{ address: '10.0.1.1', port: '8080' }]);
  assert.ok(config.servers[0]!.hostname === '_', 'the default server stays first');
});

test('a rebuild with nothing changed hands back the same server and backend lists; a changed Service endpoint changes only its backend', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'web', ['a.example.com'], [toService('web', '/a'), toService('canary', '/c')])]]);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  const first = builder.build(store).config;
  const second = builder.build(store).config;
  assert.is(second.servers, first.servers);
  assert.is(second.backends, first.backends);
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.1.9'], 'team-a'));
  const third = builder.build(store, [{ kind: 'EndpointSlice', key: 'team-a/web-1' }]).config;
  const named = (c: Configuration, n: string) => c.backends.find((b) => b.name === n)!;
  assert.equal(named(third, 'httproute.team-a.web.80').endpoints, [{ address: '10.0.1.9', port: '8080' }]);
  assert.is(named(third, 'httproute.team-a.canary.80'), named(first, 'httproute.team-a.canary.80'));
  assert.is(third.servers, first.servers);
});

test('a new HTTPRoute to a Service port some route already sends to changes no backend: only the route table is posted, not the whole backends document', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'first', ['a.example.com'], [toService('web')])]]);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  const before = builder.build(store).config;
  // Another tenant's route to the same Service (granted), and another rule of a new route: one backend serves them all.
  store.put('ReferenceGrant', grant('team-a', { kind: 'HTTPRoute', namespace: 'team-b' }, { kind: 'Service' }));
  store.put('HTTPRoute', route('team-a', 'second', ['b.example.com'], [toService('web', '/x'), toService('web', '/y')]));
  store.put('HTTPRoute', route('team-b', 'third', ['c.example.com'], [toService('web', '/', { namespace: 'team-a' })]));
  const after = builder.build(store, [{ kind: 'ReferenceGrant', key: 'team-a/g-team-b-Service' }, { kind: 'HTTPRoute', key: 'team-a/second' }, { kind: 'HTTPRoute', key: 'team-b/third' }]).config;
  assert.is(after.backends, before.backends, 'the same backends: nothing to post');
  const decision = decide(snapshot(before), snapshot(after));
  assert.is(decision.kind, 'dynamic');
  assert.is(decision.backendsChanged, false, decision.reason);
  assert.is(decision.routesChanged, true);
  for (const host of ['b.example.com', 'c.example.com']) assert.ok(locationsOf(after, host)!.every((l) => l.endsWith('→ httproute.team-a.web.80') || l.endsWith('→ upstream-default-backend')), host);
  // A route to a Service port no route used before adds that backend, and only it.
  store.put('HTTPRoute', route('team-a', 'fourth', ['d.example.com'], [toService('canary')]));
  const added = builder.build(store, [{ kind: 'HTTPRoute', key: 'team-a/fourth' }]).config;
  assert.equal(added.backends.map((b) => b.name).filter((n) => !before.backends.some((b) => b.name === n)), ['httproute.team-a.canary.80']);
});

test('builds told of Gateway API changes equal cold builds: an Ingress keeps its host, a Service change reaches both front ends', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['Ingress', ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', 80]], { ns: 'team-a' })],
    ['HTTPRoute', route('team-a', 'r1', ['a.example.com'], [toService('web')])]]);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  builder.build(store);
  const step = (changes: Array<{ kind: 'HTTPRoute' | 'ReferenceGrant' | 'Gateway' | 'EndpointSlice' | 'Ingress'; key: string }>) => {
    const hinted = builder.build(store, changes);
    const cold = build(store);
    assert.fixture(stableJSON(hinted.config), stableJSON(cold.config), changes.map((c) => c.key).join());
    assert.equal(hinted.warnings, cold.warnings);
    assert.equal(hinted.gatewayStatus, cold.gatewayStatus);
    const hosts = hinted.config.servers.map((x) => x.hostname);
    assert.equal(hosts, ['_', ...hosts.filter((h) => h !== '_').sort()], 'servers in order, the default one first');
    return hinted.config;
  };
  store.put('HTTPRoute', route('team-a', 'r2', ['b.example.com'], [toService('canary')]));
  assert.equal(locationsOf(step([{ kind: 'HTTPRoute', key: 'team-a/r2' }]), 'b.example.com'), ['/ → httproute.team-a.canary.80']);
  store.put('HTTPRoute', route('team-a', 'r3', ['shop.example.com'], [toService('canary', '/steal')]));
  assert.equal(locationsOf(step([{ kind: 'HTTPRoute', key: 'team-a/r3' }]), 'shop.example.com'), ['/ → team-a-web-80'], 'the Ingress owns its host');
  store.put('ReferenceGrant', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service' }));
  store.put('HTTPRoute', route('team-a', 'r4', ['c.example.com'], [toService('db', '/', { namespace: 'team-b' })]));
  assert.equal(locationsOf(step([{ kind: 'ReferenceGrant', key: 'team-b/g-team-a-Service' }, { kind: 'HTTPRoute', key: 'team-a/r4' }]), 'c.example.com'), ['/ → httproute.team-b.db.80']);
  store.put('HTTPRoute', route('team-a', 'r2', ['b.example.com'], [toService('web')]));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.1.7'], 'team-a'));
  const both = step([{ kind: 'HTTPRoute', key: 'team-a/r2' }, { kind: 'EndpointSlice', key: 'team-a/web-1' }]);
  for (const name of ['team-a-web-80', 'httproute.team-a.web.80']) {
    assert.equal(both.backends.find((b) => b.name === name)!.endpoints, [{ address: '10.0.1.7', port: '8080' }], name);
  }
  store.put('Ingress', ingress('shop', 'shop.example.com', [['/', 'Prefix', 'idle', 80]], { ns: 'team-a' }));
  assert.equal(locationsOf(step([{ kind: 'Ingress', key: 'team-a/shop' }]), 'shop.example.com'), ['/ → team-a-idle-80']);
  store.remove('Ingress', ingress('shop', 'shop.example.com', [], { ns: 'team-a' }));
  assert.equal(locationsOf(step([{ kind: 'Ingress', key: 'team-a/shop' }]), 'shop.example.com'), ['/steal/ → httproute.team-a.canary.80', '= /steal → httproute.team-a.canary.80', '/ → upstream-default-backend'], 'the route takes the host the Ingress left');
});

test('a GatewayClass of another controller: its Gateways and their routes are not served', () => {
  const store = world([['GatewayClass', { ...ourClass, metadata: { name: 'theirs' }, spec: { controllerName: 'example.com/other' } } as GatewayClass],
    ['Gateway', gateway([{ allowedRoutes: ALL }], 'gw', 'infra', 'theirs')], ['HTTPRoute', route('team-a', 'web', ['a.example.com'], [toService('web')])]]);
  const { config } = build(store);
  assert.is(serverOf(config, 'a.example.com'), undefined);
});

test('attacker: a backendRef to another namespace\'s Service without a ReferenceGrant answers 500 and names the route', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'steal', ['a.example.com'], [toService('db', '/', { namespace: 'team-b' })])]]);
  const { config, warnings } = build(store);
  assert.equal(locationsOf(config, 'a.example.com'), ['/ → denied']);
  assert.is(config.servers.find((s) => s.hostname === 'a.example.com')!.locations.find((l) => l.denied)!.deniedStatus, 500, 'the spec\'s 500, not 503');
  assert.not.ok(config.backends.some((b) => b.service?.metadata.namespace === 'team-b'), 'no backend reaches team-b');
  const w = warningsOf(warnings, 'HTTPRoute team-a/steal');
  assert.is(w.length, 1);
  assert.match(w[0]!, /^spec\.rules\[0\]\.backendRefs\[0\]: Service team-b\/db is in another namespace and no ReferenceGrant in "team-b" allows HTTPRoutes of "team-a"/);
});

test('attacker: grants for another kind, another source namespace, another name, or placed in the wrong namespace do not allow it', () => {
  const steal = route('team-a', 'steal', ['a.example.com'], [toService('db', '/', { namespace: 'team-b' })]);
  const wrong: ReferenceGrant[] = [
    grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Secret' }),
    grant('team-b', { kind: 'HTTPRoute', namespace: 'team-c' }, { kind: 'Service' }),
    grant('team-b', { kind: 'Gateway', namespace: 'team-a' }, { kind: 'Service' }),
    grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service', name: 'web' }),
    grant('team-a', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service' }),
  ];
  for (const g of wrong) {
    const { config } = build(world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['ReferenceGrant', g], ['HTTPRoute', steal]]));
    assert.equal(locationsOf(config, 'a.example.com'), ['/ → denied'], JSON.stringify(g.spec));
  }
  // The owner's grant, to that name: served.
  const { config, warnings } = build(world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['ReferenceGrant', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service', name: 'db' })], ['HTTPRoute', steal]]));
  assert.equal(locationsOf(config, 'a.example.com'), ['/ → httproute.team-b.db.80']);
  assert.equal(config.backends.find((b) => b.name === 'httproute.team-b.db.80')!.endpoints, [{ address: '10.0.2.1', port: '8080' }]);
  assert.equal(warningsOf(warnings, 'HTTPRoute team-a/steal'), []);
});

test('attacker: a listener admits routes of its own namespace by default, of labelled namespaces with a Selector, and only the kinds it lists', () => {
  const r = route('team-a', 'web', ['a.example.com'], [toService('web')]);
  // Same (the default): the Gateway is in infra, the route in team-a.
  let out = build(world([['Gateway', gateway([{}])], ['HTTPRoute', r]]));
  assert.is(serverOf(out.config, 'a.example.com'), undefined);
  assert.match(warningsOf(out.warnings, 'HTTPRoute team-a/web')[0]!, /^spec\.parentRefs\[0\]: listener infra\/gw\/l0: allowedRoutes\.namespaces \(from: Same\) does not admit routes of namespace "team-a"; not attached$/);
  // Selector: only namespaces with the label.
  const selector = { namespaces: { from: 'Selector', selector: { matchLabels: { gateway: 'shared' } } } };
  const ns = (name: string, labels: Record<string, string>): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  out = build(world([['Namespace', ns('team-a', { gateway: 'private' })], ['Gateway', gateway([{ allowedRoutes: selector }])], ['HTTPRoute', r]]));
  assert.is(serverOf(out.config, 'a.example.com'), undefined, 'label value differs');
  out = build(world([['Namespace', ns('team-a', { gateway: 'shared' })], ['Gateway', gateway([{ allowedRoutes: selector }])], ['HTTPRoute', r]]));
  assert.ok(serverOf(out.config, 'a.example.com'), 'labelled namespace admitted');
  // kinds: a listener for another kind of route.
  out = build(world([['Gateway', gateway([{ allowedRoutes: { ...ALL, kinds: [{ kind: 'GRPCRoute' }] } }])], ['HTTPRoute', r]]));
  assert.is(serverOf(out.config, 'a.example.com'), undefined);
  assert.match(warningsOf(out.warnings, 'HTTPRoute team-a/web')[0]!, /allowedRoutes\.kinds does not include HTTPRoute/);
});

test('parentRefs: sectionName and port pick the listener; its hostname narrows the route\'s', () => {
  const gw = gateway([{ name: 'a', hostname: '*.example.com', allowedRoutes: ALL }, { name: 'b', hostname: 'other.test', allowedRoutes: ALL }, { name: 'c', port: 8080, allowedRoutes: ALL }]);
  let out = build(world([['Gateway', gw], ['HTTPRoute', route('team-a', 'web', ['x.example.com', 'other.test'], [toService('web')], { parent: { sectionName: 'a' } })]]));
  assert.ok(serverOf(out.config, 'x.example.com'));
  assert.is(serverOf(out.config, 'other.test'), undefined, 'listener a takes *.example.com only');
  out = build(world([['Gateway', gw], ['HTTPRoute', route('team-a', 'web', ['x.example.com'], [toService('web')], { parent: { sectionName: 'b' } })]]));
  assert.is(serverOf(out.config, 'x.example.com'), undefined);
  assert.match(warningsOf(out.warnings, 'HTTPRoute team-a/web')[0]!, /no hostname of the route matches the listener's "other.test"/);
  out = build(world([['Gateway', gw], ['HTTPRoute', route('team-a', 'web', ['x.example.com'], [toService('web')], { parent: { port: 8080 } })]]));
  // Listener c is on port 8080: its hosts are that port's server's (`host:port` in the route table), never port 80's.
  assert.ok(serverOf(out.config, 'x.example.com:8080'));
  assert.is(serverOf(out.config, 'x.example.com'), undefined);
  assert.equal(out.config.listenerPorts, [{ port: 8080, local: 8080 }]);
  assert.equal(warningsOf(out.warnings, 'HTTPRoute team-a/web'), []);
  out = build(world([['Gateway', gw], ['HTTPRoute', route('team-a', 'web', ['x.example.com'], [toService('web')], { parent: { port: 8090 } })]]));
  assert.match(warningsOf(out.warnings, 'HTTPRoute team-a/web')[0]!, /Gateway infra\/gw has no listener on port 8090/);
  out = build(world([['Gateway', gw], ['HTTPRoute', route('team-a', 'web', ['x.example.com'], [toService('web')], { parent: { sectionName: 'zz' } })]]));
  assert.match(warningsOf(out.warnings, 'HTTPRoute team-a/web')[0]!, /Gateway infra\/gw has no listener named "zz"/);
});

test('hostname intersection of a route and a listener', () => {
  assert.equal(intersectHostnames(['a.example.com'], undefined), ['a.example.com']);
  assert.equal(intersectHostnames([], 'a.example.com'), ['a.example.com']);
  assert.equal(intersectHostnames(['a.example.com', 'b.test'], '*.example.com'), ['a.example.com']);
  assert.equal(intersectHostnames(['*.example.com'], 'a.example.com'), ['a.example.com']);
  assert.equal(intersectHostnames(['*.a.example.com'], '*.example.com'), ['*.a.example.com']);
  assert.equal(intersectHostnames(['example.com'], '*.example.com'), [], 'a wildcard needs a label before its suffix');
});

test('a Gateway API wildcard host covers several labels in the route table; an Ingress wildcard one', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'web', ['*.example.com', 'a.test'], [toService('web')])]]);
  store.put('Ingress', ingress('wild', '*.ing.test', [['/', 'Prefix', 'web', 80]], { ns: 'team-b' }));
  const { config } = build(store);
  assert.is(serverOf(config, '*.example.com')?.wildcardCoversLabels, 'several');
  assert.is(serverOf(config, 'a.test')?.wildcardCoversLabels, undefined);
  assert.is(serverOf(config, '*.ing.test')?.wildcardCoversLabels, undefined);
  const payload = routesPayload(config);
  assert.equal(payload.several, ['*.example.com']);
  const serialiser = createRoutesSerialiser(() => 'id');
  const whole = serialiser.post(payload);
  assert.equal((JSON.parse(whole.body.join('')) as { several: string[] }).several, ['*.example.com']);
  whole.accepted();
  assert.equal((JSON.parse(serialiser.post(payload).body.join('')) as { several: string[] }).several, ['*.example.com'], 'a change names them again');
  const ingressOnly = world([]);
  ingressOnly.put('Ingress', ingress('wild', '*.ing.test', [['/', 'Prefix', 'web', 80]], { ns: 'team-b' }));
  const plain = routesPayload(build(ingressOnly).config);
  assert.is('several' in plain, false, 'a table without Gateway API wildcards has no list');
  assert.is('several' in JSON.parse(createRoutesSerialiser().post(plain).body.join('')), false);
});

test('a route without hostnames on a listener without one: attached and counted, named in a warning, no host served', () => {
  const { config, warnings, gatewayStatus } = build(world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'every', [], [toService('web')])]]));
  assert.equal(config.servers.map((s) => s.hostname), ['_']);
  assert.match(warningsOf(warnings, 'HTTPRoute team-a/every').join('\n'), /neither the route nor listener infra\/gw\/l0 names a hostname \(every host\), which is not served yet/);
  assert.is(gatewayStatus!.gateways.get('infra/gw')!.listeners[0]!.attachedRoutes, 1);
  assert.is(gatewayStatus!.routes.get('team-a/every')![0]!.conditions[0]!.status, 'True');
});

test('precedence: a host an Ingress serves stays the Ingress\'s; the HTTPRoute is named and not served on it, its other hosts are', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])],
    ['HTTPRoute', route('team-a', 'hijack', ['shop.example.com', 'a.example.com'], [toService('web', '/')])]]);
  store.put('Ingress', ingress('shop', 'shop.example.com', [['/', 'Prefix', 'db', 80]], { ns: 'team-b' }));
  const { config, warnings } = build(store);
  assert.equal(locationsOf(config, 'shop.example.com'), ['/ → team-b-db-80']);
  assert.equal(locationsOf(config, 'a.example.com'), ['/ → httproute.team-a.web.80']);
  assert.equal(warningsOf(warnings, 'HTTPRoute team-a/hijack'), ['spec.hostnames: host shop.example.com is served by an Ingress, which takes precedence over HTTPRoutes on a host; not served on it']);
});

test('two routes on one host: the older keeps a path both claim; one bad route is set aside and the others apply', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])],
    ['HTTPRoute', route('team-a', 'old', ['a.example.com'], [toService('web', '/app')], { ts: '2026-01-01T00:00:00Z' })],
    ['HTTPRoute', route('team-b', 'new', ['a.example.com'], [toService('web', '/app'), toService('web', '/b')], { ts: '2026-01-03T00:00:00Z' })],
    ['HTTPRoute', route('team-b', 'bad', ['a.example.com'], [{ matches: [{ path: { type: 'RegularExpression', value: '/x(' } }], backendRefs: [{ name: 'web', port: 80 }] }])],
    ['HTTPRoute', route('team-b', 'evil-path', ['a.example.com'], [toService('web', '/a b;\nreturn 200')])],
    ['HTTPRoute', route('team-b', 'evil-host', ['a.example.com', 'x;return 200'], [toService('web', '/evil')])],
    ['HTTPRoute', route('team-b', 'odd-path', ['a.example.com'], [toService('web', '/x{1}')])]]);
  const { config, warnings } = build(store);
  assert.equal(locationsOf(config, 'a.example.com'), [
    '/app/ → httproute.team-a.web.80', '= /app → httproute.team-a.web.80',
    '/b/ → httproute.team-b.web.80', '= /b → httproute.team-b.web.80', '/ → upstream-default-backend',
  ]);
  assert.match(warningsOf(warnings, 'HTTPRoute team-b/new')[0]!, /^spec\.rules\[0\]\.matches: Prefix path "\/app" on host a\.example\.com is already routed by HTTPRoute team-a\/old/);
  assert.match(warningsOf(warnings, 'HTTPRoute team-b/bad')[0]!, /^spec\.rules\[0\]\.matches\[0\]\.path\.value: path "\/x\(" is not a regular expression NGINX accepts \(.*\); match set aside$/);
  assert.match(warningsOf(warnings, 'HTTPRoute team-b/odd-path')[0]!, /may only contain letters, digits.*\(strict-validate-path-type\); match set aside$/);
  assert.match(warningsOf(warnings, 'HTTPRoute team-b/evil-host')[0]!, /^spec\.hostnames\[1\]: host "x;return 200" is not a valid DNS name.*; route set aside$/);
  assert.match(warningsOf(warnings, 'HTTPRoute team-b/evil-path')[0]!, /^spec\.rules\[0\]\.matches\[0\]\.path\.value: path .* must start with "\/" and contain no whitespace or control characters; match set aside$/);
});

test('weighted backendRefs: each a backend, the location draws among them by weight (split); weight 0 takes nothing; out-of-range weights and too many refs named', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'split', ['a.example.com'], [{
    matches: [{ path: { type: 'PathPrefix', value: '/' } }],
    backendRefs: [{ name: 'web', port: 80, weight: 3 }, { name: 'idle', port: 80, weight: 0 }, { name: 'canary', port: 80, weight: 1 }, { name: 'web', namespace: 'team-b', port: 80, weight: 1_000_000 }],
  }])], ['ReferenceGrant', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service' })]]);
  const { config } = build(store);
  const root = serverOf(config, 'a.example.com')!.locations.find((l) => l.path === '/' && l.backend.startsWith('httproute'))!;
  assert.equal(root.split, [
    { backend: 'httproute.team-a.web.80', weight: 3 },
    { backend: 'httproute.team-a.canary.80', weight: 1 },
    { backend: 'httproute.team-b.web.80', weight: 1_000_000 },
  ]);
  assert.is(root.backend, 'httproute.team-a.web.80');
  for (const b of root.split!) {
    const backend = config.backends.find((x) => x.name === b.backend)!;
    assert.ok(backend, b.backend);
    assert.equal(backend.alternativeBackends, [], 'no canary chain: the router draws');
  }
  assert.not.ok(config.backends.some((b) => b.name.includes('.idle.')), 'weight 0: no backend');
  // One backendRef: no split.
  store.put('HTTPRoute', route('team-a', 'split', ['a.example.com'], [{ backendRefs: [{ name: 'web', port: 80, weight: 5 }] }]));
  assert.is(serverOf(build(store).config, 'a.example.com')!.locations.find((l) => l.backend.startsWith('httproute'))!.split, undefined);
  // A weight out of the CRD's range, or a fraction: named, the rule answers 500.
  for (const weight of [1_000_001, -1, 0.5]) {
    store.put('HTTPRoute', route('team-a', 'split', ['a.example.com'], [{ backendRefs: [{ name: 'web', port: 80 }, { name: 'canary', port: 80, weight }] }]));
    const bad = build(store);
    assert.ok(serverOf(bad.config, 'a.example.com')!.locations.find((l) => l.path === '/' && l.denied !== null), String(weight));
    assert.match(warningsOf(bad.warnings, 'HTTPRoute team-a/split')[0]!, /^spec\.rules\[0\]\.backendRefs\[1\]\.weight: weight .* is not an integer from 0 to 1000000; the rule answers 500$/);
  }
  // More than the CRD's 16 backendRefs: named and set aside.
  store.put('HTTPRoute', route('team-a', 'split', ['a.example.com'], [{ backendRefs: Array.from({ length: 17 }, () => ({ name: 'web', port: 80 })) }]));
  const many = build(store);
  assert.is(serverOf(many.config, 'a.example.com')?.locations.find((l) => l.backend.startsWith('httproute')), undefined);
  assert.match(warningsOf(many.warnings, 'HTTPRoute team-a/split')[0]!, /17 backendRefs: at most 16; rule set aside/);
});

test('RequestMirror: a backend of its own per mirror Service; another namespace only with the owner\'s grant (else named, no copy, the rule served)', () => {
  const mirrorRule = (namespace?: string): HTTPRouteRule => ({
    backendRefs: [{ name: 'web', port: 80 }],
    filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'shadow', port: 80, ...(namespace ? { namespace } : {}) }, percent: 25 } }],
  });
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'm', ['a.example.com'], [mirrorRule()])]]);
  const own = build(store);
  const root = serverOf(own.config, 'a.example.com')!.locations.find((l) => l.backend.startsWith('httproute'))!;
  assert.equal(root.filters?.mirrors, [{ backend: 'httproute.team-a.m.0.mirror.team-a.shadow.80', numerator: 25, denominator: 100 }]);
  assert.ok(own.config.backends.some((b) => b.name === 'httproute.team-a.m.0.mirror.team-a.shadow.80'));
  store.put('HTTPRoute', route('team-a', 'm', ['a.example.com'], [mirrorRule('team-b')]));
  const refused = build(store);
  const served = serverOf(refused.config, 'a.example.com')!.locations.find((l) => l.backend.startsWith('httproute'))!;
  assert.is(served.denied, null, 'the rule is served');
  assert.is(served.filters?.mirrors, undefined, 'no copy');
  assert.not.ok(refused.config.backends.some((b) => b.name.includes('.mirror.team-b.')));
  assert.match(warningsOf(refused.warnings, 'HTTPRoute team-a/m')[0]!, /^spec\.rules\[0\]\.filters\[0\]\.requestMirror\.backendRef: .*no copy is sent$/);
  store.put('ReferenceGrant', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service', name: 'shadow' }));
  const granted = serverOf(build(store).config, 'a.example.com')!.locations.find((l) => l.backend.startsWith('httproute'))!;
  assert.equal(granted.filters?.mirrors?.map((m) => m.backend), ['httproute.team-a.m.0.mirror.team-b.shadow.80']);
});

test('not built yet, named: filters; an HTTPS listener without certificateRefs', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }, { name: 'tls', protocol: 'HTTPS', port: 443, allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'web', ['a.example.com'], [
    { ...toService('web', '/f'), filters: [{ type: 'RequestHeaderModifier' }] },
    { matches: [{ path: { type: 'PathPrefix', value: '/m' }, method: 'GET' }], backendRefs: [{ name: 'web', port: 80 }] },
  ], { parent: { sectionName: 'tls' } })]]);
  const { warnings } = build(store);
  assert.match(warningsOf(warnings, 'HTTPRoute team-a/web').join('\n'), /listener infra\/gw\/tls: an HTTPS listener needs tls.certificateRefs/);
  const store2 = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'web', ['a.example.com'], [
    { ...toService('web', '/f'), filters: [{ type: 'ExtensionRef' }] },
    { matches: [{ path: { type: 'PathPrefix', value: '/m' }, method: 'GET' }], backendRefs: [{ name: 'web', port: 80 }] },
    toService('web', '/ok'),
  ])]]);
  const out = build(store2);
  assert.equal(warningsOf(out.warnings, 'HTTPRoute team-a/web'), [
    'spec.rules[0].filters[0]: filter "ExtensionRef" is not supported yet; rule set aside',
  ]);
  assert.equal(locationsOf(out.config, 'a.example.com'), [
    '/ok/ → httproute.team-a.web.80', '= /ok → httproute.team-a.web.80',
    '/m/ → httproute.team-a.web.80', '= /m → httproute.team-a.web.80', '/ → upstream-default-backend',
  ], 'the method match is served (test/unit/gateway/matches.test.ts)');
});

const brief = (cs: readonly Condition[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}@${c.observedGeneration}`);

test('status: conditions with reasons and observedGeneration on the class, the Gateway, its listeners and each route parent', () => {
  const gen = <T extends KubeObject>(o: T, generation: number): T => ({ ...o, metadata: { ...o.metadata, generation } });
  const store = world([
    ['Gateway', gen(gateway([{ name: 'http', allowedRoutes: ALL, hostname: '*.example.com' }, { name: 'same' }, { name: 'tls', protocol: 'HTTPS', port: 443 }]), 4)],
    ['GatewayClass', { ...ourClass, metadata: { name: 'theirs' }, spec: { controllerName: 'example.com/other' } } as GatewayClass],
    ['Gateway', gateway([{ allowedRoutes: ALL }], 'other', 'infra', 'theirs')],
    ['HTTPRoute', gen(route('team-a', 'ok', ['a.example.com'], [toService('web')], { parent: { sectionName: 'http' } }), 7)],
    ['HTTPRoute', route('team-a', 'steal', ['b.example.com'], [toService('db', '/', { namespace: 'team-b' })], { parent: { sectionName: 'http' } })],
    ['HTTPRoute', route('team-a', 'gone', ['c.example.com'], [toService('nope')], { parent: { sectionName: 'http' } })],
    ['HTTPRoute', route('team-a', 'outside', ['d.example.com'], [toService('web')], { parent: { sectionName: 'same' } })],
    ['HTTPRoute', route('team-a', 'elsewhere', ['x.test'], [toService('web')], { parent: { sectionName: 'http' } })],
    ['HTTPRoute', { ...route('team-a', 'theirs', ['e.example.com'], [toService('web')]), spec: { parentRefs: [{ name: 'other', namespace: 'infra' }], hostnames: ['e.example.com'], rules: [toService('web')] } } as HTTPRoute],
  ]);
  const st = build(store).gatewayStatus!;
  assert.equal([...st.classes.keys()], ['rx'], 'only our GatewayClass');
  assert.equal(brief(st.classes.get('rx')), ['Accepted=True/Accepted@0']);
  const gw = st.gateways.get('infra/gw')!;
  assert.equal(brief(gw.conditions), ['Accepted=True/ListenersNotValid@4', 'Programmed=True/Programmed@4'], 'accepted, with a listener set aside (tls)');
  assert.equal(gw.listeners.map((l) => [l.name, l.attachedRoutes, l.supportedKinds.length]), [['http', 3, 1], ['same', 0, 1], ['tls', 0, 0]]);
  assert.equal(brief(gw.listeners[0]!.conditions), ['Accepted=True/Accepted@4', 'ResolvedRefs=True/ResolvedRefs@4', 'Programmed=True/Programmed@4', 'Conflicted=False/NoConflicts@4']);
  assert.equal(brief(gw.listeners[2]!.conditions).slice(0, 3), ['Accepted=False/UnsupportedValue@4', 'ResolvedRefs=True/ResolvedRefs@4', 'Programmed=False/Invalid@4']);
  assert.not.ok(st.gateways.has('infra/other'), 'another controller\'s Gateway');
  const parent = (name: string) => brief(st.routes.get(`team-a/${name}`)?.[0]?.conditions);
  assert.equal(parent('ok'), ['Accepted=True/Accepted@7', 'ResolvedRefs=True/ResolvedRefs@7']);
  assert.equal(parent('steal'), ['Accepted=True/Accepted@0', 'ResolvedRefs=False/RefNotPermitted@0']);
  assert.equal(parent('gone'), ['Accepted=True/Accepted@0', 'ResolvedRefs=False/BackendNotFound@0']);
  assert.equal(parent('outside'), ['Accepted=False/NotAllowedByListeners@0', 'ResolvedRefs=True/ResolvedRefs@0']);
  assert.equal(parent('elsewhere'), ['Accepted=False/NoMatchingListenerHostname@0', 'ResolvedRefs=True/ResolvedRefs@0']);
  assert.is(st.routes.get('team-a/theirs'), undefined, 'a parentRef to another controller\'s Gateway gets no status from us');
  assert.is(st.routes.get('team-a/ok')![0]!.controllerName, 'ingress-rx.io/gateway');
});

test('a backendRef to a Service that does not exist answers 500 (BackendNotFound) until the Service appears, with the same builder', () => {
  const store = world([['Gateway', gateway([{ allowedRoutes: ALL }])], ['HTTPRoute', route('team-a', 'early', ['early.example.com'], [toService('later')])]]);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  let { config, warnings } = builder.build(store);
  assert.equal(locationsOf(config, 'early.example.com'), ['/ → denied']);
  assert.match(warningsOf(warnings, 'HTTPRoute team-a/early')[0]!, /Service team-a\/later not found; the rule answers 500/);
  store.put('Service', service('later', 'team-a'));
  ({ config } = builder.build(store));
  assert.equal(locationsOf(config, 'early.example.com'), ['/ → httproute.team-a.later.80']);
});

test('status: a listener listing a kind it cannot serve, and a Gateway naming parameters we do not read', () => {
  const kinds = (list: Array<{ kind: string }>, name: string) => ({ name, allowedRoutes: { ...ALL, kinds: list } });
  const store = world([
    ['Gateway', gateway([kinds([{ kind: 'InvalidRoute' }], 'only'), kinds([{ kind: 'InvalidRoute' }, { kind: 'HTTPRoute' }], 'mixed')])],
    ['Gateway', { ...gateway([{ name: 'http', allowedRoutes: ALL }], 'params'), spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: ALL }], infrastructure: { parametersRef: { group: 'invalid.io', kind: 'InvalidParameters', name: 'x' } } } } as Gateway],
    ['HTTPRoute', { ...route('team-a', 'to-params', ['p.example.com'], [toService('web')]), spec: { parentRefs: [{ name: 'params', namespace: 'infra' }], hostnames: ['p.example.com'], rules: [toService('web')] } } as HTTPRoute],
  ]);
  const { config, gatewayStatus } = build(store);
  const gw = gatewayStatus!.gateways.get('infra/gw')!;
  assert.equal(gw.listeners.map((l) => [l.name, l.supportedKinds.map((k) => k.kind)]), [['only', []], ['mixed', ['HTTPRoute']]]);
  for (const l of gw.listeners) assert.equal(brief(l.conditions)[1], 'ResolvedRefs=False/InvalidRouteKinds@0', l.name);
  assert.equal(brief(gatewayStatus!.gateways.get('infra/params')!.conditions), ['Accepted=False/InvalidParameters@0', 'Programmed=False/Invalid@0']);
  assert.equal(brief(gatewayStatus!.routes.get('team-a/to-params')?.[0]?.conditions).slice(0, 1), ['Accepted=False/NoMatchingParent@0']);
  assert.not.ok(config.servers.some((s) => s.hostname === 'p.example.com'), 'a Gateway that is not accepted serves no route');
});

test.run();
