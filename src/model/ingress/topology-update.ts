// The incremental topology: after a few Ingresses changed (no aliases, catch-all, default
// backend, default-backend annotation or ssl-passthrough; none of their hosts an alias, nor under
// --host-ownership a wildcard or a canary's host), only their hosts and backends are recomputed,
// patching the cache's index; under --host-ownership each of their hosts is claimed anew over its
// Ingresses. When a canary, or a host or backend a canary merge concerns, is among them, the
// plans of every backend a canary merge concerns are made anew and the canaries merged again
// (about a thousand at 10k in bench/gen.ts, against every host and backend of a full recompute).
import type { NginxSettings } from '../core/config/settings.js';
import { finishPlan, planUses, samePlan, type BackendPlan, type PlanDraft } from './backend-plans.js';
import { mergeCanaries, shareCanaryAffinity } from './canary-merge.js';
import type { IngressFragment } from './fragments.js';
import { primaryLocation, type AssembledServer } from './servers.js';
import { DEFAULT_SERVER } from '../core/paths.js';
import { byName } from '../core/sort.js';
import { listChanges } from '../core/list-changes.js';
import { claimHost, wildcardHostTakeovers, wildcardOver, type ContestedHost } from './takeovers.js';
import type { ModelWarning } from '../core/types.js';
import {
  compareHosts, serverFor, sortedByName, topologyWarnings,
  type HostEntry, type Topology, type TopologyIndex, type TopologyOptions, type TopologyState,
} from './topology.js';

/** Most Ingresses an incremental topology update handles; more is a full recompute. */
const INCREMENTAL_LIMIT = 32;

/**
 * The topology after a few plain Ingresses changed, patching `index` (the cache's, which the
 * previous topology no longer needs); null, with nothing changed, when a full recompute is needed.
 */
export function updateTopology(
  state: TopologyState, index: TopologyIndex, prev: Topology, opts: TopologyOptions, settings: NginxSettings, fragments: readonly IngressFragment[],
): { topology: Topology; index: TopologyIndex } | null {
  if (prev.settings !== settings) return null;
  const changes = changedFragments(prev.fragments, fragments);
  if (changes === null || changes.changed.length === 0) return null;
  const { changed } = changes;
  const hostsTouched = new Set<string>();
  const backendsTouched = new Set<string>();
  let canaryTouched = false;
  for (const f of changed) {
    if (f.catchAll || f.defaultBackend || f.parsed.serverAliases.length > 0 || f.parsed.defaultBackendService
      || f.parsed.sslPassthrough) return null;
    if (f.canary) {
      // A canary serves no host of its own: only the plans of its backend and its primaries change.
      if (opts.hostOwnership) return null;
      canaryTouched = true;
      for (const e of f.paths) backendsTouched.add(e.use.name);
      continue;
    }
    for (const h of f.hosts) {
      if (index.aliasNames.has(h) || index.assembled.get(h)?.server.sslPassthrough) return null;
      if (index.canaryHosts.has(h)) {
        if (opts.hostOwnership) return null;
        canaryTouched = true;
      }
      // A wildcard host's owner also decides the aliases under it (server-aliases.ts).
      if (opts.hostOwnership && h.startsWith('*.')) return null;
      // A wildcard host may cover aliases (takeover warnings are found over all of them).
      if (h.startsWith('*.') && index.aliasNames.size > 0) return null;
      hostsTouched.add(h);
    }
    for (const e of f.paths) {
      if (index.canaryBackends.has(e.use.name)) {
        if (opts.hostOwnership) return null;
        canaryTouched = true;
      }
      backendsTouched.add(e.use.name);
    }
  }
  // --host-ownership: each touched host claimed anew over all of its Ingresses; the backends of
  // those refused before or now are planned anew too (their paths there count or stop counting).
  const claims = opts.hostOwnership ? new Map<string, { all: IngressFragment[]; kept: IngressFragment[]; contested: ContestedHost | null }>() : null;
  if (claims) {
    if (hostsTouched.size > INCREMENTAL_LIMIT) return null;
    for (const h of hostsTouched) {
      const before = index.contested.get(h);
      // A contested host's list holds only its owner's Ingresses: the others are found by a scan.
      const all = before ? fragments.filter((f) => servesHost(f, h)) : hostFragments(h, index.byHost.get(h), changes, fragments);
      const claim = h === DEFAULT_SERVER || all.length === 0 ? { kept: all, contested: null } : claimHost(h, all);
      claims.set(h, { all, ...claim });
      for (const f of [...(before?.refused ?? []), ...(claim.contested?.refused ?? [])]) {
        for (const e of f.paths) if (e.host === h) backendsTouched.add(e.use.name);
      }
    }
  }
  if (hostsTouched.size > INCREMENTAL_LIMIT || backendsTouched.size > INCREMENTAL_LIMIT) return null;

  // From here on the index is patched in place.
  // Hosts of the changed Ingresses: their fragment lists and servers.
  const { byHost, assembled, plans: planIndex } = index;
  const hostWarnings = () => [...hostsTouched].some((h) => (assembled.get(h)?.warnings.length ?? 0) > 0);
  const hadHostWarnings = hostWarnings();
  const removedHosts: string[] = [];
  const contestedBefore = [...hostsTouched].some((h) => index.contested.has(h));
  for (const h of hostsTouched) {
    const claim = claims?.get(h);
    const frags = claim ? claim.kept : hostFragments(h, byHost.get(h), changes, fragments);
    if (claim && index.owners) {
      if (claim.all.length > 0 && h !== DEFAULT_SERVER) index.owners.set(h, claim.all[0]!.ref.namespace);
      else index.owners.delete(h);
      if (claim.contested) index.contested.set(h, claim.contested);
      else index.contested.delete(h);
    }
    if (frags.length === 0 && h !== DEFAULT_SERVER) {
      byHost.delete(h);
      assembled.delete(h);
      state.servers.delete(h);
      removedHosts.push(h);
      continue;
    }
    byHost.set(h, frags);
    assembled.set(h, serverFor(state, opts, settings, h, frags, index.root, assembled.get(h)?.server.aliases ?? []));
  }
  // A wildcard host, or a host under one: who takes whose names is found over every host again.
  const wildcardsTouched = [...hostsTouched].some((h) => h.startsWith('*.') || byHost.has(wildcardOver(h) ?? ''));
  if (wildcardsTouched) index.wildcardWarnings = wildcardHostTakeovers(byHost);
  const hosts: HostEntry[] = patchHosts(prev.hosts, hostsTouched, index);
  const ownershipTouched = contestedBefore || [...hostsTouched].some((h) => index.contested.has(h));
  if (ownershipTouched) index.ownershipWarnings = ownershipWarningsOf(index.contested, fragments);

  // The backends planned anew: those of the changed Ingresses, and when a canary merge is
  // concerned, every backend one concerns, before and after (canary-merge.ts reaches no others).
  const replanned = canaryTouched ? new Set([...backendsTouched, ...index.canaryBackends, ...canaryReach(fragments, assembled)]) : backendsTouched;

  // Their plans: owner and cookie locations from every user, oldest first.
  const previousPlans = new Map([...replanned].map((n) => [n, planIndex.get(n)]));
  for (const name of replanned) planIndex.delete(name);
  const fresh = new Map<string, PlanDraft>();
  for (const f of fragments) {
    if (f.canary) continue;
    if (f.paths.some((e) => replanned.has(e.use.name)) || (f.defaultBackend && replanned.has(f.defaultBackend.name))) {
      planUses(fresh, f, replanned, index.owners);
    }
  }
  for (const [name, p] of fresh) planIndex.set(name, p);
  const canary = canaryTouched ? mergeCanaries({ fragments, plans: planIndex as Map<string, PlanDraft>, assembled, byHost, owners: null }) : null;
  if (canary) {
    for (const n of canary.backends) if (!replanned.has(n)) throw new Error(`incremental topology: canary merge reached backend ${n}, not planned anew`);
    for (const n of replanned) { const p = planIndex.get(n); if (p && !fresh.has(n)) fresh.set(n, p as PlanDraft); }
  }
  // No changed host is ssl-passthrough (checked above), so passthrough backends stay as they were.
  const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
  for (const p of fresh.values()) finishPlan(p, aliasesOf, index.passthrough);
  if (canary) {
    // As computeTopology does: a sticky canary shares its primary's affinity, and a plan equal to
    // the previous one is that plan object (its backend is reused).
    shareCanaryAffinity(canary.affinityFrom, fresh);
    for (const [name, p] of fresh) {
      const old = previousPlans.get(name);
      if (old && samePlan(old, p)) planIndex.set(name, old);
    }
    index.canaryWarnings = canary.warnings;
    index.canaryHosts = canary.hosts;
    index.canaryBackends = canary.backends;
  }
  const namesChanged = [...replanned].some((n) => planIndex.has(n) !== (previousPlans.get(n) !== undefined));
  const plans: BackendPlan[] = namesChanged
    ? sortedByName(planIndex)
    : replaceAt(prev.plans, [...replanned].map((n) => sortedIndex(prev.plans, (p) => byName(p, { name: n }))), (p) => planIndex.get(p.name)!);
  const removedBackends = [...replanned].filter((n) => !planIndex.has(n));

  // Without a warning from the changed Ingresses, hosts or backends before or after, the warnings stay as they were.
  const planWarnings = [...replanned].some((n) => (previousPlans.get(n)?.warnings.length ?? 0) > 0 || (planIndex.get(n)?.warnings.length ?? 0) > 0);
  const sameWarnings = !canaryTouched && !wildcardsTouched && !ownershipTouched && !hadHostWarnings && !hostWarnings() && !planWarnings && changed.every((f) => f.warnings.length === 0);
  const topology: Topology = {
    settings, fragments, hosts, plans, planned: namesChanged ? new Set(planIndex.keys()) : prev.planned,
    customDefaults: prev.customDefaults, warnings: sameWarnings ? prev.warnings : topologyWarnings(fragments, hosts, plans, index),
    removed: { hosts: removedHosts, backends: removedBackends },
  };
  return { topology, index };
}

/**
 * The backends the canary merge over these fragments looks at (canary-merge.ts): each canary's
 * own, and the primaries' it may merge into (its paths' primary locations; every location of the
 * default server for a canary default backend).
 */
function canaryReach(fragments: readonly IngressFragment[], assembled: ReadonlyMap<string, AssembledServer>): Set<string> {
  const out = new Set<string>();
  for (const f of fragments) {
    if (!f.canary) continue;
    if (f.defaultBackend) {
      out.add(f.defaultBackend.name);
      for (const loc of assembled.get(DEFAULT_SERVER)!.server.locations) out.add(loc.backend);
    }
    for (const e of f.paths) {
      out.add(e.use.name);
      const primary = primaryLocation(assembled.get(e.host), e.location.path, e.location.pathType);
      if (primary) out.add(primary.backend);
    }
  }
  return out;
}

interface FragmentChanges {
  /** The fragments removed and added. */
  changed: IngressFragment[];
  /** When every change kept its place in the list: [removed, added] by place. */
  replaced: Array<[IngressFragment, IngressFragment]> | null;
}

/**
 * What changed between two fragment lists (at most INCREMENTAL_LIMIT fragments); null when more.
 * An update that keeps an Ingress's place in the list (the usual case) is found by position; a
 * fragment that only moved counts as removed and added, which recomputes its hosts for nothing
 * but is correct.
 */
function changedFragments(prev: readonly IngressFragment[], next: readonly IngressFragment[]): FragmentChanges | null {
  const changed: IngressFragment[] = [];
  if (prev.length === next.length) {
    const replaced: Array<[IngressFragment, IngressFragment]> = [];
    for (let i = 0; i < next.length; i++) {
      if (prev[i] === next[i]) continue;
      if (changed.length + 2 > INCREMENTAL_LIMIT) return null;
      changed.push(prev[i]!, next[i]!);
      replaced.push([prev[i]!, next[i]!]);
    }
    return { changed, replaced };
  }
  // Fragments keep their relative order (an Ingress's place is fixed by its object): an add or
  // remove differs from the previous list in one place.
  const diff = listChanges(prev, next, INCREMENTAL_LIMIT);
  if (diff === null) return null;
  changed.push(...diff.removed, ...diff.added);
  return changed.length > INCREMENTAL_LIMIT ? null : { changed, replaced: null };
}

/**
 * The ownership warnings of the contested hosts in the order a full recompute gives them
 * (claimHosts follows the hosts' first appearance: their oldest Ingress's place, then the
 * host's place among its hosts).
 */
function ownershipWarningsOf(contested: ReadonlyMap<string, ContestedHost>, fragments: readonly IngressFragment[]): ModelWarning[] {
  if (contested.size === 0) return [];
  const owners = new Set<IngressFragment>();
  const ownerOf = new Map<string, IngressFragment>();
  for (const f of fragments) {
    if (f.canary) continue;
    for (const h of f.hosts) {
      if (contested.has(h) && !ownerOf.has(h)) { ownerOf.set(h, f); owners.add(f); }
    }
    if (ownerOf.size === contested.size) break;
  }
  const place = new Map<IngressFragment, number>();
  let i = 0;
  for (const f of fragments) { if (owners.has(f)) place.set(f, i); i++; }
  const order = [...contested.keys()].sort((a, b) => {
    const fa = ownerOf.get(a)!;
    const fb = ownerOf.get(b)!;
    return fa === fb ? fa.hosts.indexOf(a) - fa.hosts.indexOf(b) : place.get(fa)! - place.get(fb)!;
  });
  const out: ModelWarning[] = [];
  for (const h of order) out.push(...contested.get(h)!.warnings);
  return out;
}

const servesHost = (f: IngressFragment, host: string) => !f.canary && f.hosts.includes(host);

/**
 * A host's fragments after the changes: its previous list with the replaced fragments swapped in
 * place when that is all that happened to it, else a scan of every fragment.
 */
function hostFragments(host: string, before: IngressFragment[] | undefined, c: FragmentChanges, fragments: readonly IngressFragment[]): IngressFragment[] {
  if (c.replaced && before) {
    let list: IngressFragment[] | null = before.slice();
    for (const [old, next] of c.replaced) {
      const at = list.indexOf(old);
      const serves = servesHost(next, host);
      if (at >= 0 && serves) list[at] = next;
      else if (at >= 0) list.splice(at, 1);
      else if (serves) { list = null; break; }
    }
    if (list) return list;
  }
  return fragments.filter((f) => servesHost(f, host));
}

/**
 * The host entries (sorted by compareHosts) with the touched hosts' entries made anew, added or
 * removed as the index now has them: what hostEntries over every host gives, at the cost of the
 * touched hosts.
 */
function patchHosts(before: readonly HostEntry[], touched: ReadonlySet<string>, index: Pick<TopologyIndex, 'byHost' | 'assembled'>): HostEntry[] {
  const out = before.slice();
  for (const host of touched) {
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareHosts(out[mid]!.host, host) < 0) lo = mid + 1;
      else hi = mid;
    }
    const present = out[lo]?.host === host;
    const frags = index.byHost.get(host);
    if (frags === undefined) {
      if (present) out.splice(lo, 1);
      continue;
    }
    const entry = { host, frags, base: index.assembled.get(host)!.server };
    if (present) out[lo] = entry;
    else out.splice(lo, 0, entry);
  }
  return out;
}

/** Index of the item for which `compare(item)` is 0 in a list sorted by it; -1 if none. */
function sortedIndex<T>(list: readonly T[], compare: (item: T) => number): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compare(list[mid]!);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** A copy of `list` with the items at `indexes` (-1: none) replaced by `make(item)`. */
function replaceAt<T>(list: readonly T[], indexes: number[], make: (item: T) => T): T[] {
  const out = list.slice();
  for (const i of indexes) if (i >= 0) out[i] = make(out[i]!);
  return out;
}
