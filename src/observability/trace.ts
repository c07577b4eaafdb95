// The stream tracer behind `--trace`: follows every pipeline item by its id through the stages
// (received, filtered, queued, dropped, bucket wait, merged into sync N, decision, actor results)
// and writes each step as a pino line at trace level and as a Chrome trace event, streamed to a
// file that Perfetto and chrome://tracing open. Without --trace no hook is installed at all.
import type { SchedulerLike } from 'rxjs';
import type { Logger } from '../log.js';
import type { SyncResult } from '../actors/sync.js';
import { isTask, type PipelineItem } from '../store/events.js';
import type { PipelineHooks, SyncBatch } from '../streams/hooks.js';
import { createLineWriter, type LineWriter } from '../streams/record-writer.js';

/** One track (Chrome `tid`) per stage or actor, in pipeline order. */
export const TRACKS = { source: 1, store: 2, ring: 3, bucket: 4, sync: 5, reload: 6, dynamic: 7 } as const;
export type Track = keyof typeof TRACKS;
const PID = 1;

export interface TraceEvent {
  name: string;
  cat?: string;
  ph: 'X' | 'i' | 's' | 'f' | 'M';
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
  id?: number;
  bp?: 'e';
  s?: 't';
  args?: Record<string, unknown>;
}

export interface Tracer {
  hooks: PipelineHooks;
  /** Feed every SyncResult here (tap the pipeline's output). */
  syncDone(result: SyncResult): void;
  /** Ends the JSON document and closes the file. */
  close(): Promise<void>;
}

export interface TracerOptions {
  /** Chrome trace-event file; without it, tracing goes to the log only. */
  file?: string;
  logger: Logger;
  scheduler: SchedulerLike;
  /** Write with blocking calls (replay in virtual time never yields to the event loop). */
  syncWrites?: boolean;
}

export function createTracer(opts: TracerOptions): Tracer {
  const { logger, scheduler } = opts;
  const origin = scheduler.now();
  const logOn = logger.isLevelEnabled('trace');
  const us = (t: number) => Math.round((t - origin) * 1000);
  // Zero-length spans get one microsecond so viewers draw them and bind flow arrows to them.
  const span = (ms: number) => Math.max(1, Math.round(ms * 1000));

  let writer: LineWriter | null = null;
  let first = true;
  if (opts.file) {
    writer = createLineWriter(opts.file, (err) => logger.error({ err, file: opts.file }, `trace: cannot write ${opts.file}: ${err.message}; trace file stopped`), { sync: opts.syncWrites });
    writer.write('{"traceEvents":[');
    emit({ name: 'process_name', ph: 'M', ts: 0, pid: PID, tid: 0, args: { name: 'ingress-rx pipeline' } });
    for (const [name, tid] of Object.entries(TRACKS)) {
      emit({ name: 'thread_name', ph: 'M', ts: 0, pid: PID, tid, args: { name } });
      emit({ name: 'thread_sort_index', ph: 'M', ts: 0, pid: PID, tid, args: { sort_index: tid } });
    }
  }

  function emit(e: TraceEvent): void {
    if (!writer) return;
    writer.write((first ? '' : ',') + JSON.stringify(e));
    first = false;
  }
  const at = (track: Track, name: string, t: number, args?: Record<string, unknown>) =>
    emit({ name, cat: track, ph: 'i', s: 't', ts: us(t), pid: PID, tid: TRACKS[track], args });
  const slice = (track: Track, name: string, t: number, ms: number, args?: Record<string, unknown>) =>
    emit({ name, cat: track, ph: 'X', ts: us(t), dur: span(ms), pid: PID, tid: TRACKS[track], args });

  // Items of syncs that did not apply: the next sync that applies carries them.
  let unapplied: number[] = [];

  const describe = (item: PipelineItem): Record<string, unknown> => isTask(item.input)
    ? { id: item.id, task: item.input.task, ...(item.input.detail !== undefined ? { detail: item.input.detail } : {}) }
    : { id: item.id, kind: item.input.kind, type: item.input.type, key: item.input.key };

  const hooks: PipelineHooks = {
    received(item) {
      const args = describe(item);
      const name = isTask(item.input) ? `task ${item.input.task}` : `${item.input.kind} ${item.input.type}`;
      slice('source', name, item.t, 0, args);
      if (logOn) logger.trace({ stage: 'received', ...args }, `trace: #${item.id} received`);
    },
    filtered(item, reason) {
      at('store', 'filtered', scheduler.now(), { id: item.id, reason });
      if (logOn) logger.trace({ stage: 'filtered', id: item.id, reason }, `trace: #${item.id} filtered: ${reason}`);
    },
    queued(item) {
      at('ring', 'queued', scheduler.now(), { id: item.id });
      if (logOn) logger.trace({ stage: 'queued', id: item.id }, `trace: #${item.id} queued`);
    },
    dropped(item) {
      at('ring', 'dropped', scheduler.now(), { id: item.id });
      if (logOn) logger.trace({ stage: 'dropped', id: item.id }, `trace: #${item.id} dropped by the full ring`);
    },
    released(batch: SyncBatch, waitedMs: number) {
      slice('bucket', `bucket wait → sync ${batch.n}`, batch.t - waitedMs, waitedMs, { sync: batch.n, waitedMs, items: batch.items.length });
      for (const item of batch.items) {
        // A retry is made by the pacer, not received: give its arrow a start.
        if (isTask(item.input) && item.input.task === 'retry') slice('source', 'task retry', item.t, 0, describe(item));
        // The arrow from the event to the sync that merged it.
        emit({ name: 'merge', cat: 'flow', ph: 's', id: item.id, ts: us(item.t), pid: PID, tid: TRACKS.source });
        emit({ name: 'merge', cat: 'flow', ph: 'f', bp: 'e', id: item.id, ts: us(batch.t), pid: PID, tid: TRACKS.sync });
        if (logOn) logger.trace({ stage: 'merged', id: item.id, sync: batch.n, waitedMs: batch.t - item.t }, `trace: #${item.id} merged into sync ${batch.n}`);
      }
    },
  };

  return {
    hooks,
    syncDone(r) {
      let appliedIds: number[] = [];
      if (r.applied) {
        appliedIds = unapplied.length > 0 ? unapplied.concat(r.itemIds) : r.itemIds;
        unapplied = [];
      } else {
        unapplied.push(...r.itemIds);
      }
      slice('sync', `sync ${r.sync}`, r.t, r.durationMs, {
        sync: r.sync, events: r.events, decision: r.decision, reason: r.reason, checksum: r.checksum,
        applied: r.applied, durationMs: r.durationMs, appliedIds, ...(r.error ? { error: r.error } : {}),
      });
      at('sync', `decision ${r.decision}`, r.t, { sync: r.sync, reason: r.reason });
      if (r.reload) {
        slice('reload', r.reload.ok ? 'reload' : 'reload failed', r.reload.startedAt ?? r.t, r.reload.durationMs ?? 0, {
          sync: r.sync, ok: r.reload.ok, durationMs: r.reload.durationMs ?? 0, ...(r.reload.error ? { error: r.reload.error } : {}),
        });
      }
      if (r.dynamic) {
        slice('dynamic', r.dynamic.ok ? 'POST' : 'POST failed', r.dynamic.startedAt ?? r.t, r.dynamic.durationMs ?? 0, {
          sync: r.sync, ok: r.dynamic.ok, attempts: r.dynamic.attempts ?? 1, posted: r.posted,
          durationMs: r.dynamic.durationMs ?? 0, ...(r.dynamic.error ? { error: r.dynamic.error } : {}),
        });
      }
      if (logOn) {
        logger.trace({
          stage: 'sync', sync: r.sync, events: r.events, decision: r.decision, reason: r.reason, applied: r.applied,
          durationMs: r.durationMs, reload: r.reload, dynamic: r.dynamic,
        }, `trace: sync ${r.sync}: ${r.decision} (${r.reason})`);
      }
    },
    close() {
      return writer ? writer.close(']}\n') : Promise.resolve();
    },
  };
}
