// Reads a trace written by the tracer and sums it up: events by kind, drops, bucket waits,
// sync durations, reloads, dynamic updates and the latency from an event's arrival to the end
// of the sync that applied it. Percentiles are nearest-rank: the smallest value with at least
// p% of the values at or below it.
import type { TraceEvent } from './trace.js';

export interface Percentiles { p50: number; p99: number; count: number }

export interface TraceSummary {
  events: number;
  /** ResourceKind, or `task:<task>`. Sorted by name. */
  eventsByKind: Record<string, number>;
  filtered: number;
  dropped: number;
  syncs: number;
  syncsFailed: number;
  /** Per sync: how long the bucket held its batch back (ms). */
  bucketWaitMs: Percentiles;
  syncDurationMs: Percentiles;
  reloads: number;
  reloadsFailed: number;
  dynamicUpdates: number;
  dynamicFailed: number;
  /** Per applied event: from received to the end of the sync that applied it (ms). */
  latencyMs: Percentiles;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), count: sorted.length };
}

/** Parses a trace file's text; a file cut short (the process died) is closed before parsing. */
export function parseTrace(text: string): TraceEvent[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    const trimmed = text.trimEnd().replace(/,$/, '');
    doc = JSON.parse(trimmed.endsWith(']}') ? trimmed : `${trimmed}]}`);
  }
  if (Array.isArray(doc)) return doc as TraceEvent[];
  const events = (doc as { traceEvents?: unknown }).traceEvents;
  if (!Array.isArray(events)) throw new Error('not a Chrome trace: no "traceEvents" array');
  return events as TraceEvent[];
}

export function summariseTrace(events: TraceEvent[]): TraceSummary {
  const received = new Map<number, number>(); // id → ts (µs)
  const byKind = new Map<string, number>();
  const bucketWaits: number[] = [];
  const syncDurations: number[] = [];
  const latencies: number[] = [];
  const s = { events: 0, filtered: 0, dropped: 0, syncs: 0, syncsFailed: 0, reloads: 0, reloadsFailed: 0, dynamicUpdates: 0, dynamicFailed: 0 };
  const syncs: TraceEvent[] = [];

  for (const e of events) {
    const args = e.args ?? {};
    switch (e.cat) {
      case 'source':
        if (e.ph !== 'X') break;
        s.events++;
        received.set(Number(args.id), e.ts);
        {
          const kind = args.task !== undefined ? `task:${String(args.task)}` : String(args.kind);
          byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
        }
        break;
      case 'store':
        if (e.name === 'filtered') s.filtered++;
        break;
      case 'ring':
        if (e.name === 'dropped') s.dropped++;
        break;
      case 'bucket':
        if (e.ph === 'X') bucketWaits.push(Number(args.waitedMs));
        break;
      case 'sync':
        if (e.ph !== 'X') break;
        s.syncs++;
        if (args.applied !== true) s.syncsFailed++;
        syncDurations.push(Number(args.durationMs));
        syncs.push(e);
        break;
      case 'reload':
        s.reloads++;
        if (args.ok !== true) s.reloadsFailed++;
        break;
      case 'dynamic':
        s.dynamicUpdates++;
        if (args.ok !== true) s.dynamicFailed++;
        break;
    }
  }
  // After the loop: a sync's span is written when it ends, after the events it merged.
  for (const e of syncs) {
    const end = e.ts + Number(e.args?.durationMs ?? 0) * 1000;
    for (const id of (e.args?.appliedIds as number[] | undefined) ?? []) {
      const start = received.get(id);
      if (start !== undefined) latencies.push((end - start) / 1000);
    }
  }

  return {
    ...s,
    eventsByKind: Object.fromEntries([...byKind.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    bucketWaitMs: percentiles(bucketWaits),
    syncDurationMs: percentiles(syncDurations),
    latencyMs: percentiles(latencies),
  };
}

const ms = (v: number) => `${Number.isInteger(v) ? v : v.toFixed(1)} ms`;
const pct = (p: Percentiles) => (p.count === 0 ? '-' : `p50 ${ms(p.p50)}   p99 ${ms(p.p99)}`);

/** The table `ingress-rx trace summary` prints. */
export function formatTraceSummary(s: TraceSummary): string {
  const rows: Array<[string, string]> = [['events', String(s.events)]];
  for (const [kind, n] of Object.entries(s.eventsByKind)) rows.push([`  ${kind}`, String(n)]);
  rows.push(
    ['filtered by the store', String(s.filtered)],
    ['dropped by the ring', String(s.dropped)],
    ['syncs', `${s.syncs} (${s.syncsFailed} failed)`],
    ['bucket wait per sync', pct(s.bucketWaitMs)],
    ['sync duration', pct(s.syncDurationMs)],
    ['reloads', `${s.reloads} (${s.reloadsFailed} failed)`],
    ['dynamic updates', `${s.dynamicUpdates} (${s.dynamicFailed} failed)`],
    ['event to applied', pct(s.latencyMs)],
  );
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n';
}
