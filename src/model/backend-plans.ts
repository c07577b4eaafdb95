// Backend plans: how each backend (upstream) is to be built, from the Ingresses that use it. The
// first (oldest) Ingress using a backend gives it its policies (affinity, load balancing,
// hashing, service-upstream); cookie affinity collects every host and path that uses it.
// A plan is filled while the topology is made and never changes once the topology is returned.
import { NO_AFFINITY, sessionAffinity } from './backends.js';
import type { ParsedAnnotations } from './annotations/index.js';
import { DEFAULT_UPSTREAM, type BackendUse, type IngressFragment } from './fragments.js';
import { ROOT_PATH } from './paths.js';
import { ownedBy } from './takeovers.js';
import type { Server, SessionAffinityConfig } from './types.js';

/** How one backend is built, from the Ingresses that use it (first one wins its policies). */
export interface BackendPlan {
  readonly name: string;
  readonly use: BackendUse;
  readonly ownerKey: string;
  readonly owner: ParsedAnnotations;
  /** Only canary Ingresses use it. */
  readonly canary: boolean;
  readonly serviceUpstream: boolean;
  /** Cookie-affinity locations, host → paths (collected while planning). */
  readonly locations: ReadonlyMap<string, readonly string[]> | null;
  // Set when the topology is final:
  readonly affinity: SessionAffinityConfig;
  /** Stands for `affinity` in memo comparisons. */
  readonly affinityKey: string;
  readonly alternatives: readonly string[];
  readonly alternativesKey: string;
  readonly sslPassthrough: boolean;
  /** Key of the endpoints memo. */
  readonly endpointsKey: string;
}

/** A plan while the topology is being made. */
export type PlanDraft = { -readonly [K in Exclude<keyof BackendPlan, 'locations' | 'alternatives'>]: BackendPlan[K] } & {
  locations: Map<string, string[]> | null;
  alternatives: string[];
};

export function endpointsKey(svcKey: string, port: string, serviceUpstream: boolean): string {
  return `${svcKey}|${port}|${serviceUpstream ? 1 : 0}`;
}

export function newPlan(use: BackendUse, f: IngressFragment): PlanDraft {
  return {
    name: use.name, use, ownerKey: f.key, owner: f.parsed, canary: f.canary, serviceUpstream: f.parsed.serviceUpstream,
    locations: null, affinity: NO_AFFINITY, affinityKey: '', alternatives: [], alternativesKey: '',
    sslPassthrough: false, endpointsKey: endpointsKey(use.serviceKey, use.port, f.parsed.serviceUpstream),
  };
}

/** The plan of a use (made by `f` if it is the first user); null when `only` leaves it out. */
function plan(plans: Map<string, PlanDraft>, f: IngressFragment, use: BackendUse, only?: ReadonlySet<string>): PlanDraft | null {
  if (only && !only.has(use.name)) return null;
  let p = plans.get(use.name);
  if (!p) plans.set(use.name, (p = newPlan(use, f)));
  return p;
}

/** Adds a non-canary fragment's uses to the plans (the first user owns a plan). */
export function planUses(plans: Map<string, PlanDraft>, f: IngressFragment, only?: ReadonlySet<string>, owners?: ReadonlyMap<string, string> | null): void {
  if (f.defaultBackend) plan(plans, f, f.defaultBackend, only);
  for (const e of f.paths) {
    if (owners && !ownedBy(owners, e.host, f)) continue;
    const p = plan(plans, f, e.use, only);
    if (p && f.parsed.affinity.type === 'cookie') {
      p.locations ??= new Map();
      const list = p.locations.get(e.host);
      if (list) list.push(e.location.path);
      else p.locations.set(e.host, [e.location.path]);
    }
  }
}

/** Sets what a plan can know only once every user is known: ssl-passthrough, alternatives, cookie affinity. */
export function finishPlan(p: PlanDraft, aliasesOf: (host: string) => readonly string[], passthrough: ReadonlySet<string>): void {
  p.sslPassthrough = passthrough.has(p.name);
  p.alternativesKey = p.alternatives.join(',');
  if (p.canary || p.owner.affinity.type !== 'cookie' || !p.locations) return;
  const locations: Record<string, string[]> = {};
  for (const [h, paths] of p.locations) {
    locations[h] = paths;
    for (const a of aliasesOf(h)) locations[a] = [...(locations[a] ?? []), ...paths];
  }
  p.affinity = sessionAffinity(p.owner, locations);
  p.affinityKey = JSON.stringify(p.affinity);
}

/** The backends of ssl-passthrough hosts (their `/` location's). */
export function passthroughBackends(servers: Iterable<Server>): Set<string> {
  const out = new Set<string>();
  for (const server of servers) {
    if (!server.sslPassthrough) continue;
    const r = server.locations.find((l) => l.path === ROOT_PATH && l.pathType !== 'Exact');
    if (r && r.backend !== DEFAULT_UPSTREAM) out.add(r.backend);
  }
  return out;
}
