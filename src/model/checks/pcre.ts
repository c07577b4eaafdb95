// The one regular-expression checker: answers as NGINX's PCRE2 does (same library, same compile
// options as ngx_regex_compile), in-process, so that the model, the admission webhook and lint
// refuse the same patterns and never run NGINX on user input. JavaScript's RegExp disagrees with
// PCRE2 both ways (`(?P<n>a)` and `a++` are PCRE only, `[\w-.]` and `\u0041` JavaScript only).
import { nginxCompat } from './native.js';

export type RegexCheck =
  | { ok: true; readonly names: readonly string[] }
  | { ok: false; error: string; offset: number };

const NO_NAMES: readonly string[] = [];

// The answer is a function of the pattern and the flag only, and the same pattern is checked by
// the model, by the render (a location's matcher, its rewrite) and again at every full sync: a
// compile costs microseconds, one or more per regex location at every full build and render. Patterns up to
// CACHED_LENGTH characters are remembered; at CACHE_LIMIT the memo starts afresh.
const CACHE_LIMIT = 32_768;
const CACHED_LENGTH = 256;
const caseSensitiveMemo = new Map<string, RegexCheck>();
const caselessMemo = new Map<string, RegexCheck>();

/** Whether NGINX compiles `pattern` (`caseless`: as `~*` does). */
export function checkRegex(pattern: string, opts: { caseless: boolean }): RegexCheck {
  if (pattern.length > CACHED_LENGTH) return compile(pattern, opts.caseless);
  const memo = opts.caseless ? caselessMemo : caseSensitiveMemo;
  let r = memo.get(pattern);
  if (r === undefined) {
    r = compile(pattern, opts.caseless);
    if (memo.size >= CACHE_LIMIT) memo.clear();
    memo.set(pattern, r);
  }
  return r;
}

function compile(pattern: string, caseless: boolean): RegexCheck {
  const r = nginxCompat().pcreCompile(pattern, caseless);
  if (r === null) return OK;
  if (Array.isArray(r)) return { ok: false, error: r[0], offset: r[1] };
  return { ok: true, names: r.names };
}
const OK: RegexCheck = { ok: true, names: NO_NAMES };

/** A regular expression matching `s` literally. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
