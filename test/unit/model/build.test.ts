// The model builder: ingress-nginx's rules checked one by one on the golden fixtures, and the
// memo caches (unchanged fragments come back as the same objects; rebuilds stay fast).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Logger } from '../../../src/log.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { decide } from '../../../src/model/core/decide.js';
import { snapshot, type ModelSnapshot } from '../../../src/model/core/hash.js';
import { stableJSON } from '../../../src/model/core/json.js';
import { EMPTY_UID, FALLBACK_UID, createBackendsSerialiser, serversDelta, serversPayload, type ServersPayload } from '../../../src/model/core/payload.js';
import type { Backend, Configuration, Location, Server } from '../../../src/model/core/types.js';
import { ingress, service, slice, testStore, tlsSecret, PREFIX } from '../../support/model-objects.js';
import { secret } from '../../support/annotation-parse.js';
import { FIXTURE_NOW as NOW, MODEL_FIXTURES, buildFixture, type FixtureOptions } from '../../support/model-fixtures.js';

function fixture(name: string, extra: FixtureOptions = {}) {
  return buildFixture(name, extra);
}

const server = (c: Configuration, host: string): Server => {
  const s = c.servers.find((x) => x.hostname === host);
  if (!s) throw new Error(`no server ${host}`);
  return s;
};
const locs = (s: Server) => s.locations.map((l) => `${l.pathType === 'Exact' ? '= ' : ''}${l.path} -> ${l.backend}`);
const backend = (c: Configuration, name: string) => c.backends.find((b) => b.name === name);

// ---- Rules

const rules = suite('model rules');

rules('the oldest Ingress wins a duplicate host+path+pathType and the server aliases; the newer one is named in a warning', () => {
  const { config, warnings } = fixture('oldest-wins');
  const s = server(config, 'app.example.com');
  assert.ok(locs(s).includes('/ -> default-old-80'));
  assert.ok(locs(s).includes('/only-new/ -> default-new-80'), 'non-conflicting paths of the newer Ingress stay');
  assert.equal(s.aliases, ['old-alias.example.com']);
  assert.ok(warnings.some((w) => w.object === 'Ingress default/newer' && w.message.includes('default/older')));
});

rules('paths of two Ingresses on one host are merged into one server, longest first', () => {
  const { config } = fixture('merge-paths');
  assert.equal(config.servers.map((s) => s.hostname), ['_', 'shop.example.com']);
  assert.equal(locs(server(config, 'shop.example.com')), [
    '/static/ -> default-ui-80', '= /static -> default-ui-80', '/api/ -> default-api-80', '= /api -> default-api-80', '/ -> default-ui-80',
  ]);
});

rules('the default server _ always exists and goes to the built-in default backend', () => {
  const { config } = fixture('default-server');
  assert.equal(config.servers.length, 1);
  assert.equal(locs(server(config, '_')), ['/ -> upstream-default-backend']);
  assert.equal(backend(config, 'upstream-default-backend')?.endpoints, [{ address: '127.0.0.1', port: '8181' }]);
});

rules('a host without a / rule gets a placeholder root to the default backend; spec.defaultBackend replaces it', () => {
  const p = server(fixture('placeholder-root').config, 'api.example.com');
  const root = p.locations.find((l) => l.path === '/')!;
  assert.ok(root.isDefBackend);
  assert.is(root.backend, 'upstream-default-backend');
  const d = server(fixture('default-backend').config, 'site.example.com');
  assert.is(d.locations.find((l) => l.path === '/')!.backend, 'default-fallback-80');
});

rules('a catch-all Ingress takes the default server root', () => {
  const { config } = fixture('catch-all');
  const root = server(config, '_').locations[0]!;
  assert.is(root.backend, 'default-everything-80');
  assert.not.ok(root.isDefBackend);
  assert.equal(root.ingress, { namespace: 'default', name: 'catch-all' });
});

rules('Exact, Prefix (split into /p/ and = /p) and ImplementationSpecific paths', () => {
  const s = server(fixture('path-types').config, 'paths.example.com');
  const l = locs(s);
  assert.ok(l.includes('= /exact -> default-web-80'));
  assert.ok(l.includes('/prefix/ -> default-web-80') && l.includes('= /prefix -> default-web-80'));
  // ImplementationSpecific is Prefix (as ingress-nginx's store makes it): same boundary split.
  assert.ok(l.includes('/impl/ -> default-web-80') && l.includes('= /impl -> default-web-80'));
  assert.is(l.filter((x) => x === '= /both -> default-web-80').length, 1, 'an explicit Exact is not duplicated');
  // A Prefix path ending in / also matches the path without it (the Ingress spec; conformance).
  assert.ok(l.includes('/slash/ -> default-web-80') && l.includes('= /slash -> default-web-80'));
  const twin = s.locations.find((x) => x.path === '/prefix' && x.pathType === 'Exact')!;
  assert.is(twin.ingressPath, '/prefix', 'both pieces of the split keep the Ingress path');
  assert.is(s.locations.find((x) => x.path === '/slash' && x.pathType === 'Exact')!.ingressPath, '/slash/');
});

rules('an Exact path wins over a Prefix path of the same value, even of an older Ingress', () => {
  for (const [exactTs, prefixTs] of [['2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z'], ['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z']]) {
    const store = testStore();
    store.put('Ingress', ingress('exact', 'e.example.com', [['/foo', 'Exact', 'a', 80]], { ts: exactTs }));
    store.put('Ingress', ingress('prefix', 'e.example.com', [['/foo', 'Prefix', 'b', 80], ['/bar/', 'Prefix', 'b', 80]], { ts: prefixTs }));
    store.put('Ingress', ingress('exact-bar', 'e.example.com', [['/bar', 'Exact', 'a', 80]], { ts: prefixTs }));
    const { config } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
    const l = locs(server(config, 'e.example.com'));
    assert.equal(l.filter((x) => x.startsWith('= /foo')), ['= /foo -> default-a-80'], `exact ${exactTs}, prefix ${prefixTs}`);
    assert.ok(l.includes('/foo/ -> default-b-80'));
    assert.equal(l.filter((x) => x.startsWith('= /bar')), ['= /bar -> default-a-80']);
  }
});

rules('regex mode is host-wide when one location uses use-regex or a rewrite-target ≠ its path (ingress-nginx quirk)', () => {
  const { config } = fixture('regex-mode');
  const s = server(config, 'regex.example.com');
  assert.ok(s.useRegex);
  assert.not.ok(server(config, 'other.example.com').useRegex);
  assert.ok(locs(s).includes('/old -> default-web-80'), 'a rewriting Prefix location is not split');
  // ingress-nginx prints a Prefix path as `~* ^/p/` and `~* ^/p` there, which match what `~* ^/p`
  // alone does: no piece of any Ingress of the host is split into an exact twin.
  assert.ok(locs(s).includes('/plain -> default-plain-80'), 'other Ingresses of the host are not split either');
  assert.not.ok(s.locations.some((l) => l.pathType === 'Exact'));
  assert.ok(locs(server(config, 'other.example.com')).includes('= /plain -> default-plain-80'), 'a host without regex mode is split');
});

rules('canary by weight, header and cookie: alternative backends with a traffic shaping policy', () => {
  for (const [name, expect] of [
    ['canary-weight', { weight: 20, weightTotal: 200 }],
    ['canary-header', { header: 'X-Canary', headerValue: 'yes' }],
    ['canary-cookie', { cookie: 'canary' }],
  ] as const) {
    const { config } = fixture(name);
    assert.equal(backend(config, 'default-web-80')?.alternativeBackends, ['default-web-canary-80'], name);
    const alt = backend(config, 'default-web-canary-80')!;
    assert.ok(alt.noServer, name);
    for (const [k, v] of Object.entries(expect)) assert.is((alt.trafficShapingPolicy as unknown as Record<string, unknown>)[k], v, `${name} ${k}`);
    assert.equal(locs(server(config, 'canary.example.com')), ['/ -> default-web-80'], `${name}: the canary adds no location`);
  }
});

rules('a canary without a primary creates no server and its backend is dropped with a warning', () => {
  const { config, warnings } = fixture('canary-no-primary');
  assert.not.ok(config.servers.some((s) => s.hostname === 'nohost.example.com'));
  assert.is(backend(config, 'default-web-canary-80'), undefined);
  assert.ok(warnings.some((w) => w.object === 'Ingress default/lost-canary' && w.message.includes('dropped')));
});

rules('a canary without a primary whose Service others use as their primary backend leaves that backend to them', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1']));
  store.put('Ingress', ingress('site', 'site.example.com', [['/', 'Prefix', 'web', 80]]));
  store.put('Ingress', ingress('lost-canary', 'nohost.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-02T00:00:00Z', annotations: { canary: 'true' } }));
  const { config, warnings } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  assert.equal(backend(config, 'default-web-80')?.endpoints.map((e) => e.address), ['10.0.0.1'], 'the other Ingress keeps its backend');
  assert.equal(locs(server(config, 'site.example.com')), ['/ -> default-web-80']);
  const w = warnings.find((x) => x.object === 'Ingress default/lost-canary');
  assert.match(w?.message ?? '', /canary: no primary Ingress serves host nohost\.example\.com path \/ \(Prefix\); ignored/);
});

rules('TLS: valid certificates per host (wildcards, aliases), the default certificate for the default server', () => {
  const { config, warnings } = fixture('tls-valid');
  const tls = server(config, 'tls.example.com');
  assert.ok(tls.certificate);
  assert.is(tls.tlsSecret, 'default/tls');
  assert.equal(config.certificates[tls.certificate!]!.hosts, ['tls.example.com', 'alias.example.com']);
  assert.is(server(config, 'a.wild.example.com').certificate, server(config, 'b.wild.example.com').certificate);
  assert.ok(config.defaultCertificate);
  assert.is(server(config, '_').certificate, config.defaultCertificate);
  const payload = serversPayload(config);
  assert.is(payload.servers['alias.example.com'], tls.certificate, 'alias covered by the certificate');
  assert.is(payload.servers['nocert-alias.example.com'], '-1', 'alias not covered');
  assert.ok(payload.certificates[tls.certificate!]!.includes('BEGIN CERTIFICATE'));
  assert.not.ok(warnings.some((w) => w.object.startsWith('Secret')));
});

rules('serversDelta: what NGINX must be told from the map it holds; nothing for a host without TLS; the whole map when the Gateway listeners went away', () => {
  const held: ServersPayload = { certificates: { u1: 'PEM1' }, servers: { 'a.test': 'u1', 'b.test': EMPTY_UID, 'c.test': FALLBACK_UID }, complete: true };
  assert.is(serversDelta(held, { ...held, servers: { ...held.servers, 'n.test': EMPTY_UID } }), null, 'a new host without a certificate');
  assert.is(serversDelta(held, { ...held, servers: { 'a.test': 'u1', 'c.test': FALLBACK_UID } }), null, 'a host without a certificate gone');
  assert.equal(serversDelta(held, { certificates: {}, servers: { 'b.test': EMPTY_UID, 'c.test': FALLBACK_UID, 'n.test': FALLBACK_UID }, complete: true }),
    { certificates: {}, servers: { 'n.test': FALLBACK_UID, 'a.test': EMPTY_UID } }, 'the fallback certificate is named, never posted; a TLS host gone is forgotten');
  assert.equal(serversDelta(held, { ...held, certificates: { u1: 'PEM1-again' } }), { certificates: { u1: 'PEM1-again' }, servers: { 'a.test': 'u1' } }, 'a PEM changed under its uid');
  const frontends = { hosts: {} } as unknown as NonNullable<ServersPayload['frontends']>;
  assert.equal(serversDelta(held, { ...held, frontends }), { certificates: {}, servers: {}, frontends }, 'listeners that came');
  const withFrontends = { ...held, frontends };
  assert.is(serversDelta(withFrontends, held), held, 'listeners gone: only a complete map forgets them');
});

rules('TLS: missing Secret, key mismatch, wrong host, expired → the fallback certificate and a warning naming Ingress, Secret and reason', () => {
  for (const [name, host, reason] of [
    ['tls-missing-secret', 'tls.example.com', 'not found'],
    ['tls-key-mismatch', 'tls.example.com', 'does not match'],
    ['tls-wrong-host', 'tls.example.com', 'not valid for tls.example.com'],
    ['tls-expired', 'expired.example.com', 'expired'],
  ] as const) {
    const { config, warnings } = fixture(name);
    // As ingress-nginx: the default certificate, so HTTPS and ssl-redirect stay on.
    assert.is(server(config, host).certificate, FALLBACK_UID, name);
    assert.equal(config.certificates, {}, name);
    assert.is(serversPayload(config).servers[host], FALLBACK_UID, name);
    const w = warnings.find((x) => x.object === 'Ingress default/secure');
    assert.ok(w && w.message.includes('Secret default/') && w.message.includes(reason), `${name}: ${JSON.stringify(warnings)}`);
  }
  // The expiry check uses the injected clock: in 2019 the same certificate is not yet expired... nor valid for long.
  const early = fixture('tls-expired', { now: () => new Date('2020-01-01T12:00:00Z') });
  assert.ok(server(early.config, 'expired.example.com').certificate);
});

rules('ExternalName, service-upstream and a missing Service', () => {
  const ext = backend(fixture('externalname').config, 'default-external-443')!;
  assert.equal(ext.endpoints, [{ address: 'api.upstream.example.net', port: '443' }]);
  assert.is(ext.service?.spec.type, 'ExternalName');
  assert.equal(backend(fixture('service-upstream').config, 'default-web-80')!.endpoints, [{ address: '10.96.0.128', port: '80' }]);
  const missing = fixture('missing-service');
  assert.equal(backend(missing.config, 'default-nowhere-80')!.endpoints, []);
  assert.ok(missing.warnings.some((w) => w.message.includes('Service default/nowhere')));
});

rules('EndpointSlices: only ready endpoints, de-duplicated across slices, sorted, matched by port name', () => {
  assert.equal(backend(fixture('endpoints').config, 'default-web-80')!.endpoints.map((e) => `${e.address}:${e.port}`),
    ['10.0.0.1:8080', '10.0.0.2:8080', '10.0.0.3:8080']);
  const named = fixture('named-ports').config;
  assert.equal(backend(named, 'default-multi-http')!.endpoints.map((e) => e.port), ['8080', '8080']);
  assert.equal(backend(named, 'default-multi-9000')!.endpoints.map((e) => e.port), ['9001', '9001']);
});

rules('cookie affinity, load-balance and upstream-hash-by come from the Ingress using the backend', () => {
  const a = backend(fixture('affinity').config, 'default-web-80')!;
  assert.is(a.sessionAffinityConfig.name, 'cookie');
  assert.is(a.sessionAffinityConfig.mode, 'persistent');
  assert.is(a.sessionAffinityConfig.cookieSessionAffinity.name, 'route');
  assert.equal(a.sessionAffinityConfig.cookieSessionAffinity.locations, { 'sticky.example.com': ['/', '/cart'] });
  const lb = fixture('load-balance').config;
  assert.is(backend(lb, 'default-web-80')!['load-balance'], 'ewma');
  assert.equal(backend(lb, 'default-hashed-80')!.upstreamHashByConfig, { 'upstream-hash-by': '$request_uri' });
});

rules('TCP/UDP services ConfigMaps: valid entries with endpoints, PROXY flags, bad and reserved entries warned', () => {
  const { config, warnings } = fixture('tcp-services');
  assert.equal(config.tcpEndpoints.map((s) => s.port), [5432, 6000]);
  assert.equal(config.tcpEndpoints[1]!.proxyProtocol, { decode: true, encode: false });
  assert.equal(config.tcpEndpoints[0]!.endpoints, [{ address: '10.0.9.1', port: '5432' }]);
  assert.equal(config.udpEndpoints.map((s) => `${s.port} ${s.endpoints[0]?.address}`), ['53 10.0.9.53']);
  for (const key of ['80', '7000', 'x']) assert.ok(warnings.some((w) => w.field === `data["${key}"]`), key);
});

rules('strict-validate-path-type rejects an Exact/Prefix path with other characters, keeps the rest', () => {
  const { config, warnings } = fixture('strict-path');
  const l = locs(server(config, 'strict.example.com'));
  assert.ok(l.includes('/ok-path/ -> default-web-80'));
  assert.not.ok(l.some((x) => x.includes('bad+path')));
  assert.ok(l.includes('/regex.*/ -> default-web-80'), 'ImplementationSpecific is not checked');
  assert.ok(warnings.some((w) => w.field === 'spec.rules[0].http.paths[1].path'));
});

rules('a resource backend is skipped with a warning (the host root serves the default backend)', () => {
  const { config, warnings } = fixture('resource-backend');
  assert.not.ok(locs(server(config, 'res.example.com')).some((x) => x.includes('bucket')));
  assert.ok(warnings.some((w) => w.message.includes('StorageBucket/assets')));
});

rules('a Service backend whose upstream name is the default backend\'s is refused: backend names stay unique', () => {
  const store = testStore();
  const svc = service('default', 'upstream');
  svc.spec.ports = [{ name: 'backend', port: 80, targetPort: 8080 }];
  store.put('Service', svc);
  store.put('Ingress', ingress('x', 'x.example.com', [['/', 'Prefix', 'default', 'backend']], { ns: 'upstream' }));
  const { config, warnings } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  const names = config.backends.map((b) => b.name);
  assert.equal(names.filter((n) => n === 'upstream-default-backend'), ['upstream-default-backend']);
  assert.equal(config.backends.find((b) => b.name === 'upstream-default-backend')!.endpoints, [{ address: '127.0.0.1', port: '8181' }], 'the built-in default server');
  const w = warnings.find((x) => x.object === 'Ingress upstream/x');
  assert.is(w?.field, 'spec.rules[0].http.paths[0].backend');
  assert.match(w!.message, "upstream name upstream-default-backend is the default backend's");
});

rules('each location carries its own Ingress annotations', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('Ingress', ingress('a', 'x.example.com', [['/a', 'Prefix', 'web', 80]], { annotations: { 'proxy-body-size': '9m' } }));
  store.put('Ingress', ingress('b', 'x.example.com', [['/b', 'Prefix', 'web', 80]], { ts: '2026-01-02T00:00:00Z' }));
  const { config } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  const s = server(config, 'x.example.com');
  const by = (p: string): Location => s.locations.find((l) => l.path === p)!;
  assert.is(by('/a/').settings.proxy.bodySize, '9m');
  assert.is.not(by('/b/').settings.proxy.bodySize, '9m');
});

rules('no-tls-redirect-locations (default: ACME challenges) are exempt from the SSL redirect', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('Ingress', ingress('acme', 'tls.example.com', [['/', 'Prefix', 'web', 80], ['/.well-known/acme-challenge/tok', 'ImplementationSpecific', 'web', 80]], { annotations: { [`${PREFIX}/force-ssl-redirect`]: 'true' } }));
  const { config } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  // cert-manager's solver Ingress uses ImplementationSpecific.
  const byPath = new Map(server(config, 'tls.example.com').locations.map((l) => [l.path, l.settings.rewrite]));
  assert.is(byPath.get('/.well-known/acme-challenge/tok/')?.forceSSLRedirect, false);
  assert.is(byPath.get('/.well-known/acme-challenge/tok/')?.sslRedirect, false);
  assert.is(byPath.get('/')?.forceSSLRedirect, true);
});

rules('a host with many paths is merged as one with a few: the oldest wins a duplicate, a canary finds its primary', () => {
  // Either side of the length above which a host's paths are indexed in a Map (servers.ts).
  for (const n of [3, 40]) {
    const store = testStore();
    for (const name of ['old', 'new', 'can']) {
      store.put('Service', service(name));
      store.put('EndpointSlice', slice(`${name}-x`, name, ['10.1.1.1']));
    }
    const many: Array<[string, 'Prefix', string, number]> = Array.from({ length: n }, (_, i) => [`/p${i}`, 'Prefix', 'old', 80]);
    store.put('Ingress', ingress('older', 'many.example.com', [['/', 'Prefix', 'old', 80], ...many], { ts: '2026-01-01T00:00:00Z' }));
    store.put('Ingress', ingress('newer', 'many.example.com', [[`/p${n - 1}`, 'Prefix', 'new', 80], ['/only-new', 'Exact', 'new', 80], ['/', 'ImplementationSpecific', 'new', 80]], { ts: '2026-01-02T00:00:00Z' }));
    store.put('Ingress', ingress('can', 'many.example.com', [['/only-new', 'Exact', 'can', 80]], { ts: '2026-01-03T00:00:00Z', annotations: { canary: 'true', 'canary-weight': '10' } }));
    const { config, warnings } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
    const got = locs(server(config, 'many.example.com'));
    assert.is(got.length, 2 * n + 2, `${n} paths: every Prefix path split in two, / and the Exact path`);
    assert.ok(got.includes(`/p${n - 1}/ -> default-old-80`) && got.includes(`= /p${n - 1} -> default-old-80`), `${n} paths: the older Ingress keeps /p${n - 1}`);
    assert.ok(got.includes('/ -> default-old-80'), `${n} paths: the older Ingress keeps /`);
    assert.ok(got.includes('= /only-new -> default-new-80'), `${n} paths: the newer Ingress's own path stays`);
    assert.equal(backend(config, 'default-new-80')?.alternativeBackends, ['default-can-80'], `${n} paths: the canary merged into its primary`);
    const named = warnings.filter((w) => w.object === 'Ingress default/newer' && w.message.includes('default/older')).map((w) => w.message.split(' (')[0]);
    assert.equal(named, [`host many.example.com path /p${n - 1}`, 'host many.example.com path /'], `${n} paths`);
  }
});

rules.run();

// ---- Memo caches

const memo = suite('model memo');

function bigStore(n: number) {
  const store = testStore();
  for (let i = 0; i < n; i++) {
    store.put('Service', service(`svc-${i}`));
    store.put('EndpointSlice', slice(`svc-${i}-x`, `svc-${i}`, [`10.${(i >> 8) & 255}.${i & 255}.1`, `10.${(i >> 8) & 255}.${i & 255}.2`]));
    store.put('Ingress', ingress(`ing-${i}`, `host-${i}.example.com`, [['/', 'Prefix', `svc-${i}`, 80], ['/api', 'Prefix', `svc-${i}`, 80]]));
  }
  return store;
}

memo('after one EndpointSlice change (2,000 Ingresses) the servers are the same objects and only that backend is new', () => {
  const store = bigStore(2000);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const before = builder.build(store).config;
  store.put('EndpointSlice', slice('svc-7-x', 'svc-7', ['10.9.9.9']));
  const after = builder.build(store).config;
  assert.is(after.servers.length, before.servers.length);
  after.servers.forEach((s, i) => assert.ok(s === before.servers[i], `server ${s.hostname} was rebuilt`));
  const changed = after.backends.filter((b, i) => b !== before.backends[i]).map((b) => b.name);
  assert.equal(changed, ['default-svc-7-80']);
  assert.equal(backend(after, 'default-svc-7-80')!.endpoints, [{ address: '10.9.9.9', port: '8080' }]);
});

memo('a build told of one EndpointSlice change equals a cold build and rebuilds only that backend', () => {
  const store = bigStore(2000);
  const logged: string[] = [];
  const logger = { debug: (_: unknown, msg: string) => logged.push(msg) } as unknown as Logger;
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, logger });
  const before = builder.build(store).config;
  store.put('EndpointSlice', slice('svc-7-x', 'svc-7', ['10.9.9.9', '10.9.9.10']));
  const hinted = builder.build(store, [{ kind: 'EndpointSlice', key: 'default/svc-7-x' }]);
  const cold = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  assert.fixture(stableJSON(hinted.config), stableJSON(cold.config));
  assert.equal(hinted.warnings, cold.warnings);
  assert.ok(hinted.config.servers === before.servers, 'the servers list is reused');
  assert.equal(hinted.config.backends.filter((b, i) => b !== before.backends[i]).map((b) => b.name), ['default-svc-7-80']);
  // Its endpoints gone: the 503 warning appears as in a cold build.
  store.put('EndpointSlice', slice('svc-7-x', 'svc-7', []));
  const empty = builder.build(store, [{ kind: 'EndpointSlice', key: 'default/svc-7-x' }]);
  const cold2 = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  assert.fixture(stableJSON(empty.config), stableJSON(cold2.config));
  assert.equal(empty.warnings, cold2.warnings);
  assert.ok(empty.warnings.some((w) => w.message.includes('default-svc-7-80')));
  assert.equal(logged, ['model built', 'model endpoints rebuilt', 'model endpoints rebuilt'], 'the hinted builds took the endpoints-only path');
});

memo('a backend rebuilt for its endpoints alone is the cold build\'s in key order, its other fields the objects it had', () => {
  const store = bigStore(20);
  store.put('Ingress', ingress('ing-3', 'host-3.example.com', [['/', 'Prefix', 'svc-3', 80]], {
    annotations: { affinity: 'cookie', 'session-cookie-name': 'route', 'upstream-hash-by': '$request_uri' },
  }));
  store.put('Service', service('svc-c'));
  store.put('EndpointSlice', slice('svc-c-x', 'svc-c', ['10.9.8.1']));
  store.put('Ingress', ingress('ing-3-canary', 'host-3.example.com', [['/', 'Prefix', 'svc-c', 80]], {
    ts: '2026-01-02T00:00:00Z', annotations: { canary: 'true', 'canary-weight': '20' },
  }));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const before = builder.build(store).config;
  store.put('EndpointSlice', slice('svc-3-x', 'svc-3', ['10.9.9.9']));
  store.put('EndpointSlice', slice('svc-c-x', 'svc-c', ['10.9.9.10', '10.9.9.11']));
  const hinted = builder.build(store, [{ kind: 'EndpointSlice', key: 'default/svc-3-x' }, { kind: 'EndpointSlice', key: 'default/svc-c-x' }]).config;
  const cold = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store).config;
  for (const name of ['default-svc-3-80', 'default-svc-c-80']) {
    const was = backend(before, name)!;
    const now = backend(hinted, name)!;
    // What the backends POST carries: the same text as a cold build's, keys in the same order.
    assert.is(JSON.stringify(now), JSON.stringify(backend(cold, name)), name);
    assert.is.not(now.endpoints, was.endpoints, `${name}: new endpoints`);
    for (const k of Object.keys(was) as Array<keyof Backend>) if (k !== 'endpoints') assert.ok(now[k] === was[k], `${name}: ${k} kept`);
  }
  assert.ok(backend(hinted, 'default-svc-c-80')!.noServer, 'the canary backend is among them');
  assert.is(backend(hinted, 'default-svc-3-80')!.sessionAffinityConfig.name, 'cookie');
});

memo('a hinted build falls back to the full build for a slice it cannot place (new, deleted, other kinds)', () => {
  const store = bigStore(50);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  builder.build(store);
  const cold = () => createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store).config;
  // A second slice for svc-3, never seen by the builder.
  store.put('EndpointSlice', slice('svc-3-y', 'svc-3', ['10.8.8.8']));
  assert.fixture(stableJSON(builder.build(store, [{ kind: 'EndpointSlice', key: 'default/svc-3-y' }]).config), stableJSON(cold()));
  store.remove('EndpointSlice', slice('svc-3-x', 'svc-3', []));
  assert.fixture(stableJSON(builder.build(store, [{ kind: 'EndpointSlice', key: 'default/svc-3-x' }]).config), stableJSON(cold()));
  store.put('Ingress', ingress('ing-4', 'host-4.example.com', [['/', 'Prefix', 'svc-5', 80]]));
  store.put('EndpointSlice', slice('svc-5-x', 'svc-5', ['10.7.7.7']));
  const mixed = builder.build(store, [{ kind: 'Ingress', key: 'default/ing-4' }, { kind: 'EndpointSlice', key: 'default/svc-5-x' }]);
  assert.fixture(stableJSON(mixed.config), stableJSON(cold()));
});

memo('the backends serialiser posts the whole list, then changes that rebuild the list byte for byte while it changes, grows and shrinks', () => {
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  let ids = 0;
  const serialise = createBackendsSerialiser(() => `t${++ids}`);
  const asBackend = (name: string, n: number) => ({ name, n }) as unknown as Backend;
  let list: Backend[] = Array.from({ length: 300 }, (_, i) => asBackend(`b${i}`, i));
  // What the Lua side would hold: name → text, and the list's id.
  const held = new Map<string, string>();
  let heldId = '';
  for (let step = 0; step < 200; step++) {
    const op = rnd(4);
    list = list.slice();
    if (op === 0) list[rnd(list.length)] = asBackend(`b${rnd(400)}`, step);
    else if (op === 1) list.push(asBackend(`grown${step}`, step));
    else if (op === 2 && list.length > 1) list.splice(rnd(list.length), 1);
    else if (op === 3) list.length = Math.max(0, list.length - rnd(3) * 64);
    if (list.length === 0) list.push(asBackend('only', step));
    list = [...new Map(list.map((b) => [b.name, b])).values()];
    const post = serialise.post(list);
    const body = JSON.parse(post.body.join('')) as { base?: string; id: string; deleted?: string[]; backends: unknown[] };
    assert.is(post.delta, step > 0, `step ${step}: whole only first`);
    if (post.delta) assert.is(body.base, heldId, `step ${step}: based on the list accepted last`);
    else held.clear();
    for (const name of body.deleted ?? []) assert.ok(held.delete(name), `step ${step}: ${name} deleted was held`);
    for (const b of body.backends) held.set((b as Backend).name, JSON.stringify(b));
    heldId = body.id;
    post.accepted();
    const expected = `[${[...list].sort((x, y) => (x.name < y.name ? -1 : 1)).map((b) => JSON.stringify(b)).join(',')}]`;
    assert.is(`[${[...held.keys()].sort().map((k) => held.get(k)).join(',')}]`, expected, `step ${step}`);
    assert.is(serialise.held(), expected, `step ${step}: held()`);
    if (op === 0 && step > 0) assert.ok(body.backends.length <= 1, `step ${step}: one replaced backend sends at most one`);
  }
  // A post not accepted changes nothing; a post accepted after another changed what is held makes its own list the held one.
  const whole = (l: Backend[]) => `[${[...l].sort((x, y) => (x.name < y.name ? -1 : 1)).map((b) => JSON.stringify(b)).join(',')}]`;
  const late = [...list, asBackend('late', 1)];
  const latePost = serialise.post(late);
  assert.is(serialise.held(), whole(list), 'a post not accepted changes nothing');
  const other = [...list.slice(1), asBackend('other', 2)];
  serialise.post(other).accepted();
  assert.is(serialise.held(), whole(other));
  latePost.accepted();
  assert.is(serialise.held(), whole(late), 'accepted after another: its whole list');
  // The model may hand back an unchanged backend as a new object: its text is compared, nothing is sent.
  const copies = late.map((b) => ({ ...b }) as Backend);
  const copiesPost = serialise.post(copies);
  assert.is(copiesPost.changes, 0, 'new objects with the same text change nothing');
  copiesPost.accepted();
  assert.is(serialise.held(), whole(late));
  copies[3] = asBackend(copies[3]!.name, -1);
  assert.is(serialise.post(copies).changes, 1, 'then a changed one is sent');
  serialise.forget();
  assert.is(serialise.post(list).delta, false, 'after forget() the whole list');
});

memo('the backends serialiser sends a new object of a held backend only when its JSON differs', () => {
  const serialise = createBackendsSerialiser(() => 'id');
  const asBackend = (name: string, n: number) => ({ name, n }) as unknown as Backend;
  const sent = (list: Backend[]) => {
    const post = serialise.post(list);
    post.accepted();
    return (JSON.parse(post.body.join('')) as { backends: Backend[] }).backends.map((b) => b.name);
  };
  const a = asBackend('a', 1);
  const b = asBackend('b', 1);
  assert.equal(sent([a, b]), ['a', 'b']);
  assert.equal(sent([a, b]), [], 'the same objects: nothing');
  assert.equal(sent([asBackend('a', 1), b]), [], 'an equal copy: nothing');
  assert.equal(sent([asBackend('a', 2), b]), ['a'], 'a changed copy');
  assert.is(serialise.held(), '[{"name":"a","n":2},{"name":"b","n":1}]');
  assert.equal(sent([asBackend('a', 1), b]), ['a'], 'back to the first text: compared with what NGINX holds now');
});

memo('after one Ingress change only its server is new; a rebuild with no change returns the same fragments', () => {
  const store = bigStore(500);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const a = builder.build(store).config;
  const b = builder.build(store).config;
  b.servers.forEach((s, i) => assert.ok(s === a.servers[i]));
  b.backends.forEach((x, i) => assert.ok(x === a.backends[i]));
  store.put('Ingress', ingress('ing-3', 'host-3.example.com', [['/', 'Prefix', 'svc-3', 80], ['/v2', 'Prefix', 'svc-3', 80]]));
  const c = builder.build(store).config;
  assert.equal(c.servers.filter((s, i) => s !== b.servers[i]).map((s) => s.hostname), ['host-3.example.com']);
});

memo('a changed TLS Secret gives the host a new certificate; other servers are untouched', () => {
  const certs = join(MODEL_FIXTURES, '_certs');
  const pem = (f: string) => readFileSync(join(certs, f), 'utf8');
  const store = testStore();
  store.put('Service', service('web'));
  store.put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  store.put('Ingress', ingress('secure', 'tls.example.com', [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: ['tls.example.com'], secretName: 'tls' }] }));
  store.put('Ingress', ingress('other', 'other.example.com', [['/', 'Prefix', 'web', 80]]));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const a = builder.build(store).config;
  store.put('Secret', tlsSecret('tls', pem('wildcard.crt'), pem('wildcard.key')));
  const r = builder.build(store);
  assert.is(server(r.config, 'tls.example.com').certificate, FALLBACK_UID, 'the new certificate does not cover the host');
  assert.ok(server(r.config, 'other.example.com') === server(a, 'other.example.com'));
});

memo('a certificate that expires between two builds of one builder is refused by the second', () => {
  const pem = (f: string) => readFileSync(join(MODEL_FIXTURES, '_certs', f), 'utf8');
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  store.put('Secret', tlsSecret('exp', pem('expired.crt'), pem('expired.key')));
  store.put('Ingress', ingress('secure', 'expired.example.com', [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: ['expired.example.com'], secretName: 'exp' }] }));
  let now = new Date('2020-01-01T12:00:00Z');
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => now });
  const valid = builder.build(store);
  assert.is.not(server(valid.config, 'expired.example.com').certificate, FALLBACK_UID);
  assert.equal(valid.warnings, []);
  now = new Date('2020-01-03T00:00:00Z');
  const expired = builder.build(store);
  assert.is(server(expired.config, 'expired.example.com').certificate, FALLBACK_UID);
  assert.equal(expired.config.certificates, {});
  assert.ok(expired.warnings.some((w) => w.object === 'Ingress default/secure' && w.message.includes('expired')), JSON.stringify(expired.warnings));
});

memo('incremental rebuilds give exactly what a cold build gives (300 random changes)', () => {
  let seed = 42;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
  const store = testStore();
  const hostsPool = ['a.example.com', 'b.example.com', 'c.example.com', 'd.example.com', 'alias.example.com', ''];
  for (let i = 0; i < 6; i++) {
    store.put('Service', service(`s${i}`));
    store.put('EndpointSlice', slice(`s${i}-x`, `s${i}`, [`10.0.${i}.1`]));
  }
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  // A second builder told what changed (accurate hints, as the sync batch gives them).
  const hintedBuilder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  let hints: Array<{ kind: 'Ingress' | 'EndpointSlice'; key: string }> = [];
  let hintedFast = 0;
  let hintedIngressOnly = 0;
  const live = new Map<string, ReturnType<typeof ingress>>();
  let running: ModelSnapshot | null = null;
  let shared = 0;
  for (let step = 0; step < 300; step++) {
    const op = rnd(10);
    if (op < 6) {
      const name = `ing-${rnd(15)}`;
      const annotations: Record<string, string> = {};
      const flavour = rnd(12);
      if (flavour === 0) annotations['server-alias'] = 'alias.example.com';
      if (flavour === 1) { annotations.canary = 'true'; annotations['canary-weight'] = String(rnd(100)); }
      if (flavour === 2) annotations.affinity = 'cookie';
      if (flavour === 3) annotations['ssl-passthrough'] = 'true';
      if (flavour === 4) annotations['use-regex'] = 'true';
      const paths: Array<[string, 'Prefix' | 'Exact' | 'ImplementationSpecific', string, number]> = [];
      for (let k = 0, n = 1 + rnd(3); k < n; k++) {
        paths.push([pick(['/', '/api', '/web', '/api/v1']), pick(['Prefix', 'Exact', 'ImplementationSpecific'] as const), `s${rnd(6)}`, 80]);
      }
      const ing = ingress(name, pick(hostsPool), paths, {
        annotations, ts: `2026-01-0${1 + rnd(9)}T00:00:00Z`, defaultBackend: rnd(8) === 0 ? [`s${rnd(6)}`, 80] : undefined,
      });
      if (rnd(10) === 0) ing.spec.rules = [];
      live.set(name, ing);
      store.put('Ingress', ing);
      hints.push({ kind: 'Ingress', key: `default/${name}` });
    } else if (op < 8 && live.size > 0) {
      const name = pick([...live.keys()]);
      store.remove('Ingress', live.get(name)!);
      live.delete(name);
      hints.push({ kind: 'Ingress', key: `default/${name}` });
    } else {
      // Slice updates, mostly; sometimes an empty slice, a slice of another Service, or several.
      for (let k = 0, n = rnd(4) === 0 ? 2 : 1; k < n; k++) {
        const i = rnd(6);
        const addresses = rnd(8) === 0 ? [] : [`10.0.${i}.${1 + rnd(3)}`];
        const svc = rnd(15) === 0 ? `s${rnd(6)}` : `s${i}`;
        store.put('EndpointSlice', slice(`s${i}-x`, svc, addresses));
        hints.push({ kind: 'EndpointSlice', key: `default/s${i}-x` });
      }
    }
    const given = rnd(10) === 0 ? undefined : hints;
    if (given && given.every((h) => h.kind === 'EndpointSlice')) hintedFast += 1;
    if (given && given.length > 0 && given.every((h) => h.kind === 'Ingress')) hintedIngressOnly += 1;
    const hinted = hintedBuilder.build(store, given);
    hints = [];
    const inc = builder.build(store);
    const cold = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
    assert.fixture(stableJSON(inc.config), stableJSON(cold.config), `step ${step}`);
    assert.equal(inc.warnings, cold.warnings, `step ${step} warnings`);
    assert.fixture(stableJSON(hinted.config), stableJSON(cold.config), `step ${step} (hinted)`);
    assert.equal(hinted.warnings, cold.warnings, `step ${step} warnings (hinted)`);
    // The incremental build shares objects with the previous one, the cold one shares none:
    // decisions by identity and by hashes agree.
    const coldSnap = snapshot(cold.config);
    const snap = snapshot(inc.config);
    assert.is(decide(coldSnap, snap).kind, 'none', `step ${step}: incremental and cold builds compare equal`);
    assert.equal(decide(running, snap), decide(running, coldSnap), `step ${step} decision`);
    if (running && running.servers !== snap.servers && snap.servers.some((s, i) => s === running!.servers[i])) shared += 1;
    running = snap;
  }
  assert.ok(shared > 100, `incremental builds that kept some servers as the same objects: ${shared}`);
  assert.ok(hintedFast > 40, `builds told only of EndpointSlice changes: ${hintedFast}`);
  assert.ok(hintedIngressOnly > 100, `builds told only of Ingress changes (backends of kept plans reused): ${hintedIngressOnly}`);
});


memo('Ingresses with equal annotations share their parse only while it warned about nothing and read nothing from the store', () => {
  const store = testStore();
  store.put('Service', service('svc'));
  const shared = { 'proxy-body-size': '8m', 'enable-cors': 'true' };
  const bad = { 'proxy-read-timeout': 'never' };
  const auth = { 'auth-type': 'basic', 'auth-secret': 'users' };
  for (const [name, annotations, ns] of [['a', shared, 'default'], ['b', shared, 'default'], ['c', shared, 'other'], ['bad-1', bad, 'default'], ['bad-2', bad, 'default'], ['auth-1', auth, 'default'], ['auth-2', auth, 'default']] as const) {
    store.put('Ingress', ingress(name, `${name}.example.com`, [['/', 'Prefix', 'svc', 80]], { annotations, ns }));
  }
  store.put('Secret', secret('users', { auth: 'alice:$apr1$abc$Qm2v6f8QW0/Gm7xZ5b1nM.\n' }, 'default'));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const root = (c: Configuration, host: string) => server(c, host).locations.find((l) => l.path === '/')!;
  let built = builder.build(store);
  for (const host of ['a', 'b', 'c']) {
    assert.is(root(built.config, `${host}.example.com`).settings.proxy.bodySize, '8m');
    assert.ok(root(built.config, `${host}.example.com`).settings.cors !== null);
  }
  // Each warning names its own Ingress.
  for (const name of ['bad-1', 'bad-2']) assert.ok(built.warnings.some((w) => w.object === `Ingress default/${name}` && w.field.includes('proxy-read-timeout')), name);
  for (const name of ['auth-1', 'auth-2']) assert.is(root(built.config, `${name}.example.com`).denied, null);
  // A parse that read a Secret follows it, for each Ingress.
  store.remove('Secret', secret('users', {}, 'default'));
  built = builder.build(store);
  for (const name of ['auth-1', 'auth-2']) assert.match(root(built.config, `${name}.example.com`).denied ?? '', /not found/);
  const cold = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  assert.fixture(stableJSON(built.config), stableJSON(cold.config));
  assert.equal(built.warnings, cold.warnings);
});

memo('two annotation sets never share a parse, however their texts could be run together', () => {
  const store = testStore();
  store.put('Service', service('svc'));
  // Joined as "name:value" lines, b's one value would read as a's two annotations.
  const sets: Array<[string, Record<string, string>]> = [
    ['a', { 'proxy-body-size': '8m', 'proxy-read-timeout': '30' }],
    ['b', { 'proxy-body-size': '8m\nproxy-read-timeout:30' }],
    ['c', { 'proxy-body-size': '8m', 'proxy-read-timeout': '30', 'proxy-send-timeout': '' }],
    ['d', { 'proxy-body-size': '8m', 'proxy-read-timeout': '302:' }],
  ];
  // Oldest first: a's parse is the one kept for the others to find.
  sets.forEach(([name, annotations], i) => store.put('Ingress', ingress(name, `${name}.example.com`, [['/', 'Prefix', 'svc', 80]], { annotations, ts: `2026-01-01T00:00:0${i}Z` })));
  const built = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  const proxy = (host: string) => server(built.config, host).locations.find((l) => l.path === '/')!.settings.proxy;
  assert.is(proxy('a.example.com').readTimeout, 30);
  assert.is.not(proxy('b.example.com').bodySize, '8m');
  assert.ok(built.warnings.some((w) => w.object === 'Ingress default/b'), 'b is told its body size is refused');
  assert.ok(built.warnings.some((w) => w.object === 'Ingress default/d'), 'd is told its read timeout is refused');
  // Each set built alone gives what it gives among the others.
  for (const [name, annotations] of sets) {
    const alone = testStore();
    alone.put('Service', service('svc'));
    alone.put('Ingress', ingress(name, `${name}.example.com`, [['/', 'Prefix', 'svc', 80]], { annotations }));
    const c = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(alone).config;
    assert.equal(server(c, `${name}.example.com`).locations, server(built.config, `${name}.example.com`).locations, name);
  }
});

memo.run();
