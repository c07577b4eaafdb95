// The one regular-expression checker: answers as NGINX's PCRE2 does (same library, same compile
// options as ngx_regex_compile), in-process, so that the model, the admission webhook and lint
// refuse the same patterns and never run NGINX on user input. JavaScript's RegExp disagrees with
// PCRE2 both ways (`(?P<n>a)` and `a++` are PCRE only, `[\w-.]` and `\u0041` JavaScript only).
import { nginxCompat } from './native.js';

export type RegexCheck =
  | { ok: true; names: string[] }
  | { ok: false; error: string; offset: number };

const NO_NAMES: string[] = [];

/** Whether NGINX compiles `pattern` (`caseless`: as `~*` does). */
export function checkRegex(pattern: string, opts: { caseless: boolean }): RegexCheck {
  const r = nginxCompat().pcreCompile(pattern, opts.caseless);
  if (r === null) return { ok: true, names: NO_NAMES };
  if (Array.isArray(r)) return { ok: false, error: r[0], offset: r[1] };
  return { ok: true, names: r.names };
}

/** A regular expression matching `s` literally. */
export function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
