// What one match of a tenant's regular expression may cost. NGINX runs a location's regex (and
// auth-tls-match-cn) with PCRE2 interpreted and gives up only after 10,000,000 backtracking
// steps, ~0.2 s of a worker shared by every tenant for one request: a pattern that can backtrack
// catastrophically is refused. recheck (a ReDoS checker: automata theory, and fuzzing where that
// does not apply, with a fixed seed so that its answer never changes) finds whether the pattern
// is linear and, if not, an attack string; the attack, pumped to the longest request line NGINX
// reads by default, is then run through the PCRE2 NGINX links (src/model/checks/native.ts), and the
// pattern is refused when it needs more than MATCH_STEPS steps. The verdict is cached per pattern.
import { createRequire } from 'node:module';
import type { Diagnostics, checkSync as CheckSync } from 'recheck';
import { nginxCompat } from './native.js';
import { checkRegex } from './pcre.js';

// recheck takes ~0.5 s to load: only a process that meets a pattern worth analysing pays it.
let recheck: typeof CheckSync | undefined;
const checkSync: typeof CheckSync = (...args) => (recheck ??= (createRequire(import.meta.url)('recheck') as { checkSync: typeof CheckSync }).checkSync)(...args);

/** Backtracking steps one match may take (the Lua router stops at 1,000,000: lua/pcre2.lua). */
export const MATCH_STEPS = 100_000;
/** The length an attack is pumped to: NGINX's default request line limit (large_client_header_buffers 4 8k). */
export const ATTACK_LENGTH = 8192;

export interface RegexCostProblem {
  /** Why the pattern is refused. */
  reason: string;
  /** An input that costs more than the bound (recheck's attack, pumped), when there is one. */
  attack?: string;
}

const CACHE_LIMIT = 4096;
const cache = new Map<string, RegexCostProblem | null>();

/** The attack string of recheck's pumps, each pump repeated until the whole reaches `length`. */
function pumped(attack: NonNullable<Extract<Diagnostics, { status: 'vulnerable' }>['attack']>, length: number): string {
  const fixed = attack.pumps.reduce((n, p) => n + p.prefix.length, attack.suffix.length);
  const pumpLength = attack.pumps.reduce((n, p) => n + p.pump.length, 0);
  const times = Math.max(1, Math.floor((length - fixed) / Math.max(1, pumpLength)));
  return attack.pumps.map((p) => p.prefix + p.pump.repeat(times)).join('') + attack.suffix;
}

/**
 * The pattern in the syntax recheck reads (JavaScript's), for PCRE2-only forms whose cost is at
 * most that of what they become: a possessive quantifier (`a++`) or an atomic group (`(?>…)`)
 * backtracks less than the greedy one, and a leading `(?i)` is the `i` flag. null: nothing to change.
 */
function readableForm(pattern: string, caseless: boolean): { source: string; caseless: boolean } | null {
  let source = pattern.replace(/([*+?}])\+/g, '$1').replace(/\(\?>/g, '(?:');
  let i = caseless;
  if (/^\^?\(\?i\)/.test(source)) { source = source.replace('(?i)', ''); i = true; }
  return source === pattern && i === caseless ? null : { source, caseless: i };
}

function judge(pattern: string, caseless: boolean): RegexCostProblem | null {
  // Deterministic: no time limit (recheck's own size limits bound it), a fixed seed for fuzzing.
  const check = (source: string, i: boolean) => checkSync(source, i ? 'i' : '', { timeout: null, randomSeed: 1 });
  let d = check(pattern, caseless);
  // A PCRE2-only form recheck cannot read is judged as a costlier one it can; then only PCRE2
  // running the attack on the pattern itself may refuse it.
  const readable = d.status === 'unknown' && d.error.kind === 'invalid' ? readableForm(pattern, caseless) : null;
  if (readable) d = check(readable.source, readable.caseless);
  if (d.status === 'safe') return null;
  if (d.status === 'unknown') {
    return { reason: `cannot be shown to match in bounded time (recheck: ${d.error.kind === 'invalid' || d.error.kind === 'unsupported' ? `${d.error.kind}: ${d.error.message}` : d.error.kind})` };
  }
  const attack = pumped(d.attack, ATTACK_LENGTH);
  const within = nginxCompat().pcreWithinLimit(pattern, caseless, attack, MATCH_STEPS);
  if (within === true && (readable !== null || d.complexity.type === 'polynomial')) return null;
  return {
    reason: `can backtrack catastrophically (${d.complexity.summary}): a ${attack.length}-byte request takes PCRE2 more than ${MATCH_STEPS} steps`,
    attack,
  };
}

/** No quantifier and no alternation (escapes aside): one pass over the pattern per start, nothing to backtrack into. */
const QUANTIFIER_OR_ALTERNATION = /(^|[^\\])(\\\\)*[*+?{|]/;

/**
 * An anchored pattern's leading literal (`^/shop-17/` of `^/shop-17/(.*)`): matched in one pass,
 * it changes nothing in what the rest costs, so patterns that differ only there (an Ingress per
 * service, `rewrite-target` paths) share one verdict. The last literal stays with the rest when a
 * quantifier follows it.
 */
function literalPrefix(pattern: string): string {
  const m = /^\^(?:[A-Za-z0-9/_~%:@!,;=-]|\\[./?*+()[\]{}|^$-])*/.exec(pattern);
  let prefix = m ? m[0] : '';
  if (/^[*+?{]/.test(pattern.slice(prefix.length))) prefix = prefix.replace(/(\\.|.)$/, '');
  return prefix.length > 1 ? prefix : '';
}

/**
 * Why one match of `pattern` (as NGINX compiles it; `caseless` as `~*`) could cost more than the
 * bound, or null. A pure memo (the verdict depends on the pattern alone), shared by every build.
 */
export function regexCostProblem(pattern: string, caseless: boolean): RegexCostProblem | null {
  if (!QUANTIFIER_OR_ALTERNATION.test(pattern)) return null;
  const prefix = literalPrefix(pattern);
  const rest = prefix === '' ? pattern : `^${pattern.slice(prefix.length)}`;
  const key = `${caseless ? 'i' : 'c'}:${rest}`;
  let verdict = cache.get(key);
  if (verdict === undefined) {
    verdict = judge(rest, caseless);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
    cache.set(key, verdict);
  }
  if (verdict === null || prefix === '' || verdict.attack === undefined) return verdict;
  // The attack on the whole pattern: the literal, unescaped, then the rest's attack.
  return { ...verdict, attack: prefix.slice(1).replace(/\\(.)/g, '$1') + verdict.attack };
}

/**
 * Why NGINX (and the Lua router) would refuse `pattern` as a location's regular expression, or
 * null: it does not compile, it has named groups (NGINX would make variables of them for the
 * whole configuration), or one match could backtrack past the bound. `shift`: characters the
 * pattern has before the tenant's text, taken off an error's offset.
 */
export function regexLocationProblem(pattern: string, caseless: boolean, shift: number): string | null {
  const r = checkRegex(pattern, { caseless });
  if (!r.ok) return `is not a regular expression NGINX accepts (${r.error} at offset ${Math.max(0, r.offset - shift)})`;
  if (r.names.length > 0) return 'has named groups, which NGINX would make variables of the whole configuration (use numbered groups)';
  return regexCostMessage(pattern, caseless);
}

/** regexCostProblem as a warning says it (the reason, and the attack when there is one), or null. */
export function regexCostMessage(pattern: string, caseless: boolean): string | null {
  const cost = regexCostProblem(pattern, caseless);
  return cost === null ? null : `${cost.reason}${cost.attack === undefined ? '' : ` (attack: ${describeAttack(cost.attack)})`}`;
}

/** The attack as a warning shows it: the repeated part summarised. */
export function describeAttack(attack: string): string {
  const shown = attack.length <= 80 ? attack : `${attack.slice(0, 40)}…${attack.slice(-20)} (${attack.length} bytes)`;
  return JSON.stringify(shown);
}
