// Queues pipeline items in the ring and releases them as one batch when three things hold: the
// ring is not empty, the token bucket has a token, and the sync actor downstream is idle.
// Items that arrive during a sync wait in the ring and form the trailing sync, which is what
// guarantees convergence: one more sync always follows any event that arrived during a sync.
import { Observable, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { PipelineItem } from '../store/events.js';
import type { PipelineHooks, SyncBatch } from './hooks.js';
import { createRingBuffer } from './ring-buffer.js';
import { createTokenBucket } from './token-bucket.js';

export interface PaceOptions {
  capacity: number;
  ratePerSecond: number;
  burst: number;
  scheduler: SchedulerLike;
  /** Emits when the sync actor finished a batch (true = it failed and should be retried). */
  idle$: Observable<boolean>;
  /** Builds the synthetic item queued after a failed sync. */
  retryItem: () => PipelineItem;
  hooks?: PipelineHooks;
}

export function pace(opts: PaceOptions): OperatorFunction<PipelineItem, SyncBatch> {
  return (source) => new Observable<SyncBatch>((subscriber) => {
    const { scheduler, hooks } = opts;
    const ring = createRingBuffer<PipelineItem>({
      capacity: opts.capacity,
      isSkippable: (item) => item.skippable,
      onDrop: (item) => { droppedSinceBatch = true; hooks?.dropped?.(item); },
    });
    const bucket = createTokenBucket({ ratePerSecond: opts.ratePerSecond, burst: opts.burst, scheduler });
    let busy = false;
    let droppedSinceBatch = false;
    let timer: Subscription | null = null;
    let waitingSince: number | null = null;
    let n = 0;
    let sourceDone = false;

    const maybeRelease = () => {
      if (busy || timer || ring.size === 0) {
        if (!busy && !timer && ring.size === 0 && sourceDone) subscriber.complete();
        return;
      }
      waitingSince ??= scheduler.now();
      // Always go through the scheduler, even with no wait: a synchronous burst (an initial
      // list) is then merged into one batch instead of syncing on its first event.
      timer = scheduler.schedule(() => {
        timer = null;
        const wait = bucket.delay();
        if (wait > 0) {
          timer = scheduler.schedule(() => { timer = null; maybeRelease(); }, wait);
          return;
        }
        if (busy || ring.size === 0) return;
        bucket.take();
        const batch: SyncBatch = { n: ++n, t: scheduler.now(), items: ring.drain(), ...(droppedSinceBatch ? { lossy: true } : {}) };
        droppedSinceBatch = false;
        const waited = batch.t - (waitingSince ?? batch.t);
        waitingSince = null;
        busy = true;
        hooks?.released?.(batch, waited);
        subscriber.next(batch);
      }, 0);
    };

    const idleSub = opts.idle$.subscribe((failed) => {
      busy = false;
      if (failed && ring.size === 0) ring.push(opts.retryItem());
      maybeRelease();
    });
    const sourceSub = source.subscribe({
      next(item) {
        ring.push(item);
        hooks?.queued?.(item);
        maybeRelease();
      },
      error(err) { subscriber.error(err); },
      complete() { sourceDone = true; maybeRelease(); },
    });
    return () => {
      sourceSub.unsubscribe();
      idleSub.unsubscribe();
      timer?.unsubscribe();
    };
  });
}
