// --enable-metrics: the monitor socket NGINX's workers send their request batches to, the
// request families those batches feed, the NGINX process and stub_status families, and
// ingress-rx's own counters of what the monitor delivered and dropped.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../log.js';
import type { Configuration } from '../model/types.js';
import type { MonitorOptions } from '../render/monitor.js';
import { listenMonitorSocket, workerOwner } from './monitor-socket.js';
import { createRequestMetrics } from './request-metrics.js';
import { registerNginxProcessMetrics } from './nginx-process-metrics.js';
import type { Labels } from './exposition.js';

export const DEFAULT_MAX_REQUEST_SERIES = 10_000;

export interface NginxMetricsOptions {
  registry: Registry;
  constLabels: Labels;
  monitor: MonitorOptions;
  /** NGINX's `user` directive, if any (whose workers must write to the socket). */
  workerUser?: string;
  /** Label sets kept across the request families (ingress-rx's bound; ingress-nginx has none). */
  maxSeries?: number;
  masterPid: () => number | null;
  stubStatus: () => Promise<string>;
  logger: Logger;
}

export interface NginxMetrics {
  /** After an applied sync: the request series of Ingresses the configuration no longer has go. */
  configApplied(config: Configuration): void;
  close(): Promise<void>;
}

function ingressKeys(config: Configuration): Set<string> {
  const keys = new Set<string>();
  for (const s of config.servers) for (const l of s.locations) if (l.ingress) keys.add(`${l.ingress.namespace}/${l.ingress.name}`);
  return keys;
}

export async function startNginxMetrics(opts: NginxMetricsOptions): Promise<NginxMetrics> {
  const { registry, logger } = opts;
  const requests = createRequestMetrics({
    registry, constLabels: opts.constLabels, perHost: opts.monitor.perHost, families: opts.monitor.families,
    buckets: { time: opts.monitor.timeBuckets, length: opts.monitor.lengthBuckets, size: opts.monitor.sizeBuckets },
    maxSeries: opts.maxSeries ?? DEFAULT_MAX_REQUEST_SERIES,
  });
  registerNginxProcessMetrics({ registry, masterPid: opts.masterPid, stubStatus: opts.stubStatus });
  const batches = new Counter({
    name: 'ingress_rx_monitor_batches_total', help: 'Request-metric batches received from NGINX workers, by result',
    labelNames: ['result'], registers: [registry],
  });
  const dropped = new Counter({
    name: 'ingress_rx_monitor_dropped_requests_total',
    help: 'Requests not counted in the request metrics: worker-series-limit (--monitor-max-batch-size), series-limit (--metrics-max-series)',
    labelNames: ['reason'], registers: [registry],
  });
  new Gauge({
    name: 'ingress_rx_request_series', help: 'Label sets held across the request metric families',
    registers: [registry], collect() { this.set(requests.seriesCount()); },
  });
  for (const result of ['ok', 'invalid']) batches.inc({ result }, 0);
  for (const reason of ['worker-series-limit', 'series-limit']) dropped.inc({ reason }, 0);

  let lastRejection = 0;
  const rejected = (reason: string) => {
    batches.inc({ result: 'invalid' });
    // One line a minute at most: a broken sender retries every second.
    const now = Date.now();
    if (now - lastRejection > 60_000) { lastRejection = now; logger.warn({ reason }, 'request-metrics batch rejected'); }
  };
  const socket = await listenMonitorSocket({
    path: opts.monitor.socketPath,
    owner: workerOwner(opts.workerUser),
    onRejected: rejected,
    onBatch(batch) {
      const b = batch as { dropped?: unknown };
      const out = requests.add(batch);
      if (!out.ok) rejected(out.reason ?? 'malformed');
      else batches.inc({ result: 'ok' });
      const workerDropped = typeof b?.dropped === 'number' ? b.dropped : 0;
      if (workerDropped > 0) dropped.inc({ reason: 'worker-series-limit' }, workerDropped);
      if (out.dropped - workerDropped > 0) dropped.inc({ reason: 'series-limit' }, out.dropped - workerDropped);
    },
  });

  let known = new Set<string>();
  return {
    configApplied(config) {
      const next = ingressKeys(config);
      const gone = new Set([...known].filter((k) => !next.has(k)));
      requests.removeIngresses(gone);
      known = next;
    },
    close: () => socket.close(),
  };
}
