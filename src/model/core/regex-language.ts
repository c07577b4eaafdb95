// The requests a location matches, as a finite automaton (refa), so the model can tell whether
// two locations can match one request, and name one, without running a tenant's pattern (an
// automaton answers in time linear in the URI, whatever the pattern). NGINX matches `~* ^path`
// against the URI from its start: a word of a language is a URI followed by END, where `$`
// matches; what the pattern leaves of the URI is any rest.
import { createRequire } from 'node:module';
import type { CharacterClass, Concatenation, NFA, WordSet } from 'refa';
import { escapeRegex } from '../checks/pcre.js';

type Refa = typeof import('refa');
let loaded: Refa | undefined;
/** refa (1 MB of code), loaded on first use: only hosts that several namespaces share with regular expressions need it. */
const refa = (): Refa => (loaded ??= createRequire(import.meta.url)('refa') as Refa);

/** The end of the URI (no URI holds U+FFFF: NGINX's are bytes). */
const END = 0xffff;
/** Most automaton states a pattern may take; a bigger one is not analysed. */
const MAX_NODES = 4000;
/** Characters an example request is made of, by preference. */
const PREFERRED = 'abcdefghijklmnopqrstuvwxyz0123456789/-_.~';

export interface RegexLanguage {
  /** Whether the URI is in the language. */
  test(uri: string): boolean;
  readonly nfa: NFA;
}

const asWord = (uri: string): number[] => {
  const w: number[] = [];
  for (let i = 0; i < uri.length; i++) w.push(uri.charCodeAt(i));
  w.push(END);
  return w;
};

/**
 * The URIs `^pattern` matches (`caseless` as `~*`), or null when the pattern uses what an
 * automaton cannot hold (look-arounds, back-references, PCRE-only syntax) or is too big.
 */
export function regexLanguage(pattern: string, caseless: boolean): RegexLanguage | null {
  const { CharSet, JS, NFA, visitAst } = refa();
  try {
    // `(?i)` at the start (ingress-nginx's documented spelling) only repeats `~*`.
    const body = caseless ? pattern.replace(/^\(\?i\)/, '') : pattern;
    const { expression, maxCharacter } = JS.Parser.fromLiteral({ source: `(?:${body})(?:[^\\uffff]*\\uffff)?`, flags: caseless ? 'i' : '' })
      .parse({ backreferences: 'throw', assertions: 'parse', simplify: false });
    let unsupported = false;
    const ends = new Set<CharacterClass>();
    visitAst(expression, {
      onConcatenationEnter(c: Concatenation) {
        c.elements = c.elements.map((e) => {
          if (e.type !== 'Assertion') return e;
          const all = e.alternatives.length === 1 && e.alternatives[0]!.elements.length === 1
            && e.alternatives[0]!.elements[0]!.type === 'CharacterClass' && e.alternatives[0]!.elements[0]!.characters.isAll;
          if (!all || !e.negate) {
            unsupported = true;
            return e;
          }
          // `$` (no character ahead) is END; `^` past the start never matches: a path starts with `/`.
          const cls: CharacterClass = {
            type: 'CharacterClass', parent: c,
            characters: e.kind === 'ahead' ? CharSet.fromCharacter(maxCharacter, END) : CharSet.empty(maxCharacter),
          };
          ends.add(cls);
          return cls;
        });
      },
      onCharacterClassEnter(cls: CharacterClass) {
        // Only `$` (and the rest of the URI, the last alternative) reaches END.
        if (!ends.has(cls) && !(cls.characters.has(END) && cls.characters.ranges.length === 1 && cls.characters.ranges[0]!.min === END)) {
          cls.characters = cls.characters.without({ min: END, max: END });
        }
      },
    });
    if (unsupported) return null;
    const factory = new NFA.LimitedNodeFactory(MAX_NODES);
    const raw = NFA.fromRegex(expression, { maxCharacter }, { assertions: 'throw', unknowns: 'throw' }, factory);
    // One END, at the end: `$` followed by the optional rest would make two.
    const once = NFA.fromRegex(JS.Parser.fromLiteral({ source: '[^\\uffff]*\\uffff', flags: '' }).parse().expression, { maxCharacter });
    const nfa = NFA.fromIntersection(raw, once, factory);
    return { nfa, test: (uri) => nfa.test(asWord(uri)) };
  } catch {
    return null;
  }
}

/** The language of a literal location: `= s` (exact), `s` (prefix), `~* ^s` (caseless prefix); null when too long. */
export function literalLanguage(s: string, kind: 'exact' | 'prefix', caseless: boolean): RegexLanguage | null {
  return regexLanguage(`${escapeRegex(s)}${kind === 'exact' ? '$' : ''}`, caseless);
}

function exampleOf(ws: WordSet): string | null {
  let out = '';
  for (let i = 0; i < ws.length; i++) {
    const cs = ws[i]!;
    if (i === ws.length - 1) return cs.has(END) ? out : null;
    let c: number | undefined;
    for (let k = 0; k < PREFERRED.length && c === undefined; k++) if (cs.has(PREFERRED.charCodeAt(k))) c = PREFERRED.charCodeAt(k);
    c ??= cs.commonCharacter({ min: 0x21, max: 0x7e }) ?? cs.ranges[0]!.min;
    out += String.fromCharCode(c);
  }
  return null;
}

/** Up to `limit` URIs both languages hold, shortest first (each an example of a set of them). */
export function commonURIs(a: RegexLanguage, b: RegexLanguage, limit: number): string[] {
  const out: string[] = [];
  try {
    for (const ws of refa().getIntersectionWordSets(a.nfa, b.nfa, MAX_NODES * 4)) {
      const uri = exampleOf(ws);
      if (uri !== null) out.push(uri);
      if (out.length >= limit) break;
    }
  } catch {
    // Too many states: no example.
  }
  return out;
}

/**
 * Up to `limit` URIs both languages hold and none of `without` does, shortest first; null when
 * the automata grow too big to tell.
 */
export function commonURIsWithout(a: RegexLanguage, b: RegexLanguage, without: readonly RegexLanguage[], limit: number): string[] | null {
  const { DFA, isDisjointWith } = refa();
  try {
    const factory = new DFA.LimitedNodeFactory(MAX_NODES * 4);
    let d = DFA.fromIntersection(a.nfa, b.nfa, factory);
    for (const w of without) {
      if (d.isEmpty) return [];
      if (isDisjointWith(d, w.nfa)) continue;
      const other = DFA.fromFA(w.nfa, factory);
      other.complement(factory);
      d = DFA.fromIntersection(d, other, factory);
      d.minimize();
    }
    const out: string[] = [];
    for (const ws of d.wordSets()) {
      const uri = exampleOf(ws);
      if (uri !== null) out.push(uri);
      if (out.length >= limit) break;
    }
    return out;
  } catch {
    return null;
  }
}
