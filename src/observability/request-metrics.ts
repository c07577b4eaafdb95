// ingress-nginx's request metric families, fed by the workers' batches (lua/monitor.lua): each
// batch carries per-series deltas (request count, bucket counts and sums), added here to
// cumulative series. The number of series is bounded; requests beyond it are counted as dropped.
import type { Registry } from 'prom-client';
import type { RequestFamily } from '../render/monitor.js';
import { goFloat, registerFamily, type Labels, type Sample } from './exposition.js';

const PREFIX = 'nginx_ingress_controller_';

/** ingress-nginx's help texts, word for word. */
const HELP: Record<RequestFamily, string> = {
  requests: 'The total number of client requests',
  request_duration_seconds: 'The request processing time in milliseconds',
  response_duration_seconds: 'The time spent on receiving the response from the upstream server',
  header_duration_seconds: 'The time spent on receiving first header from the upstream server',
  connect_duration_seconds: 'The time spent on establishing a connection with the upstream server',
  request_size: 'The request length (including request line, header, and request body)',
  response_size: 'The response length (including request line, header, and request body)',
  bytes_sent: 'DEPRECATED The number of bytes sent to a client',
  ingress_upstream_latency_seconds: 'DEPRECATED Upstream service latency per Ingress',
};

/** The histogram families in the order of their slots in a batch series (after the count). */
const HISTOGRAM_SLOTS = [
  'request_duration_seconds', 'response_duration_seconds', 'header_duration_seconds', 'connect_duration_seconds',
  'request_size', 'response_size', 'bytes_sent',
] as const;
type HistogramFamily = (typeof HISTOGRAM_SLOTS)[number];
const LABEL_SLOTS = 8;
const COUNT_SLOT = 8;
const LATENCY_SLOT = LABEL_SLOTS + 1 + HISTOGRAM_SLOTS.length;
const MAX_LABEL_LENGTH = 4096;

/** Go's summary defaults in ingress-nginx: objectives 0.5, 0.9, 0.99 over the last 10 minutes in 5 age buckets. */
const QUANTILES = [0.5, 0.9, 0.99];
const SUMMARY_MAX_AGE_MS = 10 * 60_000;
const SUMMARY_AGE_BUCKETS = 5;

interface Histogram { sum: number; counts: Float64Array }

interface Series {
  labels: Labels;
  /** `namespace/ingress`, for removing the series of a deleted Ingress. */
  ingress: string;
  requests: number;
  histograms: Array<Histogram | null>;
}

/** Connect times in whole milliseconds, in age buckets, for ingress_upstream_latency_seconds. */
interface LatencySummary {
  labels: Labels;
  ingress: string;
  sum: number;
  count: number;
  ages: Array<Map<number, number>>;
  /** Start time of ages[0], the newest. */
  headStart: number;
}

export interface RequestMetricsOptions {
  registry: Registry;
  constLabels: Labels;
  perHost: boolean;
  families: readonly RequestFamily[];
  buckets: { time: number[]; length: number[]; size: number[] };
  /** Upper bound of label sets kept across all families. */
  maxSeries: number;
  now?: () => number;
}

export interface BatchOutcome { ok: boolean; accepted: number; dropped: number; reason?: string }

export interface RequestMetrics {
  /** Adds one worker batch (the parsed JSON). */
  add(batch: unknown): BatchOutcome;
  /** Forgets the series of Ingresses (`namespace/name`) that are gone, as ingress-nginx does. */
  removeIngresses(keys: ReadonlySet<string>): void;
  seriesCount(): number;
}

function bucketsOf(f: HistogramFamily, b: RequestMetricsOptions['buckets']): number[] {
  if (f === 'request_size' || f === 'response_size') return b.length;
  if (f === 'bytes_sent') return b.size;
  return b.time;
}

const isLabel = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_LABEL_LENGTH;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

export function createRequestMetrics(opts: RequestMetricsOptions): RequestMetrics {
  const now = opts.now ?? Date.now;
  const enabled = new Set(opts.families);
  const bucketBounds = HISTOGRAM_SLOTS.map((f) => bucketsOf(f, opts.buckets));
  const series = new Map<string, Series>();
  const latency = new Map<string, LatencySummary>();

  function seriesFor(row: unknown[], key: string): Series | null {
    let s = series.get(key);
    if (s) return s;
    if (series.size + latency.size >= opts.maxSeries) return null;
    const [namespace, ingress, service, path, canary, method, status, host] = row as string[];
    const labels: Labels = { ...opts.constLabels, status: status!, method: method!, path: path!, namespace: namespace!, ingress: ingress!, service: service!, canary: canary! };
    if (opts.perHost) labels.host = host!;
    s = { labels, ingress: `${namespace}/${ingress}`, requests: 0, histograms: HISTOGRAM_SLOTS.map(() => null) };
    series.set(key, s);
    return s;
  }

  function latencyFor(row: unknown[]): LatencySummary | null {
    const [namespace, ingress, service, , canary] = row as string[];
    const key = `${namespace}\u0000${ingress}\u0000${service}\u0000${canary}`;
    let l = latency.get(key);
    if (l) return l;
    if (series.size + latency.size >= opts.maxSeries) return null;
    l = {
      labels: { ...opts.constLabels, ingress: ingress!, namespace: namespace!, service: service!, canary: canary! },
      ingress: `${namespace}/${ingress}`, sum: 0, count: 0,
      ages: Array.from({ length: SUMMARY_AGE_BUCKETS }, () => new Map()), headStart: now(),
    };
    latency.set(key, l);
    return l;
  }

  function rotate(l: LatencySummary, t: number): void {
    const width = SUMMARY_MAX_AGE_MS / SUMMARY_AGE_BUCKETS;
    while (t - l.headStart >= width) {
      l.ages.pop();
      l.ages.unshift(new Map());
      l.headStart += width;
      if (l.ages.every((a) => a.size === 0)) { l.headStart = t; break; }
    }
  }

  /** A row as lua/monitor.lua sends it: 8 labels, the request count, 7 histograms (or false), the latency counts (or false). */
  function validRow(row: unknown): row is unknown[] {
    if (!Array.isArray(row) || row.length !== LATENCY_SLOT + 1) return false;
    for (let i = 0; i < LABEL_SLOTS; i++) if (!isLabel(row[i])) return false;
    if (!isCount(row[COUNT_SLOT])) return false;
    for (let h = 0; h < HISTOGRAM_SLOTS.length; h++) {
      const v = row[COUNT_SLOT + 1 + h];
      if (v === false) continue;
      if (!Array.isArray(v) || v.length !== bucketBounds[h]!.length + 2) return false;
      if (typeof v[0] !== 'number' || !Number.isFinite(v[0])) return false;
      for (let i = 1; i < v.length; i++) if (!isCount(v[i])) return false;
    }
    const lat = row[LATENCY_SLOT];
    if (lat !== false) {
      if (typeof lat !== 'object' || lat === null || Array.isArray(lat)) return false;
      for (const [k, c] of Object.entries(lat)) if (!/^\d{1,9}$/.test(k) || !isCount(c)) return false;
    }
    return true;
  }

  function add(batch: unknown): BatchOutcome {
    if (typeof batch !== 'object' || batch === null || (batch as { v?: unknown }).v !== 1) {
      return { ok: false, accepted: 0, dropped: 0, reason: 'not a version 1 batch' };
    }
    const b = batch as { dropped?: unknown; series?: unknown };
    const rows = Array.isArray(b.series) ? b.series : typeof b.series === 'object' && b.series !== null && Object.keys(b.series).length === 0 ? [] : null;
    if (rows === null || !(b.dropped === undefined || isCount(b.dropped))) return { ok: false, accepted: 0, dropped: 0, reason: 'malformed batch' };
    let accepted = 0;
    let dropped = (b.dropped as number | undefined) ?? 0;
    let invalid = 0;
    const t = now();
    for (const row of rows) {
      if (!validRow(row)) { invalid++; continue; }
      const key = (row.slice(0, LABEL_SLOTS) as string[]).join('\u0000');
      const s = seriesFor(row, key);
      const requests = row[COUNT_SLOT] as number;
      if (!s) { dropped += requests; continue; }
      accepted += requests;
      s.requests += requests;
      for (let h = 0; h < HISTOGRAM_SLOTS.length; h++) {
        const v = row[COUNT_SLOT + 1 + h] as number[] | false;
        if (v === false || !enabled.has(HISTOGRAM_SLOTS[h]!)) continue;
        let hist = s.histograms[h];
        if (!hist) hist = s.histograms[h] = { sum: 0, counts: new Float64Array(v.length - 1) };
        hist.sum += v[0]!;
        for (let i = 1; i < v.length; i++) hist.counts[i - 1]! += v[i]!;
      }
      const lat = row[LATENCY_SLOT] as Record<string, number> | false;
      if (lat !== false && enabled.has('ingress_upstream_latency_seconds')) {
        const l = latencyFor(row);
        if (!l) continue;
        rotate(l, t);
        for (const [k, c] of Object.entries(lat)) {
          const ms = Number(k);
          l.ages[0]!.set(ms, (l.ages[0]!.get(ms) ?? 0) + c);
          l.sum += (ms / 1000) * c;
          l.count += c;
        }
      }
    }
    return invalid > 0
      ? { ok: false, accepted, dropped, reason: `${invalid} malformed series` }
      : { ok: true, accepted, dropped };
  }

  // ---- exposition
  const base = (f: RequestFamily) => ({ name: `${PREFIX}${f}`, help: HELP[f] });
  if (enabled.has('requests')) {
    registerFamily(opts.registry, {
      ...base('requests'), type: 'counter',
      samples: () => [...series.values()].map((s) => ({ sharedLabels: s.labels, value: s.requests })),
    });
  }
  HISTOGRAM_SLOTS.forEach((f, h) => {
    if (!enabled.has(f)) return;
    const name = `${PREFIX}${f}`;
    const les = bucketBounds[h]!.map(goFloat).concat('+Inf').map((le) => ({ le }));
    registerFamily(opts.registry, {
      ...base(f), type: 'histogram',
      samples: () => {
        const out: Sample[] = [];
        for (const s of series.values()) {
          const hist = s.histograms[h];
          if (!hist) continue;
          let cumulative = 0;
          for (let i = 0; i < les.length; i++) {
            cumulative += hist.counts[i]!;
            out.push({ metricName: `${name}_bucket`, labels: les[i], sharedLabels: s.labels, value: cumulative });
          }
          out.push({ metricName: `${name}_sum`, sharedLabels: s.labels, value: hist.sum });
          out.push({ metricName: `${name}_count`, sharedLabels: s.labels, value: cumulative });
        }
        return out;
      },
    });
  });
  if (enabled.has('ingress_upstream_latency_seconds')) {
    const name = `${PREFIX}ingress_upstream_latency_seconds`;
    const qLabels = QUANTILES.map((q) => ({ quantile: String(q) }));
    registerFamily(opts.registry, {
      ...base('ingress_upstream_latency_seconds'), type: 'summary',
      samples: () => {
        const out: Sample[] = [];
        const t = now();
        for (const l of latency.values()) {
          rotate(l, t);
          const values = quantiles(l.ages);
          qLabels.forEach((labels, i) => out.push({ labels, sharedLabels: l.labels, value: values[i]! }));
          out.push({ metricName: `${name}_sum`, sharedLabels: l.labels, value: l.sum });
          out.push({ metricName: `${name}_count`, sharedLabels: l.labels, value: l.count });
        }
        return out;
      },
    });
  }

  return {
    add,
    removeIngresses(keys) {
      if (keys.size === 0) return;
      for (const [k, s] of series) if (keys.has(s.ingress)) series.delete(k);
      for (const [k, l] of latency) if (keys.has(l.ingress)) latency.delete(k);
    },
    seriesCount: () => series.size + latency.size,
  };
}

/** Exact quantiles of the window's millisecond counts (NaN when it is empty, as Go's summary). */
function quantiles(ages: Array<Map<number, number>>): number[] {
  const merged = new Map<number, number>();
  let total = 0;
  for (const a of ages) for (const [ms, c] of a) { merged.set(ms, (merged.get(ms) ?? 0) + c); total += c; }
  if (total === 0) return QUANTILES.map(() => NaN);
  const sorted = [...merged.entries()].sort((x, y) => x[0] - y[0]);
  return QUANTILES.map((q) => {
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (const [ms, c] of sorted) {
      seen += c;
      if (seen >= rank) return ms / 1000;
    }
    return sorted[sorted.length - 1]![0] / 1000;
  });
}

