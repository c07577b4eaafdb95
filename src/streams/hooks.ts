// Observation points of the pipeline. Tracing, metrics and recording implement what they need;
// every hook is optional and the pipeline never waits on one.
import type { PipelineItem } from '../store/events.js';

export interface SyncBatch {
  /** Sync number, from 1. */
  n: number;
  /** Scheduler time the sync started. */
  t: number;
  items: PipelineItem[];
  /** The ring dropped events since the previous batch: `items` does not name every change. */
  lossy?: boolean;
}

export interface PipelineHooks {
  /** An input entered the pipeline (before the store). */
  received?(item: PipelineItem): void;
  /** The store found the event irrelevant. */
  filtered?(item: PipelineItem, reason: string): void;
  /** Filtered because only the object's status changed (see ApplyResult.statusOnly): for the status actors. */
  statusChanged?(item: PipelineItem): void;
  queued?(item: PipelineItem): void;
  dropped?(item: PipelineItem): void;
  /** A batch left the bucket; `waitedMs` is how long the bucket held it back. */
  released?(batch: SyncBatch, waitedMs: number): void;
}

/** One set of hooks that calls each of `all` in turn (recording and tracing at once). */
export function combineHooks(...all: Array<PipelineHooks | undefined>): PipelineHooks | undefined {
  const hooks = all.filter((h): h is PipelineHooks => h !== undefined);
  if (hooks.length <= 1) return hooks[0];
  const names = ['received', 'filtered', 'statusChanged', 'queued', 'dropped', 'released'] as const;
  const out: PipelineHooks = {};
  for (const name of names) {
    const fns = hooks.map((h) => h[name]?.bind(h)).filter((f) => f !== undefined) as Array<(...a: unknown[]) => void>;
    if (fns.length > 0) (out as Record<string, unknown>)[name] = (...args: unknown[]) => { for (const f of fns) f(...args); };
  }
  return out;
}
