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

pipe.run();
