// --enable-metrics: the request families fed by NGINX's metrics log, the NGINX process and
// stub_status families, and ingress-rx's own counters of what the metrics log delivered.
import { rmSync } from 'node:fs';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Configuration, Server } from '../model/core/types.js';
import { locationLabel } from '../model/core/origin.js';
import { createMetricsLogReader } from './metrics-log-reader.js';
import { createRequestMetrics, type LineOutcome, type RequestMetricsConfig } from './request-metrics.js';
import { registerNginxProcessMetrics } from './nginx-process-metrics.js';
import type { Labels } from './exposition.js';

export interface NginxMetricsOptions {
  registry: Registry;
  constLabels: Labels;
  /** The metrics log NGINX writes (runtime.metricsLog). */
  logPath: string;
  requests: RequestMetricsConfig;
  masterPid: () => number | null;
  stubStatus: () => Promise<string>;
  pollIntervalMs?: number;
}

export interface NginxMetrics {
  /** After an applied sync: the defined hosts, and the request series of Ingresses that are gone. */
  configApplied(config: Configuration): void;
  /** Reads the metrics log now (tests; the reader also polls on its own). */
  poll(): Promise<void>;
  close(): Promise<void>;
}

/** ingress-nginx's hosts set: every server's name and aliases, `_` included. */
export function definedHosts(config: Configuration): Set<string> {
  const hosts = new Set<string>();
  for (const s of config.servers) {
    hosts.add(s.hostname);
    for (const a of s.aliases) hosts.add(a);
  }
  return hosts;
}

// An unchanged server is the same object from one sync to the next (the builder reuses it).
const serverIngresses = new WeakMap<Server, readonly string[]>();

function ingressKeys(config: Configuration): Set<string> {
  const keys = new Set<string>();
  for (const s of config.servers) {
    let own = serverIngresses.get(s);
    if (!own) {
      own = s.locations.flatMap((l) => (l.ingress ? [`${l.ingress.namespace}/${locationLabel(l.ingress)}`] : []));
      serverIngresses.set(s, own);
    }
    for (const k of own) keys.add(k);
  }
  return keys;
}

/** Starts reading; call before NGINX starts, so that a previous run's lines are not counted. */
export function startNginxMetrics(opts: NginxMetricsOptions): NginxMetrics {
  const { registry } = opts;
  const requests = createRequestMetrics({ ...opts.requests, registry, constLabels: opts.constLabels });
  registerNginxProcessMetrics({ registry, masterPid: opts.masterPid, stubStatus: opts.stubStatus });
  const lines = new Counter({
    name: 'ingress_rx_metrics_log_lines_total',
    help: 'Lines of NGINX\'s metrics log by outcome: counted; skipped (no Ingress location, or a host no Ingress defines); dropped (over --metrics-max-series); malformed',
    labelNames: ['outcome'], registers: [registry],
  });
  const skippedBytes = new Counter({
    name: 'ingress_rx_metrics_log_skipped_bytes_total', help: 'Bytes of the metrics log skipped because the controller fell too far behind',
    registers: [registry],
  });
  new Gauge({
    name: 'ingress_rx_request_series', help: 'Label sets held across the request metric families',
    registers: [registry], collect() { this.set(requests.seriesCount()); },
  });
  const outcomes: Record<LineOutcome, number> = { counted: 0, skipped: 0, dropped: 0, malformed: 0 };
  for (const outcome of Object.keys(outcomes)) lines.inc({ outcome }, 0);

  rmSync(opts.logPath, { force: true });
  rmSync(`${opts.logPath}.1`, { force: true });
  const reader = createMetricsLogReader({
    path: opts.logPath,
    masterPid: opts.masterPid,
    onSkipped: (bytes) => skippedBytes.inc(bytes),
    onLines(batch) {
      for (const line of batch) if (line !== '') outcomes[requests.addLine(line)]++;
      for (const [outcome, n] of Object.entries(outcomes) as Array<[LineOutcome, number]>) {
        if (n > 0) { lines.inc({ outcome }, n); outcomes[outcome] = 0; }
      }
    },
  });
  const timer = setInterval(() => { void reader.poll().catch(() => {}); }, opts.pollIntervalMs ?? 1000);
  timer.unref();

  let known = new Set<string>();
  return {
    configApplied(config) {
      requests.setHosts(definedHosts(config));
      const next = ingressKeys(config);
      requests.removeIngresses(new Set([...known].filter((k) => !next.has(k))));
      known = next;
    },
    poll: () => reader.poll(),
    async close() {
      clearInterval(timer);
      await reader.close();
    },
  };
}
