// BackendTLSPolicy and a Gateway's backend client certificate in the model: which locations reach
// their backend over verified TLS (a router TLS location on a dynamic host, proxy_ssl_* of their
// own on a static one), which answer 500 rather than
// be reached with a weaker check, the conflict rules, and the status; as an attacker would try
// it: another namespace's policy, CR/LF in the hostname, another namespace's client Secret.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createModelBuilder } from '../../../src/model/build.js';
import { MAX_TLS_LOCATIONS } from '../../../src/model/gateway/backend-tls.js';
import { routesPayload } from '../../../src/model/core/routes-payload.js';
import { decide } from '../../../src/model/core/decide.js';
import { snapshot } from '../../../src/model/core/hash.js';
import type { Condition, GatewayAPIStatus } from '../../../src/model/gateway/index.js';
import type { Configuration, Location, ModelWarning } from '../../../src/model/core/types.js';
import type { BackendTLSPolicy, ConfigMap, Gateway, HTTPRoute, KubeObject, ReferenceGrant } from '../../../src/store/kube-types.js';
import { MODEL_FIXTURES } from '../../support/model-fixtures.js';
import { PREFIX, service, slice, testStore, tlsSecret } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const pem = (f: string) => readFileSync(join(MODEL_FIXTURES, '_certs', f), 'utf8');
const CA = pem('tls.crt');

const gateway = (ns: string, name: string, extra: Partial<Gateway['spec']> = {}): Gateway => ({
  apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: ns, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }], ...extra },
});
const route = (ns: string, name: string, host: string, service: string, extra: NonNullable<HTTPRoute['spec']['rules']> = [], gw = 'gw'): HTTPRoute => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns, creationTimestamp: '2026-01-02T00:00:00Z' },
  spec: { parentRefs: [{ name: gw, namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: [{ name: service, port: 80 }] }, ...extra] },
});
const policy = (ns: string, name: string, target: string, validation: Record<string, unknown>, created = '2026-01-03T00:00:00Z', sectionName?: string): BackendTLSPolicy => ({
  apiVersion: V1, kind: 'BackendTLSPolicy', metadata: { name, namespace: ns, creationTimestamp: created, generation: 3 },
  spec: { targetRefs: [{ group: '', kind: 'Service', name: target, ...(sectionName ? { sectionName } : {}) }], validation },
});
const ca = (hostname = 'web.internal', name = 'ca') => ({ hostname, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name }] });
const caMap = (ns: string, name: string, text = CA): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { 'ca.crt': text } });
const grant = (ns: string, fromKind: string, fromNs: string): ReferenceGrant => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: `g-${fromKind}-${fromNs}`, namespace: ns },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: fromKind, namespace: fromNs }], to: [{ group: '', kind: 'Secret' }] },
});

type Kind = Parameters<ReturnType<typeof testStore>['put']>[0];
function world(objects: Array<[Kind, KubeObject]>) {
  const store = testStore();
  store.put('GatewayClass', { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } } as KubeObject);
  store.put('Gateway', gateway('infra', 'gw'));
  for (const ns of ['team-a', 'team-b']) {
    store.put('Service', service('web', ns));
    store.put('Service', service('plain', ns));
    store.put('EndpointSlice', slice(`web-${ns}`, 'web', ['10.0.1.1'], ns));
    store.put('EndpointSlice', slice(`plain-${ns}`, 'plain', ['10.0.1.2'], ns));
    store.put('ConfigMap', caMap(ns, 'ca'));
  }
  for (const [kind, obj] of objects) store.put(kind, obj);
  return store;
}

type Built = { config: Configuration; warnings: ModelWarning[]; gatewayStatus?: GatewayAPIStatus };
const build = (store: ReturnType<typeof testStore>, dynamicRoutes = true): Built => createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z'), dynamicRoutes }).build(store);
const server = (b: Built, host: string) => b.config.servers.find((s) => s.hostname === host)!;
const root = (b: Built, host: string): Location => server(b, host).locations.find((l) => l.path === '/')!;
/** The router TLS location a host's `/` is moved to, or undefined. */
const tlsOf = (b: Built, host: string, path = '/') => {
  const id = server(b, host).locations.find((l) => l.path === path)!.backendTLS;
  return id === undefined ? undefined : b.config.backendTLSLocations?.find((l) => l.id === id);
};
const brief = (cs: readonly Condition[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const policyStatus = (b: Built, key: string) => b.gatewayStatus!.backendTLSPolicies.get(key)?.map((a) => `${a.ancestorRef.namespace}/${a.ancestorRef.name}: ${brief(a.conditions).join(' ')}`);

const test = suite('gateway api: BackendTLSPolicy');

test('a policy moves the route to a router TLS location with the hostname as SNI; the host stays dynamic', () => {
  const b = build(world([['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['HTTPRoute', route('team-a', 'p', 'p.example.com', 'plain')], ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca())]]));
  const tls = tlsOf(b, 'a.example.com')!;
  assert.equal({ ...tls, id: /^[0-9a-f]{16}$/.test(tls.id), ca: tls.ca === CA }, { id: true, hostname: 'web.internal', ca: true, clientCertificate: null });
  assert.equal(b.config.backendTLSLocations, [tls]);
  assert.is(server(b, 'a.example.com').staticBecause, null);
  assert.is(root(b, 'a.example.com').settings.proxySSL, null);
  assert.is(routesPayload(b.config).hosts['a.example.com']![0]!.tls, tls.id, 'the route table names the location');
  assert.is(routesPayload(b.config).hosts['p.example.com']![0]!.tls, undefined, 'a Service without a policy goes as before');
  assert.is(tlsOf(b, 'p.example.com'), undefined);
  assert.equal(policyStatus(b, 'team-a/tls'), ['infra/gw: Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs']);
  assert.is(b.gatewayStatus!.backendTLSPolicies.get('team-a/tls')![0]!.conditions[0]!.observedGeneration, 3);
});

test('attacker: a policy of another namespace naming a Service of the same name changes nothing of ours, older or not', () => {
  const b = build(world([['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['BackendTLSPolicy', policy('team-b', 'evil', 'web', ca('evil.example.com'), '2000-01-01T00:00:00Z')]]));
  assert.is(root(b, 'a.example.com').backendTLS, undefined);
  assert.is(b.config.backendTLSLocations, undefined);
  assert.equal(policyStatus(b, 'team-b/evil'), [], 'no Gateway sends to team-b/web');
});

test('conflicts: the older policy applies, then the first by namespace/name; a port\'s policy takes its port', () => {
  const b = build(world([
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')],
    ['BackendTLSPolicy', policy('team-a', 'a-newer', 'web', ca('newer.internal'), '2026-01-05T00:00:00Z')],
    ['BackendTLSPolicy', policy('team-a', 'z-older', 'web', ca('older.internal'), '2026-01-04T00:00:00Z')],
  ]));
  assert.is(tlsOf(b, 'a.example.com')?.hostname, 'older.internal');
  assert.equal(brief(b.gatewayStatus!.backendTLSPolicies.get('team-a/a-newer')![0]!.conditions)[0], 'Accepted=False/Conflicted');
  const tie = build(world([
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')],
    ['BackendTLSPolicy', policy('team-a', 'b', 'web', ca('b.internal'))], ['BackendTLSPolicy', policy('team-a', 'a', 'web', ca('a.internal'))],
  ]));
  assert.is(tlsOf(tie, 'a.example.com')?.hostname, 'a.internal');
  const port = build(world([
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')],
    ['BackendTLSPolicy', policy('team-a', 'whole', 'web', ca('whole.internal'), '2026-01-01T00:00:00Z')],
    ['BackendTLSPolicy', policy('team-a', 'port', 'web', ca('port.internal'), '2026-01-09T00:00:00Z', 'http')],
    ['BackendTLSPolicy', policy('team-a', 'other-port', 'web', ca('other.internal'), '2026-01-01T00:00:00Z', 'grpc')],
  ]));
  assert.is(tlsOf(port, 'a.example.com')?.hostname, 'port.internal');
  for (const p of ['whole', 'port', 'other-port']) assert.equal(brief(port.gatewayStatus!.backendTLSPolicies.get(`team-a/${p}`)![0]!.conditions)[0], 'Accepted=True/Accepted', p);
});

test('careless and hostile values: named, the policy refused, its Service answers 500, never a weaker check; others still served', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['CR/LF in the hostname', ca('web.internal\r\nproxy_ssl_verify off'), 'Accepted=False/Invalid'],
    ['a wildcard hostname', ca('*.internal'), 'Accepted=False/Invalid'],
    ['a hostname NGINX would misread', ca('web.internal";proxy_ssl_verify off;$host'), 'Accepted=False/Invalid'],
    ['no hostname', { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] }, 'Accepted=False/Invalid'],
    ['subjectAltNames', { ...ca(), subjectAltNames: [{ type: 'Hostname', hostname: 'web.internal' }] }, 'Accepted=False/Invalid'],
    ['wellKnownCACertificates', { hostname: 'web.internal', wellKnownCACertificates: 'System' }, 'Accepted=False/Invalid'],
    ['both CA sources', { ...ca(), wellKnownCACertificates: 'System' }, 'Accepted=False/Invalid'],
    ['a Secret as CA', { hostname: 'web.internal', caCertificateRefs: [{ group: '', kind: 'Secret', name: 'ca' }] }, 'Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind'],
    ['a missing ConfigMap', ca('web.internal', 'nope'), 'Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef'],
    ['a ConfigMap of garbage', ca('web.internal', 'junk'), 'Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef'],
    ['one good and one missing ConfigMap', { hostname: 'web.internal', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }, { group: '', kind: 'ConfigMap', name: 'nope' }] }, 'Accepted=True/Accepted ResolvedRefs=False/InvalidCACertificateRef'],
  ];
  for (const [what, validation, expected] of cases) {
    const b = build(world([
      ['ConfigMap', caMap('team-a', 'junk', '-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n')],
      ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['HTTPRoute', route('team-a', 'p', 'p.example.com', 'plain')],
      ['BackendTLSPolicy', policy('team-a', 'tls', 'web', validation)],
    ]));
    const loc = root(b, 'a.example.com');
    assert.equal([loc.deniedStatus, loc.settings.proxySSL, loc.backendTLS], [500, null, undefined], what);
    assert.ok(policyStatus(b, 'team-a/tls')![0]!.includes(expected), `${what}: ${policyStatus(b, 'team-a/tls')}`);
    assert.ok(b.warnings.some((w) => w.object === 'BackendTLSPolicy team-a/tls' && w.field === 'spec.validation'), what);
    assert.is(root(b, 'p.example.com').denied, null, `${what}: the other route is served`);
    let raw = false;
    JSON.stringify(b.config.servers, (_k, v: unknown) => { if (typeof v === 'string' && /[\r\n]/.test(v)) raw = true; return v; });
    assert.not.ok(raw, `${what}: no CR or LF reaches a server`);
  }
});

test('matches, filters and weighted backends on a covered host are the router\'s; a split needing different TLS, h2c and retries are named', () => {
  const b = build(world([
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web', [
      { matches: [{ path: { type: 'PathPrefix', value: '/beta' }, headers: [{ name: 'x-beta', value: '1' }] }], backendRefs: [{ name: 'web', port: 80 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/mixed' } }], backendRefs: [{ name: 'web', port: 80, weight: 1 }, { name: 'plain', port: 80, weight: 1 }] },
      { matches: [{ path: { type: 'PathPrefix', value: '/retry' } }], backendRefs: [{ name: 'web', port: 80 }], retry: { codes: [503], attempts: 2 } },
    ])],
    ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca())],
  ]));
  const s = server(b, 'a.example.com');
  assert.is(s.staticBecause, null);
  const id = tlsOf(b, 'a.example.com')!.id;
  const beta = s.locations.find((l) => l.path === '/beta' && l.when)!;
  assert.is(beta.backendTLS, id, 'a header match keeps its TLS');
  const mixed = s.locations.find((l) => l.path === '/mixed')!;
  assert.equal([mixed.deniedStatus, mixed.backendTLS], [500, undefined]);
  assert.ok(b.warnings.some((w) => w.object === 'HTTPRoute team-a/r' && w.field === 'spec.rules[2]' && w.message.includes('weighted backendRefs reached with different TLS')), 'the split named');
  const retry = s.locations.find((l) => l.path === '/retry')!;
  assert.equal([retry.backendTLS, retry.retry, retry.denied], [id, undefined, null], 'served over TLS without retries');
  assert.ok(b.warnings.some((w) => w.field === 'spec.rules[3].retry' && w.message.includes('not served for a backend reached over TLS')));
  const h2cService = service('grpc', 'team-a');
  const h2c = build(world([
    ['Service', { ...h2cService, spec: { ...h2cService.spec, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }] } } as KubeObject],
    ['EndpointSlice', slice('grpc', 'grpc', ['10.0.1.4'], 'team-a')],
    ['HTTPRoute', route('team-a', 'g', 'g.example.com', 'grpc')], ['BackendTLSPolicy', policy('team-a', 'tls', 'grpc', ca())],
  ]));
  assert.equal([root(h2c, 'g.example.com').deniedStatus, root(h2c, 'g.example.com').backendTLS], [500, undefined], 'h2c with a policy');
  assert.ok(h2c.warnings.some((w) => w.object === 'HTTPRoute team-a/g' && w.message.includes('kubernetes.io/h2c')));
});

test('dynamic routes off: the covered location gets proxy_ssl_* of its own (a server block)', () => {
  const b = build(world([['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca())]]), false);
  const loc = root(b, 'a.example.com');
  assert.is(loc.settings.backendProtocol, 'HTTPS');
  assert.equal({ ...loc.settings.proxySSL, clientCertificate: null, ca: loc.settings.proxySSL?.ca?.includes('BEGIN CERTIFICATE') }, {
    secret: 'team-a/tls:backendtlspolicy', ca: true, clientCertificate: null, ciphers: 'DEFAULT', protocols: ['TLSv1.2', 'TLSv1.3'], name: 'web.internal', verify: 'on', verifyDepth: 4, serverName: 'on',
  });
  assert.is(b.config.backendTLSLocations, undefined);
});

test('route changes on a covered host reload nothing; only a new combination of hostname, CA and client certificate does', () => {
  const base: Array<[Kind, KubeObject]> = [['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca())]];
  const a = build(world(base));
  const moved = build(world([...base, ['Service', service('web2', 'team-a')], ['EndpointSlice', slice('web2', 'web2', ['10.0.1.3'], 'team-a')],
    ['BackendTLSPolicy', policy('team-a', 'tls2', 'web2', ca())],
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web2', [{ matches: [{ path: { type: 'PathPrefix', value: '/more' } }], backendRefs: [{ name: 'web', port: 80 }] }])],
    ['HTTPRoute', route('team-a', 'n', 'n.example.com', 'web')]]));
  assert.equal(moved.config.backendTLSLocations, a.config.backendTLSLocations, 'another policy with the same hostname and CA shares the location');
  assert.is.not(decide(snapshot(a.config), snapshot(moved.config)).kind, 'reload');
  const other = build(world([...base, ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca('other.internal'))]]));
  const d = decide(snapshot(a.config), snapshot(other.config));
  assert.equal([d.kind, d.reason.includes('BackendTLSPolicy TLS locations changed')], ['reload', true], d.reason);
});

test(`attacker: more than ${MAX_TLS_LOCATIONS} combinations: the oldest policies' get a location, the others' routes answer 500, named`, () => {
  const objects: Array<[Kind, KubeObject]> = [];
  const n = MAX_TLS_LOCATIONS + 2;
  for (let i = 0; i < n; i++) {
    objects.push(['Service', service(`s${i}`, 'team-a')], ['EndpointSlice', slice(`s${i}`, `s${i}`, ['10.0.1.9'], 'team-a')],
      ['HTTPRoute', route('team-a', `r${i}`, `h${i}.example.com`, `s${i}`)],
      ['BackendTLSPolicy', policy('team-a', `p${i}`, `s${i}`, ca(`n${i}.internal`), `2026-01-01T00:${String(i).padStart(2, '0')}:00Z`)]);
  }
  const b = build(world(objects));
  assert.is(b.config.backendTLSLocations!.length, MAX_TLS_LOCATIONS);
  assert.is(tlsOf(b, `h${MAX_TLS_LOCATIONS - 1}.example.com`)?.hostname, `n${MAX_TLS_LOCATIONS - 1}.internal`);
  for (const i of [MAX_TLS_LOCATIONS, MAX_TLS_LOCATIONS + 1]) {
    assert.is(root(b, `h${i}.example.com`).deniedStatus, 500, `the newest policy p${i}`);
    assert.ok(b.warnings.some((w) => w.object === `BackendTLSPolicy team-a/p${i}` && w.message.includes(`more than ${MAX_TLS_LOCATIONS}`)));
  }
});

test('a Gateway\'s client certificate is shown to its routes\' TLS backends; another namespace\'s only with a grant for Gateways', () => {
  const withClient = (ns: string, extra: Array<[Kind, KubeObject]> = []) => world([
    ['Secret', tlsSecret('client', pem('tls.crt'), pem('tls.key'), ns)],
    ['Gateway', gateway('infra', 'gw', { tls: { backend: { clientCertificateRef: { group: '', kind: 'Secret', name: 'client', namespace: ns } } } })],
    ['HTTPRoute', route('team-a', 'r', 'a.example.com', 'web')], ['BackendTLSPolicy', policy('team-a', 'tls', 'web', ca())], ...extra,
  ]);
  let b = build(withClient('infra'));
  assert.is(tlsOf(b, 'a.example.com')?.clientCertificate?.key, pem('tls.key').trim() + '\n');
  assert.equal(brief(b.gatewayStatus!.gateways.get('infra/gw')!.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed', 'ResolvedRefs=True/ResolvedRefs']);
  for (const [what, g] of [['no grant', null], ['a grant for HTTPRoutes', grant('team-b', 'HTTPRoute', 'infra')], ['a grant from another namespace', grant('team-b', 'Gateway', 'team-a')], ['a grant in the Gateway\'s namespace', grant('infra', 'Gateway', 'infra')]] as const) {
    b = build(withClient('team-b', g ? [['ReferenceGrant', g]] : []));
    assert.is(tlsOf(b, 'a.example.com')?.clientCertificate, null, what);
    assert.not.ok(JSON.stringify(b.config).includes(pem('tls.key').trim().split('\n')[1]!), `${what}: the key is nowhere in the configuration`);
    assert.equal(brief(b.gatewayStatus!.gateways.get('infra/gw')!.conditions)[2], 'ResolvedRefs=False/RefNotPermitted', what);
  }
  b = build(withClient('team-b', [['ReferenceGrant', grant('team-b', 'Gateway', 'infra')]]));
  assert.ok(tlsOf(b, 'a.example.com')?.clientCertificate, 'the owner\'s grant');
});

test.run();
