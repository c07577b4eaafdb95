// The budgets' rules: who is set aside when one Ingress, one namespace, or everyone together is
// past what the data plane takes (paths, bytes of the Lua payloads, bytes of nginx.conf); and how
// the quarantine lets a budget's set-asides go (the Ingress, its namespace, any Ingress).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import type { SourceEvent } from '../../../src/store/events.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import type { Store } from '../../../src/store/types.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { routesPayload, createRoutesSerialiser } from '../../../src/model/core/routes-payload.js';
import {
  DEFAULT_BUDGETS, ingressPathCount, overConfBudgets, overPathBudgets, overPayloadBudgets, parseBudgetBytes, pathBudgetProblem, type Budgets,
} from '../../../src/model/core/budgets.js';
import { createQuarantine } from '../../../src/model/core/quarantine.js';
import { createBudgetCheck } from '../../../src/actors/budget-check.js';
import { silentLogger } from '../../../src/log.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';

const OFF: Budgets = { maxPathsPerIngress: 0, maxPathsPerNamespace: 0, maxBytesPerIngress: 0, maxBytesPerNamespace: 0 };
const ROOMY = { routesAndBackends: 1e9, post: 1e9, certificates: 1e9 };

function ing(ns: string, name: string, second: number, hosts: number, paths: number): Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name, namespace: ns, creationTimestamp: `2026-01-01T00:00:${String(second).padStart(2, '0')}Z` },
    spec: {
      rules: Array.from({ length: hosts }, (_, h) => ({
        host: `${name}-${h}.${ns}.test`,
        http: { paths: Array.from({ length: paths }, (_, p) => ({ path: `/p${p}`, pathType: 'Exact' as const, backend: { service: { name: 'web', port: { number: 80 } } } })) },
      })),
    },
  };
}

function put(store: Store, o: object, type: 'add' | 'update' | 'delete' = 'update'): void {
  const obj = o as { kind: SourceEvent['kind']; metadata: { namespace?: string; name: string } };
  store.apply({ kind: obj.kind, type, key: `${obj.metadata.namespace ?? 'default'}/${obj.metadata.name}`, object: obj } as unknown as SourceEvent);
}

function storeOf(objects: object[]): Store {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
  for (const ns of ['a', 'b', 'c']) put(store, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns }, spec: { ports: [{ name: 'http', port: 80 }] } });
  for (const o of objects) put(store, o);
  return store;
}

const build = (store: Store) => createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, dynamicRoutes: true }).build(store).config;
const keys = (store: Store) => () => store.listIngresses().map((i) => `${i.metadata.namespace}/${i.metadata.name}`);

test('paths are counted off the object: each rule its paths, at least one; malformed rules count as one', () => {
  assert.is(ingressPathCount(ing('a', 'x', 0, 3, 4)), 12);
  assert.is(ingressPathCount(ing('a', 'y', 0, 2, 0)), 2);
  const odd = { metadata: { name: 'z', namespace: 'a' }, spec: { rules: [null, { http: { paths: 'no' } }] } } as unknown as Ingress;
  assert.is(ingressPathCount(odd), 2);
  assert.is(pathBudgetProblem(ing('a', 'x', 0, 3, 4), { ...OFF, maxPathsPerIngress: 12 }), null);
  assert.match(pathBudgetProblem(ing('a', 'x', 0, 3, 4), { ...OFF, maxPathsPerIngress: 11 })!, /12 paths, more than one Ingress may hold \(--max-paths-per-ingress=11\)/);
});

test('path budgets: an Ingress over its own budget, then per namespace each that would pass it, counted oldest first; other namespaces untouched', () => {
  const list = [ing('a', 'a1', 1, 1, 40), ing('b', 'b1', 2, 1, 40), ing('a', 'a2', 3, 1, 40), ing('a', 'huge', 4, 1, 200), ing('a', 'a3', 5, 1, 40), ing('a', 'a4', 6, 1, 10)];
  const over = overPathBudgets(list, { ...OFF, maxPathsPerIngress: 100, maxPathsPerNamespace: 100 });
  // a3 would make 120; a4 makes 90, which fits.
  assert.equal(over.map((o) => [o.key, o.scope]), [['a/huge', 'object'], ['a/a3', 'namespace']]);
  assert.match(over[1]!.reason, /namespace a holds 80 paths in older Ingresses and this one adds 40, more than a namespace may hold \(--max-paths-per-namespace=100\); the older ones are served/);
  assert.equal(overPathBudgets(list, OFF), []);
});

test('payload budgets: route bytes per Ingress, the namespace\'s Lua payloads, counted oldest first', () => {
  const store = storeOf([ing('a', 'a1', 1, 5, 20), ing('b', 'b1', 2, 5, 20), ing('a', 'a2', 3, 5, 20), ing('a', 'a3', 4, 30, 20)]);
  const config = build(store);
  const routes = routesPayload(config);
  // A route entry without annotations is ~200 bytes: 100 KB per Ingress lets a1 and a2 (100 entries) pass, not a3 (600).
  const { over } = overPayloadBudgets(config, routes, keys(store), { ...OFF, maxBytesPerIngress: 100_000 }, ROOMY);
  assert.equal(over.map((o) => [o.key, o.scope]), [['a/a3', 'object']]);
  assert.match(over[0]!.reason, /its route entries take [\d.]+ KiB, more than one Ingress may put into the route table \(--max-bytes-per-ingress=100000\)/);
  // A namespace budget of what a1 and a2 take lets both pass and sets the younger a3 aside; b is untouched.
  const perIngress = (a: number) => overPayloadBudgets(config, routes, keys(store), { ...OFF, maxBytesPerNamespace: a }, ROOMY).over.map((o) => o.key);
  const bytesA1 = JSON.stringify(routes.hosts['a1-0.a.test']).length * 5;
  assert.equal(perIngress(Math.ceil(bytesA1 * 2.2)), ['a/a3']);
  assert.equal(perIngress(Math.ceil(bytesA1 * 1.2)), ['a/a2', 'a/a3']);
});

test('capacity: past what the dict holds, the namespace holding the most gives up its youngest Ingress until the rest fits', () => {
  const store = storeOf([ing('b', 'b1', 1, 5, 10), ing('a', 'a1', 2, 5, 20), ing('a', 'a2', 3, 5, 20), ing('c', 'c1', 4, 5, 10), ing('a', 'a3', 5, 5, 20)]);
  const config = build(store);
  const routes = routesPayload(config);
  const total = createRoutesSerialiser().post(routes).body.join('').length;
  const { over, totals } = overPayloadBudgets(config, routes, keys(store), OFF, { ...ROOMY, routesAndBackends: Math.floor(total * 0.6) });
  assert.equal(over.map((o) => [o.key, o.scope]), [['a/a3', 'cluster'], ['a/a2', 'cluster']]);
  assert.match(over[0]!.reason, /the data plane cannot hold the route table and backends .* namespace a holds the most .* this is its youngest Ingress there/);
  assert.ok(totals.routesAndBackends <= total * 0.6, `${totals.routesAndBackends} fits`);
  // Each POST has its own limit too.
  assert.equal(overPayloadBudgets(config, routes, keys(store), OFF, { ...ROOMY, post: Math.floor(total * 0.6) }).over.map((o) => o.key), ['a/a3', 'a/a2']);
});

test('capacity, a hostile tenant: a namespace filling the route table with HTTPRoutes gives up its own Ingresses, never another namespace\'s; then it is named', () => {
  const store = storeOf([ing('b', 'b1', 1, 5, 10), ing('a', 'a1', 2, 5, 20), ing('c', 'c1', 4, 5, 10), ing('flood', 'f1', 5, 1, 1)]);
  const V1 = 'gateway.networking.k8s.io/v1';
  const gw = (o: { kind: string; metadata: { name: string; namespace?: string } }) =>
    store.apply({ kind: o.kind, type: 'add', key: o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, object: o } as unknown as SourceEvent);
  put(store, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'flood' }, spec: { ports: [{ name: 'http', port: 80 }] } });
  gw({ apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } } as never);
  gw({ apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' }, spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] } } as never);
  for (let r = 0; r < 40; r++) {
    gw({
      apiVersion: V1, kind: 'HTTPRoute', metadata: { name: `r${r}`, namespace: 'flood', creationTimestamp: '2026-01-02T00:00:00Z' },
      spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [`r${r}.flood.test`], rules: Array.from({ length: 10 }, (_, p) => ({ matches: [{ path: { type: 'Exact', value: `/p${p}` } }], backendRefs: [{ name: 'web', port: 80 }] })) },
    } as never);
  }
  const config = build(store);
  const routes = routesPayload(config);
  assert.ok(config.servers.some((s) => s.hostname === 'r0.flood.test' && s.staticBecause === null), 'the routes are in the table');
  const total = createRoutesSerialiser().post(routes).body.join('').length;
  const judged = overPayloadBudgets(config, routes, keys(store), OFF, { ...ROOMY, routesAndBackends: Math.floor(total * 0.7) });
  // The flooding namespace holds the most: its own Ingress goes, then nothing more of anyone's.
  assert.equal(judged.over.map((o) => o.key), ['flood/f1']);
  assert.match(judged.named?.join() ?? '', /namespace flood holds the most .* objects other than Ingresses \(HTTPRoutes\), so no other namespace's Ingress is set aside/);
  // The same answer build after build (nothing churns), and through the budget check.
  assert.equal(overPayloadBudgets(config, routes, keys(store), OFF, { ...ROOMY, routesAndBackends: Math.floor(total * 0.7) }).over.map((o) => o.key), ['flood/f1']);
});

test('nginx.conf budgets: per Ingress and per namespace, oldest first', () => {
  const bytes = new Map([['a/x', 500], ['a/y', 300], ['b/z', 900], ['a/w', 100]]);
  const order = ['a/x', 'b/z', 'a/y', 'a/w'];
  assert.equal(overConfBudgets(bytes, order, { ...OFF, maxBytesPerIngress: 800 }).map((o) => o.key), ['b/z']);
  assert.equal(overConfBudgets(bytes, order, { ...OFF, maxBytesPerNamespace: 700 }).map((o) => [o.key, o.scope]), [['b/z', 'namespace'], ['a/y', 'namespace']]);
});

test('sizes as flags give them', () => {
  assert.is(parseBudgetBytes('0'), 0);
  assert.is(parseBudgetBytes('512k'), 512 * 1024);
  assert.is(parseBudgetBytes('8M'), 8 * 1024 * 1024);
  assert.is(parseBudgetBytes('1g'), 1024 ** 3);
  for (const bad of ['', '-1', '1.5m', '8mb', 'x']) assert.is(parseBudgetBytes(bad), null, bad);
  assert.ok(DEFAULT_BUDGETS.maxPathsPerIngress > 0 && DEFAULT_BUDGETS.maxBytesPerNamespace > DEFAULT_BUDGETS.maxBytesPerIngress);
});

test('the check sets aside and rebuilds in one build; a namespace set-aside comes back when its namespace makes room', () => {
  const store = storeOf([ing('a', 'a1', 1, 1, 30), ing('a', 'a2', 2, 1, 30), ing('b', 'b1', 3, 1, 30)]);
  const quarantine = createQuarantine();
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, dynamicRoutes: true });
  const check = createBudgetCheck({ store, quarantine, builder, budgets: { ...OFF, maxPathsPerNamespace: 50 }, logger: silentLogger() });
  const first = check.build(undefined);
  assert.equal(quarantine.entries().map((e) => [e.key, e.budget]), [['a/a2', 'namespace']]);
  assert.ok(first.config.servers.some((s) => s.hostname === 'a1-0.a.test') && !first.config.servers.some((s) => s.hostname === 'a2-0.a.test'));
  // A change in another namespace does not let it go; a1 leaving namespace a does.
  assert.equal(quarantine.release(store, { objects: [{ kind: 'Ingress', key: 'b/b1' }], everything: false }), []);
  put(store, ing('a', 'a1', 1, 1, 30), 'delete');
  assert.equal(quarantine.release(store, { objects: [{ kind: 'Ingress', key: 'a/a1' }], everything: false }), ['Ingress a/a2']);
  const second = check.build(undefined);
  assert.equal(quarantine.entries(), []);
  assert.ok(second.config.servers.some((s) => s.hostname === 'a2-0.a.test'));
});

test('a POST refused as too large lowers the capacity counted on: the next build trims the namespace holding the most', () => {
  const store = storeOf([ing('b', 'b1', 1, 5, 10), ing('a', 'a1', 2, 5, 20), ing('a', 'a2', 3, 5, 20)]);
  const quarantine = createQuarantine();
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, dynamicRoutes: true });
  const check = createBudgetCheck({ store, quarantine, builder, budgets: OFF, logger: silentLogger() });
  check.build(undefined);
  assert.is(quarantine.size, 0);
  check.refused('routes');
  check.build(undefined);
  assert.equal(quarantine.entries().map((e) => [e.key, e.budget]), [['a/a2', 'cluster']]);
});

test('a refusal that says how many bytes were short sets aside only what makes the rest fit; one that does not, a tenth', () => {
  const setAsideAfter = (shortBytes?: number) => {
    const store = storeOf(Array.from({ length: 20 }, (_, i) => ing('a', `a${i}`, i + 1, 1, 10)));
    const quarantine = createQuarantine();
    const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, dynamicRoutes: true });
    const check = createBudgetCheck({ store, quarantine, builder, budgets: OFF, logger: silentLogger() });
    check.build(undefined);
    check.refused('backends', shortBytes);
    check.build(undefined);
    return quarantine.entries().map((e) => e.key).sort();
  };
  assert.equal(setAsideAfter(1), ['a/a19'], 'one byte short: the newest Ingress alone');
  // Ingress a0 also carries the namespace's backend: a tenth of the total is three Ingresses' routes.
  assert.equal(setAsideAfter(), ['a/a17', 'a/a18', 'a/a19'], 'not said: a tenth of the total');
});

test.run();
