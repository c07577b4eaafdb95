// Per-Ingress controller metrics: nginx_ingress_controller_orphan_ingress (an Ingress whose
// Service is missing or has no endpoints) and _check_success / _check_errors. ingress-nginx
// counts checks in its admission webhook; ingress-rx has none, so a check is the validation of
// a new or changed Ingress by the sync that first sees it.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Configuration, ModelWarning } from '../model/types.js';
import type { Ingress } from '../store/kube-types.js';

export interface IngressMetrics {
  /** After an applied sync: orphan state of every Ingress in the configuration. */
  orphans(config: Configuration): void;
  /** After every sync: one check per Ingress that is new or changed since the last call. */
  checks(ingresses: readonly Ingress[], warnings: readonly ModelWarning[]): void;
}

export function createIngressMetrics(opts: { registry: Registry; constLabels: Record<string, string> }): IngressMetrics {
  const orphan = new Gauge({
    name: 'nginx_ingress_controller_orphan_ingress',
    help: "Gauge reporting status of ingress orphanity, 1 indicates orphaned ingress.\n\t\t\t'namespace' is the string used to identify namespace of ingress, 'ingress' for ingress name and 'type' for 'no-service' or 'no-endpoint' of orphanity",
    labelNames: ['controller_namespace', 'controller_class', 'controller_pod', 'namespace', 'ingress', 'type'],
    registers: [opts.registry],
  });
  const checkOk = new Counter({
    name: 'nginx_ingress_controller_check_success',
    help: 'Cumulative number of Ingress controller syntax check operations',
    labelNames: ['controller_namespace', 'controller_class', 'controller_pod', 'namespace', 'ingress'],
    registers: [opts.registry],
  });
  const checkFailed = new Counter({
    name: 'nginx_ingress_controller_check_errors',
    help: 'Cumulative number of Ingress controller errors during syntax check operations',
    labelNames: ['controller_namespace', 'controller_class', 'controller_pod', 'namespace', 'ingress'],
    registers: [opts.registry],
  });
  // The store hands out a new object for every change of an Ingress.
  let checked = new Map<string, Ingress>();

  return {
    orphans(config) {
      const backends = new Map(config.backends.map((b) => [b.name, b]));
      const state = new Map<string, { namespace: string; ingress: string; noService: boolean; noEndpoint: boolean | null }>();
      for (const server of config.servers) {
        for (const loc of server.locations) {
          if (!loc.ingress || !loc.service || loc.isDefBackend) continue;
          const backend = backends.get(loc.backend);
          if (!backend) continue;
          const key = `${loc.ingress.namespace}/${loc.ingress.name}`;
          let s = state.get(key);
          if (!s) state.set(key, (s = { namespace: loc.ingress.namespace, ingress: loc.ingress.name, noService: false, noEndpoint: null }));
          if (backend.service === null) s.noService = true;
          else s.noEndpoint = (s.noEndpoint ?? false) || backend.endpoints.length === 0;
        }
      }
      orphan.reset();
      for (const s of state.values()) {
        const labels = { ...opts.constLabels, namespace: s.namespace, ingress: s.ingress };
        orphan.set({ ...labels, type: 'no-service' }, s.noService ? 1 : 0);
        if (s.noEndpoint !== null) orphan.set({ ...labels, type: 'no-endpoint' }, s.noEndpoint ? 1 : 0);
      }
    },
    checks(ingresses, warnings) {
      const invalid = new Set<string>();
      for (const w of warnings) {
        const m = /^Ingress (\S+)$/.exec(w.object);
        if (m) invalid.add(m[1]!);
      }
      const next = new Map<string, Ingress>();
      for (const ing of ingresses) {
        const key = `${ing.metadata.namespace ?? ''}/${ing.metadata.name ?? ''}`;
        next.set(key, ing);
        if (checked.get(key) === ing) continue;
        const labels = { ...opts.constLabels, namespace: ing.metadata.namespace ?? '', ingress: ing.metadata.name ?? '' };
        (invalid.has(key) ? checkFailed : checkOk).inc(labels);
      }
      checked = next;
    },
  };
}
