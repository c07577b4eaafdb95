// The pipeline core under virtual time: ring, bucket, exhaustMap with the trailing sync.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject, of, timer, map, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createRingBuffer } from '../../../src/streams/ring-buffer.js';
import { createTokenBucket } from '../../../src/streams/token-bucket.js';
import { createPipeline } from '../../../src/pipeline/pipeline.js';
import { createSyncer, type SyncResult, type ActorOutcome } from '../../../src/actors/sync.js';
import type { DynamicUpdate } from '../../../src/model/payload.js';
import type { Backend } from '../../../src/model/types.js';
import type { PipelineInput, SourceEvent } from '../../../src/store/events.js';
import type { Store, ApplyResult } from '../../../src/store/types.js';
import type { SyncBatch } from '../../../src/streams/hooks.js';
import type { Configuration } from '../../../src/model/types.js';

function newScheduler(): TestScheduler {
  return new TestScheduler((a, b) => assert.equal(a, b));
}

/** A store that remembers the last value per key and calls everything relevant but `ignored/*`. */
function memoryStore(): Store & { state: Map<string, string> } {
  const state = new Map<string, string>();
  return {
    state,
    options: {} as Store['options'],
    apply(ev: SourceEvent): ApplyResult {
      if (ev.key.startsWith('ignored/')) return { relevant: false, reason: 'not ours' };
      if (ev.type === 'delete') state.delete(ev.key);
      else state.set(ev.key, String(ev.object.metadata.resourceVersion));
      return { relevant: true, reason: 'changed', configmapChanged: ev.kind === 'ConfigMap' };
    },
    listIngresses: () => [], getIngress: () => undefined, getService: () => undefined,
    getEndpointSlices: () => [], getSecret: () => undefined, getConfigMap: () => undefined,
    getIngressClass: () => undefined, getNamespace: () => undefined, ingressesReferencingSecret: () => [], leftOutIngresses: () => [],
    serves: () => ({ served: true, reason: 'every Ingress' }),
  };
}

const ev = (key: string, rv: number, type: SourceEvent['type'] = 'update'): SourceEvent =>
  ({ kind: 'EndpointSlice', type, key, object: { metadata: { name: key.split('/')[1], namespace: key.split('/')[0], resourceVersion: String(rv) } } });

/** A sync that records the store state it saw, taking `durationMs` of virtual time. */
function recordingSync(store: ReturnType<typeof memoryStore>, sched: TestScheduler, durationMs = 0) {
  const seen: Array<{ n: number; t: number; state: string; items: number }> = [];
  const sync = (batch: SyncBatch): Observable<SyncResult> => {
    const state = JSON.stringify([...store.state.entries()].sort());
    seen.push({ n: batch.n, t: sched.now(), state, items: batch.items.length });
    const done = (): SyncResult => ({
      sync: batch.n, t: batch.t, events: batch.items.length, itemIds: batch.items.map((i) => i.id),
      decision: 'dynamic', reason: '', checksum: state, applied: true, posted: [], warnings: [], quarantined: [], durationMs,
    });
    return durationMs > 0 ? timer(durationMs, sched).pipe(map(done)) : of(done());
  };
  return { seen, sync };
}

const ring = suite('ring buffer');

ring('drops exactly the oldest skippable items when full, never the tasks', () => {
  const dropped: string[] = [];
  const r = createRingBuffer<{ id: string; skip: boolean }>({ capacity: 4, isSkippable: (x) => x.skip, onDrop: (x) => dropped.push(x.id) });
  r.push({ id: 't1', skip: false });
  r.push({ id: 'e1', skip: true });
  r.push({ id: 'e2', skip: true });
  r.push({ id: 't2', skip: false });
  r.push({ id: 'e3', skip: true }); // full: e1 goes
  r.push({ id: 'e4', skip: true }); // full: e2 goes
  assert.equal(dropped, ['e1', 'e2']);
  assert.equal(r.drain().map((x) => x.id), ['t1', 't2', 'e3', 'e4']);
  assert.is(r.size, 0);
  assert.is(r.dropped, 2);
});

ring('a ring full of tasks keeps growing with tasks and drops incoming skippable items', () => {
  const r = createRingBuffer<{ id: string; skip: boolean }>({ capacity: 2, isSkippable: (x) => x.skip });
  r.push({ id: 't1', skip: false });
  r.push({ id: 't2', skip: false });
  r.push({ id: 't3', skip: false });
  r.push({ id: 'e1', skip: true });
  assert.equal(r.drain().map((x) => x.id), ['t1', 't2', 't3']);
  assert.is(r.dropped, 1);
});

ring.run();

const bucket = suite('token bucket');

bucket('burst 1 at 0.3/s: first token now, the next after 3334 ms', () => {
  const s = newScheduler();
  s.run(() => {
    const b = createTokenBucket({ ratePerSecond: 0.3, burst: 1, scheduler: s });
    assert.is(b.delay(), 0);
    b.take();
    assert.is(b.delay(), 3334);
  });
});

bucket('tokens refill with virtual time up to the burst', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const b = createTokenBucket({ ratePerSecond: 2, burst: 3, scheduler: s });
    b.take(); b.take(); b.take();
    assert.is(b.delay(), 500);
    s.schedule(() => {
      assert.is(b.delay(), 0);
      b.take(); b.take(); b.take(); // only 3 after 10 s: the burst caps the bucket
      assert.is(b.delay(), 500);
    }, 10_000);
    flush();
  });
});

bucket.run();

const pipe = suite('pipeline');

pipe('a lone event syncs at once and sees it', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const { seen, sync } = recordingSync(store, s);
    createPipeline({ inputs, store, scheduler: s, sync }).subscribe();
    s.schedule(() => inputs.next(ev('default/a', 1)), 5000);
    flush();
    assert.is(seen.length, 1);
    assert.is(seen[0].t, 5000);
    assert.is(seen[0].state, JSON.stringify([['default/a', '1']]));
  });
});

pipe('a synchronous burst (an initial list) is one sync', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const { seen, sync } = recordingSync(store, s);
    createPipeline({ inputs, store, scheduler: s, sync }).subscribe();
    s.schedule(() => { for (let i = 0; i < 50; i++) inputs.next(ev(`default/s${i}`, i)); }, 0);
    flush();
    assert.is(seen.length, 1);
    assert.is(seen[0].items, 50);
  });
});

pipe('irrelevant events do not sync', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const { seen, sync } = recordingSync(store, s);
    const filtered: number[] = [];
    createPipeline({ inputs, store, scheduler: s, sync, hooks: { filtered: (it) => filtered.push(it.id) } }).subscribe();
    s.schedule(() => inputs.next(ev('ignored/x', 1)), 10);
    flush();
    assert.is(seen.length, 0);
    assert.equal(filtered, [1]);
  });
});

pipe('a storm of 10,000 events over 60 s: at most ceil(60 × 0.3) + 1 syncs, the last sees the final state', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const { seen, sync } = recordingSync(store, s, 200);
    createPipeline({ inputs, store, scheduler: s, sync }).subscribe();
    for (let i = 0; i < 10_000; i++) {
      s.schedule(() => inputs.next(ev(`default/svc${i % 37}`, i)), Math.floor((i * 60_000) / 10_000));
    }
    flush();
    assert.ok(seen.length <= Math.ceil(60 * 0.3) + 1, `syncs: ${seen.length}`);
    assert.ok(seen.length >= 15, `the bucket should still let syncs through: ${seen.length}`);
    const finalState = JSON.stringify([...store.state.entries()].sort());
    assert.is(seen[seen.length - 1].state, finalState);
    // Paced: consecutive syncs are at least one token apart.
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].t - seen[i - 1].t >= 3333, `gap ${i}`);
  });
});

pipe('events during a long sync are merged into exactly one trailing sync', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const { seen, sync } = recordingSync(store, s, 10_000);
    createPipeline({ inputs, store, scheduler: s, sync }).subscribe();
    s.schedule(() => inputs.next(ev('default/a', 1)), 0);
    for (let t = 1000; t <= 9000; t += 1000) s.schedule(() => inputs.next(ev('default/a', t)), t);
    flush();
    assert.is(seen.length, 2);
    assert.is(seen[1].t, 10_000);
    assert.is(seen[1].items, 9);
    assert.is(seen[1].state, JSON.stringify([['default/a', '9000']]));
  });
});

pipe('overflow while a sync runs drops the oldest events; tasks survive and are synced', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const dropped: number[] = [];
    const batches: SyncBatch[] = [];
    const { sync } = recordingSync(store, s, 1000);
    createPipeline({
      inputs, store, scheduler: s, ringCapacity: 8,
      sync: (b) => { batches.push(b); return sync(b); },
      hooks: { dropped: (it) => dropped.push(it.id) },
    }).subscribe();
    s.schedule(() => inputs.next(ev('default/first', 0)), 0); // id 1, starts a 1 s sync
    s.schedule(() => {
      inputs.next({ kind: 'task', task: 'template-change', detail: 'nginx.tmpl' }); // id 2
      for (let i = 0; i < 20; i++) inputs.next(ev(`default/e${i}`, i)); // ids 3..22
    }, 10);
    flush();
    // 21 items into 8 slots: the 13 oldest events (ids 3..15) are dropped, the task is kept.
    assert.equal(dropped, Array.from({ length: 13 }, (_, i) => i + 3));
    assert.is(batches.length, 2);
    assert.equal(batches[1].items.map((i) => i.id), [2, ...Array.from({ length: 7 }, (_, i) => i + 16)]);
    assert.is(batches[0].lossy, undefined);
    assert.is(batches[1].lossy, true, 'the batch after drops says so');
  });
});

pipe('a ConfigMap change adds a non-skippable configmap-change task', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    const batches: SyncBatch[] = [];
    const { sync } = recordingSync(store, s);
    createPipeline({ inputs, store, scheduler: s, sync: (b) => { batches.push(b); return sync(b); } }).subscribe();
    s.schedule(() => inputs.next({ kind: 'ConfigMap', type: 'update', key: 'ingress/nginx', object: { metadata: { name: 'nginx', namespace: 'ingress' } } }), 0);
    flush();
    const kinds = batches[0].items.map((i) => ('task' in i.input ? i.input.task : i.input.kind));
    assert.equal(kinds, ['ConfigMap', 'configmap-change']);
    assert.is(batches[0].items[1].skippable, false);
  });
});

pipe.run();

// ---- the sync actor's decisions and state

const fakeConfig = (v: string) => ({ servers: [], backends: [], tcpEndpoints: [], udpEndpoints: [], certificates: {}, defaultCertificate: null, settings: { v } }) as unknown as Configuration;

function syncHarness(s: TestScheduler, opts: { reloadOk?: () => boolean; dynamicOk?: () => boolean } = {}) {
  let model = { structure: 'a', endpoints: '1' };
  const calls: string[] = [];
  const hints: unknown[] = [];
  const syncer = createSyncer<{ structure: string; endpoints: string }>({
    scheduler: s,
    build: (changes) => { hints.push(changes); return { config: fakeConfig(model.structure), warnings: [] }; },
    snapshot: () => ({ ...model }),
    decide: (running, next) => {
      if (!running) return { kind: 'reload', reason: 'first', backendsChanged: true, serversChanged: true, routesChanged: false, l4EndpointsChanged: false };
      const structural = running.structure !== next.structure;
      const eps = running.endpoints !== next.endpoints;
      return { kind: structural ? 'reload' : eps ? 'dynamic' : 'none', reason: structural ? 'structure' : eps ? 'endpoints' : 'same', backendsChanged: eps, serversChanged: false, routesChanged: false, l4EndpointsChanged: false };
    },
    backendsPayload: () => [{ name: model.endpoints } as Backend],
    serversPayload: () => ({ certificates: {}, servers: {} }),
    reload: (): Observable<ActorOutcome> => {
      calls.push('reload');
      return of(opts.reloadOk?.() ?? true ? { ok: true, checksum: `conf-${model.structure}` } : { ok: false });
    },
    dynamic: (u: DynamicUpdate): Observable<ActorOutcome> => { calls.push(`post:${Object.keys(u).join('+')}`); return of({ ok: opts.dynamicOk?.() ?? true }); },
  });
  let n = 0;
  const run = (items: SyncBatch['items'] = [], lossy = false) => {
    let out: SyncResult | undefined;
    syncer({ n: ++n, t: s.now(), items, ...(lossy ? { lossy } : {}) }).subscribe((r) => { out = r; });
    return out!;
  };
  return { calls, hints, run, set: (m: Partial<typeof model>) => { model = { ...model, ...m }; } };
}

const actor = suite('sync actor');

actor('first sync reloads and posts everything; then endpoints-only is dynamic; structure reloads', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  assert.is(h.run().decision, 'reload');
  assert.equal(h.calls, ['reload', 'post:backends+servers']);
  assert.is(h.run().decision, 'none');
  h.set({ endpoints: '2' });
  const dyn = h.run();
  assert.is(dyn.decision, 'dynamic');
  assert.equal(dyn.posted, ['backends']);
  h.set({ structure: 'b' });
  assert.is(h.run().decision, 'reload');
  assert.equal(h.calls, ['reload', 'post:backends+servers', 'post:backends', 'reload']);
});

actor("a result's checksum is the running nginx.conf's: set by each reload, kept by dynamic syncs and failed reloads", () => {
  const s = newScheduler();
  let ok = true;
  const h = syncHarness(s, { reloadOk: () => ok });
  assert.is(h.run().checksum, 'conf-a');
  h.set({ endpoints: '2' });
  assert.is(h.run().checksum, 'conf-a');
  h.set({ structure: 'b' });
  assert.is(h.run().checksum, 'conf-b');
  ok = false;
  h.set({ structure: 'c' });
  const failed = h.run();
  assert.is(failed.applied, false);
  assert.is(failed.checksum, 'conf-b');
});

actor('the build is told which objects a batch changed; nothing when the batch holds a task or follows ring drops', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  const ev = (id: number, key: string) => ({ id, t: 0, skippable: true, input: { kind: 'EndpointSlice' as const, type: 'update' as const, key, object: { metadata: {} } } }) as SyncBatch['items'][number];
  h.run([ev(1, 'ns/a'), ev(2, 'ns/b')]);
  h.run([ev(3, 'ns/c'), { id: 4, t: 0, skippable: false, input: { kind: 'task', task: 'template-change' } } as SyncBatch['items'][number]]);
  h.run([ev(5, 'ns/d'), ev(6, 'ns/e')], true); // the ring dropped events before this batch: unknown
  h.run([ev(7, 'ns/f'), ev(8, 'ns/g'), ev(9, 'ns/h'), ev(10, 'ns/i')]);
  assert.equal(h.hints, [
    [{ kind: 'EndpointSlice', key: 'ns/a' }, { kind: 'EndpointSlice', key: 'ns/b' }], undefined, undefined,
    ['ns/f', 'ns/g', 'ns/h', 'ns/i'].map((key) => ({ kind: 'EndpointSlice', key })),
  ]);
});

actor('a failed reload does not advance the running state: the next sync reloads again', () => {
  const s = newScheduler();
  let ok = false;
  const h = syncHarness(s, { reloadOk: () => ok });
  const r1 = h.run();
  assert.is(r1.applied, false);
  assert.equal(h.calls, ['reload']); // no POST after a failed reload
  ok = true;
  const r2 = h.run();
  assert.is(r2.decision, 'reload');
  assert.is(r2.applied, true);
});

actor('a failed POST after a good reload re-posts without reloading again', () => {
  const s = newScheduler();
  let ok = false;
  const h = syncHarness(s, { dynamicOk: () => ok });
  assert.is(h.run().applied, false);
  ok = true;
  const r = h.run();
  assert.is(r.decision, 'dynamic');
  assert.equal(h.calls, ['reload', 'post:backends+servers', 'post:backends+servers']);
});

actor('template-change forces a reload of an unchanged model; nginx-restart re-applies all', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  h.run();
  const tpl = h.run([{ id: 1, t: 0, skippable: false, input: { kind: 'task', task: 'template-change', detail: 'nginx.tmpl' } }]);
  assert.is(tpl.decision, 'reload');
  assert.match(tpl.reason, /template-change/);
  const restart = h.run([{ id: 2, t: 0, skippable: false, input: { kind: 'task', task: 'nginx-restart' } }]);
  assert.is(restart.decision, 'reload');
  assert.equal(h.calls.slice(-2), ['reload', 'post:backends+servers']);
});

actor('a throwing model build becomes a failed result, and the pipeline retries it', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    let fail = true;
    const results: SyncResult[] = [];
    const syncer = createSyncer<string>({
      scheduler: s,
      build: () => { if (fail) { fail = false; throw new Error('boom'); } return { config: fakeConfig('x'), warnings: [] }; },
      snapshot: () => 'x',
      decide: (r) => ({ kind: r ? 'none' : 'reload', reason: '', backendsChanged: !r, serversChanged: !r, routesChanged: false, l4EndpointsChanged: false }),
      backendsPayload: () => [], serversPayload: () => ({ certificates: {}, servers: {} }),
      reload: () => of({ ok: true }), dynamic: () => of({ ok: true }),
    });
    createPipeline({ inputs, store, scheduler: s, sync: syncer }).subscribe((r) => results.push(r));
    s.schedule(() => inputs.next(ev('default/a', 1)), 0);
    flush();
    assert.is(results.length, 2);
    assert.is(results[0].error, 'boom');
    assert.is(results[1].applied, true);
    assert.is(results[1].t, 3334); // the retry waited for the next token
  });
});

actor.run();
