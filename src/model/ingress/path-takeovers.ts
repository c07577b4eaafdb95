// Path takeovers on a shared host: the requests one namespace's path wins that an older Ingress
// of another namespace on the host also matches, found on the NGINX locations the paths make
// (../core/location-choice.ts chooses as NGINX and the router do), with an example request for each
// pair of Ingresses. Regular expressions are compared as automata, within a bound per host.
import type { IngressRef, Location, ModelWarning } from '../core/types.js';
import { LocationChooser, describeMatcher, fixedStart, matcherOf, type Choice, type Matcher } from '../core/location-choice.js';
import { commonURIs, commonURIsWithout, type RegexLanguage } from '../core/regex-language.js';
import { takeoverWarnings } from './takeovers.js';

const keyOf = (r: IngressRef) => `${r.namespace}/${r.name}`;

/**
 * Most automaton comparisons of regular expressions, and automata, per host: each is bounded in
 * size (../core/regex-language.ts), so a host's analysis is too; past them, pairs are reported as possible.
 */
const MAX_COMPARISONS = 32;
const MAX_LANGUAGES = 64;
/** Example URIs tried per pair of regular expressions. */
const EXAMPLES = 24;
const TAILS = ['', ...'xyz0123456789abcdefghijklmnopqrstuvw-_.~'];

interface Claim extends Choice {
  /** The age of its Ingress among the host's (0: the oldest). */
  readonly rank: number;
  readonly ingress: IngressRef;
}

type Verdict = { readonly uri: string } | 'unknown' | null;

/** A location as the warning names it: the Ingress path and, when NGINX sees it otherwise, the location. */
function pathOf(c: Choice): string {
  const { loc } = c;
  if (loc.pathType === 'Exact' && loc.ingressPath === undefined) return `Exact path ${loc.path}`;
  const path = loc.ingressPath ?? loc.path;
  const seen = describeMatcher(c.matcher);
  return seen === path ? `path ${path}` : `path ${path} (location "${seen}")`;
}

/**
 * Requests one namespace's path wins that an older Ingress of another namespace on the host also
 * matches: after the Prefix split, trailing slashes, Exact before the rest, regular expressions in
 * NGINX's order and host-wide regex mode, as ../core/location-choice.ts chooses. `shadowed`: locations
 * left out because a location of the same match was kept (an Exact path over the Exact twin of a
 * Prefix path). One warning on each Ingress of every such pair, with an example request.
 */
export function pathTakeovers(
  host: string, server: { readonly locations: readonly Location[]; readonly useRegex: boolean },
  rankOf: (ing: IngressRef) => number | undefined, shadowed: readonly Location[],
): ModelWarning[] {
  const namespaces = new Set<string>();
  for (const l of server.locations) if (l.ingress && !l.isDefBackend) namespaces.add(l.ingress.namespace);
  for (const l of shadowed) if (l.ingress) namespaces.add(l.ingress.namespace);
  if (namespaces.size < 2) return [];
  const chooser = new LocationChooser(server, MAX_LANGUAGES);
  const claim = (c: Choice): Claim | null => {
    const ing = c.loc.ingress;
    const rank = ing && !c.loc.isDefBackend ? rankOf(ing) : undefined;
    return ing && rank !== undefined ? { ...c, rank, ingress: ing } : null;
  };
  const takers = chooser.choices.map(claim).filter((c): c is Claim => c !== null);
  // Of the twins an Exact path shadows, only the oldest Ingress's would have its requests.
  const twins = new Map<string, Claim>();
  for (const loc of shadowed) {
    const c = claim({ loc, matcher: matcherOf(loc, server.useRegex) });
    const other = twins.get(loc.path);
    if (c && (!other || c.rank < other.rank)) twins.set(loc.path, c);
  }
  const victims = new Map<string, Victims>();
  for (const c of [...takers, ...twins.values()]) {
    const key = keyOf(c.ingress);
    let v = victims.get(key);
    if (!v) victims.set(key, v = new Victims(c.ingress, c.rank));
    v.add(c);
  }
  let budget = MAX_COMPARISONS;
  const order = new Map(chooser.regexes.map((c, i) => [c.loc, i]));

  // Whether the URI goes to the taker and the victim would take it on its own.
  const chosenFor = new Map<string, Choice | null | undefined>();
  const check = (taker: Claim, victim: Claim, uri: string): Verdict => {
    let chosen = chosenFor.get(uri);
    if (!chosenFor.has(uri)) chosenFor.set(uri, chosen = chooser.choose(uri));
    if (chosen === undefined) return 'unknown';
    if (chosen?.loc !== taker.loc) return null;
    const hit = chooser.matches(victim.matcher, uri);
    return hit === null ? 'unknown' : hit ? { uri } : null;
  };
  const firstOf = (taker: Claim, victim: Claim, uris: readonly string[]): Verdict => {
    let unknown = false;
    for (const uri of uris) {
      const v = check(taker, victim, uri);
      if (v === 'unknown') unknown = true;
      else if (v) return v;
    }
    return unknown ? 'unknown' : null;
  };
  const verdict = (taker: Claim, victim: Claim): Verdict => {
    const t = taker.matcher;
    const v = victim.matcher;
    // A location of one URI: that URI, if the taker wins it.
    if (t.kind === 'exact' || (t.kind === 'regex' && t.one)) return check(taker, victim, t.s);
    if (v.kind === 'exact' || (v.kind === 'regex' && v.one)) return check(taker, victim, v.s);
    // A prefix takes from a shorter prefix of it only; a regular expression tried first keeps every request it matches.
    if (t.kind === 'prefix' && v.kind === 'prefix' && (v.s.length >= t.s.length || !t.s.startsWith(v.s))) return null;
    if (t.kind === 'regex' && v.kind === 'regex' && (order.get(victim.loc) ?? Infinity) < order.get(taker.loc)!) return null;
    const a = fixedStart(t);
    const b = fixedStart(v);
    const fold = (s: string, other: { caseless: boolean }) => (other.caseless ? s.toLowerCase() : s);
    if (!fold(a.s, b).startsWith(fold(b.s, a)) && !fold(b.s, a).startsWith(fold(a.s, b))) return null;
    // Prefixes and literal patterns: the longer path and a tail no longer location takes.
    if (t.kind !== 'regex' || t.literal !== null) {
      const longer = t.s.length >= v.s.length ? t.s : v.s;
      const found = firstOf(taker, victim, TAILS.map((tail) => longer + tail));
      if (found !== null && found !== 'unknown') return found;
      if (t.kind === 'prefix') return found ?? 'unknown';
    }
    if (budget <= 0) return 'unknown';
    budget--;
    const lt = chooser.language(t);
    const lv = chooser.language(v);
    if (!lt || !lv) return 'unknown';
    const uris = commonURIs(lt, lv, EXAMPLES);
    if (uris.length === 0) return null;
    const quick = firstOf(taker, victim, uris);
    if (quick !== null) return quick;
    // Every example went elsewhere: the URIs both match, less those the regexes tried before the taker's keep.
    const earlier: RegexLanguage[] = [];
    const start = fixedStart(t).s.toLowerCase();
    for (const r of chooser.regexes) {
      if (r.loc === taker.loc) break;
      // A pattern whose fixed start differs from the taker's shares none of its URIs.
      const other = fixedStart(r.matcher).s.toLowerCase();
      if (!start.startsWith(other) && !other.startsWith(start)) continue;
      const lang = chooser.language(r.matcher);
      if (!lang) return 'unknown';
      earlier.push(lang);
    }
    const left = commonURIsWithout(lt, lv, earlier, EXAMPLES);
    return left === null ? 'unknown' : left.length === 0 ? null : firstOf(taker, victim, left) ?? 'unknown';
  };

  const found = new Map<string, { taker: Claim; victim: Claim; verdict: Exclude<Verdict, null> }>();
  for (const taker of takers) {
    const takerKey = keyOf(taker.ingress);
    for (const older of victims.values()) {
      if (older.rank >= taker.rank || older.ingress.namespace === taker.ingress.namespace) continue;
      const pair = `${takerKey}|${older.key}`;
      for (const victim of older.candidates(taker.matcher)) {
        const known = found.get(pair);
        if (known && known.verdict !== 'unknown') break;
        const v = verdict(taker, victim);
        if (v !== null && (!known || v !== 'unknown')) found.set(pair, { taker, victim, verdict: v });
      }
    }
  }
  const out: ModelWarning[] = [];
  for (const { taker, victim, verdict } of found.values()) {
    const what = verdict === 'unknown'
      ? `on host ${host} ${pathOf(taker)} may win requests that ${pathOf(victim)} matches (its regular expressions could not be compared)`
      : `on host ${host} ${pathOf(taker)} wins requests that ${pathOf(victim)} matches, e.g. ${verdict.uri}`;
    out.push(...takeoverWarnings(taker.ingress, victim.ingress, 'spec.rules', what));
  }
  return out;
}

/**
 * One older Ingress's locations on the host, indexed so that a taker meets only those that can
 * share a request with it, the most specific first (a warning names the first one found).
 */
class Victims {
  readonly key: string;
  /** Locations of one URI (exact, an Exact path ending in `/`), by it. */
  private readonly byURI = new Map<string, Claim[]>();
  /** Their URIs sorted, lower-cased for caseless takers (with the original). */
  private sortedURIs: Array<[string, string]> | null = null;
  /** Prefix locations by path, literal `~* ^path` by lower-cased path; their lengths, longest first. */
  private readonly prefixes = new Map<string, Claim[]>();
  private lengths: number[] = [];
  /** Other regular expressions. */
  private readonly patterns: Claim[] = [];

  constructor(readonly ingress: IngressRef, readonly rank: number) {
    this.key = keyOf(ingress);
  }

  add(c: Claim): void {
    const m = c.matcher;
    const into = (map: Map<string, Claim[]>, k: string) => { const l = map.get(k); if (l) l.push(c); else map.set(k, [c]); };
    if (m.kind === 'exact' || (m.kind === 'regex' && m.one)) into(this.byURI, m.s);
    else if (m.kind === 'prefix') into(this.prefixes, m.s);
    else if (m.literal !== null) into(this.prefixes, m.literal);
    else this.patterns.push(c);
    this.sortedURIs = null;
  }

  private ready(): Array<[string, string]> {
    if (this.sortedURIs === null) {
      this.sortedURIs = [...this.byURI.keys()].map((u): [string, string] => [u.toLowerCase(), u]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      this.lengths = [...new Set([...this.prefixes.keys()].map((k) => k.length))].sort((a, b) => b - a);
    }
    return this.sortedURIs;
  }

  /** The locations of one URI whose URI starts with `start` (lower-cased when caseless). */
  private *urisStartingWith(start: string, caseless: boolean): Iterable<Claim> {
    const sorted = this.ready();
    const from = caseless ? start.toLowerCase() : start;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (sorted[mid]![0] < from) lo = mid + 1; else hi = mid; }
    for (let i = lo; i < sorted.length && sorted[i]![0].startsWith(from); i++) {
      if (caseless || sorted[i]![1].startsWith(start)) yield* this.byURI.get(sorted[i]![1])!;
    }
  }

  /** The prefix (or literal) locations that are a prefix of `s`, longest first. */
  private *prefixesOf(s: string): Iterable<Claim> {
    this.ready();
    for (const len of this.lengths) if (len <= s.length) yield* this.prefixes.get(s.slice(0, len)) ?? [];
  }

  /** The locations that can share a request with a taker matching as `t`. */
  *candidates(t: Matcher): Iterable<Claim> {
    if (t.kind === 'exact' || (t.kind === 'regex' && t.one)) {
      yield* this.byURI.get(t.s) ?? [];
      yield* this.prefixesOf(t.s);
      yield* this.prefixes.get(`${t.s}/`) ?? [];
      yield* this.prefixesOf(t.s.toLowerCase());
      yield* this.patterns;
    } else if (t.kind === 'prefix') {
      yield* this.urisStartingWith(t.s, false);
      yield* this.prefixesOf(t.s);
    } else if (t.literal !== null) {
      yield* this.urisStartingWith(t.literal, true);
      yield* this.prefixesOf(t.literal);
      yield* this.patterns;
    } else {
      for (const l of this.byURI.values()) yield* l;
      for (const l of this.prefixes.values()) yield* l;
      yield* this.patterns;
    }
  }
}
