// The kube source against the in-process fake API server: initial burst, live events, relists
// after 410 Gone, reconnects, restarts after 500s and refused connections, silent-watch
// recycling, filtering, namespace scoping and the namespace selector.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pino, type Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { RESOURCE_KINDS, type ResourceKind, type SourceEvent } from '../../../src/store/events.js';
import { kubeSource, type KubeSourceOptions } from '../../../src/streams/kube.js';
import { isIgnoredObject, projectObject } from '../../../src/streams/kube-project.js';
import { storedForm } from '../../../src/store/project.js';
import { KUBE_RESOURCES } from '../../../src/streams/kube-resources.js';
import type { KubeObject } from '../../../src/store/kube-types.js';
import { FakeApiServer, type FakeApiServerOptions, type FakeObject } from '../../support/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';

// ---- fixtures ----

const api = (kind: ResourceKind) => KUBE_RESOURCES[kind].apiVersion;

function make(kind: ResourceKind, name: string, namespace?: string, extra: Record<string, unknown> = {}, labels?: Record<string, string>): FakeObject {
  const body: Record<ResourceKind, Record<string, unknown>> = {
    Namespace: {},
    IngressClass: { spec: { controller: 'k8s.io/ingress-nginx' } },
    ConfigMap: { data: { k: 'v' } },
    Secret: { type: 'Opaque', data: { a: 'Yg==' } },
    Service: { spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] } },
    EndpointSlice: { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: 8080 }] },
    Ingress: { spec: { ingressClassName: 'nginx', rules: [{ host: `${name}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'svc', port: { number: 80 } } } }] } }] } },
  };
  return {
    apiVersion: api(kind),
    kind,
    metadata: { name, ...(namespace && KUBE_RESOURCES[kind].namespaced ? { namespace } : {}), ...(labels ? { labels } : {}) },
    ...body[kind],
    ...extra,
  };
}

/** One object of each kind in namespace `ns` (Namespace and IngressClass named after it). */
function seed(server: FakeApiServer, ns: string, labels?: Record<string, string>): void {
  for (const kind of RESOURCE_KINDS) server.create(make(kind, kind === 'Namespace' ? ns : `${kind.toLowerCase()}-${ns}`, ns, {}, kind === 'Namespace' ? labels : undefined));
}

/** A changed copy of an object, whatever its kind. */
function changed(o: FakeObject, tag: string): FakeObject {
  return { ...o, metadata: { ...o.metadata, annotations: { tag } } };
}

// ---- harness ----

interface Run {
  events: SourceEvent[];
  /** What a store fed by the events would hold: kind → key → object. */
  store: Map<ResourceKind, Map<string, KubeObject>>;
  warnings: Array<{ msg: string; [k: string]: unknown }>;
  synced: () => boolean;
  stop: () => void;
  /** The kinds this run watches. */
  kinds: ResourceKind[];
}

function captureLogger(sink: Run['warnings']): Logger {
  return pino({ level: 'warn' }, { write: (line: string) => sink.push(JSON.parse(line)) });
}

function run(server: FakeApiServer, opts: Partial<KubeSourceOptions> = {}): Run {
  const events: SourceEvent[] = [];
  const warnings: Run['warnings'] = [];
  const store = new Map<ResourceKind, Map<string, KubeObject>>(RESOURCE_KINDS.map((k) => [k, new Map()]));
  let synced = false;
  const sub: Subscription = kubeSource({
    kubeConfig: server.kubeConfig(),
    watchNamespaces: [],
    namespaceSelector: '',
    logger: captureLogger(warnings),
    restartBackoffMs: { initial: 50, max: 400 },
    minWatchGapMs: 20,
    watchIdleTimeoutMs: 10_000,
    listTimeoutMs: 5_000,
    // These tests are about listing and watching; what is kept of each object is tested below.
    keep: 'all',
    ...opts,
  }).subscribe((e) => {
    events.push(e);
    synced = true;
    if (e.type === 'delete') store.get(e.kind)!.delete(e.key);
    else store.get(e.kind)!.set(e.key, e.object);
  });
  const kinds = RESOURCE_KINDS.filter((k) => k !== 'Namespace' || opts.namespaceSelector);
  return { events, store, warnings, kinds, synced: () => synced, stop: () => sub.unsubscribe() };
}

/** The store equals the server's objects of the given kinds (ignored ones excluded), object by object. */
function storeMatchesServer(server: FakeApiServer, r: Run, kinds: readonly ResourceKind[] = r.kinds): boolean {
  for (const kind of kinds) {
    const want = new Map<string, KubeObject>();
    for (const o of server.list(api(kind), kind)) {
      const p = projectObject(kind, o);
      if (!isIgnoredObject(kind, p)) want.set(o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, p);
    }
    const have = r.store.get(kind)!;
    if (have.size !== want.size) return false;
    for (const [k, v] of want) if (JSON.stringify(sortKeys(have.get(k))) !== JSON.stringify(sortKeys(v))) return false;
  }
  return true;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sortKeys(x)]));
  return v;
}

const brief = (e: SourceEvent) => `${e.type} ${e.kind} ${e.key}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `body` with a source over `server` once it has listed every kind and watches each; stops the source after. */
async function whileSynced(server: FakeApiServer, opts: Partial<KubeSourceOptions>, body: (r: Run) => Promise<void>): Promise<void> {
  const r = run(server, opts);
  try {
    await waitFor(() => r.synced() && server.openWatches === 6, { what: 'sync' });
    await body(r);
  } finally {
    r.stop();
  }
}

async function withServer(fn: (server: FakeApiServer) => Promise<void>, opts?: FakeApiServerOptions): Promise<void> {
  const server = await FakeApiServer.start(opts);
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const test = suite('kube source');

test('initial list: every kind in one burst, in RESOURCE_KINDS order (Ingresses last), plain objects', async () => {
  await withServer(async (server) => {
    seed(server, 'a', { team: 'x' });
    seed(server, 'b', { team: 'x' });
    server.create(make('Secret', 'sh.helm.release.v1.app.v1', 'a', { type: 'helm.sh/release.v1' }));
    server.create(make('ConfigMap', 'tiller-release', 'a', {}, { OWNER: 'TILLER' }));
    const r = run(server, { namespaceSelector: 'team=x' });
    try {
      await waitFor(() => r.events.length >= 14, { what: 'initial burst' });
      assert.is(r.events.length, 14);
      assert.ok(r.events.every((e) => e.type === 'add'));
      const order = r.events.map((e) => RESOURCE_KINDS.indexOf(e.kind));
      assert.equal(order, [...order].sort((x, y) => x - y), 'kinds in RESOURCE_KINDS order');
      assert.equal(r.events.slice(-2).map((e) => e.kind), ['Ingress', 'Ingress']);
      for (const kind of RESOURCE_KINDS) assert.is(r.events.filter((e) => e.kind === kind).length, 2, kind);
      assert.not.ok(r.events.some((e) => e.key.includes('helm') || e.key.includes('tiller')), 'helm/tiller objects not emitted');
      const ing = r.events.at(-1)!.object;
      assert.is(ing.apiVersion, 'networking.k8s.io/v1');
      assert.is(ing.kind, 'Ingress');
      assert.type(ing.metadata.creationTimestamp, 'string');
      assert.match(ing.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.not.ok('managedFields' in ing.metadata);
      assert.ok(storeMatchesServer(server, r), 'listed objects equal the projected watch JSON');
      // All kinds' events come in one synchronous burst: nothing more trickles in afterwards.
      await sleep(100);
      assert.is(r.events.length, 14);
    } finally {
      r.stop();
    }
  });
});

test('onInitialState is called once after the initial burst, also for an empty cluster', async () => {
  await withServer(async (server) => {
    let calls = 0;
    const r = run(server, { onInitialState: () => { calls++; } });
    try {
      await waitFor(() => calls === 1, { what: 'onInitialState on an empty cluster' });
      assert.is(r.events.length, 0);
      server.create(make('ConfigMap', 'late', 'default'));
      await waitFor(() => r.events.length === 1, { what: 'a later add' });
      assert.is(calls, 1, 'called once, not per event');
    } finally {
      r.stop();
    }
  });
});

test('live add, update (with old), delete for every kind; an update only when resourceVersion changes', async () => {
  await withServer(async (server) => {
    server.create(make('Namespace', 'a', undefined, {}, { team: 'x' }));
    const r = run(server, { namespaceSelector: 'team=x' });
    try {
      await waitFor(() => r.synced(), { what: 'sync' });
      for (const kind of RESOURCE_KINDS) {
        const name = kind === 'Namespace' ? 'live' : `live-${kind.toLowerCase()}`;
        const key = KUBE_RESOURCES[kind].namespaced ? `a/${name}` : name;
        const created = server.create(make(kind, name, 'a', {}, kind === 'Namespace' ? { team: 'x' } : undefined));
        const add = await waitFor(() => r.events.find((e) => e.kind === kind && e.type === 'add' && e.key === key), { what: `${kind} add` });
        assert.is(add.object.metadata.resourceVersion, created.metadata.resourceVersion);
        const updated = server.update(changed(created, 'v2'));
        const upd = await waitFor(() => r.events.find((e) => e.kind === kind && e.type === 'update' && e.key === key), { what: `${kind} update` });
        assert.is(upd.old?.metadata.resourceVersion, created.metadata.resourceVersion);
        assert.is(upd.object.metadata.resourceVersion, updated.metadata.resourceVersion);
        assert.equal(upd.object.metadata.annotations, { tag: 'v2' });
        server.delete(api(kind), kind, name, KUBE_RESOURCES[kind].namespaced ? 'a' : undefined);
        await waitFor(() => r.events.find((e) => e.kind === kind && e.type === 'delete' && e.key === key), { what: `${kind} delete` });
        assert.is(r.events.filter((e) => e.key === key && e.kind === kind).length, 3, `${kind}: exactly add, update, delete`);
      }
      assert.ok(storeMatchesServer(server, r));
    } finally {
      r.stop();
    }
  });
});

test("kubectl's last-applied copy and managedFields never reach the store, listed or watched; the other annotations do", async () => {
  await withServer(async (server) => {
    const applied = (v: string) => ({
      'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { a: Buffer.from(`secret-${v}`).toString('base64') } }),
      'nginx.ingress.kubernetes.io/rewrite-target': `/${v}`,
    });
    const meta = (name: string, v: string) => ({ name, namespace: 'a', annotations: applied(v), managedFields: [{ manager: 'kubectl', operation: 'Apply' }] });
    const listedIng = server.create({ ...make('Ingress', 'listed', 'a'), metadata: meta('listed', 'v1') });
    const listedSecret = server.create({ ...make('Secret', 'listed', 'a'), metadata: meta('listed', 'v1') });
    const r = run(server);
    try {
      await waitFor(() => r.store.get('Ingress')!.has('a/listed') && r.store.get('Secret')!.has('a/listed'), { what: 'listed' });
      server.update({ ...listedIng, metadata: { ...listedIng.metadata, ...meta('listed', 'v2') } });
      server.update({ ...listedSecret, metadata: { ...listedSecret.metadata, ...meta('listed', 'v2') } });
      server.create({ ...make('Ingress', 'watched', 'a'), metadata: meta('watched', 'v3') });
      await waitFor(() => r.events.filter((e) => e.type === 'update').length === 2 && r.store.get('Ingress')!.has('a/watched'), { what: 'watched' });
      const seen = r.events.filter((e) => e.key === 'a/listed' || e.key === 'a/watched');
      assert.is(seen.length, 5, 'two adds listed, two updates and one add watched');
      for (const e of seen) {
        assert.not.ok('managedFields' in e.object.metadata, `${brief(e)}: managedFields`);
        assert.equal(Object.keys(e.object.metadata.annotations ?? {}), ['nginx.ingress.kubernetes.io/rewrite-target'], `${brief(e)}: annotations`);
        assert.not.ok(JSON.stringify(e.object).includes(Buffer.from('secret-').toString('base64').slice(0, 8)), `${brief(e)}: no copy of the Secret's data`);
      }
      assert.is(r.store.get('Ingress')!.get('a/listed')!.metadata.annotations!['nginx.ingress.kubernetes.io/rewrite-target'], '/v2');
      assert.is(r.store.get('Ingress')!.get('a/watched')!.metadata.annotations!['nginx.ingress.kubernetes.io/rewrite-target'], '/v3');
    } finally {
      r.stop();
    }
  });
});

test("by default the source keeps what the store keeps, and the informers' cache holds those objects, not the server's", async () => {
  await withServer(async (server) => {
    const managedFields = [{ manager: 'endpointslice-controller', operation: 'Update', fieldsV1: { 'f:endpoints': {} } }];
    const slice = (name: string): FakeObject => {
      const o = make('EndpointSlice', name, 'a', {}, { 'kubernetes.io/service-name': 'svc', 'helm.sh/chart': 'app-1.0.0' });
      const endpoints = (o.endpoints as Array<Record<string, unknown>>).map((e) => ({ ...e, nodeName: 'node-1', targetRef: { kind: 'Pod', namespace: 'a', name: `${name}-pod` } }));
      return { ...o, endpoints, metadata: { ...o.metadata, managedFields } };
    };
    server.create(slice('listed'));
    const r = run(server, { keep: 'stored' });
    try {
      await waitFor(() => r.synced() && server.openWatches === 6, { what: 'sync and watches' });
      server.create(slice('watched'));
      await waitFor(() => r.store.get('EndpointSlice')!.has('a/watched'), { what: 'watched' });
      const added = (key: string) => r.events.find((e) => e.type === 'add' && e.key === key)!.object;
      for (const key of ['a/listed', 'a/watched']) {
        const [, name] = key.split('/') as [string, string];
        assert.equal(added(key), storedForm('EndpointSlice', projectObject('EndpointSlice', server.get(api('EndpointSlice'), 'EndpointSlice', name, 'a')!)), `${key}: the stored form`);
        assert.ok(storedForm('EndpointSlice', added(key)) === added(key), `${key}: nothing left for the store to drop`);
        assert.not.ok(JSON.stringify(added(key)).includes('node-1'), `${key}: no Pod reference, no node`);
      }
      // Deleted while no watch sees them: the relist finds them gone, and the informer hands over
      // what its cache held for each, which is the very object emitted when it was added.
      server.dropWatches();
      server.delete(api('EndpointSlice'), 'EndpointSlice', 'listed', 'a');
      server.delete(api('EndpointSlice'), 'EndpointSlice', 'watched', 'a');
      server.compact();
      await waitFor(() => !r.store.get('EndpointSlice')!.has('a/listed') && !r.store.get('EndpointSlice')!.has('a/watched'), { what: 'deletes after the relist' });
      for (const key of ['a/listed', 'a/watched']) {
        const deleted = r.events.find((e) => e.type === 'delete' && e.key === key)!.object;
        assert.ok(deleted === added(key), `${key}: the cached object is the emitted one`);
      }
    } finally {
      r.stop();
    }
  });
});

for (const mode of ['http', 'event'] as const) {
  test(`410 Gone (${mode === 'http' ? 'HTTP status' : 'in-stream ERROR'}) on re-watch: relist, emit only the differences`, async () => {
    await withServer(async (server) => {
      server.goneMode = mode;
      seed(server, 'a');
      const keep = server.create(make('Service', 'keep', 'a'));
      const edit = server.create(make('Ingress', 'edit', 'a'));
      server.create(make('ConfigMap', 'gone', 'a'));
      const r = run(server);
      try {
        await waitFor(() => r.synced() && server.openWatches === 6, { what: 'sync and watches' });
        const lists = server.count({ verb: 'list' });
        const before = r.events.length;
        // Changes the client cannot see live: its watches are dropped, then history is compacted.
        server.dropWatches();
        server.update(changed(edit, 'v2'));
        server.delete('v1', 'ConfigMap', 'gone', 'a');
        server.create(make('Secret', 'new', 'a'));
        server.compact();
        await waitFor(() => storeMatchesServer(server, r), { what: 'store converges' });
        await waitFor(() => server.openWatches === 6, { what: 'watches again' });
        assert.ok(server.count({ verb: 'list' }) > lists, 'relisted');
        assert.equal(r.events.slice(before).map(brief).sort(), ['add Secret a/new', 'delete ConfigMap a/gone', 'update Ingress a/edit']);
        assert.ok(r.store.get('Service')!.has('a/keep') && keep.metadata.resourceVersion === r.store.get('Service')!.get('a/keep')!.metadata.resourceVersion);
        if (mode === 'http') assert.ok(server.requests.some((q) => q.verb === 'watch' && q.status === 410));
      } finally {
        r.stop();
      }
    });
  });
}

test('410 Gone sent in-stream to open watches: relist without spurious events', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, {}, async (r) => {
      const lists = server.count({ verb: 'list' });
      const before = r.events.length;
      server.compact();
      server.expireWatches();
      await waitFor(() => server.count({ verb: 'list' }) >= lists + 6 && server.openWatches === 6, { what: 'relists' });
      const cm = server.update(changed(server.get('v1', 'ConfigMap', 'configmap-a', 'a')!, 'after'));
      await waitFor(() => r.events.length > before, { what: 'event after relist' });
      assert.equal(r.events.slice(before).map(brief), ['update ConfigMap a/configmap-a']);
      assert.is(r.events.at(-1)!.object.metadata.resourceVersion, cm.metadata.resourceVersion);
    });
  });
});

test('dropped connections: re-watch from the last resourceVersion, no relist, nothing lost', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, {}, async (r) => {
      const lists = server.count({ verb: 'list' });
      for (let i = 0; i < 3; i++) {
        server.dropWatches();
        server.create(make('Service', `svc-${i}`, 'a')); // made while the client is disconnected
        await waitFor(() => r.store.get('Service')!.has(`a/svc-${i}`), { what: `svc-${i}` });
      }
      await waitFor(() => server.openWatches === 6);
      assert.is(server.count({ verb: 'list' }), lists, 'no relist needed');
      assert.ok(storeMatchesServer(server, r));
    });
  });
});

test('HTTP 500s on list and watch: informers restart with backoff, sync completes, no request storm', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    server.failNext(12, 500, (q) => q.verb === 'list');
    const t0 = Date.now();
    const r = run(server);
    try {
      await waitFor(() => r.synced(), { what: 'sync despite failing lists' });
      assert.ok(storeMatchesServer(server, r));
      await waitFor(() => server.openWatches === 6);
      server.failNext(20, 500, (q) => q.verb === 'watch');
      server.dropWatches();
      server.create(make('Ingress', 'after-500s', 'a'));
      await waitFor(() => r.store.get('Ingress')!.has('a/after-500s'), { what: 'event after watch 500s' });
      const elapsed = Date.now() - t0;
      // Without backoff an informer would retry thousands of times; with 50 ms doubling to 400 ms, a few.
      const requests = server.count({ since: t0 });
      assert.ok(requests < 6 * (elapsed / 40 + 4), `bounded requests: ${requests} in ${elapsed} ms`);
      assert.ok(r.warnings.some((w) => w.msg.includes('restarting')), 'restarts are logged');
    } finally {
      r.stop();
    }
  });
});

test('a list or watch that never gets an answer is abandoned (listTimeoutMs, watchIdleTimeoutMs) and retried', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    server.hangNext(2, (q) => q.verb === 'list' && q.path.includes('ingresses'));
    server.hangNext(2, (q) => q.verb === 'watch' && q.path.includes('services'));
    const r = run(server, { listTimeoutMs: 200, watchIdleTimeoutMs: 300 });
    try {
      await waitFor(() => r.synced(), { what: 'sync after list timeouts' });
      assert.ok(storeMatchesServer(server, r));
      assert.is(server.count({ verb: 'list', path: 'ingresses' }), 3);
      server.create(make('Service', 'after-hang', 'a'));
      await waitFor(() => r.store.get('Service')!.has('a/after-hang'), { what: 'service watch recovered' });
      assert.ok(server.count({ verb: 'watch', path: 'services' }) >= 3);
    } finally {
      r.stop();
    }
  });
});

test('API server down (refused connections): bounded restarts, then resume with the final state', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, {}, async (r) => {
      const before = r.events.length;
      await server.stop();
      const down = Date.now();
      const svc = server.update(changed(server.get('v1', 'Service', 'service-a', 'a')!, 'while-down'));
      server.delete('networking.k8s.io/v1', 'Ingress', 'ingress-a', 'a');
      server.compact();
      await waitFor(() => r.warnings.filter((w) => w.msg.includes('restarting')).length >= 12, { what: 'restart attempts' });
      await sleep(1200);
      const restarts = r.warnings.filter((w) => w.msg.includes('restarting')).length;
      const downMs = Date.now() - down;
      // Backoff 50 ms doubling to 400 ms: about downMs/400 + 4 attempts per informer, not a spin.
      assert.ok(restarts <= 6 * (downMs / 400 + 6), `restarts bounded: ${restarts} in ${downMs} ms`);
      await server.start();
      await waitFor(() => storeMatchesServer(server, r), { what: 'store converges after the outage', timeoutMs: 5000 });
      assert.equal(r.events.slice(before).map(brief).sort(), ['delete Ingress a/ingress-a', 'update Service a/service-a']);
      assert.is(r.store.get('Service')!.get('a/service-a')!.metadata.resourceVersion, svc.metadata.resourceVersion);
    });
  });
});

test('restart after an outage with no changes emits nothing (no delete+add of unchanged objects)', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, {}, async (r) => {
      const before = r.events.length;
      const lists = server.count({ verb: 'list' });
      await server.stop();
      // Move the server on without touching a watched object, and forget history: relists on return.
      server.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a' }, spec: {} });
      server.compact();
      await waitFor(() => r.warnings.length >= 6, { what: 'informers notice' });
      await server.start();
      await waitFor(() => server.count({ verb: 'list' }) >= lists + 6 && server.openWatches === 6, { what: 'relisted' });
      assert.is(r.events.length, before);
    });
  });
});

test('a silent watch is recycled after watchIdleTimeoutMs, without relisting', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, { watchIdleTimeoutMs: 250 }, async (r) => {
      const watches = server.count({ verb: 'watch' });
      const lists = server.count({ verb: 'list' });
      const t0 = Date.now();
      await waitFor(() => server.count({ verb: 'watch' }) >= watches + 12, { what: 'recycled watches', timeoutMs: 3000 });
      assert.is(server.count({ verb: 'list' }), lists, 'recycling resumes from the last resourceVersion');
      server.create(make('Service', 'after-recycle', 'a'));
      await waitFor(() => r.store.get('Service')!.has('a/after-recycle'));
      const elapsed = Date.now() - t0;
      const recycled = server.count({ verb: 'watch', since: t0 });
      assert.ok(recycled <= 6 * (elapsed / 250 + 2), `about one watch per idle period: ${recycled} in ${elapsed} ms`);
    });
  });
});

test('bookmarks keep a quiet watch alive and are asked for', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, { watchIdleTimeoutMs: 400 }, async (r) => {
      assert.ok(server.requests.filter((q) => q.verb === 'watch').every((q) => q.query.allowWatchBookmarks === 'true'));
      const watches = server.count({ verb: 'watch' });
      for (let i = 0; i < 8; i++) {
        server.sendBookmarks();
        await sleep(100);
      }
      assert.is(server.count({ verb: 'watch' }), watches, 'no recycling while bookmarks arrive');
    });
  });
});

test('a server that ends every watch at once: watch starts are spaced by minWatchGapMs', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, { minWatchGapMs: 200 }, async (r) => {
      const t0 = Date.now();
      const until = t0 + 1000;
      while (Date.now() < until) {
        server.closeWatches();
        await sleep(10);
      }
      const n = server.count({ verb: 'watch', since: t0 });
      assert.ok(n >= 6 && n <= 6 * 7, `watch starts spaced: ${n} in 1 s`);
    });
  });
});

test('helm release secrets and TILLER configmaps are never emitted, also when labels change', async () => {
  await withServer(async (server) => {
    const r = run(server);
    try {
      await waitFor(() => server.openWatches === 6, { what: 'watches' });
      server.create(make('Secret', 'sh.helm.release.v1.x.v1', 'a', { type: 'helm.sh/release.v1' }));
      const cm = server.create(make('ConfigMap', 'c', 'a'));
      await waitFor(() => r.store.get('ConfigMap')!.has('a/c'));
      const tiller = server.update({ ...cm, metadata: { ...cm.metadata, labels: { OWNER: 'TILLER' } } });
      await waitFor(() => !r.store.get('ConfigMap')!.has('a/c'), { what: 'delete when labelled TILLER' });
      server.update({ ...tiller, metadata: { ...tiller.metadata, labels: {} } });
      await waitFor(() => r.store.get('ConfigMap')!.has('a/c'), { what: 'add when the label goes' });
      server.create(make('ConfigMap', 'marker', 'a'));
      await waitFor(() => r.store.get('ConfigMap')!.has('a/marker'));
      assert.equal(r.events.map(brief), ['add ConfigMap a/c', 'delete ConfigMap a/c', 'add ConfigMap a/c', 'add ConfigMap a/marker']);
      // As ingress-nginx does, the server is asked not to send them, on both list and watch.
      const secretReqs = server.requests.filter((q) => q.path === '/api/v1/secrets');
      const cmReqs = server.requests.filter((q) => q.path === '/api/v1/configmaps');
      assert.ok(secretReqs.length >= 2 && secretReqs.every((q) => q.query.fieldSelector === 'type!=helm.sh/release.v1'));
      assert.ok(cmReqs.length >= 2 && cmReqs.every((q) => q.query.labelSelector === 'OWNER!=TILLER'));
    } finally {
      r.stop();
    }
  });
});

test('watchNamespaces: one informer per namespaced kind per namespace; cluster-scoped kinds unaffected', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    seed(server, 'b');
    seed(server, 'c');
    const r = run(server, { watchNamespaces: ['a', 'b', 'a'] });
    try {
      await waitFor(() => r.synced(), { what: 'sync' });
      await waitFor(() => server.openWatches === 1 + 5 * 2, { what: 'watches' });
      const keys = r.events.map((e) => e.key);
      assert.ok(keys.includes('a/ingress-a') && keys.includes('b/ingress-b'));
      assert.not.ok(keys.some((k) => k.startsWith('c/')), 'namespace c not watched');
      assert.equal(r.events.filter((e) => e.kind === 'IngressClass').map((e) => e.key).sort(), ['ingressclass-a', 'ingressclass-b', 'ingressclass-c']);
      assert.not.ok(r.events.some((e) => e.kind === 'Namespace'), 'no Namespace informer without a selector');
      assert.ok(server.requests.filter((q) => q.path.includes('ingresses')).every((q) => /\/namespaces\/(a|b)\/ingresses$/.test(q.path)));
      server.create(make('Service', 'late', 'c'));
      server.create(make('Service', 'late', 'b'));
      await waitFor(() => r.store.get('Service')!.has('b/late'));
      assert.not.ok(r.store.get('Service')!.has('c/late'));
    } finally {
      r.stop();
    }
  });
});

test('namespaceSelector: Namespace events for matching namespaces, selector on list and watch', async () => {
  await withServer(async (server) => {
    server.create(make('Namespace', 'in', undefined, {}, { team: 'x' }));
    const out = server.create(make('Namespace', 'out', undefined, {}, { team: 'y' }));
    const r = run(server, { namespaceSelector: 'team=x' });
    try {
      await waitFor(() => r.synced(), { what: 'sync' });
      assert.equal([...r.store.get('Namespace')!.keys()], ['in']);
      const nsRequests = server.requests.filter((q) => q.path === '/api/v1/namespaces');
      assert.ok(nsRequests.some((q) => q.verb === 'list') && nsRequests.some((q) => q.verb === 'watch'));
      assert.ok(nsRequests.every((q) => q.query.labelSelector === 'team=x'), 'selector on both list and watch');
      server.update({ ...out, metadata: { ...out.metadata, labels: { team: 'x' } } });
      await waitFor(() => r.store.get('Namespace')!.has('out'), { what: 'namespace starts matching' });
      server.delete('v1', 'Namespace', 'in');
      await waitFor(() => !r.store.get('Namespace')!.has('in'), { what: 'namespace deleted' });
      assert.equal(r.events.filter((e) => e.kind === 'Namespace').map(brief), ['add Namespace in', 'add Namespace out', 'delete Namespace in']);
    } finally {
      r.stop();
    }
  });
});

test('malformed watch input does not crash the process', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    await whileSynced(server, {}, async (r) => {
      server.sendRaw('this is not json');
      server.sendRaw('{"type":"ADDED","object":{"kind":"Ingress"}}'); // no metadata: client-node's cache throws
      server.sendRaw('{"type":"MODIFIED"}');
      server.create(make('Ingress', 'still-alive', 'a'));
      await waitFor(() => r.store.get('Ingress')!.has('a/still-alive'));
    });
  });
});

test('unsubscribing stops every informer, watch and timer', async () => {
  await withServer(async (server) => {
    seed(server, 'a');
    server.failNext(1, 500, (q) => q.verb === 'list' && q.path.includes('secrets'));
    const r = run(server, { restartBackoffMs: { initial: 300, max: 300 } });
    await waitFor(() => server.openWatches >= 5, { what: 'watches' });
    r.stop(); // the secrets informer may still be waiting to restart
    await waitFor(() => server.openWatches === 0, { what: 'watches closed' });
    const n = server.requests.length;
    await sleep(500);
    assert.is(server.requests.length, n, 'no request after unsubscribe');
  });
});

test.run();
