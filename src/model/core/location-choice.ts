// Which of a server's locations NGINX, and the Lua router (lua/router.lua match()), choose for a
// URI: an exact location, else a prefix location `/p/` for the URI `/p` (NGINX answers with a 301
// to it, its auto_redirect), else the first regular expression in order that matches, else the
// longest prefix. The model asks it which requests a path wins (../ingress/path-takeovers.ts); it never runs a
// tenant's pattern: regular expressions are automata (./regex-language.ts).
import type { Location } from './types.js';
import { locationMatch, locationOrder } from './paths.js';
import { literalLanguage, regexLanguage, type RegexLanguage } from './regex-language.js';

/** How one location matches, in the terms the choice needs. */
export type Matcher =
  | { readonly kind: 'exact'; readonly s: string }
  | { readonly kind: 'prefix'; readonly s: string }
  /** A regular expression location; `one`: it matches `s` only (an Exact path ending in `/`); `literal`: `~* ^s` where s has no special character (lower-cased). */
  | { readonly kind: 'regex'; readonly s: string; readonly one: boolean; readonly literal: string | null };

const SPECIAL = /[\\^$.|?*+()[\]{}]/;
const lowerASCII = (s: string) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

export function matcherOf(loc: Location, useRegex: boolean): Matcher {
  const m = locationMatch(loc, useRegex);
  if (m.kind !== 'regex') return { kind: m.kind, s: m.path };
  if (loc.pathRegex) return { kind: 'regex', s: loc.path, one: false, literal: null };
  if (loc.pathType === 'Exact') return { kind: 'regex', s: loc.path, one: true, literal: null };
  return { kind: 'regex', s: loc.path, one: false, literal: SPECIAL.test(loc.path) ? null : lowerASCII(loc.path) };
}

/** How a location reads in nginx.conf (`= /a`, `/a/`, `~* ^/a`). */
export function describeMatcher(m: Matcher): string {
  if (m.kind === 'exact') return `= ${m.s}`;
  if (m.kind === 'prefix') return m.s;
  return m.one ? `= ${m.s}` : `~* ^${m.s}`;
}

/**
 * The characters a matcher's URIs start with, as far as they are fixed (lower-cased when caseless):
 * two matchers whose fixed starts differ match no URI in common.
 */
export function fixedStart(m: Matcher): { s: string; caseless: boolean } {
  if (m.kind !== 'regex' || m.one) return { s: m.s, caseless: false };
  if (m.literal !== null) return { s: m.literal, caseless: true };
  const at = m.s.search(SPECIAL);
  // A quantifier makes the character before it optional.
  const end = /^[?*{]/.test(m.s.slice(at)) ? at - 1 : at;
  return { s: lowerASCII(m.s.slice(0, Math.max(0, end))), caseless: true };
}

export interface Choice {
  readonly loc: Location;
  readonly matcher: Matcher;
}

/** A server's locations ready to be chosen from; languages are made on first use. */
export class LocationChooser {
  private readonly exact = new Map<string, Choice>();
  private readonly prefixes = new Map<string, Choice>();
  private readonly lengths: number[] = [];
  /** The regular expressions in the order NGINX tries them. */
  readonly regexes: Choice[] = [];
  private readonly languages = new Map<Matcher, RegexLanguage | null>();
  readonly choices: Choice[] = [];
  /** Automata made so far, and how many may be made (each is bounded in size; past the limit a pattern is not analysed). */
  private made = 0;

  constructor(server: { readonly locations: readonly Location[]; readonly useRegex: boolean }, private readonly maxLanguages = Infinity) {
    const byLoc = new Map<Location, Choice>();
    for (const loc of server.locations) {
      const c: Choice = { loc, matcher: matcherOf(loc, server.useRegex) };
      byLoc.set(loc, c);
      this.choices.push(c);
      if (c.matcher.kind === 'exact') this.exact.set(c.matcher.s, c);
      else if (c.matcher.kind === 'prefix' && !this.prefixes.has(c.matcher.s)) this.prefixes.set(c.matcher.s, c);
    }
    for (const loc of locationOrder(server)) {
      const c = byLoc.get(loc)!;
      if (c.matcher.kind === 'regex') this.regexes.push(c);
    }
    this.lengths = [...new Set([...this.prefixes.keys()].map((p) => p.length))].sort((a, b) => b - a);
  }

  /** The automaton of a matcher's URIs (null: it cannot be made, or no more may be). */
  language(m: Matcher): RegexLanguage | null {
    let lang = this.languages.get(m);
    if (lang === undefined) {
      if (this.made++ >= this.maxLanguages) return null;
      if (m.kind === 'exact' || (m.kind === 'regex' && m.one)) lang = literalLanguage(m.s, 'exact', false);
      else if (m.kind === 'prefix') lang = literalLanguage(m.s, 'prefix', false);
      else if (m.literal !== null) lang = literalLanguage(m.literal, 'prefix', true);
      else lang = regexLanguage(m.s, true);
      this.languages.set(m, lang);
    }
    return lang;
  }

  /** Whether a matcher matches the URI on its own; null when its pattern cannot be analysed. */
  matches(m: Matcher, uri: string): boolean | null {
    switch (m.kind) {
      case 'exact': return uri === m.s;
      // A prefix `/p/` also answers `/p`, with NGINX's 301 to `/p/`.
      case 'prefix': return uri.startsWith(m.s) || (m.s.length > 1 && m.s.endsWith('/') && uri.length === m.s.length - 1 && m.s.startsWith(uri));
      default:
        if (m.one) return uri === m.s;
        if (m.literal !== null) return uri.length >= m.literal.length && lowerASCII(uri.slice(0, m.literal.length)) === m.literal;
        return this.language(m)?.test(uri) ?? null;
    }
  }

  /** The location chosen for the URI; null when none matches; undefined when a pattern tried first cannot be analysed. */
  choose(uri: string): Choice | null | undefined {
    const e = this.exact.get(uri);
    if (e) return e;
    const slash = uri.length > 0 ? this.prefixes.get(`${uri}/`) : undefined;
    if (slash && slash.loc.denied === null) return slash;
    for (const r of this.regexes) {
      const hit = this.matches(r.matcher, uri);
      if (hit === null) return undefined;
      if (hit) return r;
    }
    for (const len of this.lengths) {
      if (len > uri.length) continue;
      const p = this.prefixes.get(uri.slice(0, len));
      if (p) return p;
    }
    return null;
  }
}
