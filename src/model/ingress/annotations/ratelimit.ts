// ratelimit group: requests per second/minute, concurrent connections and response rate per
// client address, with networks exempt from the limits.
import { cidrList, int } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'limit-rps': 'Low',
  'limit-rpm': 'Low',
  'limit-connections': 'Low',
  'limit-burst-multiplier': 'Low',
  'limit-rate': 'Low',
  'limit-rate-after': 'Low',
  'limit-allowlist': 'Low',
  'limit-whitelist': 'Low',
} as const;

const count = int(0, 1_000_000_000);
const burstMultiplier = int(1, 1000);
/** limit_conn takes at most 65535 connections. */
const connections = int(0, 65_535);

export interface RateLimitConfig {
  readonly rps: number;
  readonly rpm: number;
  readonly connections: number;
  readonly burstMultiplier: number;
  readonly limitRate: number;
  readonly limitRateAfter: number;
  readonly allowlist: readonly string[];
}

export interface RateLimitValue {
  readonly rateLimit: RateLimitConfig | null;
}

const fields = { rateLimit: 'location' } as const;

export const rateLimitGroup: AnnotationGroup<RateLimitValue, typeof fields> = {
  name: 'ratelimit',
  keys,
  fields,
  docs: {
    'limit-rps': { values: 'integer ≥ 0', default: '0 (off)', description: 'Requests per second per client address; excess gets limit-req-status-code.' },
    'limit-rpm': { values: 'integer ≥ 0', default: '0 (off)', description: 'Requests per minute per client address.' },
    'limit-connections': { values: 'integer 0..65535', default: '0 (off)', description: 'Concurrent connections per client address.' },
    'limit-burst-multiplier': { values: 'integer ≥ 1', default: '5', description: 'Burst size as a multiple of the rate.' },
    'limit-rate': { values: 'KB/s, integer ≥ 0', default: 'ConfigMap limit-rate', description: 'Rate of the response to a client.' },
    'limit-rate-after': { values: 'KB, integer ≥ 0', default: 'ConfigMap limit-rate-after', description: 'Amount sent before limit-rate applies.' },
    'limit-allowlist': { values: 'comma-separated IPs / CIDRs', default: "''", description: 'Client networks exempt from the limits.' },
    'limit-whitelist': { values: 'comma-separated IPs / CIDRs', default: "''", description: 'Older name of limit-allowlist (which wins when both are set).' },
  },
  perRequest: ({ rateLimit }) => (rateLimit === null ? null : 'rate limits need NGINX zones (limit_req, limit_conn, limit_rate)'),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const rateLimit = {
      rps: r.get('limit-rps', count, 0),
      rpm: r.get('limit-rpm', count, 0),
      connections: r.get('limit-connections', connections, 0),
      burstMultiplier: r.get('limit-burst-multiplier', burstMultiplier, 5),
      limitRate: r.get('limit-rate', count, ctx.settings.limitRate),
      limitRateAfter: r.get('limit-rate-after', count, ctx.settings.limitRateAfter),
      allowlist: r.get(r.has('limit-allowlist') ? 'limit-allowlist' : 'limit-whitelist', cidrList, []),
    };
    const active = rateLimit.rps + rateLimit.rpm + rateLimit.connections + rateLimit.limitRate + rateLimit.limitRateAfter > 0;
    return { rateLimit: active ? rateLimit : null };
  },
};
