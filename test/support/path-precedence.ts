// The rule for who owns a request on a shared host, written from the Ingress paths as
// docs/security.md states it and independent of src/model: the Ingress a URI goes to, and the
// older Ingresses of other namespaces that also match it (each such pair must be warned). Used by
// the property tests (test/unit/model/path-precedence-property.test.ts, through real NGINX in
// test/e2e/path-precedence-property.test.ts) and a generator of random path sets for them.
import type { Random } from './random.js';

export type PathType = 'Exact' | 'Prefix' | 'ImplementationSpecific';
export interface HostPath { readonly path: string; readonly pathType: PathType }
/** One Ingress on the host; the list is oldest first. `regex`: it has use-regex. */
export interface HostIngress { readonly key: string; readonly namespace: string; readonly regex: boolean; readonly paths: readonly HostPath[] }

/** A location one path makes: `= s`, prefix `s`, `~* ^s`, or (an Exact path ending in `/`) the one URI `s`, tried among the regexes. */
interface Piece {
  readonly ing: number;
  readonly kind: 'exact' | 'prefix' | 'regex' | 'one';
  readonly s: string;
  /** The Ingress path it comes from, and whether it is the `= /p` twin of a Prefix path. */
  readonly from: string;
  readonly twin: boolean;
}

const identity = (p: Piece) => (p.kind === 'exact' || p.kind === 'one' ? `= ${p.s}` : p.s);

function pieces(ingresses: readonly HostIngress[]): Piece[] {
  const out: Piece[] = [];
  // A path an older Ingress already has (same spelling and pathType; `/` of Prefix and
  // ImplementationSpecific are one) is ignored.
  const listed = new Set<string>();
  ingresses.forEach((ing, n) => {
    for (const { path, pathType } of ing.paths) {
      const key = path === '/' && pathType !== 'Exact' ? '/' : `${path}|${pathType}`;
      if (listed.has(key)) continue;
      listed.add(key);
      const piece = (kind: Piece['kind'], s: string, twin = false) => out.push({ ing: n, kind, s, from: path, twin });
      if (pathType === 'Exact') piece(path.length > 1 && path.endsWith('/') ? 'one' : 'exact', path);
      else if (ing.regex) piece('regex', path);
      else if (path === '/' || (path.endsWith('/') && pathType === 'ImplementationSpecific')) piece('prefix', path);
      else {
        const bare = path.replace(/\/+$/, '');
        piece('prefix', `${bare}/`);
        piece('exact', bare, true);
      }
    }
  });
  return out;
}

export interface Precedence {
  /** The Ingress (index in the list) a URI goes to; null: none of them (the default backend). */
  owner(uri: string): number | null;
  /** The location NGINX answers the URI with a 301 to (its `/p/` for `/p`), or null. */
  redirect(uri: string): string | null;
  /** The older Ingresses of other namespaces that match the URI on their own while another one gets it. */
  takenFrom(uri: string): number[];
  /** Whether Ingress `n` matches the URI on its own (with the locations it keeps). */
  claims(n: number, uri: string): boolean;
}

/**
 * The rule: a path an older Ingress already has is ignored; each path makes its NGINX locations
 * (Prefix `/p` and `/p/`: `/p/` and `= /p`; an ImplementationSpecific `/p/`: `/p/`; paths of a
 * use-regex Ingress are not split); of two paths making one location, an Exact path beats the
 * twin of a Prefix path, else the oldest Ingress keeps it; when a kept location is a path of a
 * use-regex Ingress (Exact too), the host is in regex mode: every non-Exact location is
 * `~* ^path`. A URI goes to the exact location equal to it, else to the prefix location that is
 * it plus `/` (NGINX's 301 there), else the first regular expression, longest first (then the
 * longer Ingress path, then the greater path), else the longest prefix.
 */
export function precedence(ingresses: readonly HostIngress[]): Precedence {
  const kept = new Map<string, Piece>();
  const shadowed: Piece[] = [];
  for (const p of pieces(ingresses)) {
    const id = identity(p);
    const other = kept.get(id);
    if (!other) { kept.set(id, p); continue; }
    // An Exact path over a Prefix path's twin, whatever the ages; else the older (then the first listed).
    const wins = other.twin && !p.twin && p.kind === 'exact' ? true : !other.twin && p.twin && other.kind === 'exact' ? false : p.ing < other.ing;
    const [keep, lose] = wins ? [p, other] : [other, p];
    kept.set(id, keep);
    if (lose.twin && keep.kind === 'exact' && !keep.twin) shadowed.push(lose);
  }
  // Host-wide regex mode when a kept location is a use-regex Ingress's: every other prefix is `~* ^path` too.
  const regexMode = [...kept.values()].some((p) => ingresses[p.ing]!.regex);
  const all = [...kept.values()].map((p) => (regexMode && p.kind === 'prefix' ? { ...p, kind: 'regex' as const } : p));
  const regexes = all.filter((p) => p.kind === 'regex' || p.kind === 'one')
    .sort((a, b) => b.s.length - a.s.length || b.from.length - a.from.length || (a.from > b.from ? -1 : a.from < b.from ? 1 : 0));
  // A prefix `/p/` answers `/p` too: NGINX's 301 to `/p/` when no `= /p` exists (its auto_redirect).
  const redirects = (p: Piece, uri: string) => p.s.length > 1 && p.s === `${uri}/`;
  const matches = (p: Piece, uri: string): boolean => {
    switch (p.kind) {
      case 'exact': case 'one': return uri === p.s;
      case 'prefix': return uri.startsWith(p.s) || redirects(p, uri);
      default: return new RegExp(`^${p.s}`, 'i').test(uri);
    }
  };
  const choose = (uri: string): Piece | null => {
    const exact = all.find((p) => p.kind === 'exact' && p.s === uri) ?? all.find((p) => p.kind === 'prefix' && redirects(p, uri));
    if (exact) return exact;
    const rx = regexes.find((p) => matches(p, uri));
    if (rx) return rx;
    let best: Piece | null = null;
    for (const p of all) if (p.kind === 'prefix' && uri.startsWith(p.s) && (!best || p.s.length > best.s.length)) best = p;
    return best;
  };
  const claims = (n: number, uri: string) => all.some((p) => p.ing === n && matches(p, uri)) || shadowed.some((p) => p.ing === n && matches(p, uri));
  return {
    owner: (uri) => choose(uri)?.ing ?? null,
    redirect(uri) {
      const p = choose(uri);
      return p && p.kind === 'prefix' && redirects(p, uri) ? p.s : null;
    },
    claims,
    takenFrom(uri) {
      const t = choose(uri)?.ing;
      if (t === undefined) return [];
      const out: number[] = [];
      for (let v = 0; v < t; v++) if (ingresses[v]!.namespace !== ingresses[t]!.namespace && claims(v, uri)) out.push(v);
      return out;
    },
  };
}

// ---- random path sets

const SEGMENTS = ['a', 'b', 'ab', 'adm'];
const REGEXES = ['/a/.*', '/a(/|$)', '/[ab]/', '/a.', '/(a|b)/b', '/ab?/', '/.*', '/b[0-9]*'];

function randomPath(r: Random): string {
  let p = '';
  for (let depth = r.int(0, 3); depth > 0; depth--) p += `/${r.pick(SEGMENTS)}`;
  if (p === '' || r.bool(0.3)) p += '/';
  return p;
}

/** A host's Ingresses, oldest first, over 2–3 namespaces; paths collide often by construction. */
export function randomHost(r: Random, name: string): HostIngress[] {
  const namespaces = ['team-a', 'team-b', 'team-c'].slice(0, r.int(2, 3));
  const out: HostIngress[] = [];
  for (let i = 0, n = r.int(2, 4); i < n; i++) {
    const regex = r.bool(0.2);
    const paths: HostPath[] = [];
    const seen = new Set<string>();
    for (let k = r.int(1, 3); k > 0; k--) {
      const pathType = r.pick<PathType>(['Exact', 'Prefix', 'ImplementationSpecific']);
      const path = regex && pathType === 'ImplementationSpecific' && r.bool(0.6) ? r.pick(REGEXES) : randomPath(r);
      // One Ingress listing a path twice is its own affair (warned as such), not precedence.
      if (seen.has(`${path}|${pathType}`)) continue;
      seen.add(`${path}|${pathType}`);
      paths.push({ path, pathType });
    }
    out.push({ key: `${namespaces[i % namespaces.length]}/${name}-${i}`, namespace: namespaces[i % namespaces.length]!, regex, paths });
  }
  return out;
}

/** URIs worth asking about for a path set: each path (its special characters left out), around it, and a few more. */
export function probeURIs(host: readonly HostIngress[], extra: readonly string[] = []): string[] {
  const out = new Set<string>(['/', '/zz', '/a/b', '/b/b', '/a1', '/b7', '/axe', '/A/B', ...extra]);
  for (const ing of host) {
    for (const { path } of ing.paths) {
      const plain = path.replace(/[()|$?*[\]+.{}\\]/g, '') || '/';
      for (const u of [plain, `${plain}/`, `${plain}x`, `${plain}/x`, plain.replace(/\/+$/, '') || '/', plain.toUpperCase()]) {
        if (!u.includes('//')) out.add(u);
      }
    }
  }
  return [...out];
}
