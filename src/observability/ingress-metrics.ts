// nginx_ingress_controller_orphan_ingress: an Ingress whose Service is missing (no-service) or
// has no endpoints (no-endpoint), from the configuration NGINX runs. (The check counters belong
// to the admission webhook: src/admission/metrics.ts.)
import { Gauge, type Registry } from 'prom-client';
import type { Configuration } from '../model/types.js';

export interface IngressMetrics {
  /** After an applied sync: orphan state of every Ingress in the configuration. */
  orphans(config: Configuration): void;
}

export function createIngressMetrics(opts: { registry: Registry; constLabels: Record<string, string> }): IngressMetrics {
  const orphan = new Gauge({
    name: 'nginx_ingress_controller_orphan_ingress',
    help: "Gauge reporting status of ingress orphanity, 1 indicates orphaned ingress.\n\t\t\t'namespace' is the string used to identify namespace of ingress, 'ingress' for ingress name and 'type' for 'no-service' or 'no-endpoint' of orphanity",
    labelNames: ['controller_namespace', 'controller_class', 'controller_pod', 'namespace', 'ingress', 'type'],
    registers: [opts.registry],
  });
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
  };
}
