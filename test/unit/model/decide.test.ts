// Decisions: each kind of change between two builds of one store gives none, dynamic or reload,
// with the right flags and a reason naming what changed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { decide, diffLists } from '../../../src/model/core/decide.js';
import { snapshot, type ModelSnapshot } from '../../../src/model/core/hash.js';
import { backendsPayload } from '../../../src/model/core/payload.js';
import { ingress, service, slice, testStore, tlsSecret, PREFIX } from '../../support/model-objects.js';

const NOW = new Date('2026-11-22T00:00:00Z');
const CERTS = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const pem = (f: string) => readFileSync(join(CERTS, f), 'utf8');

function setup() {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('Service', service('web-canary'));
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1', '10.0.0.2']));
  store.put('EndpointSlice', slice('web-canary-x', 'web-canary', ['10.0.1.1']));
  store.put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  store.put('Ingress', ingress('web', 'tls.example.com', [['/', 'Prefix', 'web', 80], ['/api', 'Prefix', 'web', 80]], {
    tls: [{ hosts: ['tls.example.com'], secretName: 'tls' }],
  }));
  store.put('Ingress', canary(10, 100));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const running = snapshot(builder.build(store).config);
  const next = (): { snap: ModelSnapshot; decision: ReturnType<typeof decide> } => {
    const { config } = builder.build(store);
    const snap = snapshot(config);
    return { snap, decision: decide(running, snap) };
  };
  return { store, builder, running, next };
}

function canary(weight: number, total: number) {
  return ingress('web-canary', 'tls.example.com', [['/', 'Prefix', 'web-canary', 80]], {
    ts: '2026-01-02T00:00:00Z',
    annotations: { canary: 'true', 'canary-weight': String(weight), 'canary-weight-total': String(total) },
  });
}

test('no running configuration → reload', () => {
  const { next } = setup();
  const d = decide(null, next().snap);
  assert.is(d.kind, 'reload');
  assert.ok(d.backendsChanged && d.serversChanged);
});

test('nothing changed → none', () => {
  const { next } = setup();
  const d = next().decision;
  assert.is(d.kind, 'none');
  assert.not.ok(d.backendsChanged || d.serversChanged || d.l4EndpointsChanged);
});

test('equal content in other objects (two builders of one store) compares equal, by hashes', () => {
  const a = setup();
  const b = setup();
  assert.is.not(a.running.servers[1], b.running.servers[1], 'the builders made distinct objects');
  assert.is.not(a.running.backends[0], b.running.backends[0]);
  const d = decide(a.running, b.running);
  assert.is(d.kind, 'none');
  assert.not.ok(d.backendsChanged || d.serversChanged);
});

test('a fragment that is the same object in both snapshots is not serialised, the replaced one is', () => {
  const { store, builder } = setup();
  const config = builder.build(store).config;
  const reads: string[] = [];
  // Serialising an object starts with its keys.
  const watched = <T extends object>(o: T, name: string): T => new Proxy(o, { ownKeys(t) { reads.push(name); return Reflect.ownKeys(t); } });
  const servers = config.servers.map((s) => watched(s, s.hostname));
  const backends = config.backends.map((b) => watched(b, b.name));
  const running = snapshot({ ...config, servers, backends });
  const changed = { ...config.backends[1]!, endpoints: [] };
  const next = snapshot({ ...config, servers, backends: backends.map((b, i) => (i === 1 ? changed : b)) });
  const d = decide(running, next);
  assert.is(d.kind, 'dynamic');
  assert.match(d.reason, `endpoints of ${changed.name} changed`);
  assert.equal([...new Set(reads)], [changed.name], 'only the replaced backend was serialised');
});

test('a backend compared field by field: other objects of equal content are equal, one changed field or endpoint is a change', () => {
  const { store, builder } = setup();
  // Twenty endpoints: the list's text is longer than the canonical form inlines.
  store.put('EndpointSlice', slice('web-x', 'web', Array.from({ length: 20 }, (_, i) => `10.0.0.${i + 1}`)));
  const config = builder.build(store).config;
  const running = snapshot(config);
  const at = config.backends.findIndex((b) => b.name === 'default-web-80');
  const web = config.backends[at]!;
  const withBackend = (b: typeof web) => snapshot({ ...config, backends: config.backends.map((x, i) => (i === at ? b : x)) });
  const copies = decide(running, withBackend(structuredClone(web)));
  assert.is(copies.kind, 'none', 'a deep copy of every field is no change');
  const policy = decide(running, withBackend({ ...web, sessionAffinityConfig: { ...web.sessionAffinityConfig, name: 'cookie' } }));
  assert.is(policy.kind, 'dynamic');
  assert.match(policy.reason, 'backend default-web-80 changed');
  assert.not.match(policy.reason, 'endpoints of');
  const moved = web.endpoints.map((e, i) => (i === 17 ? { ...e, address: '10.0.0.99' } : e));
  const endpoints = decide(running, withBackend({ ...web, endpoints: moved }));
  assert.is(endpoints.kind, 'dynamic');
  assert.match(endpoints.reason, 'endpoints of default-web-80 changed');
  assert.not.match(endpoints.reason, 'backend default-web-80 changed');
  assert.is(decide(running, withBackend({ ...web, endpoints: structuredClone(web.endpoints) })).kind, 'none');
});

test('endpoints only → dynamic, backends changed, reason names the backend', () => {
  const { store, next } = setup();
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1', '10.0.0.3']));
  const d = next().decision;
  assert.is(d.kind, 'dynamic');
  assert.ok(d.backendsChanged);
  assert.not.ok(d.serversChanged);
  assert.match(d.reason, 'endpoints of default-web-80 changed');
});

test('certificate content → dynamic, servers changed', () => {
  const { store, next } = setup();
  // New PEM bytes for the same host (here the chain gains a blank line): a new certificate uid.
  const renewed = tlsSecret('tls', `${pem('tls.crt')}\n`, pem('tls.key'));
  store.put('Secret', renewed);
  const d = next().decision;
  assert.is(d.kind, 'dynamic');
  assert.ok(d.serversChanged);
  assert.not.ok(d.backendsChanged);
  assert.match(d.reason, 'certificate of tls.example.com changed');
});

test('a host losing its certificate → dynamic (Lua serves the default certificate)', () => {
  const { store, next } = setup();
  store.put('Secret', tlsSecret('tls', pem('other.crt'), pem('other.key')));
  const d = next().decision;
  assert.is(d.kind, 'dynamic');
  assert.ok(d.serversChanged);
});

test('new host → reload', () => {
  const { store, next } = setup();
  store.put('Ingress', ingress('more', 'new.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-03T00:00:00Z' }));
  const d = next().decision;
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'server new.example.com added');
});

test('annotation change → reload', () => {
  const { store, next } = setup();
  store.put('Ingress', ingress('web', 'tls.example.com', [['/', 'Prefix', 'web', 80], ['/api', 'Prefix', 'web', 80]], {
    tls: [{ hosts: ['tls.example.com'], secretName: 'tls' }], annotations: { 'proxy-body-size': '20m' },
  }));
  const d = next().decision;
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'server tls.example.com changed');
});

test('canary weight → dynamic', () => {
  const { store, next } = setup();
  store.put('Ingress', canary(30, 100));
  const { decision: d } = next();
  assert.is(d.kind, 'dynamic');
  assert.ok(d.backendsChanged);
  assert.match(d.reason, 'backend default-web-canary-80 changed');
});

test('canary weight-total → dynamic (ingress-nginx misses this change)', () => {
  const { store, builder, next } = setup();
  store.put('Ingress', canary(10, 1000));
  const d = next().decision;
  assert.is(d.kind, 'dynamic');
  assert.ok(d.backendsChanged);
  const canaryBackend = backendsPayload(builder.build(store).config).find((b) => b.name === 'default-web-canary-80')!;
  assert.is(canaryBackend.trafficShapingPolicy.weightTotal, 1000);
});

test('pathType change → reload (ingress-nginx misses this change)', () => {
  const { store, next } = setup();
  store.put('Ingress', ingress('web', 'tls.example.com', [['/', 'Prefix', 'web', 80], ['/api', 'Exact', 'web', 80]], {
    tls: [{ hosts: ['tls.example.com'], secretName: 'tls' }],
  }));
  const d = next().decision;
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'server tls.example.com changed');
});

test('ConfigMap settings → reload', () => {
  const store = testStore({ configmap: 'ingress-nginx/nginx' });
  store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress-nginx' }, data: {} } as never);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const running = snapshot(builder.build(store).config);
  store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress-nginx' }, data: { 'proxy-body-size': '5m' } } as never);
  const d = decide(running, snapshot(builder.build(store).config));
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'ConfigMap settings changed');
});

test('endpoints of an ssl-passthrough backend → reload (static stream upstreams); other backends stay dynamic', () => {
  const store = testStore();
  store.put('Service', service('tls-app'));
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('tls-app-x', 'tls-app', ['10.0.7.1']));
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1']));
  store.put('Ingress', ingress('pass', 'pass.example.com', [['/', 'Prefix', 'tls-app', 80]], { annotations: { 'ssl-passthrough': 'true' } }));
  store.put('Ingress', ingress('web', 'web.example.com', [['/', 'Prefix', 'web', 80]]));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const first = builder.build(store).config;
  assert.ok(first.backends.find((b) => b.name === 'default-tls-app-80')?.sslPassthrough, 'the fixture has a passthrough backend');
  let running = snapshot(first);
  store.put('EndpointSlice', slice('tls-app-x', 'tls-app', ['10.0.7.2']));
  let next = snapshot(builder.build(store).config);
  const d = decide(running, next);
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'ssl-passthrough endpoints changed');
  running = next;
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.2']));
  next = snapshot(builder.build(store).config);
  assert.is(decide(running, next).kind, 'dynamic');
});

test('a dynamic host added under an ssl-passthrough wildcard host → reload (its name joins the SNI map); elsewhere it stays dynamic', () => {
  const store = testStore();
  store.put('Service', service('tls-app'));
  store.put('Service', service('web'));
  store.put('Ingress', ingress('pass', '*.a.test', [['/', 'Prefix', 'tls-app', 80]], { annotations: { 'ssl-passthrough': 'true' } }));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  const running = snapshot(builder.build(store).config);
  store.put('Ingress', ingress('elsewhere', 'web.b.test', [['/', 'Prefix', 'web', 80]]));
  const other = builder.build(store).config;
  assert.is(other.servers.find((x) => x.hostname === 'web.b.test')!.staticBecause, null, 'a dynamic host');
  assert.is(decide(running, snapshot(other)).kind, 'dynamic');
  store.put('Ingress', ingress('under', 'www.a.test', [['/', 'Prefix', 'web', 80]]));
  const d = decide(running, snapshot(builder.build(store).config));
  assert.is(d.kind, 'reload');
  assert.match(d.reason, 'ssl-passthrough names changed');
});

test('a dynamic host whose Ingress adds, changes or drops a stream-snippet → reload (the stream block is nginx.conf\'s); its other changes stay dynamic', () => {
  const store = testStore({ configmap: 'ingress-nginx/nginx' });
  store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress-nginx' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } } as never);
  store.put('Service', service('web'));
  store.put('Service', service('other'));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
  const at = (snippet: string | null, svc = 'web') => ingress('streamy', 'streamy.test', [['/', 'Prefix', svc, 80]], { annotations: snippet === null ? {} : { 'stream-snippet': snippet } });
  store.put('Ingress', at(null));
  let running = snapshot(builder.build(store).config);
  const step = (ing: ReturnType<typeof at>) => {
    store.put('Ingress', ing);
    const { config } = builder.build(store);
    assert.is(config.servers.find((x) => x.hostname === 'streamy.test')!.staticBecause, null, 'a dynamic host');
    const d = decide(running, snapshot(config));
    running = snapshot(config);
    return d;
  };
  const added = step(at('server { listen 127.0.0.1:9999; return x; }'));
  assert.is(added.kind, 'reload');
  assert.match(added.reason, 'stream-snippet of streamy.test changed');
  assert.is(step(at('server { listen 127.0.0.1:9999; return y; }')).kind, 'reload');
  assert.is(step(at('server { listen 127.0.0.1:9999; return y; }', 'other')).kind, 'dynamic');
  assert.is(step(at(null, 'other')).kind, 'reload');
});

test('TCP service endpoints → reload (static stream upstreams)', () => {
  const store = testStore({ tcpServicesConfigmap: 'ingress-nginx/tcp' });
  store.put('Service', service('db'));
  store.put('EndpointSlice', slice('db-x', 'db', ['10.0.9.1']));
  store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp', namespace: 'ingress-nginx' }, data: { '5432': 'default/db:80' } } as never);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const running = snapshot(builder.build(store).config);
  store.put('EndpointSlice', slice('db-x', 'db', ['10.0.9.2']));
  const d = decide(running, snapshot(builder.build(store).config));
  assert.is(d.kind, 'reload');
  assert.ok(d.l4EndpointsChanged);
  assert.match(d.reason, 'TCP/UDP endpoints changed');
});

test('diffLists gives what comparing every name of both lists gives (random adds, removes, replacements, moves)', () => {
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 8) % n; };
  type Item = { name: string; v: number };
  // The reference: every name of both lists looked up, in after's order, then the removed ones.
  const reference = (before: Item[], after: Item[]) => {
    const old = new Map(before.map((x) => [x.name, x]));
    const now = new Set(after.map((x) => x.name));
    const pairs: Array<{ name: string; before: Item | undefined; after: Item | undefined }> = after.filter((b) => old.get(b.name) !== b).map((b) => ({ name: b.name, before: old.get(b.name), after: b }));
    for (const a of before) if (!now.has(a.name)) pairs.push({ name: a.name, before: a, after: undefined });
    return pairs;
  };
  for (let round = 0; round < 2000; round++) {
    const before: Item[] = Array.from({ length: rnd(12) }, (_, i) => ({ name: `n${i}`, v: 0 }));
    const after = before.slice();
    for (let k = 0, n = rnd(4); k < n; k++) {
      const op = rnd(4);
      const at = rnd(after.length + 1);
      if (op === 0) after.splice(at, 0, { name: `new${round}-${k}`, v: 1 });
      else if (op === 1 && after.length > 0) after.splice(Math.min(at, after.length - 1), 1);
      else if (op === 2 && after.length > 0) { const i = Math.min(at, after.length - 1); after[i] = { name: after[i]!.name, v: 2 }; }
      else if (op === 3 && after.length > 1) { const [x] = after.splice(Math.min(at, after.length - 1), 1); after.splice(rnd(after.length + 1), 0, x!); }
    }
    const got = diffLists(before, after, (x) => x.name);
    const sameNamesInPlace = before.length === after.length && before.every((x, i) => x.name === after[i]!.name);
    if (before === after || sameNamesInPlace) continue; // the place-by-place path, unchanged
    const want = reference(before, after);
    assert.equal(got.pairs, want, `round ${round}: ${before.map((x) => x.name)} → ${after.map((x) => x.name)}`);
    assert.is(got.reordered, want.length === 0, `round ${round} reordered`);
  }
});

test.run();
