// HTTPRoute rule `retry` → the retries the Lua router gives a route (lua/route_upstream.lua and
// the retry locations of src/render/dynamic-routes.ts). NGINX decides which answers are retried
// per location (proxy_next_upstream), and tells only 500, 502, 503 and 504 apart among the codes
// the spec asks for: every set of those four has a location of its own, so the router moves a
// request to the one of its rule's codes. Connection errors and timeouts are retried whenever a
// rule has a retry (the spec's SHOULD). Other codes are named and not retried; a backoff is named
// and the retry not served, since NGINX cannot wait between two tries without holding a worker.
import type { RouteRetry } from '../core/types.js';
import type { HTTPRouteRule } from '../../store/kube-types.js';
import { DURATION } from './timeouts.js';

/** The codes NGINX can retry on (proxy_next_upstream http_500 …), in the order of their bit in the location's name. */
export const RETRY_CODES = [500, 502, 503, 504] as const;
/** Retries a rule gets when `attempts` is not given (the spec leaves it to the implementation). */
export const DEFAULT_ATTEMPTS = 1;
/** The most retries a request gets (each one is a whole request to a backend). */
export const MAX_ATTEMPTS = 10;

const ZERO = /^(0+(h|m|s|ms)){1,4}$/;

export type RuleRetry =
  | { readonly retry: RouteRetry | null; readonly notes: ReadonlyArray<{ readonly field: string; readonly message: string }> }
  | { readonly problem: string; readonly field: string };

/** The rule's retries (null: none), with notes on what is not served; or a problem (a value the CRD refuses) naming the field. */
export function ruleRetry(rule: HTTPRouteRule, at: string): RuleRetry | null {
  const r = rule.retry;
  if (r === undefined || r === null) return null;
  const field = `${at}.retry`;
  if (typeof r !== 'object' || Array.isArray(r)) return { field, problem: 'must be an object' };
  const { codes, attempts, backoff } = r as Record<string, unknown>;
  const notes: Array<{ field: string; message: string }> = [];
  const served = new Set<number>();
  if (codes !== undefined && codes !== null) {
    if (!Array.isArray(codes) || codes.length > 200) return { field: `${field}.codes`, problem: 'must be a list of at most 200 status codes' };
    for (const [j, c] of codes.entries()) {
      if (typeof c !== 'number' || !Number.isInteger(c) || c < 400 || c > 599) {
        return { field: `${field}.codes[${j}]`, problem: `${JSON.stringify(c).slice(0, 40)} is not a status code from 400 to 599` };
      }
      if ((RETRY_CODES as readonly number[]).includes(c)) served.add(c);
      else notes.push({ field: `${field}.codes[${j}]`, message: `${c} is not retried: NGINX retries on ${RETRY_CODES.join(', ')} only (and on connection errors and timeouts)` });
    }
  }
  let n = DEFAULT_ATTEMPTS;
  if (attempts !== undefined && attempts !== null) {
    if (typeof attempts !== 'number' || !Number.isInteger(attempts) || attempts < 1) {
      return { field: `${field}.attempts`, problem: `${JSON.stringify(attempts).slice(0, 40)} is not a whole number of at least 1` };
    }
    n = attempts;
    if (n > MAX_ATTEMPTS) {
      notes.push({ field: `${field}.attempts`, message: `${n} retries is more than the ${MAX_ATTEMPTS} a request gets; ${MAX_ATTEMPTS} apply` });
      n = MAX_ATTEMPTS;
    }
  }
  if (backoff !== undefined && backoff !== null) {
    if (typeof backoff !== 'string' || !DURATION.test(backoff)) {
      return { field: `${field}.backoff`, problem: `${JSON.stringify(String(backoff).slice(0, 40))} is not a duration (1 to 4 parts like 1h, 30m, 10s, 500ms)` };
    }
    if (!ZERO.test(backoff)) {
      notes.push({ field: `${field}.backoff`, message: `a backoff (${backoff}) is not served: NGINX cannot wait between two tries without holding a worker; the rule is served without retries` });
      return { retry: null, notes };
    }
  }
  return { retry: { codes: RETRY_CODES.filter((c) => served.has(c)), attempts: n }, notes };
}
