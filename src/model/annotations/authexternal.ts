// authexternal group: authentication by a subrequest to an external service (auth_request).
// An invalid auth-url, auth-method or auth-response-headers denies the location, as in
// ingress-nginx: a broken auth configuration must not leave the location open.
import {
  commaList, headerName, httpMethod, InvalidValue, safeStringWithVariables, statusCode, timeSec, url, type Check,
} from '../validate.js';
import { annotationReader } from './reader.js';
import { pathUnderAny } from './site.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'auth-url': 'High',
  'auth-signin': 'High',
  'auth-signin-redirect-param': 'Medium',
  'auth-response-headers': 'Medium',
  'auth-method': 'Low',
  'auth-cache-key': 'Medium',
  'auth-cache-duration': 'Medium',
} as const;

const httpUrl = url(['http', 'https']);

/**
 * The host of the auth subrequest: a literal name, or `$host` (the oauth2-proxy pattern
 * `https://$host/oauth2/auth`). NGINX has checked `$host` as a host name without a port, so the
 * URL NGINX builds per request cannot turn into `unix:` or another authority; variables the
 * client writes freely (`$http_*`, `$arg_*`, X-Forwarded-Host in `$best_http_host`) are refused here.
 */
export const AUTH_HOST_VARIABLE = '$host';

const authUrl: Check<string> = (raw) => {
  const v = httpUrl(raw);
  const host = new URL(v).hostname;
  if (host.includes('$') && host !== AUTH_HOST_VARIABLE && host !== '${host}') {
    throw new InvalidValue(`the host of the URL may be a name or $host, not ${JSON.stringify(host.slice(0, 64))}`);
  }
  return v.replace('://${host}', `://${AUTH_HOST_VARIABLE}`);
};
const headerNames = commaList(headerName);

export const DEFAULT_AUTH_CACHE_DURATION = ['200 202 401 5m'];

const paramName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(v)) throw new InvalidValue('auth-signin-redirect-param must be a URL parameter name');
  return v;
};

/** `[code ...] time` entries separated by commas, e.g. `200 202 401 5m, 500 1m` (proxy_cache_valid: codes 100..599 or `any`). */
const cacheDurations: Check<string[]> = commaList((item) => {
  const words = item.split(/\s+/);
  const time = timeSec(words.pop() ?? '');
  return [...words.map((w) => (w === 'any' ? w : String(statusCode(w)))), time].join(' ');
});

/**
 * The Host the auth subrequest sends: the URL's host name, as ingress-nginx sends it; '' (NGINX's
 * $proxy_host, host and port as written) for an IPv6 literal or a host made of variables, which
 * are not host names.
 */
function hostHeader(authUrl: string): string {
  const host = new URL(authUrl).hostname;
  return /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host) ? host : '';
}

export interface ExternalAuthConfig {
  readonly url: string;
  readonly host: string;
  readonly method: string;
  readonly signin: string;
  readonly signinRedirectParam: string;
  readonly responseHeaders: readonly string[];
  readonly cacheKey: string;
  readonly cacheDuration: readonly string[];
}

export interface ExternalAuthValue {
  readonly externalAuth: ExternalAuthConfig | null;
}

const fields = { externalAuth: 'location' } as const;

export const authExternalGroup: AnnotationGroup<ExternalAuthValue, typeof fields> = {
  name: 'authexternal',
  keys,
  fields,
  perRequest: ({ externalAuth }) => (externalAuth === null ? null : 'auth-url needs an NGINX subrequest'),
  atLocation: {
    // no-auth-locations (default: ACME challenges) are open.
    externalAuth: (auth, site) => (auth && !pathUnderAny(site.path, site.settings.noAuthLocations) ? auth : null),
  },
  docs: {
    'auth-url': { values: 'http(s) URL (NGINX variables allowed; the host a name or `$host`)', default: 'none', description: 'URL of the authentication service; 2xx lets the request through.', onInvalid: 'warning; the location is denied (503)' },
    'auth-signin': { values: 'http(s) URL (NGINX variables allowed)', default: "''", description: 'Where to send the client when the service answers 401.' },
    'auth-signin-redirect-param': { values: 'URL parameter name', default: "'' (rd)", description: 'Parameter of auth-signin carrying the original URL.' },
    'auth-response-headers': { values: 'comma-separated header names', default: "''", description: 'Headers of the auth response copied to the upstream request.', onInvalid: 'warning; the location is denied (503)' },
    'auth-method': { values: 'HTTP method', default: "'' (GET)", description: 'Method of the auth subrequest.', onInvalid: 'warning; the location is denied (503)' },
    'auth-cache-key': { values: 'NGINX variable expression', default: "'' (no cache)", description: 'Cache auth responses under this key.' },
    'auth-cache-duration': { values: 'comma-separated `[codes] time`', default: DEFAULT_AUTH_CACHE_DURATION.join(', '), description: 'How long auth responses are cached, per status.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const target = r.read('auth-url', authUrl);
    if (target.state === 'absent') return { externalAuth: null, denied: null };
    const deny = (reason: string) => ({ externalAuth: null, denied: reason });
    if (target.state === 'invalid') return deny(`annotation auth-url: ${target.message}`);
    const method = r.read('auth-method', httpMethod);
    if (method.state === 'invalid') return deny(`annotation auth-method: ${method.message}`);
    const headers = r.read('auth-response-headers', headerNames);
    if (headers.state === 'invalid') return deny(`annotation auth-response-headers: ${headers.message}`);
    return {
      externalAuth: {
        url: target.value,
        host: new URL(target.value).hostname === AUTH_HOST_VARIABLE ? AUTH_HOST_VARIABLE : hostHeader(target.value),
        method: method.state === 'ok' ? method.value : '',
        signin: r.get('auth-signin', httpUrl, ''),
        signinRedirectParam: r.get('auth-signin-redirect-param', paramName, ''),
        responseHeaders: headers.state === 'ok' ? headers.value : [],
        cacheKey: r.get('auth-cache-key', safeStringWithVariables, ''),
        cacheDuration: r.get('auth-cache-duration', cacheDurations, [...DEFAULT_AUTH_CACHE_DURATION]),
      },
      denied: null,
    };
  },
};
