// authexternal group: authentication by a subrequest to an external service (auth_request).
// An invalid auth-url, auth-method or auth-response-headers denies the location, as in
// ingress-nginx: a broken auth configuration must not leave the location open.
import {
  commaList, headerName, httpMethod, InvalidValue, safeStringWithVariables, statusCode, timeSec, url, type Check,
} from '../validate.js';
import { annotationReader } from './reader.js';
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

export const authExternalGroup: AnnotationGroup<'externalAuth' | 'denied'> = {
  name: 'authexternal',
  keys,
  docs: {
    'auth-url': { values: 'http(s) URL (NGINX variables allowed)', default: 'none', description: 'URL of the authentication service; 2xx lets the request through.', onInvalid: 'warning; the location is denied (503)' },
    'auth-signin': { values: 'http(s) URL (NGINX variables allowed)', default: "''", description: 'Where to send the client when the service answers 401.' },
    'auth-signin-redirect-param': { values: 'URL parameter name', default: "'' (rd)", description: 'Parameter of auth-signin carrying the original URL.' },
    'auth-response-headers': { values: 'comma-separated header names', default: "''", description: 'Headers of the auth response copied to the upstream request.', onInvalid: 'warning; the location is denied (503)' },
    'auth-method': { values: 'HTTP method', default: "'' (GET)", description: 'Method of the auth subrequest.', onInvalid: 'warning; the location is denied (503)' },
    'auth-cache-key': { values: 'NGINX variable expression', default: "'' (no cache)", description: 'Cache auth responses under this key.' },
    'auth-cache-duration': { values: 'comma-separated `[codes] time`', default: DEFAULT_AUTH_CACHE_DURATION.join(', '), description: 'How long auth responses are cached, per status.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const authUrl = r.read('auth-url', httpUrl);
    if (authUrl.state === 'absent') return { externalAuth: null, denied: null };
    const deny = (reason: string) => ({ externalAuth: null, denied: reason });
    if (authUrl.state === 'invalid') return deny(`annotation auth-url: ${authUrl.message}`);
    const method = r.read('auth-method', httpMethod);
    if (method.state === 'invalid') return deny(`annotation auth-method: ${method.message}`);
    const headers = r.read('auth-response-headers', headerNames);
    if (headers.state === 'invalid') return deny(`annotation auth-response-headers: ${headers.message}`);
    return {
      externalAuth: {
        url: authUrl.value,
        host: hostHeader(authUrl.value),
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
