// HTTPRoute rule `timeouts` → the upstream timeouts the Lua router sets per route
// (lua/route_upstream.lua, in seconds with millisecond precision). NGINX has no deadline on a
// whole request: both `request` and `backendRequest` bound each wait on the backend (connecting,
// sending, and between two reads of its answer); the shorter of the two applies. "0s" turns one
// off (the http level's proxy timeouts apply). Durations follow the Gateway API's format.
import type { HTTPRouteRule } from '../../store/kube-types.js';

/** GEP-2257 durations: 1 to 4 parts of up to 5 digits with h, m, s or ms. */
export const DURATION = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
/** The longest timeout a route carries (lua/configuration_shapes.lua MAX_ROUTE_TIMEOUT). */
export const MAX_TIMEOUT_MS = 86_400_000;

function durationMs(v: string): number {
  let ms = 0;
  for (const [, n, unit] of v.matchAll(/([0-9]+)(ms|h|m|s)/g)) ms += Number(n) * UNIT_MS[unit!]!;
  return ms;
}

export type RuleTimeouts = { readonly seconds: number; readonly note: string | null } | null | { readonly problem: string; readonly field: string };

/** The per-wait bound in seconds (null: none), with a note when it was capped; or a problem naming the field. */
export function ruleTimeouts(rule: HTTPRouteRule, at: string): RuleTimeouts {
  const t = rule.timeouts;
  if (t === undefined || t === null) return null;
  if (typeof t !== 'object') return { field: `${at}.timeouts`, problem: 'must be an object' };
  const given: Record<string, number> = {};
  for (const key of ['request', 'backendRequest'] as const) {
    const v = (t as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !DURATION.test(v)) return { field: `${at}.timeouts.${key}`, problem: `${JSON.stringify(String(v).slice(0, 40))} is not a duration (1 to 4 parts like 1h, 30m, 10s, 500ms)` };
    given[key] = durationMs(v);
  }
  const { request, backendRequest } = given;
  if (request && backendRequest && backendRequest > request) {
    return { field: `${at}.timeouts.backendRequest`, problem: 'must not be longer than timeouts.request' };
  }
  const bounds = [request, backendRequest].filter((ms): ms is number => ms !== undefined && ms > 0);
  if (bounds.length === 0) return null;
  const ms = Math.min(...bounds);
  if (ms > MAX_TIMEOUT_MS) return { seconds: MAX_TIMEOUT_MS / 1000, note: `${ms / 1000} s is longer than the ${MAX_TIMEOUT_MS / 1000} s a route can wait; ${MAX_TIMEOUT_MS / 1000} s applies` };
  return { seconds: ms / 1000, note: null };
}
