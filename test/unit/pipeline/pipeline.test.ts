// The pipeline assembled under virtual time: store, ring, bucket and exhaustMap with the
// trailing sync, driving a sync that records what it saw.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject, of, timer, map, type Observable } from 'rxjs';
import type { TestScheduler } from 'rxjs/testing';
import { createPipeline } from '../../../src/pipeline/pipeline.js';
import type { SyncResult } from '../../../src/actors/sync.js';
import type { PipelineInput } from '../../../src/store/events.js';
import type { SyncBatch } from '../../../src/streams/hooks.js';
import { ev, memoryStore, newScheduler } from '../../support/pipeline-harness.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import type { Ingress } from '../../../src/store/kube-types.js';

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

pipe('with the real store: a served Ingress whose status alone changes takes no token (it goes to statusChanged); a spec change still does', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = createStore(defaultStoreOptions(), { secretAnnotations: [] });
    const inputs = new Subject<PipelineInput>();
    const syncs: Array<{ t: number; keys: string[] }> = [];
    const statusChanged: Array<{ t: number; key: string }> = [];
    const sync = (batch: SyncBatch): Observable<SyncResult> => {
      syncs.push({ t: s.now(), keys: batch.items.map((i) => ('key' in i.input ? i.input.key : i.input.task)) });
      return of({
        sync: batch.n, t: batch.t, events: batch.items.length, itemIds: batch.items.map((i) => i.id),
        decision: 'dynamic', reason: '', checksum: '', applied: true, posted: [], warnings: [], quarantined: [], durationMs: 0,
      });
    };
    createPipeline({ inputs, store, scheduler: s, sync, hooks: { statusChanged: (it) => statusChanged.push({ t: s.now(), key: 'key' in it.input ? it.input.key : '' }) } }).subscribe();
    const web = (rv: string, path: string, ip?: string): Ingress => ({
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'default', resourceVersion: rv, creationTimestamp: '2024-01-01T00:00:00Z' },
      spec: { ingressClassName: 'nginx', rules: [{ host: 'a.example.com', http: { paths: [{ path, pathType: 'Prefix', backend: { service: { name: 'svc', port: { number: 80 } } } }] } }] },
      ...(ip ? { status: { loadBalancer: { ingress: [{ ip }] } } } : {}),
    });
    const put = (object: Ingress | { kind: string; metadata: { name: string }; spec: object }, kind: 'Ingress' | 'IngressClass', type: 'add' | 'update') =>
      inputs.next({ kind, type, key: object.metadata.name === 'web' ? 'default/web' : object.metadata.name, object } as PipelineInput);
    s.schedule(() => {
      put({ kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } }, 'IngressClass', 'add');
      put(web('1', '/'), 'Ingress', 'add');
    }, 0);
    // The bucket is full again (0.3/s) by 5 s: our status write comes back, then a user's change.
    s.schedule(() => put(web('2', '/', '192.0.2.10'), 'Ingress', 'update'), 5000);
    s.schedule(() => put(web('3', '/', '192.0.2.99'), 'Ingress', 'update'), 5050);
    s.schedule(() => put(web('4', '/v2', '192.0.2.99'), 'Ingress', 'update'), 5100);
    flush();
    assert.equal(statusChanged, [{ t: 5000, key: 'default/web' }, { t: 5050, key: 'default/web' }], 'both status-only events (ours, and someone else\'s) went to the status actors');
    assert.equal(syncs, [{ t: 0, keys: ['default/web'] }, { t: 5100, keys: ['default/web'] }],
      'the spec change synced at once: the status-only events took no token (else it would wait until 8,333 ms)');
    assert.is(store.getIngress('default/web')?.metadata.resourceVersion, '4');
  });
});

pipe.run();
