// ratelimit group: limit_req/limit_conn/limit_rate in the location, and the zones they count in
// at http level, named after the location (one zone set per location, shared by the two pieces
// of a Prefix split), keyed by limit-conn-zone-variable. limit-whitelist networks get an empty key, which NGINX does not count.
import { createHash } from 'node:crypto';
import type { RateLimitConfig } from '../../model/ingress/annotations/ratelimit.js';
import * as f from '../filters.js';
import { NONE, directives } from './layout.js';
import type { LocationContext, RenderBlock, Shared } from './types.js';

const DEFAULT_KEY = '$binary_remote_addr';

/**
 * The zone's name; another limit-conn-zone-variable names other zones, since NGINX refuses a
 * reload that gives an existing zone another key.
 */
function zoneName(c: LocationContext): string {
  const key = c.settings.limitConnZoneVariable;
  return `rl_${c.id()}${key === DEFAULT_KEY ? '' : `_${createHash('sha256').update(key).digest('hex').slice(0, 8)}`}`;
}

function limits(rl: RateLimitConfig, zone: string): string {
  const mult = Math.max(1, Math.floor(rl.burstMultiplier || 1));
  const lines: string[] = [];
  if (rl.connections > 0) lines.push(`limit_conn ${zone}_conn ${f.num(rl.connections, 'limit-connections')}`);
  if (rl.rps > 0) lines.push(`limit_req zone=${zone}_rps burst=${f.num(rl.rps * mult, 'limit-burst-multiplier')} nodelay`);
  if (rl.rpm > 0) lines.push(`limit_req zone=${zone}_rpm burst=${f.num(rl.rpm * mult, 'limit-burst-multiplier')} nodelay`);
  if (rl.limitRateAfter > 0) lines.push(`limit_rate_after ${f.num(rl.limitRateAfter, 'limit-rate-after')}k`);
  if (rl.limitRate > 0) lines.push(`limit_rate ${f.num(rl.limitRate, 'limit-rate')}k`);
  return directives(lines);
}

function zones(rl: RateLimitConfig, zone: string, variable: string): string {
  const counted = f.variables(variable, 'limit-conn-zone-variable');
  let key = counted;
  let out = '';
  if (rl.allowlist.length > 0) {
    key = `$${zone}_key`;
    out += `    geo $${zone}_allowed {\n        default 0;\n${rl.allowlist.map((c) => `        ${f.cidr(c, 'limit-whitelist')} 1;\n`).join('')}    }\n`;
    out += `    map $${zone}_allowed ${key} {\n        0 ${counted};\n        1 "";\n    }\n`;
  }
  if (rl.connections > 0) out += `    limit_conn_zone ${key} zone=${zone}_conn:5m;\n`;
  if (rl.rps > 0) out += `    limit_req_zone ${key} zone=${zone}_rps:5m rate=${f.num(rl.rps, 'limit-rps')}r/s;\n`;
  if (rl.rpm > 0) out += `    limit_req_zone ${key} zone=${zone}_rpm:5m rate=${f.num(rl.rpm, 'limit-rpm')}r/m;\n`;
  return out;
}

export const rateLimitBlock: RenderBlock = {
  group: 'ratelimit',
  applied: 'directives',
  location: {
    access: (c) => (c.loc.settings.rateLimit ? limits(c.loc.settings.rateLimit, zoneName(c)) : ''),
    http: (c): readonly Shared[] => {
      const rl = c.loc.settings.rateLimit;
      if (!rl) return NONE;
      const zone = zoneName(c);
      return [{ name: zone, text: () => zones(rl, zone, c.settings.limitConnZoneVariable) }];
    },
  },
};
