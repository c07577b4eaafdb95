// Canary merge: a canary Ingress serves no location of its own; its backend becomes an
// alternative backend of the primary location with the same host, path and path type (of the
// default server for a canary default backend), whose traffic shaping policy routes part of the
// requests to it. A canary without a primary is dropped, with a warning.
import { newPlan, type PlanDraft } from './backend-plans.js';
import { DEFAULT_UPSTREAM, type BackendUse, type IngressFragment } from './fragments.js';
import { DEFAULT_SERVER } from '../core/paths.js';
import { primaryLocation, type AssembledServer } from './servers.js';
import { ownedBy, refusedForOwner, takeoverWarnings } from './takeovers.js';
import type { Location, ModelWarning } from '../core/types.js';

export interface CanaryMerge {
  warnings: ModelWarning[];
  /** Hosts a canary Ingress serves (the default server for a canary default backend). */
  hosts: Set<string>;
  /** Backends of canary Ingresses and the primary backends they merge into. */
  backends: Set<string>;
  /** Canary backend → the primary backend whose affinity it shares (sticky canaries). */
  affinityFrom: Map<string, string>;
}

export interface CanaryInputs {
  fragments: readonly IngressFragment[];
  /** Plans of every backend; the canaries' are added here, merged ones to their primary's alternatives. */
  plans: Map<string, PlanDraft>;
  /** Each host's server before certificates. */
  assembled: ReadonlyMap<string, AssembledServer>;
  /** Non-canary fragments per host, oldest first. */
  byHost: ReadonlyMap<string, readonly IngressFragment[]>;
  /** --host-ownership: host → owning namespace; null when off. */
  owners: ReadonlyMap<string, string> | null;
}

/** Plans the canaries' backends and merges each into its primary's alternatives. */
export function mergeCanaries(inputs: CanaryInputs): CanaryMerge {
  const { fragments, plans, assembled, byHost, owners } = inputs;
  // Only these may be dropped: a canary's backend may also be other Ingresses' primary backend.
  const planned = new Set<string>();
  for (const f of fragments) {
    if (!f.canary) continue;
    const plan = (use: BackendUse) => {
      if (plans.has(use.name)) return;
      plans.set(use.name, newPlan(use, f));
      planned.add(use.name);
    };
    if (f.defaultBackend) plan(f.defaultBackend);
    for (const e of f.paths) if (!owners || ownedBy(owners, e.host, f)) plan(e.use);
  }

  const warnings: ModelWarning[] = [];
  const hosts = new Set<string>();
  const backends = new Set<string>();
  const affinityFrom = new Map<string, string>();
  const merged = new Set<string>();
  const unmerged = new Map<string, { f: IngressFragment; where: string[] }>();
  const canMerge = (primary: string, alt: string) =>
    primary !== alt && primary !== DEFAULT_UPSTREAM && plans.get(primary)?.canary !== true;
  for (const f of fragments) {
    if (!f.canary) continue;
    for (const h of f.hosts) hosts.add(h);
    const tryLocations = (alt: string, locs: Iterable<Location>, where: string) => {
      let found = false;
      backends.add(alt);
      for (const loc of locs) {
        backends.add(loc.backend);
        if (loc.backend === alt) {
          warnings.push({ object: `Ingress ${f.key}`, field: 'metadata.annotations', message: `canary backend ${alt} is the primary backend of ${where}; not merged` });
          return;
        }
        if (!canMerge(loc.backend, alt)) continue;
        if (loc.ingress && loc.ingress.namespace !== f.ref.namespace) {
          warnings.push(...takeoverWarnings(f.ref, loc.ingress, 'metadata.annotations',
            `canary backend ${alt} takes part of the traffic of ${where} from backend ${loc.backend}`));
        }
        const primary = plans.get(loc.backend)!;
        if (!primary.alternatives.includes(alt)) primary.alternatives.push(alt);
        if (f.parsed.affinity.canaryBehavior !== 'legacy' && !affinityFrom.has(alt)) affinityFrom.set(alt, loc.backend);
        merged.add(alt);
        found = true;
      }
      if (!found) {
        const u = unmerged.get(alt);
        if (u) u.where.push(where);
        else unmerged.set(alt, { f, where: [where] });
      }
    };
    if (f.defaultBackend) {
      hosts.add(DEFAULT_SERVER);
      tryLocations(f.defaultBackend.name, assembled.get(DEFAULT_SERVER)!.server.locations, `the default server ${DEFAULT_SERVER}`);
    }
    for (const e of f.paths) {
      hosts.add(e.host);
      if (owners && !ownedBy(owners, e.host, f)) {
        const owner = byHost.get(e.host)![0]!;
        warnings.push(refusedForOwner(f, e.host, owner.ref, `its canary for path ${e.location.path} is`));
        continue;
      }
      const primary = primaryLocation(assembled.get(e.host), e.location.path, e.location.pathType);
      tryLocations(e.use.name, primary ? [primary] : [], `host ${e.host} path ${e.location.path} (${e.location.pathType})`);
    }
  }
  for (const [alt, { f, where }] of unmerged) {
    if (merged.has(alt)) continue;
    const own = planned.has(alt);
    if (own) plans.delete(alt);
    warnings.push({
      object: `Ingress ${f.key}`, field: 'metadata.annotations',
      message: `canary: no primary Ingress serves ${where.join(', ')}; ${own ? `backend ${alt} dropped` : 'ignored'}`,
    });
  }
  return { warnings, hosts, backends, affinityFrom };
}

/** A sticky canary's plan takes its primary's affinity (once both plans are finished). */
export function shareCanaryAffinity(affinityFrom: ReadonlyMap<string, string>, plans: ReadonlyMap<string, PlanDraft>): void {
  for (const [alt, primary] of affinityFrom) {
    const a = plans.get(alt);
    const from = plans.get(primary);
    if (a && from) {
      a.affinity = from.affinity;
      a.affinityKey = from.affinityKey;
    }
  }
}
