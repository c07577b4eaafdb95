// nginx_ingress_controller_orphan_ingress: an Ingress whose Service is missing (no-service) or
// has no endpoints (no-endpoint), from the configuration NGINX runs. (The check counters belong
// to the admission webhook: src/admission/metrics.ts.)
import { Gauge, type Registry } from 'prom-client';
import type { Configuration, Server } from '../model/core/types.js';
import { locationLabel } from '../model/core/origin.js';

export interface IngressMetrics {
  /** After an applied sync: orphan state of every Ingress in the configuration. */
  orphans(config: Configuration): void;
}

// An unchanged server is the same object from one sync to the next (the builder reuses it).
const serverPairs = new WeakMap<Server, ReadonlyArray<{ key: string; backend: string }>>();

/** The server's locations that an Ingress's Service backs: the Ingress (namespace/name) and backend. */
function ingressBackends(server: Server): ReadonlyArray<{ key: string; backend: string }> {
  let pairs = serverPairs.get(server);
  if (!pairs) {
    pairs = server.locations.filter((l) => l.ingress && l.service && !l.isDefBackend)
      .map((l) => ({ key: `${l.ingress!.namespace}/${locationLabel(l.ingress!)}`, backend: l.backend }));
    serverPairs.set(server, pairs);
  }
  return pairs;
}

export function createIngressMetrics(opts: { registry: Registry; constLabels: Record<string, string> }): IngressMetrics {
  const orphan = new Gauge({
    name: 'nginx_ingress_controller_orphan_ingress',
    help: "Gauge reporting status of ingress orphanity, 1 indicates orphaned ingress.\n\t\t\t'namespace' is the string used to identify namespace of ingress, 'ingress' for ingress name and 'type' for 'no-service' or 'no-endpoint' of orphanity",
    labelNames: ['controller_namespace', 'controller_class', 'controller_pod', 'namespace', 'ingress', 'type'],
    registers: [opts.registry],
  });
  // What each Ingress's gauges hold ('1 0', '0 -': no-service, then no-endpoint or '-' for none):
  // a sync touches only the label sets that changed, since setting 10k of them costs ~100 ms.
  let exported = new Map<string, string>();
  const labelsOf = (key: string, type: string) => {
    const slash = key.indexOf('/');
    return { ...opts.constLabels, namespace: key.slice(0, slash), ingress: key.slice(slash + 1), type };
  };
  return {
    orphans(config) {
      const backends = new Map(config.backends.map((b) => [b.name, b]));
      const state = new Map<string, { noService: boolean; noEndpoint: boolean | null }>();
      for (const server of config.servers) {
        for (const { key, backend: name } of ingressBackends(server)) {
          const backend = backends.get(name);
          if (!backend) continue;
          let s = state.get(key);
          if (!s) state.set(key, (s = { noService: false, noEndpoint: null }));
          if (backend.service === null) s.noService = true;
          else s.noEndpoint = (s.noEndpoint ?? false) || backend.endpoints.length === 0;
        }
      }
      const next = new Map<string, string>();
      for (const [key, s] of state) {
        const code = `${s.noService ? 1 : 0} ${s.noEndpoint === null ? '-' : s.noEndpoint ? 1 : 0}`;
        next.set(key, code);
        if (exported.get(key) === code) continue;
        orphan.set(labelsOf(key, 'no-service'), s.noService ? 1 : 0);
        if (s.noEndpoint !== null) orphan.set(labelsOf(key, 'no-endpoint'), s.noEndpoint ? 1 : 0);
        else if (exported.has(key)) orphan.remove(labelsOf(key, 'no-endpoint'));
      }
      for (const key of exported.keys()) {
        if (next.has(key)) continue;
        orphan.remove(labelsOf(key, 'no-service'));
        orphan.remove(labelsOf(key, 'no-endpoint'));
      }
      exported = next;
    },
  };
}
