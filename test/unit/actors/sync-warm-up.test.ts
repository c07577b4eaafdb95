// The warm-up after the initial sync: its probe runs the sync after a change (the builder's
// incremental path, the decision, the route table posted as a change) over a few of the store's
// Ingresses, with state of its own: the controller's builder and the store are left as they were.
// Its steps start once the controller is ready, one a millisecond.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NEVER, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createModelBuilder } from '../../../src/model/build.js';
import { stableJSON } from '../../../src/model/core/json.js';
import { DEFAULT_BUDGETS } from '../../../src/model/core/budgets.js';
import { createSyncWarmUp, warmUpSteps } from '../../../src/actors/sync-warm-up.js';
import type { SyncResult } from '../../../src/actors/sync.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';
import { FIXTURE_NOW as NOW } from '../../support/model-fixtures.js';

const warm = suite('sync warm-up');

const options = { annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true };

function cluster(n: number) {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1']));
  for (let i = 0; i < n; i++) store.put('Ingress', ingress(`app-${i}`, `app-${i}.example.com`, [['/', 'Prefix', 'web', 80]]));
  return store;
}

warm('the probe syncs its Ingresses, then a change at a time through the incremental path, posting the routes as a change', () => {
  const store = cluster(12);
  const step = createSyncWarmUp({ store, builder: () => createModelBuilder(options), budgets: DEFAULT_BUDGETS, ingresses: 10, steps: 6 });
  const results: SyncResult[] = [];
  for (let r = step(); r !== null; r = step()) results.push(r);
  assert.is(results.length, 7);
  assert.is(results[0]!.stages?.buildPath, 'full');
  assert.equal(results[0]!.config?.servers.filter((s) => s.hostname !== '_').length, 10, 'the first ten Ingresses only');
  for (const r of results) assert.ok(r.applied, `${r.sync}: ${r.error ?? r.reason}`);
  for (const r of results.slice(1)) {
    assert.is(r.stages?.buildPath, 'updated', `sync ${r.sync}`);
    assert.is(r.decision, 'dynamic', `sync ${r.sync}`);
    assert.ok(r.posted.includes('routes'), `sync ${r.sync} posts ${r.posted.join(', ')}`);
  }
  // Each pair hides one Ingress and shows it again: the odd steps serve one host fewer.
  assert.is(results[1]!.config!.servers.length, results[0]!.config!.servers.length - 1);
  assert.is(results[2]!.config!.servers.length, results[0]!.config!.servers.length);
  assert.is(step(), null, 'done');
});

warm('the controller\'s builder and store are untouched: its next change builds what a fresh builder builds', () => {
  const store = cluster(12);
  const builder = createModelBuilder(options);
  const first = builder.build(store);
  const listed = store.listIngresses();
  const step = createSyncWarmUp({ store, builder: () => createModelBuilder(options), budgets: DEFAULT_BUDGETS, ingresses: 10, steps: 6 });
  while (step() !== null) { /* every step */ }
  assert.is(store.listIngresses().length, listed.length);
  assert.is(builder.build(store, []).config.servers, first.config.servers, 'nothing changed for the controller\'s builder');
  store.put('Ingress', ingress('late', 'late.example.com', [['/', 'Prefix', 'web', 80]]));
  const built = builder.build(store, [{ kind: 'Ingress', key: 'default/late' }]);
  assert.is(built.path, 'updated');
  assert.fixture(stableJSON(built.config), stableJSON(createModelBuilder(options).build(store).config));
});

warm('steps start when the controller is ready, one a millisecond, until none is left', () => {
  const s = new TestScheduler((a, b) => assert.equal(a, b));
  s.run(({ cold, expectObservable }) => {
    let left = 3;
    const step = () => (left-- > 0 ? ({ sync: 3 - left } as SyncResult) : null);
    const ready$ = cold('--r');
    expectObservable(warmUpSteps(ready$, step, s, NEVER)).toBe('---abc|', {
      a: { sync: 1 }, b: { sync: 2 }, c: { sync: 3 },
    });
  });
});

warm('a change queued after ready ends the warm-up for good: the change goes first', () => {
  const s = new TestScheduler((a, b) => assert.equal(a, b));
  s.run(({ cold, hot, expectObservable }) => {
    let calls = 0;
    const step = () => { calls += 1; return { sync: calls } as SyncResult; };
    // The first change (the initial state, before ready) does not count; the second ends it.
    const changes$ = hot('c----c--c');
    expectObservable(warmUpSteps(cold('-r'), step, s, changes$)).toBe('--abc|', { a: { sync: 1 }, b: { sync: 2 }, c: { sync: 3 } });
  });
});

warm('a step that throws ends the warm-up quietly', () => {
  const s = new TestScheduler((a, b) => assert.equal(a, b));
  s.run(({ cold, expectObservable }) => {
    let calls = 0;
    const step = () => { calls += 1; if (calls === 2) throw new Error('probe failed'); return { sync: calls } as SyncResult; };
    expectObservable(warmUpSteps(cold('r'), step, s, NEVER)).toBe('-a|', { a: { sync: 1 } });
  });
});

warm('no step runs before the controller is ready', () => {
  const ready$ = new Subject<void>();
  let calls = 0;
  const sub = warmUpSteps(ready$, () => { calls += 1; return null; }, new TestScheduler(() => undefined), NEVER).subscribe();
  assert.is(calls, 0);
  sub.unsubscribe();
});

warm.run();
