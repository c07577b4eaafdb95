// The topology: everything of the model that depends only on the served Ingresses and the
// settings (hosts and their servers without certificates, backend plans saying which Ingress
// gives each backend its policies, canary merges, ssl-passthrough). Recomputed only when an
// Ingress or the settings changed, and incrementally when a few plain Ingresses changed.
import type { ParsedAnnotations } from './annotations/index.js';
import type { NginxSettings } from './config/settings.js';
import type { Location, ModelWarning, Server, SessionAffinityConfig } from './types.js';
import { NO_AFFINITY, sessionAffinity } from './backends.js';
import { customDefaultBackendName } from './annotations/defaultbackend.js';
import { DEFAULT_UPSTREAM, type BackendUse, type IngressFragment } from './fragments.js';
import { DEFAULT_SERVER, ROOT_PATH } from './paths.js';
import { assembleServer, pathKey, rawAliases, type AssembledServer } from './servers.js';
import { sameInputs } from './tracking.js';
import { byName } from './sort.js';
import { claimHosts, refusedForOwner, takeoverWarnings, underWildcard } from './takeovers.js';

/** How one backend is built, from the Ingresses that use it (first one wins its policies). */
export interface BackendPlan {
  name: string;
  use: BackendUse;
  ownerKey: string;
  owner: ParsedAnnotations;
  /** Only canary Ingresses use it. */
  canary: boolean;
  serviceUpstream: boolean;
  /** Cookie-affinity locations, host → paths (collected while planning). */
  locations: Map<string, string[]> | null;
  // Set when the topology is final:
  affinity: SessionAffinityConfig;
  /** Stands for `affinity` in memo comparisons. */
  affinityKey: string;
  alternatives: string[];
  alternativesKey: string;
  sslPassthrough: boolean;
  /** Key of the endpoints memo. */
  endpointsKey: string;
}

interface ServerEntry {
  inputs: unknown[];
  assembled: AssembledServer;
}

export interface HostEntry {
  host: string;
  frags: IngressFragment[];
  /** The server without certificate. */
  base: Server;
}

/** Everything that depends only on the served Ingresses and the settings. */
export interface Topology {
  settings: NginxSettings;
  fragments: IngressFragment[];
  /** Sorted by hostname, `_` first. */
  hosts: HostEntry[];
  /** Sorted by name; canary backends without a primary are left out. */
  plans: BackendPlan[];
  /** Names of `plans`. */
  planned: Set<string>;
  customDefaults: Array<{ name: string; svcKey: string; ownerKey: string }>;
  warnings: ModelWarning[];
  /** Hosts and backends gone since the previous topology when it was updated incrementally; null after a full recompute. */
  removed: { hosts: string[]; backends: string[] } | null;
  // For the incremental update:
  /** The default server's root (catch-all or built-in). */
  root: Location;
  byHost: Map<string, IngressFragment[]>;
  assembled: Map<string, AssembledServer>;
  planIndex: Map<string, BackendPlan>;
  aliasWarnings: ModelWarning[];
  /** Rules refused under --host-ownership, and the hosts they were refused for. */
  ownershipWarnings: ModelWarning[];
  contested: Set<string>;
  /** Every alias any Ingress asks for. */
  aliasNames: Set<string>;
  canaryWarnings: ModelWarning[];
  hasCanary: boolean;
  /** Hosts a canary Ingress serves (the default server for a canary default backend). */
  canaryHosts: Set<string>;
  /** Backends of canary Ingresses and the primary backends they merge into. */
  canaryBackends: Set<string>;
  /** Backends of ssl-passthrough hosts. */
  passthrough: Set<string>;
}

/** Most Ingresses an incremental topology update handles; more is a full recompute. */
const INCREMENTAL_LIMIT = 32;

function compareHosts(a: string, b: string): number {
  if (a === b) return 0;
  if (a === DEFAULT_SERVER) return -1;
  if (b === DEFAULT_SERVER) return 1;
  return a < b ? -1 : 1;
}

/**
 * Host names in compareHosts order. Sorting plain strings without a comparator is V8's native
 * string sort, several times faster at 10k hosts than calling compareHosts for each comparison.
 */
function sortedHosts(names: Iterable<string>): string[] {
  const out: string[] = [];
  let hasDefault = false;
  for (const n of names) {
    if (n === DEFAULT_SERVER) hasDefault = true;
    else out.push(n);
  }
  out.sort();
  if (hasDefault) out.unshift(DEFAULT_SERVER);
  return out;
}

/** The values of a map keyed by their names, sorted by name (a native string sort of the keys). */
function sortedByName<T>(byName: Map<string, T>): T[] {
  return [...byName.keys()].sort().map((n) => byName.get(n)!);
}


export interface TopologyOptions {
  annotationsPrefix: string;
  /** The default server's root when no catch-all Ingress exists. */
  defaultRoot(settings: NginxSettings): Location;
  /** --host-ownership: a host belongs to the namespace of its oldest Ingress. */
  hostOwnership?: boolean;
}

export interface TopologyCache {
  /** The topology for these fragments: the previous one when nothing changed, else updated or recomputed. */
  topologyFor(settings: NginxSettings, fragments: IngressFragment[]): Topology;
}

export function createTopologyCache(opts: TopologyOptions): TopologyCache {
  let topology: Topology | null = null;
  let serverMemo = new Map<string, ServerEntry>();

  /** A host's server without certificate, memoised on the identity of its inputs. */
  function serverFor(settings: NginxSettings, host: string, frags: IngressFragment[], root: Location, aliases: string[]): AssembledServer {
    const defaultRootLocation = host === DEFAULT_SERVER ? root : null;
    const inputs: unknown[] = [settings, defaultRootLocation, aliases.join(','), ...frags];
    let entry = serverMemo.get(host);
    if (!entry || !sameInputs(entry.inputs, inputs)) {
      entry = {
        inputs,
        assembled: assembleServer({
          host, fragments: frags, defaultRoot: defaultRootLocation, aliases, allowSnippets: settings.allowSnippetAnnotations,
        }),
      };
      serverMemo.set(host, entry);
    }
    return entry.assembled;
  }

  function newPlan(use: BackendUse, f: IngressFragment): BackendPlan {
    return {
      name: use.name, use, ownerKey: f.key, owner: f.parsed, canary: f.canary, serviceUpstream: f.parsed.serviceUpstream,
      locations: null, affinity: NO_AFFINITY, affinityKey: '', alternatives: [], alternativesKey: '',
      sslPassthrough: false, endpointsKey: endpointsKey(use.serviceKey, use.port, f.parsed.serviceUpstream),
    };
  }

  /** The plan of a use (made by `f` if it is the first user); null when `only` leaves it out. */
  function plan(plans: Map<string, BackendPlan>, f: IngressFragment, use: BackendUse, only?: Set<string>): BackendPlan | null {
    if (only && !only.has(use.name)) return null;
    let p = plans.get(use.name);
    if (!p) plans.set(use.name, (p = newPlan(use, f)));
    return p;
  }

  /** Adds a non-canary fragment's uses to the plans (the first user owns a plan). */
  function planUses(plans: Map<string, BackendPlan>, f: IngressFragment, only?: Set<string>, owners?: Map<string, string> | null): void {
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

  function finishPlan(p: BackendPlan, aliasesOf: (host: string) => readonly string[], passthrough: Set<string>): void {
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

  function passthroughOf(hosts: HostEntry[]): Set<string> {
    const out = new Set<string>();
    for (const { base } of hosts) {
      if (!base.sslPassthrough) continue;
      const r = base.locations.find((l) => l.path === ROOT_PATH && l.pathType !== 'Exact');
      if (r && r.backend !== DEFAULT_UPSTREAM) out.add(r.backend);
    }
    return out;
  }

  function collectWarnings(fragments: IngressFragment[], hosts: HostEntry[], t: Pick<Topology, 'aliasWarnings' | 'ownershipWarnings' | 'assembled' | 'canaryWarnings'>): ModelWarning[] {
    const warnings: ModelWarning[] = [];
    for (const f of fragments) for (const w of f.warnings) warnings.push(w);
    for (const w of t.ownershipWarnings) warnings.push(w);
    for (const w of t.aliasWarnings) warnings.push(w);
    for (const { host } of hosts) for (const w of t.assembled.get(host)!.warnings) warnings.push(w);
    for (const w of t.canaryWarnings) warnings.push(w);
    return warnings;
  }

  function computeTopology(settings: NginxSettings, fragments: IngressFragment[]): Topology {
    // Hosts: non-canary fragments per server name, oldest first.
    const byHost = new Map<string, IngressFragment[]>([[DEFAULT_SERVER, []]]);
    let catchAll: IngressFragment | null = null;
    let hasCanary = false;
    for (const f of fragments) {
      if (f.canary) { hasCanary = true; continue; }
      if (f.catchAll && !catchAll) catchAll = f;
      for (const h of f.hosts) {
        const list = byHost.get(h);
        if (list) list.push(f);
        else byHost.set(h, [f]);
      }
    }
    const root = catchAll?.catchAllLocation ?? opts.defaultRoot(settings);
    const ownershipWarnings: ModelWarning[] = [];
    const claims = opts.hostOwnership ? claimHosts(byHost, ownershipWarnings) : null;
    const owners = claims?.owners ?? null;

    // Servers. An alias belongs to the first host (oldest Ingress) claiming it, and never shadows a host.
    const aliasOwner = new Map<string, { host: string; by: IngressFragment }>();
    const aliasNames = new Set<string>();
    const aliasWarnings: ModelWarning[] = [];
    const assembled = new Map<string, AssembledServer>();
    const aliasField = `metadata.annotations["${opts.annotationsPrefix}/server-alias"]`;
    const wildcards = [...byHost.keys()].filter((h) => h.startsWith('*.'));
    // forEach: destructuring a map's entries allocates a pair per host.
    byHost.forEach((frags, host) => {
      const raw = rawAliases(frags);
      const aliases: string[] = [];
      const by = frags.find((f) => f.parsed.serverAliases.length > 0);
      for (const a of raw.length === 0 ? raw : [...new Set(raw)].sort()) {
        aliasNames.add(a);
        if (a === host) continue;
        const named = byHost.get(a)?.[0];
        if (named) {
          aliasWarnings.push({
            object: `Ingress ${by!.key}`, field: aliasField,
            message: `alias ${a} of host ${host} is a host of Ingress ${named.key} (namespace ${named.ref.namespace}); ignored`,
          });
          continue;
        }
        const owner = aliasOwner.get(a);
        if (owner !== undefined && owner.host !== host) {
          aliasWarnings.push({
            object: `Ingress ${by!.key}`, field: aliasField,
            message: `alias ${a} of host ${host} is already an alias of ${owner.host} (Ingress ${owner.by.key}); ignored`,
          });
          continue;
        }
        // An alias under another namespace's wildcard host takes that name's traffic from it.
        const wildcard = wildcards.find((w) => underWildcard(w, a) && byHost.get(w)![0]!.ref.namespace !== by!.ref.namespace);
        if (wildcard) {
          const victim = byHost.get(wildcard)![0]!;
          if (owners) {
            aliasWarnings.push(refusedForOwner(by!, wildcard, victim.ref, `its alias ${a}, a name under that wildcard host, is`));
            continue;
          }
          aliasWarnings.push(...takeoverWarnings(by!.ref, victim.ref, aliasField, `alias ${a} of host ${host} is served instead of the wildcard host ${wildcard}`));
        }
        aliasOwner.set(a, { host, by: by! });
        aliases.push(a);
      }
      assembled.set(host, serverFor(settings, host, frags, root, aliases));
    });
    const hosts: HostEntry[] = sortedHosts(byHost.keys())
      .map((host) => ({ host, frags: byHost.get(host)!, base: assembled.get(host)!.server }));

    // Backend plans: the first Ingress using a backend gives its policies.
    const plans = new Map<string, BackendPlan>();
    const customDefaults = new Map<string, { name: string; svcKey: string; ownerKey: string }>();
    for (const f of fragments) {
      if (f.canary) continue;
      planUses(plans, f, undefined, owners);
      if (f.parsed.defaultBackendService) {
        // The fragment's own name for it (backend-names.ts may have given it an injective one).
        const name = f.rootLocation.defaultBackend ?? customDefaultBackendName(f.parsed.defaultBackendService);
        if (!customDefaults.has(name)) customDefaults.set(name, { name, svcKey: f.parsed.defaultBackendService, ownerKey: f.key });
      }
    }
    for (const f of fragments) {
      if (!f.canary) continue;
      const plan = (use: BackendUse) => { if (!plans.has(use.name)) plans.set(use.name, newPlan(use, f)); };
      if (f.defaultBackend) plan(f.defaultBackend);
      for (const e of f.paths) if (!owners || ownedBy(owners, e.host, f)) plan(e.use);
    }

    // Canary: alternative backends merged into the primary location's backend.
    const canaryWarnings: ModelWarning[] = [];
    const canaryHosts = new Set<string>();
    const canaryBackends = new Set<string>();
    const affinityFrom = new Map<string, string>();
    const merged = new Set<string>();
    const unmerged = new Map<string, { f: IngressFragment; where: string[] }>();
    const canMerge = (primary: string, alt: string) =>
      primary !== alt && primary !== DEFAULT_UPSTREAM && plans.get(primary)?.canary !== true;
    for (const f of fragments) {
      if (!f.canary) continue;
      for (const h of f.hosts) canaryHosts.add(h);
      const tryLocations = (alt: string, locs: Iterable<Location>, where: string) => {
        let found = false;
        canaryBackends.add(alt);
        for (const loc of locs) {
          canaryBackends.add(loc.backend);
          if (loc.backend === alt) {
            canaryWarnings.push({ object: `Ingress ${f.key}`, field: 'metadata.annotations', message: `canary backend ${alt} is the primary backend of ${where}; not merged` });
            return;
          }
          if (!canMerge(loc.backend, alt)) continue;
          if (loc.ingress && loc.ingress.namespace !== f.ref.namespace) {
            canaryWarnings.push(...takeoverWarnings(f.ref, loc.ingress, 'metadata.annotations',
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
        canaryHosts.add(DEFAULT_SERVER);
        tryLocations(f.defaultBackend.name, assembled.get(DEFAULT_SERVER)!.server.locations, `the default server ${DEFAULT_SERVER}`);
      }
      for (const e of f.paths) {
        canaryHosts.add(e.host);
        if (owners && !ownedBy(owners, e.host, f)) {
          const owner = byHost.get(e.host)![0]!;
          canaryWarnings.push(refusedForOwner(f, e.host, owner.ref, `its canary for path ${e.location.path} is`));
          continue;
        }
        const primary = assembled.get(e.host)?.primaries.get(pathKey(e.location.path, e.location.pathType));
        tryLocations(e.use.name, primary ? [primary] : [], `host ${e.host} path ${e.location.path} (${e.location.pathType})`);
      }
    }
    for (const [alt, { f, where }] of unmerged) {
      if (merged.has(alt)) continue;
      plans.delete(alt);
      canaryWarnings.push({
        object: `Ingress ${f.key}`, field: 'metadata.annotations',
        message: `canary: no primary Ingress serves ${where.join(', ')}; backend ${alt} dropped`,
      });
    }

    // Finish the plans: ssl-passthrough, affinity (a sticky canary shares its primary's).
    const passthrough = passthroughOf(hosts);
    const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
    const sorted = sortedByName(plans);
    for (const p of sorted) finishPlan(p, aliasesOf, passthrough);
    for (const [alt, primary] of affinityFrom) {
      const a = plans.get(alt);
      const from = plans.get(primary);
      if (a && from) {
        a.affinity = from.affinity;
        a.affinityKey = from.affinityKey;
      }
    }

    // The server memo only keeps what this topology can use.
    const nextMemo = new Map<string, ServerEntry>();
    for (const h of byHost.keys()) { const e = serverMemo.get(h); if (e) nextMemo.set(h, e); }
    serverMemo = nextMemo;

    const t = { aliasWarnings, ownershipWarnings, assembled, canaryWarnings };
    return {
      settings, fragments, hosts, plans: sorted, planned: new Set(plans.keys()), customDefaults: [...customDefaults.values()],
      warnings: collectWarnings(fragments, hosts, t), removed: null, root, byHost, assembled,
      planIndex: plans, aliasWarnings, ownershipWarnings, contested: claims?.contested ?? new Set(), aliasNames, canaryWarnings, hasCanary, canaryHosts, canaryBackends, passthrough,
    };
  }

  /**
   * The topology after a few plain Ingresses changed (the changed ones are no canary and have no
   * aliases, catch-all, default backend or default-backend annotation; no host of theirs is an
   * alias or served by a canary, and no backend of theirs takes part in a canary merge): only
   * their hosts and backends are recomputed. Null when a full recompute is needed.
   */
  function updateTopology(prev: Topology, settings: NginxSettings, fragments: IngressFragment[]): Topology | null {
    if (prev.settings !== settings) return null;
    const changes = changedFragments(prev.fragments, fragments);
    if (changes === null || changes.changed.length === 0) return null;
    const { changed } = changes;
    const hostsTouched = new Set<string>();
    const backendsTouched = new Set<string>();
    for (const f of changed) {
      if (f.canary || f.catchAll || f.defaultBackend || f.parsed.serverAliases.length > 0 || f.parsed.defaultBackendService
        || f.parsed.sslPassthrough) return null;
      for (const h of f.hosts) {
        if (prev.aliasNames.has(h) || prev.canaryHosts.has(h) || prev.assembled.get(h)?.server.sslPassthrough) return null;
        // Who owns a host shared by namespaces is decided over all of its Ingresses.
        if (opts.hostOwnership && (h.startsWith('*.') || prev.contested.has(h) || prev.byHost.get(h)?.some((x) => x.ref.namespace !== f.ref.namespace))) return null;
        // A wildcard host may cover aliases (takeover warnings are found over all of them).
        if (h.startsWith('*.') && prev.aliasNames.size > 0) return null;
        hostsTouched.add(h);
      }
      for (const e of f.paths) {
        if (prev.canaryBackends.has(e.use.name)) return null;
        backendsTouched.add(e.use.name);
      }
    }
    if (hostsTouched.size > INCREMENTAL_LIMIT || backendsTouched.size > INCREMENTAL_LIMIT) return null;

    // From here on the previous topology is updated in place (it is not used again).
    // Hosts of the changed Ingresses: their fragment lists and servers.
    const { byHost, assembled, planIndex } = prev;
    const hostWarnings = () => [...hostsTouched].some((h) => (assembled.get(h)?.warnings.length ?? 0) > 0);
    const hadHostWarnings = hostWarnings();
    const removedHosts: string[] = [];
    let hostSetChanged = false;
    for (const h of hostsTouched) {
      const frags = hostFragments(h, byHost.get(h), changes, fragments);
      if (frags.length === 0 && h !== DEFAULT_SERVER) {
        byHost.delete(h);
        assembled.delete(h);
        serverMemo.delete(h);
        removedHosts.push(h);
        hostSetChanged = true;
        continue;
      }
      if (!byHost.has(h)) hostSetChanged = true;
      byHost.set(h, frags);
      assembled.set(h, serverFor(settings, h, frags, prev.root, prev.assembled.get(h)?.server.aliases ?? []));
    }
    const hosts: HostEntry[] = hostSetChanged
      ? sortedHosts(byHost.keys()).map((host) => ({ host, frags: byHost.get(host)!, base: assembled.get(host)!.server }))
      : replaceAt(prev.hosts, [...hostsTouched].map((h) => sortedIndex(prev.hosts, (e) => compareHosts(e.host, h))),
        (e) => ({ host: e.host, frags: byHost.get(e.host)!, base: assembled.get(e.host)!.server }));

    // Backends of the changed Ingresses: owner and cookie locations from every user, oldest first.
    const previousPlans = new Map([...backendsTouched].map((n) => [n, planIndex.get(n)]));
    for (const name of backendsTouched) planIndex.delete(name);
    const fresh = new Map<string, BackendPlan>();
    for (const f of fragments) {
      if (f.canary) continue;
      if (f.paths.some((e) => backendsTouched.has(e.use.name)) || (f.defaultBackend && backendsTouched.has(f.defaultBackend.name))) {
        planUses(fresh, f, backendsTouched);
      }
    }
    // No changed host is ssl-passthrough (checked above), so passthrough backends stay as they were.
    const { passthrough } = prev;
    const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
    for (const [name, p] of fresh) {
      finishPlan(p, aliasesOf, passthrough);
      planIndex.set(name, p);
    }
    const namesChanged = [...backendsTouched].some((n) => planIndex.has(n) !== (previousPlans.get(n) !== undefined));
    const plans = namesChanged
      ? sortedByName(planIndex)
      : replaceAt(prev.plans, [...backendsTouched].map((n) => sortedIndex(prev.plans, (p) => byName(p, { name: n }))), (p) => planIndex.get(p.name)!);
    const removedBackends = [...backendsTouched].filter((n) => !planIndex.has(n));

    // Without a warning from the changed Ingresses or hosts before or after, the warnings stay as they were.
    const sameWarnings = !hostSetChanged && !hadHostWarnings && !hostWarnings() && changed.every((f) => f.warnings.length === 0);
    const t = { aliasWarnings: prev.aliasWarnings, ownershipWarnings: prev.ownershipWarnings, assembled, canaryWarnings: prev.canaryWarnings };
    return {
      settings, fragments, hosts, plans, planned: namesChanged ? new Set(planIndex.keys()) : prev.planned,
      customDefaults: prev.customDefaults, warnings: sameWarnings ? prev.warnings : collectWarnings(fragments, hosts, t),
      removed: { hosts: removedHosts, backends: removedBackends }, root: prev.root, byHost,
      assembled, planIndex, aliasWarnings: prev.aliasWarnings, ownershipWarnings: prev.ownershipWarnings, contested: prev.contested, aliasNames: prev.aliasNames, canaryWarnings: prev.canaryWarnings,
      hasCanary: prev.hasCanary, canaryHosts: prev.canaryHosts, canaryBackends: prev.canaryBackends, passthrough,
    };
  }

  return {
    topologyFor(settings, fragments) {
      const prev = topology;
      if (prev && prev.settings === settings && sameInputs(prev.fragments, fragments)) return prev;
      topology = (prev && updateTopology(prev, settings, fragments)) ?? computeTopology(settings, fragments);
      return topology;
    },
  };
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
  const prevSet = new Set(prev);
  const nextSet = new Set(next);
  if (prevSet.size !== prev.length || nextSet.size !== next.length) return null;
  for (const f of prev) if (!nextSet.has(f)) changed.push(f);
  for (const f of next) if (!prevSet.has(f)) changed.push(f);
  return changed.length > INCREMENTAL_LIMIT ? null : { changed, replaced: null };
}

const servesHost = (f: IngressFragment, host: string) => !f.canary && f.hosts.includes(host);

/** Under --host-ownership: whether `f` may serve `host` (the default server belongs to no one). */
function ownedBy(owners: Map<string, string>, host: string, f: IngressFragment): boolean {
  const owner = owners.get(host);
  return owner === undefined || owner === f.ref.namespace;
}

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

export function endpointsKey(svcKey: string, port: string, serviceUpstream: boolean): string {
  return `${svcKey}|${port}|${serviceUpstream ? 1 : 0}`;
}
