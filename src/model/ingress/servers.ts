// One host's Ingress fragments (oldest first) → its Server: paths of all Ingresses merged, the
// oldest winning a duplicate NGINX location (whatever the paths' spelling) and the server-level
// annotations, other namespaces' paths that win an older Ingress's requests warned, a root `/`
// placeholder, host-wide regex mode, ingress-nginx's location order and the Prefix split.
import type { IngressRef, Location, ModelWarning, Server } from '../core/types.js';
import { regexLocationProblem } from '../checks/regex-cost.js';
import type { IngressFragment, PathEntry } from './fragments.js';
import { pathTakeovers } from './path-takeovers.js';
import { hostStaticReason } from './dynamic-routes.js';
import { serverTLSSettings } from './server-tls.js';
import { fromToWWWProblem } from '../core/www-names.js';
import {
  DEFAULT_SERVER, ROOT_PATH, locationIdentity, needsRegex, sortLocations, splitPrefixLocations,
} from '../core/paths.js';

export interface ServerInput {
  host: string;
  /** Non-canary fragments naming this host, oldest first. */
  fragments: readonly IngressFragment[];
  /** The default server's root (catch-all or built-in); only for `_`. */
  defaultRoot: Location | null;
  /** Aliases after removing those that are server names themselves. */
  aliases: readonly string[];
  allowSnippets: boolean;
  /** --enable-dynamic-routes: hosts whose every Ingress the Lua router can serve are matched in Lua. */
  dynamicRoutes: boolean;
}

export interface AssembledServer {
  /** The server without its certificate (the builder adds TLS, which changes more often). */
  server: Server;
  /** Merged locations before the Prefix split, the root placeholder left out (for canary merging: primaryLocation). */
  primaries: readonly Location[];
  warnings: ModelWarning[];
}

/** Key under which two Ingress paths collide; Prefix and ImplementationSpecific `/` are one `location /`. */
export function pathKey(path: string, pathType: string): string {
  if (path === ROOT_PATH && pathType !== 'Exact') return `${ROOT_PATH}|Prefix`;
  return `${path}|${pathType}`;
}

function ingressName(loc: Location): string {
  return loc.ingress ? `${loc.ingress.namespace}/${loc.ingress.name}` : '(default)';
}

/** Stands for a host's root placeholder while the paths are merged (a default backend's, which any `/` path replaces). */
const ROOT_PLACEHOLDER = { isDefBackend: true } as Location;

/** Lists up to this long are searched in place; longer ones get a Map (a host may have tens of thousands of paths). */
const SHORT_LIST = 16;

/** pathKey's path type: Prefix and ImplementationSpecific `/` are one key. */
function keyType(path: string, pathType: string): string {
  return path === ROOT_PATH && pathType !== 'Exact' ? 'Prefix' : pathType;
}

/**
 * A host's locations by pathKey, in the order of their first key: nearly every host has a few
 * paths, searched in place without a key string or a Map; a long list gets a Map.
 */
class MergedPaths {
  readonly locations: Location[] = [];
  private index: Map<string, number> | null = null;

  /** The place of the location whose pathKey is that of (path, pathType), or -1. */
  find(path: string, pathType: string): number {
    const type = keyType(path, pathType);
    if (this.index) return this.index.get(pathKey(path, pathType)) ?? -1;
    for (let i = 0; i < this.locations.length; i++) {
      const l = this.locations[i]!;
      if (l === ROOT_PLACEHOLDER ? path === ROOT_PATH && type === 'Prefix' : l.path === path && keyType(l.path, l.pathType) === type) return i;
    }
    return -1;
  }

  add(loc: Location, path: string, pathType: string): void {
    this.locations.push(loc);
    if (this.index) this.index.set(pathKey(path, pathType), this.locations.length - 1);
    else if (this.locations.length > SHORT_LIST) {
      this.index = new Map();
      for (let i = 0; i < this.locations.length; i++) {
        const l = this.locations[i]!;
        this.index.set(l === ROOT_PLACEHOLDER ? pathKey(ROOT_PATH, 'Prefix') : pathKey(l.path, l.pathType), i);
      }
    }
  }
}

const primaryIndexes = new WeakMap<AssembledServer, Map<string, Location>>();

/** The merged location (before the Prefix split) a canary path of this host merges into, if any. */
export function primaryLocation(assembled: AssembledServer | undefined, path: string, pathType: string): Location | undefined {
  if (!assembled) return undefined;
  const list = assembled.primaries;
  if (list.length <= SHORT_LIST) {
    const type = keyType(path, pathType);
    for (let i = 0; i < list.length; i++) {
      const l = list[i]!;
      if (l.path === path && keyType(l.path, l.pathType) === type) return l;
    }
    return undefined;
  }
  let index = primaryIndexes.get(assembled);
  if (!index) {
    index = new Map();
    for (const l of list) index.set(pathKey(l.path, l.pathType), l);
    primaryIndexes.set(assembled, index);
  }
  return index.get(pathKey(path, pathType));
}

export function assembleServer(input: ServerInput): AssembledServer {
  const { host, fragments } = input;
  const warnings: ModelWarning[] = [];
  const merged = new MergedPaths();
  // The root placeholder holds the first place until a `/` path takes it; the oldest Ingress's
  // root location is made only when none does.
  if (host === DEFAULT_SERVER ? input.defaultRoot : fragments.length > 0) merged.add(ROOT_PLACEHOLDER, ROOT_PATH, 'Prefix');

  for (const frag of fragments) {
    const paths = pathsOf(frag, host);
    for (let p = 0; p < paths.length; p++) {
      const loc = paths[p]!.location;
      const at = merged.find(loc.path, loc.pathType);
      const existing = at < 0 ? undefined : merged.locations[at]!;
      if (!existing) {
        merged.add(loc, loc.path, loc.pathType);
        continue;
      }
      if (existing.isDefBackend) {
        merged.locations[at] = loc;
        continue;
      }
      if (existing.ingress && existing.ingress.namespace === frag.ref.namespace && existing.ingress.name === frag.ref.name) {
        warnings.push({
          object: `Ingress ${frag.key}`, field: 'spec.rules',
          message: `host ${host} path ${loc.path} (${loc.pathType}) is listed twice; the first one is used`,
        });
        continue;
      }
      warnings.push({
        object: `Ingress ${frag.key}`, field: 'spec.rules',
        message: `host ${host} path ${loc.path} (${loc.pathType}) is already defined by the older Ingress ${ingressName(existing)}; ignored`,
      });
    }
  }

  const rootAt = merged.locations.indexOf(ROOT_PLACEHOLDER);
  if (rootAt >= 0) merged.locations[rootAt] = host === DEFAULT_SERVER ? input.defaultRoot! : fragments[0]!.rootLocation;

  // The default server exists before any Ingress: its server-level settings come from none.
  const first = host === DEFAULT_SERVER ? undefined : fragments[0];
  const withSnippet = fragments.find((f) => f.parsed.serverSnippet !== '');
  const pre = sortLocations(merged.locations);
  const shadowed: Location[] = [];
  const split = splitPrefixLocations(pre, shadowed);
  // Paths that make one NGINX location (Prefix `/p` and ImplementationSpecific `/p/` both make
  // `/p/`): the oldest Ingress's is kept, whatever the spelling.
  const rankOf = (ing: IngressRef | null) => (ing ? fragments.findIndex((f) => f.ref.name === ing.name && f.ref.namespace === ing.namespace) : -1);
  // A slot's identity, or null once its location lost; a Map of them only for a long list.
  const ids: Array<string | null> = [];
  const seen = split.length > SHORT_LIST ? new Map<string, number>() : null;
  const slots: Array<Location | null> = [];
  let dropped = false;
  for (let i = 0; i < split.length; i++) {
    const loc = split[i]!;
    const id = locationIdentity(loc);
    const at = seen ? seen.get(id) ?? -1 : ids.indexOf(id);
    if (at < 0) {
      seen?.set(id, slots.length);
      ids.push(id);
      slots.push(loc);
      continue;
    }
    // The winner keeps its own place in the order (regular expressions of one length keep it).
    const other = slots[at]!;
    const older = rankOf(loc.ingress) < rankOf(other.ingress);
    if (older) {
      slots[at] = null;
      ids[at] = null;
      dropped = true;
      seen?.set(id, slots.length);
      ids.push(id);
      slots.push(loc);
    }
    const [winner, loser] = older ? [loc, other] : [other, loc];
    if (loser.ingress) {
      warnings.push({
        object: `Ingress ${ingressName(loser)}`, field: 'spec.rules',
        message: `host ${host} location "${id}" would duplicate the one from the older Ingress ${ingressName(winner)}; ignored`,
      });
    }
  }
  const locations = dropped ? slots.filter((l): l is Location => l !== null) : slots as Location[];

  // Host-wide regex mode matches every other location by `~* ^path`: each must compile as NGINX's
  // PCRE2 compiles it, whichever Ingress asked for regex mode. The host is in regex mode when a
  // path that asks for it was not an older Ingress's already (`pre`, as splitPrefixLocations
  // decides), even when that path is then set aside: its Prefix paths were not split.
  const useRegex = pre.some(needsRegex);
  if (useRegex) {
    const kept = locations.filter((loc) => {
      const problem = loc.pathType === 'Exact' ? null : regexPathProblem(loc.path);
      if (problem && loc.ingress) {
        warnings.push({ object: `Ingress ${ingressName(loc)}`, field: 'spec.rules', message: `host ${host} is in regex mode (use-regex or rewrite-target) and path ${JSON.stringify(loc.path.slice(0, 200))} ${problem}; path ignored` });
      }
      if (!problem && loc.pathType === 'Exact' && loc.ingress) warnings.push(exactInRegexMode(host, loc));
      return problem === null;
    });
    if (kept.length !== locations.length) locations.splice(0, locations.length, ...kept);
  }

  let redirectFromToWWW = first?.parsed.fromToWWWRedirect ?? false;
  const wwwProblem = redirectFromToWWW ? fromToWWWProblem(host) : null;
  if (wwwProblem && first) {
    warnings.push({ object: `Ingress ${first.key}`, field: 'metadata.annotations', message: `from-to-www-redirect: ${wwwProblem}; ignored` });
    redirectFromToWWW = false;
  }

  const tlsSettings = serverTLSSettings(host, fragments, warnings);
  const server: Server = {
    hostname: host,
    aliases: input.aliases,
    sslPassthrough: first?.parsed.sslPassthrough ?? false,
    certificate: null,
    tlsSecret: null,
    redirectFromToWWW,
    useRegex,
    serverSnippet: input.allowSnippets && withSnippet ? withSnippet.parsed.serverSnippet : '',
    ...(tlsSettings ? { tlsSettings } : {}),
    locations,
    staticBecause: hostStaticReason({ host, ingresses: fragments, locations, useRegex, dynamicRoutes: input.dynamicRoutes }),
  };
  if (fragments.some((f) => f.ref.namespace !== fragments[0]!.ref.namespace)) {
    for (const w of pathTakeovers(host, server, (ing) => { const r = rankOf(ing); return r < 0 ? undefined : r; }, shadowed)) warnings.push(w);
  }
  const primaries = pre.some((loc) => loc.isDefBackend) ? pre.filter((loc) => !loc.isDefBackend) : pre;
  return { server, primaries, warnings };
}

/** An Exact path on a host in regex mode stays exact; ingress-nginx makes it `~* ^path` too. */
function exactInRegexMode(host: string, loc: Location): ModelWarning {
  return {
    object: `Ingress ${ingressName(loc)}`, field: 'spec.rules',
    message: `host ${host} is in regex mode (use-regex or rewrite-target): Exact path ${JSON.stringify(loc.path.slice(0, 200))} matches only itself here, where ingress-nginx matches it as ~* "^${loc.path.slice(0, 200)}" (any case, longer paths too)`,
  };
}

const pathsByHost = new WeakMap<IngressFragment, Map<string, PathEntry[]>>();

/**
 * A fragment's paths on one host. An Ingress may name tens of thousands of hosts: scanning all of
 * its paths for each of them would make a server's assembly quadratic in the Ingress's size.
 */
function pathsOf(frag: IngressFragment, host: string): readonly PathEntry[] {
  if (frag.hosts.length === 1) return frag.hosts[0] === host ? frag.paths : [];
  let index = pathsByHost.get(frag);
  if (!index) {
    index = new Map();
    for (const e of frag.paths) {
      const list = index.get(e.host);
      if (list) list.push(e);
      else index.set(e.host, [e]);
    }
    pathsByHost.set(frag, index);
  }
  return index.get(host) ?? [];
}

/** Why NGINX would refuse `~* ^path` as a regular expression, or null. */
function regexPathProblem(path: string): string | null {
  return regexLocationProblem(`^${path}`, true, 1);
}

/** The raw aliases of a host: the first (oldest) Ingress naming any wins. */
export function rawAliases(fragments: readonly IngressFragment[]): readonly string[] {
  return fragments.find((f) => f.parsed.serverAliases.length > 0)?.parsed.serverAliases ?? [];
}
