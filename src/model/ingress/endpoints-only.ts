// The endpoints-only path: when every change since the previous build is an EndpointSlice of a
// Service the previous build read, only that Service's backends are rebuilt; servers,
// certificates and every other backend are the previous build's objects.
import type { StoreReader } from '../../store/types.js';
import { endpointsFor, planBackend, planWarning, type AssembledBackends, type BackendContext } from './backend-assembly.js';
import type { Topology } from './topology.js';
import type { Backend, Certificate, ModelWarning, Server } from '../core/types.js';
import type { NginxSettings } from '../core/config/settings.js';

/** What the last full (or endpoints-only) build left for an endpoints-only rebuild to reuse. */
export interface LastBuild {
  readonly topo: Topology;
  readonly settings: NginxSettings;
  readonly servers: readonly Server[];
  readonly certificates: Readonly<Record<string, Certificate>>;
  readonly defaultCertificate: string | null;
  /** Certificates are rechecked (full build) once the first of them expires. */
  readonly validUntil: number;
  /** Warnings before the backends' (settings, topology, certificates). */
  readonly leading: readonly ModelWarning[];
  readonly assembled: AssembledBackends;
  /** Position of each backend in `assembled.backends`, made on first use. */
  backendIndex?: Map<string, number>;
  /** Per Service: the indexes of the topology's plans that use it, made on first use. */
  plansByService?: Map<string, number[]>;
}

/** A change the builder is told of. */
export interface StoreChange {
  readonly kind: string;
  readonly key: string;
}

/**
 * The Services whose EndpointSlices `changes` touched, or null when the full build must run.
 * `sliceServices` is asked only when every change is a slice's: making it the first time walks
 * every endpoints entry, which a change of another kind must not pay.
 */
export function changedServices(store: StoreReader, changes: readonly StoreChange[], prev: LastBuild, sliceServicesOf: () => ReadonlyMap<string, string>): Set<string> | null {
  for (const c of changes) if (c.kind !== 'EndpointSlice') return null;
  const sliceServices = sliceServicesOf();
  const services = new Set<string>();
  for (const c of changes) {
    // A slice the builder never read (new, or of an unused Service), or one that left its
    // Service (deleted or relabelled): where it went is unknown here.
    const svcKey = sliceServices.get(c.key);
    if (svcKey === undefined || prev.assembled.otherServices.has(svcKey)) return null;
    const slash = c.key.indexOf('/');
    const ns = c.key.slice(0, slash);
    const name = c.key.slice(slash + 1);
    if (!store.getEndpointSlices(svcKey).some((s) => (s.metadata.namespace ?? '') === ns && s.metadata.name === name)) return null;
    services.add(svcKey);
  }
  return services;
}

/**
 * The previous build with the backends of `services` rebuilt: the new LastBuild (the previous
 * one is not changed) and the warnings in the order a full build gives them (without the L4
 * services', which the caller adds).
 */
export function rebuildServiceBackends(c: BackendContext, prev: LastBuild, services: ReadonlySet<string>): { last: LastBuild; warnings: ModelWarning[] } {
  const { topo } = prev;
  let byService = prev.plansByService;
  if (!byService) {
    byService = new Map();
    for (let i = 0; i < topo.plans.length; i++) {
      const k = topo.plans[i]!.use.serviceKey;
      const list = byService.get(k);
      if (list) list.push(i);
      else byService.set(k, [i]);
    }
    prev.plansByService = byService;
  }
  const previous = prev.assembled;
  prev.backendIndex ??= new Map(previous.backends.map((b, i) => [b.name, i]));
  let backends = previous.backends;
  const planWarnings = previous.planWarnings.slice();
  const planBackends = previous.planBackends.slice();
  for (const svcKey of services) {
    for (const i of byService.get(svcKey) ?? []) {
      const p = topo.plans[i]!;
      const ends = endpointsFor(c, p.use.serviceKey, p.use.port, p.serviceUpstream, p.endpointsKey);
      planWarnings[i] = planWarning(p, ends);
      const b: Backend = planBackend(c, p, ends);
      planBackends[i] = b;
      const at = prev.backendIndex.get(p.name)!;
      if (backends[at] !== b) {
        if (backends === previous.backends) backends = backends.slice();
        backends[at] = b;
      }
    }
  }
  const warnings = [...prev.leading];
  for (const w of planWarnings) if (w) warnings.push(w);
  for (const w of previous.trailing) warnings.push(w);
  const assembled: AssembledBackends = { ...previous, backends, planBackends, planWarnings };
  return { last: { ...prev, assembled, backendIndex: prev.backendIndex, plansByService: byService }, warnings };
}
