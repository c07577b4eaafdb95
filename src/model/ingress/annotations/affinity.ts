// session affinity group: cookie-based stickiness of a backend (affinity, affinity-mode,
// affinity-canary-behavior, session-cookie-*).
import { bool, cookieDomain, cookieName, cookiePath, int, oneOf, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  affinity: 'Low',
  'affinity-mode': 'Medium',
  'affinity-canary-behavior': 'Low',
  'session-cookie-name': 'Medium',
  'session-cookie-path': 'Medium',
  'session-cookie-domain': 'Medium',
  'session-cookie-expires': 'Medium',
  'session-cookie-max-age': 'Medium',
  'session-cookie-secure': 'Low',
  'session-cookie-samesite': 'Low',
  'session-cookie-conditional-samesite-none': 'Low',
  'session-cookie-change-on-failure': 'Low',
} as const;

/** Seconds, kept as the digits string the Lua balancer expects. */
// Negative as ingress-nginx accepts: an Expires in the past, a Max-Age that deletes the cookie.
const secondsNumber = int(-(2 ** 31), 2 ** 31 - 1);
const seconds: Check<string> = (raw) => String(secondsNumber(raw));
const affinityType = oneOf(['cookie'] as const);
const affinityMode = oneOf(['balanced', 'persistent'] as const);
const canaryBehavior = oneOf(['sticky', 'legacy'] as const);
const sameSite = oneOf(['None', 'Lax', 'Strict'] as const, { caseInsensitive: true });

export const DEFAULT_AFFINITY_COOKIE = 'INGRESSCOOKIE';

/** The affinity cookie's attributes (ingress-nginx's JSON names: they reach Lua as they are). */
export interface AffinityCookie {
  readonly name: string;
  readonly expires: string;
  readonly maxage: string;
  readonly secure: boolean;
  readonly path: string;
  readonly domain: string;
  readonly samesite: string;
  readonly conditional_samesite_none: boolean;
  readonly changeonfailure: boolean;
}

export interface AffinityConfig {
  readonly type: '' | 'cookie';
  /** '' when not set (balanced): a shared backend takes the first mode set (see backend-plans.ts). */
  readonly mode: '' | 'balanced' | 'persistent';
  readonly canaryBehavior: 'sticky' | 'legacy';
  readonly cookie: AffinityCookie;
}

export interface AffinityValue {
  readonly affinity: AffinityConfig;
}

const fields = { affinity: 'backend' } as const;

export const affinityGroup: AnnotationGroup<AffinityValue, typeof fields> = {
  name: 'affinity',
  keys,
  fields,
  docs: {
    affinity: { values: '"cookie"', default: "'' (none)", description: 'Session affinity type.' },
    'affinity-mode': { values: '"balanced" or "persistent"', default: "''", description: 'Whether sessions are rebalanced when the backend scales; unset is balanced, and a Service shared by several Ingresses takes the oldest one set.' },
    'affinity-canary-behavior': { values: '"sticky" or "legacy"', default: 'sticky', description: 'Whether a session that reached the canary stays on it.' },
    'session-cookie-name': { values: 'cookie name', default: DEFAULT_AFFINITY_COOKIE, description: 'Name of the affinity cookie.' },
    'session-cookie-path': { values: 'URI path', default: "'' (the location's path)", description: 'Path attribute of the cookie.' },
    'session-cookie-domain': { values: 'domain name', default: "''", description: 'Domain attribute of the cookie.' },
    'session-cookie-expires': { values: 'seconds (negative: in the past)', default: "''", description: 'Expires attribute of the cookie, in seconds from now.' },
    'session-cookie-max-age': { values: 'seconds (0 or negative: the browser deletes the cookie)', default: "''", description: 'Max-Age attribute of the cookie.' },
    'session-cookie-secure': { values: '"true" or "false"', default: 'false', description: 'Set the Secure attribute regardless of the request scheme.' },
    'session-cookie-samesite': { values: '"None", "Lax" or "Strict"', default: "''", description: 'SameSite attribute of the cookie.' },
    'session-cookie-conditional-samesite-none': { values: '"true" or "false"', default: 'false', description: 'Omit SameSite=None for clients known to reject it.' },
    'session-cookie-change-on-failure': { values: '"true" or "false"', default: 'false', description: 'Pick a new upstream (and cookie) when the sticky one fails.' },
  },
  // A backend policy: applied per request by the Lua balancer from the backends payload.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return {
      affinity: {
        type: r.get('affinity', affinityType, '' as const),
        mode: r.get('affinity-mode', affinityMode, '' as const),
        canaryBehavior: r.get('affinity-canary-behavior', canaryBehavior, 'sticky'),
        cookie: {
          name: r.get('session-cookie-name', cookieName, DEFAULT_AFFINITY_COOKIE),
          path: r.get('session-cookie-path', cookiePath, ''),
          domain: r.get('session-cookie-domain', cookieDomain, ''),
          expires: r.get('session-cookie-expires', seconds, ''),
          maxage: r.get('session-cookie-max-age', seconds, ''),
          secure: r.get('session-cookie-secure', bool, false),
          samesite: r.get('session-cookie-samesite', sameSite, ''),
          conditional_samesite_none: r.get('session-cookie-conditional-samesite-none', bool, false),
          changeonfailure: r.get('session-cookie-change-on-failure', bool, false),
        },
      },
    };
  },
};
