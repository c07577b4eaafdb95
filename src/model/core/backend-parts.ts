// A Backend (upstream) from its parts, with the defaults every front end starts from: no traffic
// shaping, no affinity.
import type { Backend, BackendService, CookieSessionAffinity, Endpoint, SessionAffinityConfig, TrafficShapingPolicy, UpstreamHashByConfig } from './types.js';

/** The built-in default backend's upstream (404), or the --default-backend-service's. */
export const DEFAULT_UPSTREAM = 'upstream-default-backend';

export const NO_TRAFFIC_SHAPING: TrafficShapingPolicy = {
  weight: 0, weightTotal: 0, header: '', headerValue: '', headerPattern: '', cookie: '',
};

const NO_COOKIE: CookieSessionAffinity = {
  name: '', expires: '', maxage: '', locations: {}, secure: false, path: '', domain: '', samesite: '',
  conditional_samesite_none: false, changeonfailure: false,
};

export const NO_AFFINITY: SessionAffinityConfig = { name: '', mode: '', cookieSessionAffinity: NO_COOKIE };

/** No upstream-hash-by and no alternative backends: one object each, shared by nearly every backend the model keeps. */
export const NO_UPSTREAM_HASH: UpstreamHashByConfig = Object.freeze({});
export const NO_ALTERNATIVES: readonly string[] = Object.freeze([]);

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
  alternativeBackends?: readonly string[];
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
    alternativeBackends: p.alternativeBackends ?? NO_ALTERNATIVES,
    'load-balance': p.loadBalance,
  };
}
