// The topology and its incremental update: after a few plain Ingresses changed, only their hosts
// and backends are recomputed, giving what a cold build gives, and a topology handed out never
// changes afterwards (the renderer and the backend reuse compare its parts by identity).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultAnnotations, parseAnnotations } from '../../../src/model/ingress/annotations/index.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { buildFragment } from '../../../src/model/ingress/fragments.js';
import { stableJSON } from '../../../src/model/core/json.js';
import { makeLocation, DEFAULT_UPSTREAM } from '../../../src/model/ingress/fragments.js';
import { locationTemplate } from '../../../src/model/ingress/annotations/index.js';
import { createTopologyCache } from '../../../src/model/ingress/topology-cache.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import { FIXTURE_NOW as NOW } from '../../support/model-fixtures.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';

const topology = suite('topology');

const settings = defaultSettings();
const store = testStore();

function fragment(ing: Ingress) {
  const parsed = parseAnnotations(ing, { prefix: PREFIX, settings, store });
  return buildFragment(ing, parsed.value, settings, parsed.warnings);
}

function cache() {
  const root = makeLocation('/', 'Prefix', null, null, DEFAULT_UPSTREAM, locationTemplate(defaultAnnotations(settings)), settings, true);
  return createTopologyCache({ annotationsPrefix: PREFIX, defaultRoot: () => root });
}

topology('an unchanged list gives back the same topology; a changed one a new topology, the old one as it was', () => {
  const t = cache();
  const a = fragment(ingress('a', 'a.example.com', [['/', 'Prefix', 's0', 80]]));
  const b = fragment(ingress('b', 'b.example.com', [['/', 'Prefix', 's1', 80]]));
  const first = t.topologyFor(settings, [a, b]);
  assert.ok(t.topologyFor(settings, [a, b]) === first);
  const before = stableJSON(first);
  const hosts = first.hosts;
  const b2 = fragment(ingress('b', 'c.example.com', [['/', 'Prefix', 's2', 80], ['/api', 'Prefix', 's1', 80]]));
  const second = t.topologyFor(settings, [a, b2]);
  assert.ok(second !== first);
  assert.ok(second.removed !== null, 'the incremental update was taken');
  assert.equal(second.removed!.hosts, ['b.example.com']);
  assert.equal(second.hosts.map((h) => h.host), ['_', 'a.example.com', 'c.example.com']);
  assert.equal(second.plans.map((p) => p.name), ['default-s0-80', 'default-s1-80', 'default-s2-80']);
  // The server of the unchanged Ingress is the same object in both.
  assert.ok(second.hosts[1]!.base === first.hosts[1]!.base);
  assert.ok(first.hosts === hosts);
  assert.is(stableJSON(first), before, 'the first topology did not change');
  assert.equal(first.hosts.map((h) => h.host), ['_', 'a.example.com', 'b.example.com']);
  // Same hosts and backends: the update patches the host and plan lists at their places.
  const middle = stableJSON(second);
  const b3 = fragment(ingress('b', 'c.example.com', [['/', 'Prefix', 's2', 80], ['/v2', 'Prefix', 's1', 80]]));
  const third = t.topologyFor(settings, [a, b3]);
  assert.equal(third.removed, { hosts: [], backends: [] });
  assert.ok(third.hosts[2]!.base !== second.hosts[2]!.base, 'the changed host has a new server');
  assert.ok(third.plans[0] === second.plans[0], 'the untouched plan is the same object');
  assert.is(stableJSON(second), middle, 'the second topology did not change');
});

topology('Ingress updates that keep their place: hosts gained, lost and shared are patched as a cold build has them', () => {
  const store = testStore();
  for (const n of ['s0', 's1', 's2']) {
    store.put('Service', service(n));
    store.put('EndpointSlice', slice(`${n}-x`, n, ['10.0.0.1']));
  }
  const ts = (d: number) => `2026-01-0${d}T00:00:00Z`;
  const put = (name: string, hosts: string[], svc: string, d: number) => {
    const ing = ingress(name, hosts[0]!, [['/', 'Prefix', svc, 80]], { ts: ts(d) });
    ing.spec.rules = hosts.map((host) => ({ host, http: { paths: [{ path: `/${name}`, pathType: 'Prefix', backend: { service: { name: svc, port: { number: 80 } } } }] } }));
    store.put('Ingress', ing);
  };
  put('a', ['a.example.com'], 's0', 1);
  put('b', ['b.example.com'], 's1', 2);
  put('c', ['b.example.com'], 's2', 3);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  builder.build(store);
  const cold = () => createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
  const steps: Array<[string, string[], string]> = [
    ['a', ['b.example.com'], 's0'], // moves to a host others serve, before them
    ['a', ['a.example.com', 'b.example.com'], 's1'], // both hosts, another backend
    ['c', ['a.example.com'], 's2'], // leaves b for a, after a
    ['b', ['c.example.com'], 's1'], // a new host
    ['a', ['a.example.com'], 's0'],
  ];
  for (const [name, hosts, svc] of steps) {
    put(name, hosts, svc, { a: 1, b: 2, c: 3 }[name]!);
    const r = builder.build(store, [{ kind: 'Ingress', key: `default/${name}` }]);
    const c = cold();
    assert.fixture(stableJSON(r.config), stableJSON(c.config), `${name} → ${hosts.join(',')}`);
    assert.equal(r.warnings, c.warnings);
  }
});

topology("a change to a canary recomputes the topology, but the other plans keep their objects and their endpoints are not read again", () => {
  const store = testStore();
  for (const n of ['s0', 's1', 's2', 's3']) {
    store.put('Service', service(n));
    store.put('EndpointSlice', slice(`${n}-x`, n, ['10.0.0.1']));
  }
  store.put('Ingress', ingress('p', 'a.example.com', [['/', 'Prefix', 's0', 80]], { ts: '2026-01-01T00:00:00Z' }));
  const canary = (weight: string) => ingress('c', 'a.example.com', [['/', 'Prefix', 's1', 80]], { ts: '2026-01-02T00:00:00Z', annotations: { canary: 'true', 'canary-weight': weight } });
  store.put('Ingress', canary('10'));
  store.put('Ingress', ingress('x', 'x.example.com', [['/', 'Prefix', 's2', 80]], { ts: '2026-01-03T00:00:00Z' }));
  store.put('Ingress', ingress('y', 'y.example.com', [['/', 'Prefix', 's3', 80]], { ts: '2026-01-04T00:00:00Z', annotations: { affinity: 'cookie' } }));
  const read: string[] = [];
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'getEndpointSlices') return (key: string) => { read.push(key); return target.getEndpointSlices(key); };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const first = builder.build(counted).config;
  store.put('Ingress', canary('30'));
  read.length = 0;
  const second = builder.build(counted, [{ kind: 'Ingress', key: 'default/c' }]).config;
  const cold = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store).config;
  assert.is(stableJSON(second), stableJSON(cold), 'what a cold build gives');
  const byName = (c: typeof first, n: string) => c.backends.find((b) => b.name === n)!;
  assert.is(byName(second, 'default-s1-80').trafficShapingPolicy?.weight, 30);
  for (const n of ['default-s2-80', 'default-s3-80']) assert.ok(byName(second, n) === byName(first, n), `${n} is the same object`);
  assert.not.ok(read.includes('default/s2') || read.includes('default/s3'), `endpoints read again: ${read.join(', ')}`);
});

topology.run();
