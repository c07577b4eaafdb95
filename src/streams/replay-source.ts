// The replay source: a recorded log's inputs, each emitted when the scheduler's clock reaches
// its time — in virtual time, or in real time scaled by a speed factor.
import { Observable, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import type { PipelineInput } from '../store/events.js';
import type { TimedInput } from './replay-log.js';

/** A scheduler that runs `inner`'s clock `speed` times faster: now() counts log time from 0. */
export function scaledScheduler(inner: SchedulerLike, speed: number): SchedulerLike {
  const start = inner.now();
  return {
    now: () => (inner.now() - start) * speed,
    schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
      return inner.schedule(function (this: SchedulerAction<T>, s?: T) {
        const action = this;
        // Work that reschedules itself through `this` must see scaled delays too.
        const scaled: SchedulerAction<T> = Object.assign(Object.create(action) as SchedulerAction<T>, {
          schedule: (st?: T, d = 0) => action.schedule(st, d / speed),
          unsubscribe: () => action.unsubscribe(),
        });
        work.call(scaled, s);
      }, delay / speed, state);
    },
  };
}

/** Emits each logged input when the scheduler's clock reaches its time (inputs due together in one burst). */
export function replayInputs(entries: readonly TimedInput[], scheduler: SchedulerLike): Observable<PipelineInput> {
  return new Observable<PipelineInput>((subscriber) => {
    const start = scheduler.now();
    let i = 0;
    let pending: Subscription | null = null;
    const step = () => {
      const now = scheduler.now() - start;
      while (i < entries.length && entries[i]!.t <= now) subscriber.next(entries[i++]!.input);
      if (i >= entries.length) return subscriber.complete();
      pending = scheduler.schedule(step, entries[i]!.t - now);
    };
    pending = scheduler.schedule(step, entries.length > 0 ? entries[0]!.t : 0);
    return () => pending?.unsubscribe();
  });
}
