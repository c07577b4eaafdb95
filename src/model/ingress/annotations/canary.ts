// canary group: marks an Ingress as a canary of another with the same host and path, and the
// traffic shaping policy (weight, header, cookie) that routes requests to it.
import { bool, cookieName, headerName, int, safeRegex, safeString } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  canary: 'Low',
  'canary-by-header': 'Medium',
  'canary-by-header-value': 'Medium',
  'canary-by-header-pattern': 'Medium',
  'canary-by-cookie': 'Medium',
  'canary-weight': 'Low',
  'canary-weight-total': 'Low',
} as const;

const weightTotalCheck = int(1, 1_000_000);
const weightCheck = int(0, 1_000_000);
const SHAPING_KEYS = Object.keys(keys).filter((k) => k !== 'canary');

export interface CanaryConfig {
  readonly enabled: boolean;
  readonly weight: number;
  readonly weightTotal: number;
  readonly header: string;
  readonly headerValue: string;
  readonly headerPattern: string;
  /** canary-by-header-pattern is set but not a valid pattern: requests with the header stay on the primary. */
  readonly headerPatternInvalid: boolean;
  readonly cookie: string;
}

export interface CanaryValue {
  readonly canary: CanaryConfig;
}

const fields = { canary: 'backend' } as const;

export const canaryGroup: AnnotationGroup<CanaryValue, typeof fields> = {
  name: 'canary',
  keys,
  fields,
  docs: {
    canary: { values: '"true" or "false"', default: 'false', description: 'This Ingress is a canary of the Ingress with the same host and path.' },
    'canary-by-header': { values: 'header name', default: "''", description: 'Route to the canary when this request header is `always` (never when `never`).' },
    'canary-by-header-value': { values: 'string without quotes, `;`, braces, `$`, backslash', default: "''", description: 'Route to the canary when canary-by-header has this value.' },
    'canary-by-header-pattern': { values: 'regular expression without quotes, `;`, braces', default: "''", description: 'Route to the canary when canary-by-header matches this pattern.', onInvalid: 'warning; a request with the header stays on the primary backend (as ingress-nginx on a pattern error)' },
    'canary-by-cookie': { values: 'cookie name', default: "''", description: 'Route to the canary when this cookie is `always`.' },
    'canary-weight': { values: 'integer 0..canary-weight-total', default: '0', description: 'Share of requests sent to the canary.' },
    'canary-weight-total': { values: 'integer ≥ 1', default: '100', description: 'Total the weight is a share of.' },
  },
  // A backend policy: applied per request by the Lua balancer from the backends payload.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const enabled = r.get('canary', bool, false);
    const weightTotal = r.get('canary-weight-total', weightTotalCheck, 100);
    const pattern = r.read('canary-by-header-pattern', safeRegex);
    const canary = {
      enabled,
      weight: r.get('canary-weight', weightCheck, 0),
      weightTotal,
      header: r.get('canary-by-header', headerName, ''),
      headerValue: r.get('canary-by-header-value', safeString, ''),
      headerPattern: pattern.state === 'ok' ? pattern.value : '',
      headerPatternInvalid: pattern.state === 'invalid',
      cookie: r.get('canary-by-cookie', cookieName, ''),
    };
    if (canary.weight > weightTotal) {
      warn('canary-weight', `${canary.weight} is above canary-weight-total ${weightTotal}; 0 used`);
      canary.weight = 0;
    }
    if (!enabled && SHAPING_KEYS.some(r.has, r)) {
      warn('canary', 'canary-* annotations are set but canary is not "true"; they are ignored');
    }
    return { canary };
  },
};
