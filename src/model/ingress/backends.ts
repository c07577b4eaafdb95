// Backend (upstream) objects: policies from the Ingress that uses a backend first, endpoints
// from the Service, canary traffic shaping and alternative backends. Pure constructors; the
// builder memoises them.
import type { ParsedAnnotations } from './annotations/index.js';
import type { SessionAffinityConfig, TrafficShapingPolicy, UpstreamHashByConfig } from '../core/types.js';
import { NO_AFFINITY, NO_UPSTREAM_HASH } from '../core/backend-parts.js';

export { NO_AFFINITY, NO_ALTERNATIVES, NO_TRAFFIC_SHAPING, NO_UPSTREAM_HASH, makeBackend, type BackendParts } from '../core/backend-parts.js';

/** Cookie affinity with `a`'s cookie, set on `locations` (host → paths); `mode` '' is balanced. */
export function sessionAffinity(a: ParsedAnnotations | null, mode: SessionAffinityConfig['mode'], locations: Record<string, string[]>): SessionAffinityConfig {
  if (!a || a.affinity.type !== 'cookie') return NO_AFFINITY;
  return { name: 'cookie', mode, cookieSessionAffinity: { ...a.affinity.cookie, locations } };
}

export function upstreamHashBy(a: ParsedAnnotations | null): UpstreamHashByConfig {
  if (!a || a.upstreamHashBy.hashBy === '') return NO_UPSTREAM_HASH;
  if (!a.upstreamHashBy.subset) return { 'upstream-hash-by': a.upstreamHashBy.hashBy };
  return { 'upstream-hash-by': a.upstreamHashBy.hashBy, 'upstream-hash-by-subset': true, 'upstream-hash-by-subset-size': a.upstreamHashBy.subsetSize };
}

export function trafficShaping(a: ParsedAnnotations): TrafficShapingPolicy {
  const c = a.canary;
  return {
    weight: c.weight, weightTotal: c.weightTotal, header: c.header, headerValue: c.headerValue,
    headerPattern: c.headerPattern, cookie: c.cookie, ...(c.headerPatternInvalid ? { headerPatternInvalid: true as const } : {}),
  };
}
