// The topology: everything of the model that depends only on the served Ingresses and the
// settings (hosts and their servers without certificates, backend plans saying which Ingress
// gives each backend its policies, canary merges, ssl-passthrough). Recomputed only when an
// Ingress or the settings changed, and incrementally when a few plain Ingresses changed
// (./topology-update.ts). A Topology never changes once made; what the incremental update needs
// to patch lives in the cache's own index.
import type { NginxSettings } from '../core/config/settings.js';
import type { Location, ModelWarning, Server } from '../core/types.js';
import { customDefaultBackendName } from './annotations/defaultbackend.js';
import { finishPlan, passthroughBackends, planUses, samePlan, type BackendPlan, type PlanDraft } from './backend-plans.js';
import { mergeCanaries, shareCanaryAffinity } from './canary-merge.js';
import type { IngressFragment } from './fragments.js';
import { DEFAULT_SERVER } from '../core/paths.js';
import { resolveAliases } from './server-aliases.js';
import { assembleServer, type AssembledServer } from './servers.js';
import { claimHosts, wildcardHostTakeovers, type ContestedHost } from './takeovers.js';

export interface HostEntry {
  readonly host: string;
  readonly frags: readonly IngressFragment[];
  /** The server without certificate. */
  readonly base: Server;
}

/** Everything that depends only on the served Ingresses and the settings. */
export interface Topology {
  readonly settings: NginxSettings;
  readonly fragments: readonly IngressFragment[];
  /** Sorted by hostname, `_` first. */
  readonly hosts: readonly HostEntry[];
  /** Sorted by name; canary backends without a primary are left out. */
  readonly plans: readonly BackendPlan[];
  /** Names of `plans`. */
  readonly planned: ReadonlySet<string>;
  readonly customDefaults: ReadonlyArray<{ readonly name: string; readonly svcKey: string; readonly ownerKey: string }>;
  readonly warnings: readonly ModelWarning[];
  /** Hosts and backends gone since the previous topology when it was updated incrementally; null after a full recompute. */
  readonly removed: { readonly hosts: readonly string[]; readonly backends: readonly string[] } | null;
}

/**
 * The indexes of the latest topology, which the incremental update patches in place (they are
 * the cache's, never handed out).
 */
export interface TopologyIndex {
  /** The default server's root (catch-all or built-in). */
  root: Location;
  /** Non-canary fragments per host, oldest first. */
  byHost: Map<string, IngressFragment[]>;
  assembled: Map<string, AssembledServer>;
  plans: Map<string, BackendPlan>;
  aliasWarnings: readonly ModelWarning[];
  /** Rules refused under --host-ownership, and the hosts they were refused for. */
  ownershipWarnings: readonly ModelWarning[];
  /** Hosts served instead of another namespace's wildcard host over them. */
  wildcardWarnings: readonly ModelWarning[];
  /** --host-ownership: host → its owner namespace (null when off), and the hosts some namespace was refused. */
  owners: Map<string, string> | null;
  contested: Map<string, ContestedHost>;
  /** Every alias any Ingress asks for. */
  aliasNames: ReadonlySet<string>;
  canaryWarnings: readonly ModelWarning[];
  /** Hosts a canary Ingress serves (the default server for a canary default backend). */
  canaryHosts: ReadonlySet<string>;
  /** Backends of canary Ingresses and the primary backends they merge into. */
  canaryBackends: ReadonlySet<string>;
  /** Backends of ssl-passthrough hosts. */
  passthrough: ReadonlySet<string>;
}

/** A host's server and the inputs it was assembled from. */
export interface ServerEntry { inputs: unknown[]; assembled: AssembledServer }

/** Host → its server, memoised on the identity of its inputs. */
export interface ServerMemo {
  get(host: string): ServerEntry | undefined;
  set(host: string, entry: ServerEntry): void;
  delete(host: string): void;
}

/** What the topology cache keeps: the latest topology, its index, and each host's server. */
export interface TopologyState {
  topology: Topology | null;
  index: TopologyIndex | null;
  servers: ServerMemo;
}

export interface TopologyOptions {
  annotationsPrefix: string;
  /** The default server's root when no catch-all Ingress exists. */
  defaultRoot(settings: NginxSettings): Location;
  /** --host-ownership: a host belongs to the namespace of its oldest Ingress. */
  hostOwnership?: boolean;
  /** --enable-dynamic-routes (see ./dynamic-routes.ts); off unless given. */
  dynamicRoutes?: boolean;
  /**
   * A server memo several topology caches share (the webhook's builders, one per review), which
   * bounds itself; without it each cache keeps the servers of its latest topology.
   */
  sharedServers?: ServerMemo;
}

export function compareHosts(a: string, b: string): number {
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

// The arrays below are filled by index, not with `map`: V8's `map` makes a packed array in the
// interpreter and a holey one once inlined in optimised code, and the code that reads them,
// optimised on the first kind, is thrown away on meeting the second and compiled again later.

/** The values of a map keyed by their names, sorted by name (a native string sort of the keys). */
export function sortedByName<T>(byName: ReadonlyMap<string, T>): T[] {
  const names = [...byName.keys()].sort();
  const out = new Array<T>(names.length);
  for (let i = 0; i < names.length; i++) out[i] = byName.get(names[i]!)!;
  return out;
}

/** A host's server without certificate, memoised on the identity of its inputs. */
export function serverFor(
  state: TopologyState, opts: TopologyOptions, settings: NginxSettings, host: string, frags: IngressFragment[], root: Location, aliases: readonly string[],
): AssembledServer {
  const defaultRootLocation = host === DEFAULT_SERVER ? root : null;
  const aliasText = aliases.join(',');
  let entry = state.servers.get(host);
  if (!entry || !sameServerInputs(entry.inputs, settings, defaultRootLocation, aliasText, frags)) {
    const inputs = new Array<unknown>(3 + frags.length);
    inputs[0] = settings;
    inputs[1] = defaultRootLocation;
    inputs[2] = aliasText;
    for (let i = 0; i < frags.length; i++) inputs[3 + i] = frags[i];
    entry = {
      inputs,
      assembled: assembleServer({
        host, fragments: frags, defaultRoot: defaultRootLocation, aliases, allowSnippets: settings.allowSnippetAnnotations,
        dynamicRoutes: opts.dynamicRoutes === true,
      }),
    };
    state.servers.set(host, entry);
  }
  return entry.assembled;
}

/** Whether a server's memoised inputs are these (sameInputs without building the array to compare). */
function sameServerInputs(inputs: readonly unknown[], settings: NginxSettings, root: Location | null, aliasText: string, frags: readonly IngressFragment[]): boolean {
  if (inputs.length !== 3 + frags.length || inputs[0] !== settings || inputs[1] !== root || inputs[2] !== aliasText) return false;
  for (let i = 0; i < frags.length; i++) if (inputs[3 + i] !== frags[i]) return false;
  return true;
}

export function hostEntries(hosts: Iterable<string>, index: Pick<TopologyIndex, 'byHost' | 'assembled'>): HostEntry[] {
  const names = sortedHosts(hosts);
  const out = new Array<HostEntry>(names.length);
  for (let i = 0; i < names.length; i++) {
    const host = names[i]!;
    out[i] = { host, frags: index.byHost.get(host)!, base: index.assembled.get(host)!.server };
  }
  return out;
}

/** The warnings of a topology, in the order the model reports them. */
export function topologyWarnings(fragments: readonly IngressFragment[], hosts: readonly HostEntry[], plans: readonly BackendPlan[], index: TopologyIndex): ModelWarning[] {
  // Indexed loops: this runs once per full build, mostly before V8 optimises it, where each for-of allocates an iterator and its results.
  const warnings: ModelWarning[] = [];
  for (let i = 0; i < fragments.length; i++) pushAll(warnings, fragments[i]!.warnings);
  pushAll(warnings, index.ownershipWarnings);
  pushAll(warnings, index.wildcardWarnings);
  pushAll(warnings, index.aliasWarnings);
  for (let i = 0; i < hosts.length; i++) pushAll(warnings, index.assembled.get(hosts[i]!.host)!.warnings);
  pushAll(warnings, index.canaryWarnings);
  for (let i = 0; i < plans.length; i++) pushAll(warnings, plans[i]!.warnings);
  return warnings;
}

function pushAll<T>(to: T[], from: readonly T[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]!);
}

/** The whole topology, from scratch (memoised servers apart). */
export function computeTopology(state: TopologyState, opts: TopologyOptions, settings: NginxSettings, fragments: readonly IngressFragment[]): { topology: Topology; index: TopologyIndex } {
  // Hosts: non-canary fragments per server name, oldest first.
  const byHost = new Map<string, IngressFragment[]>([[DEFAULT_SERVER, []]]);
  let catchAll: IngressFragment | null = null;
  for (let i = 0; i < fragments.length; i++) {
    const f = fragments[i]!;
    if (f.canary) continue;
    if (f.catchAll && !catchAll) catchAll = f;
    for (let j = 0; j < f.hosts.length; j++) {
      const h = f.hosts[j]!;
      const list = byHost.get(h);
      if (list) list.push(f);
      else byHost.set(h, [f]);
    }
  }
  const root = catchAll?.catchAllLocation ?? opts.defaultRoot(settings);
  const ownershipWarnings: ModelWarning[] = [];
  const claims = opts.hostOwnership ? claimHosts(byHost, ownershipWarnings) : null;
  const owners = claims?.owners ?? null;

  // Servers, with their aliases.
  const aliases = resolveAliases(byHost, owners, `metadata.annotations["${opts.annotationsPrefix}/server-alias"]`);
  const assembled = new Map<string, AssembledServer>();
  byHost.forEach((frags, host) => {
    assembled.set(host, serverFor(state, opts, settings, host, frags, root, aliases.byHost.get(host)!));
  });
  const hosts = hostEntries(byHost.keys(), { byHost, assembled });

  // Backend plans: the first Ingress using a backend gives its policies.
  const plans = new Map<string, PlanDraft>();
  const customDefaults = new Map<string, { name: string; svcKey: string; ownerKey: string }>();
  for (let i = 0; i < fragments.length; i++) {
    const f = fragments[i]!;
    if (f.canary) continue;
    planUses(plans, f, undefined, owners);
    if (f.parsed.defaultBackendService) {
      // The fragment's own name for it (backend-names.ts may have given it an injective one).
      const name = f.rootLocation.settings.defaultBackend ?? customDefaultBackendName(f.parsed.defaultBackendService);
      if (!customDefaults.has(name)) customDefaults.set(name, { name, svcKey: f.parsed.defaultBackendService, ownerKey: f.key });
    }
  }
  const canary = mergeCanaries({ fragments, plans, assembled, byHost, owners });

  // Finish the plans: ssl-passthrough, affinity (a sticky canary shares its primary's).
  const bases = new Array<Server>(hosts.length);
  for (let i = 0; i < hosts.length; i++) bases[i] = hosts[i]!.base;
  const passthrough = passthroughBackends(bases);
  const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
  const sorted = sortedByName(plans);
  for (let i = 0; i < sorted.length; i++) finishPlan(sorted[i]!, aliasesOf, passthrough);
  shareCanaryAffinity(canary.affinityFrom, plans);

  // A plan equal to the previous topology's is that plan object: backend assembly reuses the
  // backends of kept plans instead of reading their endpoints again (a change to one canary
  // recomputes the topology, and without this all 10k backends).
  const before = state.index?.plans;
  if (before) {
    for (let i = 0; i < sorted.length; i++) {
      const old = before.get(sorted[i]!.name);
      if (old && old !== sorted[i] && samePlan(old, sorted[i]!)) plans.set(old.name, (sorted[i] = old as PlanDraft));
    }
  }

  // The server memo only keeps what this topology can use.
  if (!opts.sharedServers) {
    const servers = new Map<string, ServerEntry>();
    byHost.forEach((_, h) => { const e = state.servers.get(h); if (e) servers.set(h, e); });
    state.servers = servers;
  }

  const index: TopologyIndex = {
    root, byHost, assembled, plans, aliasWarnings: aliases.warnings, ownershipWarnings, wildcardWarnings: wildcardHostTakeovers(byHost), owners, contested: claims?.contested ?? new Map(),
    aliasNames: aliases.names, canaryWarnings: canary.warnings, canaryHosts: canary.hosts, canaryBackends: canary.backends, passthrough,
  };
  const topology: Topology = {
    settings, fragments, hosts, plans: sorted, planned: new Set(plans.keys()), customDefaults: [...customDefaults.values()],
    warnings: topologyWarnings(fragments, hosts, sorted, index), removed: null,
  };
  return { topology, index };
}
