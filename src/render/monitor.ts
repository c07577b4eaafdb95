// The request-metrics monitor NGINX runs (lua/monitor.lua): ingress-nginx's request metric
// families, ingress-nginx's default buckets, and the Lua configuration the template prints.
import { join } from 'node:path';
import { RenderError, luaBool, luaNumber, luaString, num } from './filters.js';

/** ingress-nginx's request metric families (without the nginx_ingress_controller_ prefix). */
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

export interface MonitorOptions {
  /** The controller's unix socket the workers send their batches to. */
  socketPath: string;
  perHost: boolean;
  perUndefinedHost: boolean;
  statusClasses: boolean;
  timeBuckets: number[];
  lengthBuckets: number[];
  sizeBuckets: number[];
  /** The families collected (all but --exclude-socket-metrics). */
  families: RequestFamily[];
  /** Distinct series one worker holds between two flushes; requests of further series are counted as dropped. */
  maxBatchSeries: number;
}

/** Where the monitor socket lives: under the NGINX prefix, reachable only through the file system. */
export function monitorSocketPath(prefix: string): string {
  return join(prefix, 'prometheus-nginx.socket');
}

export function defaultMonitorOptions(prefix: string): MonitorOptions {
  return {
    socketPath: monitorSocketPath(prefix),
    perHost: true,
    perUndefinedHost: false,
    statusClasses: false,
    timeBuckets: DEFAULT_TIME_BUCKETS,
    lengthBuckets: DEFAULT_LENGTH_BUCKETS,
    sizeBuckets: DEFAULT_SIZE_BUCKETS,
    families: [...REQUEST_FAMILIES],
    maxBatchSeries: 10_000,
  };
}

function buckets(values: number[], field: string): string {
  if (values.length === 0 || values.length > 64) throw new RenderError(field, `expected 1 to 64 buckets, got ${values.length}`);
  for (let i = 1; i < values.length; i++) {
    if (!(values[i]! > values[i - 1]!)) throw new RenderError(field, 'buckets must increase');
  }
  return `{ ${values.map((v) => luaNumber(v, field)).join(', ')} }`;
}

/** The Lua table monitor.configure() takes, every value through a filter. */
export function monitorLuaConfig(m: MonitorOptions): string {
  for (const f of m.families) if (!REQUEST_FAMILIES.includes(f)) throw new RenderError('exclude-socket-metrics', `unknown family ${JSON.stringify(f)}`);
  return `{ socket = ${luaString(m.socketPath, 'monitor socket')}, per_host = ${luaBool(m.perHost, 'metrics-per-host')}, `
    + `per_undefined_host = ${luaBool(m.perUndefinedHost, 'metrics-per-undefined-host')}, status_classes = ${luaBool(m.statusClasses, 'report-status-classes')}, `
    + `time_buckets = ${buckets(m.timeBuckets, 'time-buckets')}, length_buckets = ${buckets(m.lengthBuckets, 'length-buckets')}, `
    + `size_buckets = ${buckets(m.sizeBuckets, 'size-buckets')}, max_series = ${num(m.maxBatchSeries, 'monitor-max-batch-size')}, `
    + `families = { ${m.families.map((f) => luaString(f)).join(', ')} } }`;
}
