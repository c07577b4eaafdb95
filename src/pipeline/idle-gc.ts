// A garbage collection once the controller has gone quiet after a sync. V8 gives the young
// generation's pages and the free old-generation pages back to the system at a collection that
// follows a period of low allocation, and by itself starts none while the process is idle: after
// the first sync at 10k the controller otherwise keeps ~30 MB resident that it no longer uses
// (docs/performance.md, "Controller RSS").
import { Observable, debounceTime, map, startWith, switchMap, take, type SchedulerLike } from 'rxjs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** How long after a sync no input may arrive before the collection. */
export const IDLE_GC_MS = 5000;
/**
 * How much the RSS must have grown since the last collection. A full collection at 10k costs
 * ~250 ms of CPU, many times what an isolated endpoint change costs; only syncs that allocated
 * much (the first, a reload, a large change) leave that much behind.
 */
export const IDLE_GC_MIN_GROWTH_BYTES = 16 * 2 ** 20;

/** Emits once after each sync, when `idleMs` passed without an input; a new sync restarts the wait. */
export function idleCollections(syncs$: Observable<unknown>, inputs$: Observable<unknown>, idleMs: number, scheduler: SchedulerLike): Observable<void> {
  return syncs$.pipe(
    switchMap(() => inputs$.pipe(startWith(undefined), debounceTime(idleMs, scheduler), take(1))),
    map(() => undefined),
  );
}

/** Collects (and returns true) when the RSS grew by `minGrowth` bytes since the last collection. */
export function createIdleCollector(minGrowth = IDLE_GC_MIN_GROWTH_BYTES, rss = () => process.memoryUsage.rss(), collect = collectGarbage): () => boolean {
  let afterLast = 0;
  return () => {
    if (rss() < afterLast + minGrowth) return false;
    collect();
    afterLast = rss();
    return true;
  };
}

type Gc = (options?: { type: 'minor' | 'major' }) => void;
let gc: Gc | undefined;

/**
 * A minor then a full collection. Node offers `gc` only behind `--expose-gc`; the flag set at
 * run time exposes it to contexts created afterwards, so one new context hands it over.
 */
export function collectGarbage(): void {
  if (!gc) {
    gc = (globalThis as { gc?: Gc }).gc;
    if (!gc) {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Gc;
    }
  }
  gc({ type: 'minor' });
  // Every page compacted: what survives a controller's initial list lies scattered over pages
  // its garbage filled, and V8's own choice of pages to compact left half the heap committed.
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
}
