// The collection once the controller is quiet after a sync: when it happens under virtual time,
// and that collectGarbage() really collects.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { collectGarbage, createIdleCollector, idleCollections } from '../../../src/pipeline/idle-gc.js';
import { newScheduler } from '../../support/pipeline-harness.js';

const idle = suite('idle collection');

idle('one collection 5 s after a sync with no input since', () => {
  const s = newScheduler();
  s.run(({ hot, expectObservable }) => {
    const syncs = hot('1s s');
    const inputs = hot('-');
    expectObservable(idleCollections(syncs, inputs, 5000, s)).toBe('6s c', { c: undefined });
  });
});

idle('none before the first sync, and none again while the controller stays idle', () => {
  const s = newScheduler();
  s.run(({ hot, expectObservable }) => {
    const syncs = hot('10s s 29999ms -');
    const inputs = hot('-');
    expectObservable(idleCollections(syncs, inputs, 5000, s), '^ 40s !').toBe('15s c', { c: undefined });
  });
});

idle('an input during the wait starts it again; a sync after it too', () => {
  const s = newScheduler();
  s.run(({ hot, expectObservable }) => {
    // sync at 0; inputs at 3 s and 7 s; the sync they cause at 7.5 s; quiet from then on.
    const syncs = hot('s 7499ms s');
    const inputs = hot('3s i 3999ms i');
    expectObservable(idleCollections(syncs, inputs, 5000, s), '^ 20s !').toBe('12500ms c', { c: undefined });
  });
});

idle('syncs closer together than the wait collect nothing until the last one', () => {
  const s = newScheduler();
  s.run(({ hot, expectObservable }) => {
    const syncs = hot('s 3999ms s 3999ms s');
    const inputs = hot('-');
    expectObservable(idleCollections(syncs, inputs, 5000, s), '^ 20s !').toBe('13s c', { c: undefined });
  });
});

idle('a collection only once the RSS grew by the threshold since the last one', () => {
  const MB = 2 ** 20;
  let rss = 100 * MB;
  const collected: number[] = [];
  // Each collection gives 30 MB back.
  const collectIfGrown = createIdleCollector(16 * MB, () => rss, () => { collected.push(rss / MB); rss -= 30 * MB; });
  assert.is(collectIfGrown(), true, 'after the first sync');
  rss = 80 * MB;
  assert.is(collectIfGrown(), false, '10 MB more than after the last collection (70): none');
  rss = 86 * MB;
  assert.is(collectIfGrown(), true, '16 MB more: collected');
  rss = 60 * MB;
  assert.is(collectIfGrown(), false, '4 MB more than after it (56): none');
  assert.equal(collected, [100, 86]);
});

idle('collectGarbage() collects what nothing references any more', async () => {
  let target: object | undefined = { payload: new Array(1000).fill('x') };
  const ref = new WeakRef(target);
  target = undefined;
  // A WeakRef's target lives until the end of the job that last read it.
  await new Promise((r) => setImmediate(r));
  collectGarbage();
  assert.is(ref.deref(), undefined);
});

idle.run();
