// cors group: Cross-Origin Resource Sharing headers for the Ingress's locations.
import { bool, commaList, headerName, int, InvalidValue, preview, type Check } from '../../checks/validate.js';
import { escapeRegex } from '../../checks/pcre.js';
import { annotationReader } from './reader.js';
import { responseHeadersPerRequest } from './response-headers.js';
import type { AnnotationGroup } from './types.js';

export const CORS_DEFAULTS = {
  allowOrigin: ['*'],
  allowMethods: 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
  allowHeaders: 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
  exposeHeaders: '',
  allowCredentials: true,
  maxAge: 1728000,
} as const;

const keys = {
  'enable-cors': 'Low',
  'cors-allow-origin': 'Medium',
  'cors-allow-methods': 'Medium',
  'cors-allow-headers': 'Medium',
  'cors-expose-headers': 'Medium',
  'cors-allow-credentials': 'Low',
  'cors-max-age': 'Low',
} as const;

/** `*`, `null` (the Origin of sandboxed and file pages), or `scheme://host[:port]` where host may start with `*.`. */
export const corsOrigin: Check<string> = (raw) => {
  const v = raw.trim();
  if (v === '*' || v === 'null') return v;
  const label = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  const re = new RegExp(`^[a-z][a-z0-9+.-]{0,15}://(\\*\\.)?${label}(\\.${label})*(:\\d{1,5})?$`);
  if (!re.test(v)) throw new InvalidValue(`origin "${preview(v)}" is not *, null or scheme://host[:port]`);
  return v;
};

/** Keeps the valid origins and reports the others (as ingress-nginx does); none valid is invalid. */
function originList(report: (message: string) => void): Check<string[]> {
  return (raw) => {
    const valid: string[] = [];
    for (const item of commaList((s) => s)(raw)) {
      try {
        valid.push(corsOrigin(item));
      } catch (err) {
        if (!(err instanceof InvalidValue)) throw err;
        report(`${err.message}; origin dropped`);
      }
    }
    if (valid.length === 0) throw new InvalidValue('no valid origin');
    return valid;
  };
}

// Lists are checked item by item but sent as written, as ingress-nginx sends them; only a space
// may separate items (a tab or line break would reach the response header).
function asWritten(raw: string): string {
  if (/[^\x20-\x7e]/.test(raw)) throw new InvalidValue('only commas and spaces may separate the items');
  return raw.trim();
}

/** A method token, as ingress-nginx accepts any (WebDAV's PROPFIND, …). */
const methodToken: Check<string> = (raw) => {
  if (!/^[A-Za-z]{1,32}$/.test(raw)) throw new InvalidValue(`"${preview(raw)}" is not an HTTP method`);
  return raw;
};

const methodList: Check<string> = (raw) => {
  if (commaList(methodToken)(raw).length === 0) throw new InvalidValue('no method given');
  return asWritten(raw);
};

const headerNames = commaList(headerName);
const headerList: Check<string> = (raw) => {
  headerNames(raw);
  return asWritten(raw);
};

/** Access-Control-Expose-Headers may also be `*` (every header, for requests without credentials). */
const exposeList: Check<string> = (raw) => {
  commaList((h) => (h === '*' ? h : headerName(h)))(raw);
  return asWritten(raw);
};
const maxAge = int(0, 2 ** 31 - 1);

export interface CorsConfig {
  readonly enabled: boolean;
  readonly allowOrigin: readonly string[];
  readonly allowMethods: string;
  readonly allowHeaders: string;
  readonly exposeHeaders: string;
  readonly allowCredentials: boolean;
  readonly maxAge: number;
}

/**
 * The pattern `$http_origin ~*` is matched against (PCRE, caseless), or null when every origin is
 * allowed (`*`). Any scheme, as ingress-nginx allows (`file://x`); `https://*.example.com` allows
 * one sub-domain level.
 */
export function corsOriginPattern(origins: readonly string[]): string | null {
  if (origins.length === 0 || origins.includes('*')) return null;
  const alts = origins.map((o) => escapeRegex(o.replace(/\/$/, '')).replace('\\*\\.', '[A-Za-z0-9-]+\\.'));
  return `^(${alts.join('|')})$`;
}

/** The Access-Control-* headers after Access-Control-Allow-Origin, in the order they are set. */
export function corsHeaders(cors: CorsConfig): Array<[string, string]> {
  return [
    ...(cors.allowCredentials ? [['Access-Control-Allow-Credentials', 'true'] as [string, string]] : []),
    ['Access-Control-Allow-Methods', cors.allowMethods],
    ['Access-Control-Allow-Headers', cors.allowHeaders],
    ...(cors.exposeHeaders !== '' ? [['Access-Control-Expose-Headers', cors.exposeHeaders] as [string, string]] : []),
    ['Access-Control-Max-Age', String(cors.maxAge)],
  ];
}

export interface CorsValue {
  readonly cors: CorsConfig | null;
}

const fields = { cors: 'location' } as const;

export const corsGroup: AnnotationGroup<CorsValue, typeof fields> = {
  name: 'cors',
  keys,
  fields,
  docs: {
    'enable-cors': { values: '"true" or "false"', default: 'false', description: 'Add CORS headers and answer preflight requests.' },
    'cors-allow-origin': { values: 'comma-separated `*`, `null` or `scheme://host[:port]` (host may start with `*.`)', default: CORS_DEFAULTS.allowOrigin.join(','), description: 'Access-Control-Allow-Origin.', onInvalid: 'warning; invalid origins are dropped, `*` when none is left' },
    'cors-allow-methods': { values: 'comma-separated HTTP method tokens (letters)', default: CORS_DEFAULTS.allowMethods, description: 'Access-Control-Allow-Methods.' },
    'cors-allow-headers': { values: 'comma-separated header names', default: CORS_DEFAULTS.allowHeaders, description: 'Access-Control-Allow-Headers.' },
    'cors-expose-headers': { values: 'comma-separated header names or `*`', default: "''", description: 'Access-Control-Expose-Headers.' },
    'cors-allow-credentials': { values: '"true" or "false"', default: 'true', description: 'Access-Control-Allow-Credentials.' },
    'cors-max-age': { values: 'seconds', default: String(CORS_DEFAULTS.maxAge), description: 'Access-Control-Max-Age.' },
  },
  perRequest: ({ cors }, s) => (cors === null ? null : responseHeadersPerRequest('enable-cors', ['Access-Control-Allow-Origin', ...corsHeaders(cors)].map((h) => (typeof h === 'string' ? h : h[0])), s)),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    if (!r.get('enable-cors', bool, false)) return { cors: null };
    return {
      cors: {
        enabled: true,
        allowOrigin: r.get('cors-allow-origin', originList((m) => r.warn('cors-allow-origin', m)), [...CORS_DEFAULTS.allowOrigin]),
        allowMethods: r.get('cors-allow-methods', methodList, CORS_DEFAULTS.allowMethods),
        allowHeaders: r.get('cors-allow-headers', headerList, CORS_DEFAULTS.allowHeaders),
        exposeHeaders: r.get('cors-expose-headers', exposeList, CORS_DEFAULTS.exposeHeaders),
        allowCredentials: r.get('cors-allow-credentials', bool, CORS_DEFAULTS.allowCredentials),
        maxAge: r.get('cors-max-age', maxAge, CORS_DEFAULTS.maxAge),
      },
    };
  },
};
