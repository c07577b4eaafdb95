// The pipeline, top to bottom as the design draws it:
//   inputs ──► store (relevant?) ──► ring(1024) ──► bucket(0.3/s, burst 1) ──► exhaustMap(sync)
// A change of a served object's status alone takes no token: the statusChanged hook hands it to
// the status actors instead (the controller's own status writes come back as such events).
// Sources and tasks are merged by the caller; this file does not know which source it has.
import { Observable, Subject, map, mergeMap, share, type SchedulerLike } from 'rxjs';
import type { Store } from '../store/types.js';
import { isTask, type PipelineInput, type PipelineItem } from '../store/events.js';
import type { PipelineHooks, SyncBatch } from '../streams/hooks.js';
import { pace } from '../streams/pace.js';
import { syncActor, type SyncResult } from '../actors/sync.js';

export interface PipelineOptions {
  inputs: Observable<PipelineInput>;
  store: Store;
  scheduler: SchedulerLike;
  sync: (batch: SyncBatch) => Observable<SyncResult>;
  ringCapacity?: number;
  /** --sync-rate-limit, syncs per second. */
  syncRateLimit?: number;
  burst?: number;
  hooks?: PipelineHooks;
}

export const DEFAULT_RING_CAPACITY = 1024;
export const DEFAULT_SYNC_RATE_LIMIT = 0.3;

/** Sync results, shared: subscribe as often as needed, the pipeline runs once. */
export function createPipeline(opts: PipelineOptions): Observable<SyncResult> {
  const { scheduler, store, hooks } = opts;
  let nextId = 1;
  const item = (input: PipelineInput): PipelineItem =>
    ({ id: nextId++, t: scheduler.now(), skippable: !isTask(input), input });
  const idle$ = new Subject<boolean>();

  const relevant$ = opts.inputs.pipe(
    map(item),
    mergeMap((it): PipelineItem[] => {
      hooks?.received?.(it);
      if (isTask(it.input)) return [it];
      const res = store.apply(it.input);
      if (!res.relevant) {
        hooks?.filtered?.(it, res.reason);
        if (res.statusOnly) hooks?.statusChanged?.(it);
        return [];
      }
      if (!res.configmapChanged) return [it];
      const task = item({ kind: 'task', task: 'configmap-change', detail: it.input.key });
      hooks?.received?.(task);
      return [it, task];
    }),
  );

  return relevant$.pipe(
    pace({
      capacity: opts.ringCapacity ?? DEFAULT_RING_CAPACITY,
      ratePerSecond: opts.syncRateLimit ?? DEFAULT_SYNC_RATE_LIMIT,
      burst: opts.burst ?? 1,
      scheduler,
      idle$,
      retryItem: () => item({ kind: 'task', task: 'retry' }),
      hooks,
    }),
    syncActor(opts.sync, (failed) => idle$.next(failed)),
    share(),
  );
}
