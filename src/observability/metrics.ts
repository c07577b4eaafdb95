// Prometheus metrics with ingress-nginx's names for what operators already alert on (reloads,
// config hash, certificates, orphaned Ingresses, build, leader), and ours for the pipeline
// (dynamic updates, sync duration, ring drops, event-to-applied latency). One registry per
// controller, passed in: no global default. The certificate families carry no controller_*
// labels in ingress-nginx, so they live in a second registry printed after the first.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SyncResult } from '../actors/sync.js';
import { TAKEOVER_REASON } from '../model/ingress/takeovers.js';
import { version } from '../version.js';
import { createCertificateMetrics } from './certificate-metrics.js';
import { createIngressMetrics } from './ingress-metrics.js';

export interface ControllerMetrics {
  /** The registry of the families with the controller_* labels; request and NGINX families join it. */
  registry: Registry;
  /** What /metrics serves: both registries. */
  exposition: { contentType: string; metrics(): Promise<string> };
  observeSync(result: SyncResult, receivedAt: (id: number) => number | undefined, now: number): void;
  ringDropped(): void;
  /** leader_election_status (unless electionId is null: no election); while leading, certificate expiry is exported. */
  leading(electionId: string | null, isLeader: boolean): void;
}

/** The quarantine metrics: one series per object set aside, and how many there are. */
function quarantineGauges(registry: Registry): (entries: SyncResult['quarantined']) => void {
  const ingresses = new Gauge({ name: 'ingress_rx_quarantined_ingresses', help: 'Ingresses set aside because NGINX refuses them or they pass a budget (1 per Ingress); everything else is applied', labelNames: ['namespace', 'name'], registers: [registry] });
  const configmaps = new Gauge({ name: 'ingress_rx_quarantined_configmaps', help: 'Main ConfigMaps whose settings NGINX refuses, and TCP/UDP services entries it refuses (1 each); everything else is applied', labelNames: ['namespace', 'name'], registers: [registry] });
  const total = new Gauge({ name: 'ingress_rx_quarantined_objects', help: 'Objects set aside because NGINX refuses them', registers: [registry] });
  total.set(0);
  let last = '';
  return (entries) => {
    const key = entries.map((e) => `${e.kind}/${e.key}`).join('\u0000');
    if (key === last) return;
    last = key;
    ingresses.reset();
    configmaps.reset();
    for (const e of entries) {
      const slash = e.key.indexOf('/');
      (e.kind === 'Ingress' ? ingresses : configmaps).set({ namespace: e.key.slice(0, slash), name: e.key.slice(slash + 1) }, 1);
    }
    total.set(entries.length);
  };
}

/**
 * Cross-namespace takeovers (Event reason Takeover): per Ingress, how many warnings say it takes
 * another namespace's traffic (`side="takes"`) or that its traffic is taken (`side="taken"`).
 */
function takeoverGauges(registry: Registry): (warnings: SyncResult['warnings']) => void {
  const gauge = new Gauge({ name: 'ingress_rx_takeovers', help: "Takeover warnings per Ingress: it takes another namespace's traffic (side=takes), or another namespace takes its traffic (side=taken)", labelNames: ['namespace', 'name', 'side'], registers: [registry] });
  let last = '';
  return (warnings) => {
    const counts = new Map<string, number>();
    for (const w of warnings) {
      if (w.reason !== TAKEOVER_REASON) continue;
      const side = /^takes traffic of /.test(w.message) ? 'takes' : / takes traffic of this Ingress: /.test(w.message) ? 'taken' : null;
      const m = /^Ingress ([^/\s]+)\/(\S+)$/.exec(w.object);
      if (!side || !m) continue;
      const key = `${m[1]}\u0000${m[2]}\u0000${side}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const key = [...counts].map(([k, n]) => `${k}\u0000${n}`).sort().join('\n');
    if (key === last) return;
    last = key;
    gauge.reset();
    for (const [k, n] of counts) {
      const [namespace, name, side] = k.split('\u0000') as [string, string, string];
      gauge.set({ namespace, name, side }, n);
    }
  };
}

export interface MetricsOptions {
  /** The self-signed fallback certificate, exported for `_` without a --default-ssl-certificate. */
  fallbackCertPem?: () => string | null;
  /** Without leader election (local mode) this controller exports the certificate expiry itself. */
  leader?: boolean;
}

export function createMetrics(labels: { controller_namespace: string; controller_class: string; controller_pod: string }, opts: MetricsOptions = {}): ControllerMetrics {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  const certRegistry = new Registry();
  const certificates = createCertificateMetrics({ registry: certRegistry, controllerClass: labels.controller_class, fallbackPem: opts.fallbackCertPem ?? (() => null) });
  const ingresses = createIngressMetrics({ registry, constLabels: labels });
  let leader = opts.leader ?? false;
  let lastConfig: SyncResult['config'];
  new Gauge({
    name: 'nginx_ingress_controller_build_info', help: "A metric with a constant '1' labeled with information about the build.",
    labelNames: ['release', 'build', 'repository'], registers: [registry],
  }).set({ release: version(), build: process.env.INGRESS_RX_BUILD ?? 'UNKNOWN', repository: process.env.INGRESS_RX_REPOSITORY ?? 'UNKNOWN' }, 1);
  const leaderElection = new Gauge({
    name: 'nginx_ingress_controller_leader_election_status',
    help: "Gauge reporting status of the leader election, 0 indicates follower, 1 indicates leader. 'name' is the string used to identify the lease",
    labelNames: ['name'], registers: [registry],
  });
  collectDefaultMetrics({ register: registry });
  const reloadsOk = new Counter({ name: 'nginx_ingress_controller_success', help: 'Cumulative number of Ingress controller reload operations', registers: [registry] });
  const reloadsFailed = new Counter({ name: 'nginx_ingress_controller_errors', help: 'Cumulative number of Ingress controller errors during reload operations', registers: [registry] });
  const lastReloadOk = new Gauge({ name: 'nginx_ingress_controller_config_last_reload_successful', help: 'Whether the last configuration reload attempt was successful', registers: [registry] });
  const lastReloadTs = new Gauge({ name: 'nginx_ingress_controller_config_last_reload_successful_timestamp_seconds', help: 'Timestamp of the last successful configuration reload.', registers: [registry] });
  const configHash = new Gauge({ name: 'nginx_ingress_controller_config_hash', help: 'Running configuration hash actually running', registers: [registry] });
  const dynamicUpdates = new Counter({ name: 'ingress_rx_dynamic_updates_total', help: 'Configuration changes applied through the Lua endpoint without a reload', labelNames: ['result'], registers: [registry] });
  const syncs = new Counter({ name: 'ingress_rx_syncs_total', help: 'Syncs by decision', labelNames: ['decision', 'applied'], registers: [registry] });
  const syncDuration = new Histogram({ name: 'ingress_rx_sync_duration_seconds', help: 'Duration of a sync: model build, decision, reload and dynamic update', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers: [registry] });
  const ringDrops = new Counter({ name: 'ingress_rx_ring_dropped_total', help: 'Events dropped by the full ring buffer (a later sync still covers them)', registers: [registry] });
  const eventToApplied = new Histogram({ name: 'ingress_rx_event_to_applied_seconds', help: 'Time from an event entering the pipeline to NGINX running its effect', buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [registry] });
  lastReloadOk.set(1);
  const observeQuarantine = quarantineGauges(registry);
  const observeTakeovers = takeoverGauges(registry);

  return {
    registry,
    observeSync(r, receivedAt, now) {
      observeQuarantine(r.quarantined);
      // A sync that built a model reports every warning of it.
      if (r.config) observeTakeovers(r.warnings);
      syncs.inc({ decision: r.decision, applied: String(r.applied) });
      syncDuration.observe(r.durationMs / 1000);
      if (r.reload) {
        if (r.reload.ok) { reloadsOk.inc(); lastReloadOk.set(1); lastReloadTs.set(Math.floor(Date.now() / 1000)); }
        else { reloadsFailed.inc(); lastReloadOk.set(0); }
      }
      if (r.dynamic) dynamicUpdates.inc({ result: r.dynamic.ok ? 'success' : 'failure' });
      if (r.applied && r.config) {
        lastConfig = r.config;
        certificates.update(r.config, leader);
        ingresses.orphans(r.config);
      }
      if (r.applied && r.checksum) {
        configHash.set(Number.parseInt(r.checksum.slice(0, 12), 16) || 0);
        for (const id of r.itemIds) {
          const t = receivedAt(id);
          if (t !== undefined) eventToApplied.observe(Math.max(0, now - t) / 1000);
        }
      }
    },
    ringDropped() { ringDrops.inc(); },
    leading(electionId, isLeader) {
      leader = isLeader;
      if (electionId !== null) leaderElection.set({ name: electionId }, isLeader ? 1 : 0);
      if (lastConfig) certificates.update(lastConfig, leader);
    },
    exposition: {
      contentType: registry.contentType,
      async metrics() {
        const [a, b] = await Promise.all([registry.metrics(), certRegistry.metrics()]);
        return b.trim() === '' ? a : `${a}\n${b}`;
      },
    },
  };
}
