// ingress-nginx's request metric families, fed by the lines of NGINX's metrics log
// (src/render/metrics-log.ts): the names, help texts, label sets and default buckets of its
// socket collector, its host filter (--metrics-per-host, --metrics-per-undefined-host) and status
// classes. The label sets are bounded (--metrics-max-series); so are the methods (a client can
// send any token as a method, and every new one would otherwise be a new series).
import type { Registry } from 'prom-client';
import { METRICS_LOG_FIELDS, METRICS_LOG_ROUTED_FIELDS } from '../render/metrics-log.js';
import { goFloat, registerFamily, type Labels, type Sample } from './exposition.js';

const PREFIX = 'nginx_ingress_controller_';

/** ingress-nginx's request metric families (without the prefix). */
export const REQUEST_FAMILIES = [
  'requests',
  'request_duration_seconds',
  'response_duration_seconds',
  'header_duration_seconds',
  'connect_duration_seconds',
  'request_size',
  'response_size',
  'bytes_sent',
  'ingress_upstream_latency_seconds',
] as const;
export type RequestFamily = (typeof REQUEST_FAMILIES)[number];

/** prometheus.DefBuckets, ingress-nginx's --time-buckets default. */
export const DEFAULT_TIME_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** prometheus.LinearBuckets(10, 10, 10), the --length-buckets default. */
export const DEFAULT_LENGTH_BUCKETS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/** prometheus.ExponentialBuckets(10, 10, 7), the --size-buckets default. */
export const DEFAULT_SIZE_BUCKETS = [10, 100, 1000, 10000, 100000, 1e6, 1e7];
export const DEFAULT_MAX_REQUEST_SERIES = 10_000;

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

/** Methods counted by name; any other token is counted as OTHER. */
const KNOWN_METHODS = new Set([
  'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH',
  'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK',
]);

const field = (name: (typeof METRICS_LOG_FIELDS)[number]) => METRICS_LOG_FIELDS.indexOf(name);
/** The histogram families and the metrics-log field each observes. */
const HISTOGRAMS = [
  { family: 'request_duration_seconds', field: field('request_time'), buckets: 'time' },
  { family: 'response_duration_seconds', field: field('upstream_response_time'), buckets: 'time' },
  { family: 'header_duration_seconds', field: field('upstream_header_time'), buckets: 'time' },
  { family: 'connect_duration_seconds', field: field('upstream_connect_time'), buckets: 'time' },
  { family: 'request_size', field: field('request_length'), buckets: 'length' },
  { family: 'response_size', field: field('bytes_sent'), buckets: 'length' },
  { family: 'bytes_sent', field: field('bytes_sent'), buckets: 'size' },
] as const;
const FIELDS = METRICS_LOG_FIELDS.length;
const CONNECT_TIME = field('upstream_connect_time');
/** The label fields come first, in this order (the series key is the line's start up to the host). */
const LABEL_FIELDS = ['namespace', 'ingress_name', 'service_name', 'location_path', 'proxy_alternative_upstream_name', 'request_method', 'status', 'host'] as const;
if (LABEL_FIELDS.some((f, i) => METRICS_LOG_FIELDS[i] !== f)) throw new Error('metrics log fields out of order');
const MAX_LABEL_LENGTH = 4096;

const ESCAPED_TAB = '\\x09';

/**
 * A line of the routed format (a request the Lua router served) in the other format's shape: its
 * first field holds the first four, joined by tabs NGINX wrote escaped. Namespaces, Ingress and
 * Service names never hold one, so the first three are the joins; the path keeps its own. A route
 * whose labels were not set ("-") is left as it is (skipped as an unset namespace).
 */
function unrouted(line: string): string {
  const first = line.indexOf('\t');
  if (first < 0 || line.lastIndexOf(ESCAPED_TAB, first) < 0) return line;
  const head = line.slice(0, first).split(ESCAPED_TAB);
  if (head.length < 4) return line;
  return `${head[0]}\t${head[1]}\t${head[2]}\t${head.slice(3).join(ESCAPED_TAB)}${line.slice(first)}`;
}

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
  /** Its ingress_upstream_latency_seconds series (shared by the series of one Ingress, Service and canary). */
  latency: LatencySummary | null;
}

/** Connect times in whole milliseconds, in age buckets, for ingress_upstream_latency_seconds. */
interface LatencySummary {
  key: string;
  labels: Labels;
  ingress: string;
  sum: number;
  count: number;
  ages: Array<Map<number, number>>;
  /** Start time of ages[0], the newest. */
  headStart: number;
}

export interface RequestMetricsConfig {
  perHost: boolean;
  perUndefinedHost: boolean;
  statusClasses: boolean;
  buckets: { time: number[]; length: number[]; size: number[] };
  /** The families collected and exported (all but --exclude-socket-metrics). */
  families: readonly RequestFamily[];
  /** Upper bound of label sets kept across all families. */
  maxSeries: number;
}

export function defaultRequestMetricsConfig(): RequestMetricsConfig {
  return {
    perHost: true, perUndefinedHost: false, statusClasses: false,
    buckets: { time: DEFAULT_TIME_BUCKETS, length: DEFAULT_LENGTH_BUCKETS, size: DEFAULT_SIZE_BUCKETS },
    families: REQUEST_FAMILIES, maxSeries: DEFAULT_MAX_REQUEST_SERIES,
  };
}

/** What became of a line: counted; not an Ingress location's or an undefined host's; over the series bound; not a metrics line. */
export type LineOutcome = 'counted' | 'skipped' | 'dropped' | 'malformed';

export interface RequestMetrics {
  addLine(line: string): LineOutcome;
  /** The hosts the configuration defines (servers and aliases, `_` included), as ingress-nginx's SetHosts. */
  setHosts(hosts: ReadonlySet<string>): void;
  /** Forgets the series of Ingresses (`namespace/name`) that are gone, as ingress-nginx does. */
  removeIngresses(keys: ReadonlySet<string>): void;
  seriesCount(): number;
}

const number = (s: string): number => (s === '' ? NaN : Number(s));

export function createRequestMetrics(opts: RequestMetricsConfig & { registry: Registry; constLabels: Labels; now?: () => number }): RequestMetrics {
  const now = opts.now ?? Date.now;
  const enabled = new Set<string>(opts.families);
  const histograms = HISTOGRAMS.filter((h) => enabled.has(h.family)).map((h) => ({ ...h, bounds: opts.buckets[h.buckets] }));
  const latencyOn = enabled.has('ingress_upstream_latency_seconds');
  const series = new Map<string, Series>();
  const latency = new Map<string, LatencySummary>();
  let hosts: ReadonlySet<string> = new Set();
  const full = () => series.size + latency.size >= opts.maxSeries;

  const width = SUMMARY_MAX_AGE_MS / SUMMARY_AGE_BUCKETS;
  function rotate(l: LatencySummary, t: number): void {
    while (t - l.headStart >= width) {
      l.ages.pop();
      l.ages.unshift(new Map());
      l.headStart += width;
      if (l.ages.every((a) => a.size === 0)) { l.headStart = t; break; }
    }
  }

  function latencyOf(s: Series): LatencySummary | null {
    if (s.latency && latency.get(s.latency.key) === s.latency) return s.latency;
    const { namespace, ingress, service, canary } = s.labels as { namespace: string; ingress: string; service: string; canary: string };
    const key = `${namespace}\t${ingress}\t${service}\t${canary}`;
    let l = latency.get(key);
    if (!l) {
      if (full()) return null;
      l = {
        key, labels: { ...opts.constLabels, ingress, namespace, service, canary }, ingress: `${namespace}/${ingress}`, sum: 0, count: 0,
        ages: Array.from({ length: SUMMARY_AGE_BUCKETS }, () => new Map()), headStart: now(),
      };
      latency.set(key, l);
    }
    return (s.latency = l);
  }

  function observeLatency(s: Series, seconds: number): void {
    const l = latencyOf(s);
    if (!l) return;
    rotate(l, now());
    // Milliseconds, to two significant digits from 100 ms on: at most 90 values a decade, so a
    // backend that spreads its connect times cannot grow the window without bound.
    let ms = Math.round(seconds * 1000);
    if (ms >= 100) {
      const step = 10 ** (Math.floor(Math.log10(ms)) - 1);
      ms = Math.round(ms / step) * step;
    }
    const head = l.ages[0]!;
    head.set(ms, (head.get(ms) ?? 0) + 1);
    l.sum += seconds;
    l.count++;
  }

  function seriesFor(f: string[]): Series | null {
    const host = f[7]!;
    const method = KNOWN_METHODS.has(f[5]!) ? f[5]! : 'OTHER';
    const status = opts.statusClasses && f[6] !== '' ? `${f[6]![0]}xx` : f[6]!;
    const key = `${f[0]}\t${f[1]}\t${f[2]}\t${f[3]}\t${f[4]}\t${method}\t${status}\t${opts.perHost ? host : ''}`;
    let s = series.get(key);
    if (!s) {
      if (full()) return null;
      const labels: Labels = { ...opts.constLabels, status, method, path: f[3]!, namespace: f[0]!, ingress: f[1]!, service: f[2]!, canary: f[4]! };
      if (opts.perHost) labels.host = host;
      s = { labels, ingress: `${f[0]}/${f[1]}`, requests: 0, histograms: histograms.map(() => null), latency: null };
      series.set(key, s);
    }
    return s;
  }

  // With the host label and status codes, a known method's line starts with its series key: the
  // common case looks the series up without splitting the line.
  const rawKeys = opts.perHost && !opts.statusClasses;
  const tabs = new Int32Array(FIELDS - 1);

  function addLine(raw: string): LineOutcome {
    const line = unrouted(raw);
    let at = -1;
    for (let i = 0; i < FIELDS - 1; i++) {
      at = line.indexOf('\t', at + 1);
      if (at < 0) return i === METRICS_LOG_ROUTED_FIELDS - 1 && line.startsWith('-\t') ? 'skipped' : 'malformed';
      tabs[i] = at;
    }
    if (line.indexOf('\t', at + 1) >= 0) return 'malformed';
    // An unset $namespace: a server or location of no Ingress (www redirects, rejected requests).
    if (tabs[0] === 1 && line.charCodeAt(0) === 45) return 'skipped';
    if (tabs[7]! > 8 * MAX_LABEL_LENGTH) return 'malformed';
    let s = rawKeys ? series.get(line.slice(0, tabs[7])) : undefined;
    if (!s) {
      const f = line.split('\t');
      for (let i = 0; i < 8; i++) if (f[i]!.length > MAX_LABEL_LENGTH) return 'malformed';
      if (opts.perHost && !opts.perUndefinedHost && !hosts.has(f[7]!)) return 'skipped';
      const found = seriesFor(f);
      if (!found) return 'dropped';
      s = found;
    } else if (!opts.perUndefinedHost && !hosts.has(line.slice(tabs[6]! + 1, tabs[7]))) {
      return 'skipped';
    }
    s.requests++;
    for (let h = 0; h < histograms.length; h++) {
      const spec = histograms[h]!;
      const v = number(line.slice(tabs[spec.field - 1]! + 1, spec.field < FIELDS - 1 ? tabs[spec.field] : undefined));
      if (Number.isNaN(v)) continue;
      let hist = s.histograms[h];
      if (!hist) hist = s.histograms[h] = { sum: 0, counts: new Float64Array(spec.bounds.length + 1) };
      hist.sum += v;
      let i = 0;
      while (i < spec.bounds.length && v > spec.bounds[i]!) i++;
      hist.counts[i]!++;
    }
    if (latencyOn) {
      const v = number(line.slice(tabs[CONNECT_TIME - 1]! + 1, tabs[CONNECT_TIME]));
      if (!Number.isNaN(v)) observeLatency(s, v);
    }
    return 'counted';
  }

  // ---- exposition
  const base = (family: RequestFamily) => ({ name: `${PREFIX}${family}`, help: HELP[family] });
  if (enabled.has('requests')) {
    registerFamily(opts.registry, {
      ...base('requests'), type: 'counter',
      samples: () => [...series.values()].map((s) => ({ sharedLabels: s.labels, value: s.requests })),
    });
  }
  histograms.forEach((spec, h) => {
    const name = `${PREFIX}${spec.family}`;
    const les = spec.bounds.map(goFloat).concat('+Inf').map((le) => ({ le }));
    registerFamily(opts.registry, {
      ...base(spec.family), type: 'histogram',
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
  if (latencyOn) {
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
    addLine,
    setHosts(h) { hosts = h; },
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
