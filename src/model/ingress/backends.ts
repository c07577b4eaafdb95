// Backend (upstream) objects: policies from the Ingress that uses a backend first, endpoints
// from the Service, canary traffic shaping and alternative backends. Pure constructors; the
// builder memoises them.
import type { ParsedAnnotations } from './annotations/index.js';
import type { Backend, BackendService, CookieSessionAffinity, Endpoint, SessionAffinityConfig, TrafficShapingPolicy, UpstreamHashByConfig } from '../core/types.js';

export const NO_TRAFFIC_SHAPING: TrafficShapingPolicy = {
  weight: 0, weightTotal: 0, header: '', headerValue: '', headerPattern: '', cookie: '',
};

const NO_COOKIE: CookieSessionAffinity = {
  name: '', expires: '', maxage: '', locations: {}, secure: false, path: '', domain: '', samesite: '',
  conditional_samesite_none: false, changeonfailure: false,
};

export const NO_AFFINITY: SessionAffinityConfig = { name: '', mode: '', cookieSessionAffinity: NO_COOKIE };

/** Cookie affinity with `a`'s cookie, set on `locations` (host → paths); `mode` '' is balanced. */
export function sessionAffinity(a: ParsedAnnotations | null, mode: SessionAffinityConfig['mode'], locations: Record<string, string[]>): SessionAffinityConfig {
  if (!a || a.affinity.type !== 'cookie') return NO_AFFINITY;
  return { name: 'cookie', mode, cookieSessionAffinity: { ...a.affinity.cookie, locations } };
}

export function upstreamHashBy(a: ParsedAnnotations | null): UpstreamHashByConfig {
  if (!a || a.upstreamHashBy.hashBy === '') return {};
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

export interface BackendParts {
  name: string;
  service: BackendService | null;
  port: string;
  endpoints: Endpoint[];
  sessionAffinityConfig: SessionAffinityConfig;
  upstreamHashByConfig: UpstreamHashByConfig;
  loadBalance: string;
  noServer?: boolean;
  trafficShapingPolicy?: TrafficShapingPolicy;
  alternativeBackends?: string[];
  sslPassthrough?: boolean;
}

export function makeBackend(p: BackendParts): Backend {
  return {
    name: p.name,
    service: p.service,
    port: p.port,
    sslPassthrough: p.sslPassthrough ?? false,
    endpoints: p.endpoints,
    sessionAffinityConfig: p.sessionAffinityConfig,
    upstreamHashByConfig: p.upstreamHashByConfig,
    noServer: p.noServer ?? false,
    trafficShapingPolicy: p.trafficShapingPolicy ?? NO_TRAFFIC_SHAPING,
    alternativeBackends: p.alternativeBackends ?? [],
    'load-balance': p.loadBalance,
  };
}
