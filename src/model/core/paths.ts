// Ingress paths and hosts: validation, ingress-nginx's location order, and the Prefix split
// (`/p` of pathType Prefix becomes the prefix location `/p/` plus the exact location `= /p`,
// so `/pq` does not match).
import type { Location, PathType } from './types.js';
import { escapeRegex } from '../checks/pcre.js';
import { sortShort } from './sort.js';

export const ROOT_PATH = '/';
export const DEFAULT_SERVER = '_';

// ingress-nginx's strict-validate-path-type rule for Exact and Prefix paths (v1.15: letters, digits, `._-/`).
const STRICT_PATH = /^\/[a-z0-9._\-/]*$/i;
// Any path must start with `/` and hold no whitespace or control characters (they would end
// an NGINX token); everything else is escaped by the renderer.
const SAFE_PATH = /^\/[^\s\u0000-\u001f\u007f]*$/;
const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const HOST = new RegExp(`^(\\*\\.)?${DNS_LABEL}(\\.${DNS_LABEL})*$`);

/**
 * NGINX reads a configuration token into a 4 KB buffer ("too long parameter" past ~4093 bytes);
 * a path is printed as a quoted token with `"` and `\` escaped and each `$` spelled
 * `${literal_dollar}`, plus `^` or a trailing `/`: this bound leaves room for all of them.
 */
export const MAX_PATH_TOKEN_BYTES = 4000;

/** The longest token a path becomes in nginx.conf (see MAX_PATH_TOKEN_BYTES). */
export function pathTokenBytes(path: string): number {
  let extra = 2;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x22 || c === 0x5c) extra += 1;
    else if (c === 0x24) extra += 16;
  }
  return Buffer.byteLength(path, 'utf8') + extra;
}

/** A problem with a path, or null when the path is acceptable. */
export function pathProblem(path: string, pathType: PathType, strict: boolean): string | null {
  if (!SAFE_PATH.test(path)) return `path ${JSON.stringify(path.slice(0, 200))} must start with "/" and contain no whitespace or control characters`;
  if (pathTokenBytes(path) > MAX_PATH_TOKEN_BYTES) return `path is ${path.length} characters long; NGINX takes at most about ${MAX_PATH_TOKEN_BYTES} bytes once quoted`;
  if (strict && pathType !== 'ImplementationSpecific' && !STRICT_PATH.test(path)) {
    return `path ${JSON.stringify(path.slice(0, 200))} of pathType ${pathType} may only contain letters, digits, ".", "_", "-" and "/" (strict-validate-path-type)`;
  }
  return null;
}

// ingress-nginx's deep inspection (--deep-inspect, on by default) refuses a whole Ingress whose
// path matches one of these: NGINX directives or file paths a path could smuggle into its
// nginx.conf. Here a path is escaped and never a file path, so it is served; a warning says that
// ingress-nginx would refuse it.
const DEEP_INSPECTION: ReadonlyArray<[RegExp, string]> = [
  [/alias[\s\S]*;/, 'an alias directive'],
  [/root[\s\S]*;/, 'a root directive'],
  [/\/etc\/(passwd|shadow|group|nginx|ingress-controller)/, 'a file under /etc'],
  [/\/var\/run\/secrets/, '/var/run/secrets'],
  [/_by_lua/, 'a *_by_lua directive'],
];

/** The start of the warning about such a path (the webhook only warns about it: src/admission/verdict.ts). */
export const DEEP_INSPECTION_WARNING = "ingress-nginx's deep inspection refuses the whole Ingress for this path";

/** What of ingress-nginx's deep-inspection rules `path` matches, or null. */
export function deepInspectionMatch(path: string): string | null {
  if (!path.includes(';') && !path.includes('/etc/') && !path.includes('/var/run/secrets') && !path.includes('_by_lua')) return null;
  return DEEP_INSPECTION.find(([re]) => re.test(path))?.[1] ?? null;
}

/** A problem with a rule host, or null ('' is the default server and is fine). */
export function hostProblem(host: string): string | null {
  if (host === '') return null;
  if (host.length > 253 || !HOST.test(host)) return `host ${JSON.stringify(host)} is not a valid DNS name (lower case, optional leading "*.")`;
  return null;
}

/** ingress-nginx's order: longest first, paths of one length descending (a stable sort of paths descending, then by length). */
export function sortLocations(locations: Location[]): Location[] {
  return sortShort([...locations], byLengthThenPath);
}

const byLengthThenPath = (a: Location, b: Location): number =>
  b.path.length - a.path.length || (a.path > b.path ? -1 : a.path < b.path ? 1 : 0);

/** A location that rewrites to another target or uses regular expressions (host-wide regex mode). */
export function needsRegex(loc: Location): boolean {
  return loc.settings.rewrite.useRegex || (loc.settings.rewrite.target !== '' && loc.settings.rewrite.target !== loc.path);
}

/**
 * The Prefix split, applied after sorting: each Prefix location `/p` or `/p/` becomes the prefix
 * location `/p/` followed by an Exact twin `= /p`, unless it rewrites or uses regular
 * expressions, or an Exact location for `/p` already exists (the Ingress spec gives an Exact
 * path precedence over a Prefix path of the same value, whatever the Ingresses' ages). Both
 * pieces keep the Ingress path as `ingressPath` ($location_path, cookie affinity). The twin of
 * `/p/` is `= /p` (the spec: Prefix `/p/` matches `/p`), where ingress-nginx makes `= /p/`.
 * Twins left out for an Exact path go to `shadowed` (the Exact path takes their requests).
 *
 * A host in regex mode is not split: ingress-nginx prints both pieces as `~* ^/p/` and `~* ^/p`
 * one after the other, which match what `~* ^/p` alone matches, at the place of `/p` in the
 * order. An exact twin would instead win over every regular expression (NGINX tries exact
 * locations first), and answer `/foo/bar/bar` from a Prefix path where ingress-nginx's longer
 * `/foo/bar/[a-z]{3}` takes it (its user guide, ingress-path-matching.md).
 */
export function splitPrefixLocations(sorted: Location[], shadowed?: Location[]): Location[] {
  if (sorted.some(needsRegex)) return sorted;
  const exact = new Set(sorted.filter((l) => l.pathType === 'Exact' && !l.when).map((l) => l.path));
  const out: Location[] = [];
  for (const loc of sorted) {
    // ImplementationSpecific is Prefix here (the rule); regex locations keep their own match.
    const trailing = loc.path.endsWith('/');
    if (loc.pathRegex || loc.path === ROOT_PATH || loc.pathType === 'Exact' || needsRegex(loc) || (trailing && loc.pathType !== 'Prefix')) {
      out.push(loc);
      continue;
    }
    const bare = trailing ? loc.path.replace(/\/+$/, '') : loc.path;
    if (bare === '') {
      out.push(loc);
      continue;
    }
    out.push(trailing ? loc : { ...loc, path: `${bare}/`, ingressPath: loc.path });
    const twin: Location = { ...loc, path: bare, pathType: 'Exact', ingressPath: loc.path };
    if (!exact.has(bare)) out.push(twin);
    else shadowed?.push(twin);
  }
  return out;
}

/** How NGINX will see the location; two locations with one identity cannot coexist. */
export function locationIdentity(loc: Pick<Location, 'path' | 'pathType' | 'pathRegex'>): string {
  return loc.pathRegex ? `~ ${loc.path}` : loc.pathType === 'Exact' ? `= ${loc.path}` : loc.path;
}

/**
 * How NGINX matches a location: `location = path`, `location path` (prefix), or a regular
 * expression (`~`, or `~*` when caseless), tried in the order of locationOrder. The renderer
 * prints this and the Lua router matches it, so both answer alike.
 */
export type LocationMatch =
  | { readonly kind: 'exact'; readonly path: string }
  | { readonly kind: 'prefix'; readonly path: string }
  | { readonly kind: 'regex'; readonly regex: string; readonly caseless: boolean };

export function locationMatch(loc: Pick<Location, 'path' | 'pathType' | 'pathRegex'>, useRegex: boolean): LocationMatch {
  if (loc.pathRegex) return { kind: 'regex', regex: loc.path, caseless: false };
  if (loc.pathType === 'Exact') {
    // NGINX answers `/p` with a 301 to `/p/` when a proxied location is named `/p/`, exact or
    // not; the spec says Exact `/p/` does not match `/p`, which a regex location does not do.
    if (loc.path.length > 1 && loc.path.endsWith('/')) return { kind: 'regex', regex: `^${escapeRegex(loc.path)}$`, caseless: false };
    return { kind: 'exact', path: loc.path };
  }
  if (useRegex) return { kind: 'regex', regex: `^${loc.path}`, caseless: true };
  return { kind: 'prefix', path: loc.path };
}

/** A server's locations in the order NGINX tries its regular expressions: longest path first in regex mode. */
export function locationOrder(server: { readonly useRegex: boolean; readonly locations: readonly Location[] }): readonly Location[] {
  return server.useRegex ? sortShort([...server.locations], (a, b) => b.path.length - a.path.length) : server.locations;
}
