// authexternal group: authentication by a subrequest to an external service (auth_request, its
// peer chosen in Lua under the address policy and kept alive with auth-keepalive), and the global external
// auth of the ConfigMap (global-auth-*) for locations without auth-url of their own. An invalid
// auth-url, auth-method, auth-response-headers or auth-proxy-set-headers denies the location, as
// in ingress-nginx: a broken auth configuration must not leave the location open.
import type { ConfigMap } from '../../../store/kube-types.js';
import { judgeExternalName, STRICT_ADDRESS_POLICY, type AddressPolicy } from '../../checks/address-policy.js';
import { secretRef } from '../../../store/secret-ref.js';
import type { NginxSettings } from '../../core/config/settings.js';
import { LOCATION_VARIABLE, REDIRECT_VARIABLE } from '../../checks/redirect-url.js';
import {
  bool, commaList, headerName, httpMethod, int, InvalidValue, preview, safeStringWithVariables, statusCode, timeSec, url, type Check,
} from '../../checks/validate.js';
import { annotationReader, type AnnotationReader } from './reader.js';
import { pathUnderAny } from './site.js';
import { tenantSnippet, warnIfHttp1Only } from './snippets.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'auth-url': 'High',
  'auth-signin': 'High',
  'auth-signin-redirect-param': 'Medium',
  'auth-response-headers': 'Medium',
  'auth-method': 'Low',
  'auth-cache-key': 'Medium',
  'auth-cache-duration': 'Medium',
  'auth-keepalive': 'Low',
  'auth-keepalive-requests': 'Low',
  'auth-keepalive-timeout': 'Low',
  'auth-keepalive-share-vars': 'Low',
  'auth-proxy-set-headers': 'Medium',
  'auth-request-redirect': 'Medium',
  'auth-always-set-cookie': 'Low',
  'auth-snippet': 'Critical',
  'enable-global-auth': 'Low',
} as const;

export const httpUrl = url(['http', 'https']);

/**
 * The host of the auth subrequest: a literal name, or `$host` (the oauth2-proxy pattern
 * `https://$host/oauth2/auth`). NGINX has checked `$host` as a host name without a port, so the
 * URL NGINX builds per request cannot turn into `unix:` or another authority; variables the
 * client writes freely (`$http_*`, `$arg_*`, X-Forwarded-Host in `$best_http_host`) are refused here.
 */
export const AUTH_HOST_VARIABLE = '$host';

export const authUrl: Check<string> = (raw) => {
  const v = httpUrl(raw);
  const host = new URL(v).hostname;
  if (host.includes('$') && host !== AUTH_HOST_VARIABLE && host !== '${host}') {
    throw new InvalidValue(`the host of the URL may be a name or $host, not ${JSON.stringify(host.slice(0, 64))}`);
  }
  return v.replace('://${host}', `://${AUTH_HOST_VARIABLE}`);
};
export const headerNames = commaList(headerName);

export const DEFAULT_AUTH_CACHE_DURATION = ['200 202 401 5m'];

export const paramName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(v)) throw new InvalidValue('auth-signin-redirect-param must be a URL parameter name');
  return v;
};

/** `[code ...] time` entries separated by commas, e.g. `200 202 401 5m, 500 1m` (proxy_cache_valid: codes 100..599 or `any`). */
export const cacheDurations: Check<string[]> = commaList((item) => {
  const words = item.split(/\s+/);
  const time = timeSec(words.pop() ?? '');
  return [...words.map((w) => (w === 'any' ? w : String(statusCode(w)))), time].join(' ');
});

/**
 * The Host the auth subrequest sends: the URL's host name, as ingress-nginx sends it; '' (the renderer
 * sends the URL's host and port) for an IPv6 literal or another host that is not a host name.
 */
function hostHeader(authUrl: string): string {
  const host = new URL(authUrl).hostname;
  return /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host) ? host : '';
}

/** X-Auth-Request-Redirect: a URL or path, NGINX variables allowed; no white space. */
export const requestRedirect: Check<string> = (raw) => {
  const v = safeStringWithVariables(raw.trim());
  if (v === '' || /\s/.test(v)) throw new InvalidValue('must be a URL or path without white space');
  return v;
};

/**
 * A variable an auth cache key may name: one NGINX gives a value per request in the location. A
 * name the renderer would print as literal text would make one key for every client, so that one
 * client's cached 200 would open the location to all: such a key is refused instead.
 */
export function cacheKeyVariable(name: string): boolean {
  return REDIRECT_VARIABLE.test(name) || LOCATION_VARIABLE.test(name)
    || /^(binary_remote_addr|realip_remote_addr|proxy_protocol_addr|query_string|request|document_uri|server_protocol|content_type|content_length|ssl_client_[a-z_]+|ssl_server_name|ssl_protocol|ssl_cipher)$/.test(name);
}

/** auth-cache-key (and global-auth-cache-key): text and variables of the request. */
export const cacheKey: Check<string> = (raw) => {
  const v = safeStringWithVariables(raw.trim());
  for (const m of v.matchAll(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g)) {
    const name = m[1] ?? m[2]!;
    if (!cacheKeyVariable(name)) throw new InvalidValue(`$${name} is not a variable of the request: the key would be the same for every client`);
  }
  return v;
};

/** auth-keepalive: connections NGINX keeps per worker; each is allocated when NGINX loads the configuration. */
export const MAX_AUTH_KEEPALIVE = 1024;

/**
 * The auth service of a tenant's auth-url, whose address Lua chooses under the address policy when
 * the subrequest is made, and the connections kept to it (auth-keepalive; 0: a new connection per
 * subrequest).
 */
export interface AuthKeepalive {
  readonly connections: number;
  readonly requests: number;
  /** Seconds. */
  readonly timeout: number;
  /** The auth service's host (a name, an IP address as written, or `$host`: the request's) and port, dialled through the address policy. */
  readonly peerHost: string;
  readonly peerPort: number;
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
  /** X-Auth-Request-Redirect's value; '' is the request URI. */
  readonly requestRedirect: string;
  /** Set-Cookie of the auth answer on every response, not only on 2xx/3xx (add_header … always). */
  readonly alwaysSetCookie: boolean;
  /** Directives of the auth location (auth-snippet, global-auth-snippet); ''. */
  readonly snippet: string;
  /** Headers sent to the auth service (auth-proxy-set-headers): name → value, by name. */
  readonly proxySetHeaders: Readonly<Record<string, string>>;
  /** How a tenant's auth service is dialled under the address policy; null: as auth-url names it (the ConfigMap's global-auth-url). */
  readonly keepalive: AuthKeepalive | null;
}

export interface ExternalAuthValue {
  readonly externalAuth: ExternalAuthConfig | null;
}

const BOOL = '"true" or "false"';

/** The auth service's host as dialled (brackets off an IPv6 literal) and port. */
function authPeer(authUrl: string): { host: string; port: number } {
  const parsed = new URL(authUrl);
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port),
  };
}

/**
 * Why the upstream address policy refuses the auth service a tenant named, or null. A literal
 * address (or localhost) is judged here, whichever way NGINX will dial it: auth_request would
 * otherwise reach the node's loopback services or the cloud metadata address, and copy their
 * headers upstream (auth-response-headers). A name is judged where Lua dials it, with or without
 * auth-keepalive.
 */
function refusedAuthPeer(authUrl: string, policy: AddressPolicy): string | null {
  const { host, port } = authPeer(authUrl);
  if (host === AUTH_HOST_VARIABLE) return null;
  const verdict = judgeExternalName(policy, host, String(port));
  return verdict.ok ? null : `${host}:${port} refused by the upstream address policy: ${verdict.reason}`;
}

/**
 * auth-keepalive* read as ingress-nginx reads them (any reason against keepalive turns it off,
 * with a warning), and the peer chosen in Lua, kept alive or not (`$host`: the request's host,
 * judged per request). auth-keepalive-share-vars is only checked: auth_request's subrequest
 * always shares the request's variables.
 */
function readKeepalive(r: AnnotationReader, authUrl: string): AuthKeepalive {
  const connections = r.get('auth-keepalive', int(-(2 ** 31), 2 ** 31 - 1), 0);
  const requests = r.get('auth-keepalive-requests', int(-(2 ** 31), 2 ** 31 - 1), 1000);
  const timeout = r.get('auth-keepalive-timeout', int(-(2 ** 31), 86_400), 60);
  r.get('auth-keepalive-share-vars', bool, false);
  const { host, port } = authPeer(authUrl);
  // A `$host` peer is the request's own host, judged per request like a name.
  const unpooled = { connections: 0, requests, timeout, peerHost: host, peerPort: port };
  if (connections <= 0) {
    if (connections < 0) r.warn('auth-keepalive', 'must not be negative; no keepalive');
    return unpooled;
  }
  const off = (key: string, why: string): AuthKeepalive => {
    r.warn(key, `${why}; no keepalive`);
    return unpooled;
  };
  if (connections > MAX_AUTH_KEEPALIVE) return off('auth-keepalive', `at most ${MAX_AUTH_KEEPALIVE} (NGINX allocates every connection slot when it loads the configuration)`);
  if (host.includes('$')) return off('auth-keepalive', 'auth-url has a variable in its host');
  if (requests <= 0) return off('auth-keepalive-requests', 'must be greater than zero');
  if (timeout <= 0) return off('auth-keepalive-timeout', 'must be greater than zero');
  return { connections, requests, timeout, peerHost: host, peerPort: port };
}

function readAuthSnippet(r: AnnotationReader, settings: NginxSettings, policy: AddressPolicy | undefined): string {
  if (!settings.allowSnippetAnnotations && r.has('auth-snippet')) {
    r.warn('auth-snippet', 'snippet annotations are not allowed (ConfigMap allow-snippet-annotations is false); ignored');
    return '';
  }
  return warnIfHttp1Only(r, 'auth-snippet', r.get('auth-snippet', tenantSnippet(policy), ''), settings.useHttp2);
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Headers the auth location sets itself to frame its request: a ConfigMap may not set them. */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection']);
const MAX_PROXY_SET_HEADERS = 64;

/**
 * auth-proxy-set-headers: the header → value map of a ConfigMap; a string says why the location
 * is denied (a missing or foreign ConfigMap, an invalid name or value).
 */
function readProxySetHeaders(r: AnnotationReader, namespace: string, ctx: { settings: NginxSettings; store: { getConfigMap(key: string): ConfigMap | undefined } }): Record<string, string> | string {
  const ref = r.read('auth-proxy-set-headers', (raw) => {
    const key = secretRef(raw, namespace);
    if (key === undefined) throw new InvalidValue('must be `name` or `namespace/name` of a ConfigMap');
    return key;
  });
  if (ref.state === 'absent') return NO_HEADERS;
  if (ref.state === 'invalid') return ref.message;
  const fail = (message: string): string => {
    r.warn('auth-proxy-set-headers', `${message}; the location is denied`);
    return message;
  };
  const key = ref.value;
  if (key.slice(0, key.indexOf('/')) !== namespace && !ctx.settings.allowCrossNamespaceResources) {
    return fail(`ConfigMap ${key} is in another namespace and allow-cross-namespace-resources is false`);
  }
  const cm = ctx.store.getConfigMap(key);
  if (cm === undefined) return fail(`ConfigMap ${key} not found`);
  const entries = Object.entries(cm.data ?? {});
  if (entries.length > MAX_PROXY_SET_HEADERS) return fail(`ConfigMap ${key} has ${entries.length} headers (at most ${MAX_PROXY_SET_HEADERS})`);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    try {
      headerName(name);
      if (FRAMING_HEADERS.has(name.toLowerCase())) throw new InvalidValue('frames the auth request; the auth location sets it');
      headers[name] = safeStringWithVariables(typeof value === 'string' ? value : String(value));
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      return fail(`ConfigMap ${key} header "${preview(name)}": ${err.message}`);
    }
  }
  return headers;
}

/** The ConfigMap's global-auth-* keys as an auth configuration (one object per settings object), or null without global-auth-url. */
export function globalExternalAuth(s: NginxSettings): ExternalAuthConfig | null {
  if (s.globalAuthUrl === '') return null;
  let global = globalBySettings.get(s);
  if (global === undefined) {
    global = Object.freeze({
      url: s.globalAuthUrl,
      host: new URL(s.globalAuthUrl).hostname === AUTH_HOST_VARIABLE ? AUTH_HOST_VARIABLE : hostHeader(s.globalAuthUrl),
      method: s.globalAuthMethod,
      signin: s.globalAuthSignin,
      signinRedirectParam: s.globalAuthSigninRedirectParam,
      responseHeaders: Object.freeze([...s.globalAuthResponseHeaders]),
      cacheKey: s.globalAuthCacheKey,
      cacheDuration: Object.freeze([...s.globalAuthCacheDuration]),
      requestRedirect: s.globalAuthRequestRedirect,
      alwaysSetCookie: s.globalAuthAlwaysSetCookie,
      snippet: s.globalAuthSnippet,
      proxySetHeaders: NO_HEADERS,
      keepalive: null,
    });
    globalBySettings.set(s, global);
  }
  return global;
}

const globalBySettings = new WeakMap<NginxSettings, ExternalAuthConfig>();

const fields = { externalAuth: 'location' } as const;

export const authExternalGroup: AnnotationGroup<ExternalAuthValue, typeof fields> = {
  name: 'authexternal',
  keys,
  fields,
  configMaps: ['auth-proxy-set-headers'],
  perRequest: ({ externalAuth }) => (externalAuth === null ? null : 'auth-url needs an NGINX subrequest'),
  atLocation: {
    // no-auth-locations (default: ACME challenges) are open.
    externalAuth: (auth, site) => (auth && !pathUnderAny(site.path, site.settings.noAuthLocations) ? auth : null),
  },
  docs: {
    'auth-url': { values: 'http(s) URL (NGINX variables allowed; the host a name or `$host`)', default: 'none', description: "URL of the authentication service, asked by NGINX's auth_request (HTTP/1.1 and HTTP/2 clients alike); 2xx lets the request through. Its address is chosen in Lua under the upstream address policy: a literal address when the Ingress is read, every address a name (or `$host`) resolves to when the subrequest is made (refused: 500, with an error log line naming the location).", onInvalid: 'warning; the location is denied (503), also for an address the policy refuses' },
    'auth-signin': { values: 'http(s) URL (NGINX variables allowed)', default: "''", description: 'Where to send the client when the service answers 401.' },
    'auth-signin-redirect-param': { values: 'URL parameter name', default: "'' (rd)", description: 'Parameter of auth-signin carrying the original URL.' },
    'auth-response-headers': { values: 'comma-separated header names', default: "''", description: 'Headers of the auth response copied to the upstream request.', onInvalid: 'warning; the location is denied (503)' },
    'auth-method': { values: 'HTTP method', default: "'' (GET)", description: 'Method of the auth subrequest.', onInvalid: 'warning; the location is denied (503)' },
    'auth-cache-key': { values: 'NGINX variable expression', default: "'' (no cache)", description: 'Cache auth responses under this key.' },
    'auth-cache-duration': { values: 'comma-separated `[codes] time`', default: DEFAULT_AUTH_CACHE_DURATION.join(', '), description: 'How long auth responses are cached, per status.' },
    'auth-keepalive': { values: `integer 0..${MAX_AUTH_KEEPALIVE}`, default: '0 (a new connection per subrequest)', description: 'Idle connections to the auth service kept per worker. Not with $host in auth-url. As with any auth_request, a connection whose auth answer has a body is closed (nginx ticket 1579); answers without one (oauth2-proxy\'s 202) keep it.' },
    'auth-keepalive-requests': { values: 'integer ≥ 1', default: '1000', description: 'Requests per kept-alive connection.', onInvalid: 'warning; no keepalive' },
    'auth-keepalive-timeout': { values: 'seconds ≥ 1', default: '60', description: 'How long an idle kept-alive connection stays open.', onInvalid: 'warning; no keepalive' },
    'auth-keepalive-share-vars': { values: BOOL, default: 'false', description: "Checked, without effect: the auth subrequest (auth_request's) always shares the request's NGINX variables, as `true` does. ingress-nginx's kept-alive subrequest, which shares them only with `true`, refuses HTTP/2 requests." },
    'auth-proxy-set-headers': { values: '`name` or `namespace/name` of a ConfigMap (another namespace only with allow-cross-namespace-resources)', default: 'none', description: 'Headers (ConfigMap data: header → value, NGINX variables allowed) sent to the auth service.', onInvalid: 'warning; the location is denied (503) — also when the ConfigMap is missing or holds an invalid header' },
    'auth-request-redirect': { values: 'URL or path (NGINX variables allowed)', default: 'the request URI', description: 'Value of the X-Auth-Request-Redirect header sent to the auth service.' },
    'auth-always-set-cookie': { values: BOOL, default: 'false', description: "Pass the auth service's Set-Cookie on every answer, errors included (by default only on 2xx and 3xx)." },
    'auth-snippet': { values: 'NGINX directives', default: "''", description: 'Directives added to the auth subrequest location.', onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
    'enable-global-auth': { values: BOOL, default: 'true', description: 'Whether the ConfigMap global-auth-url protects the Ingress (it never does where the Ingress has auth-url).' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const target = r.read('auth-url', authUrl);
    if (target.state === 'absent') {
      for (const key of Object.keys(keys) as Array<keyof typeof keys>) {
        if (key !== 'enable-global-auth' && key !== 'auth-url' && r.has(key)) warn(key, 'ignored without auth-url');
      }
      const global = r.get('enable-global-auth', bool, true) ? globalExternalAuth(ctx.settings) : null;
      return { externalAuth: global, denied: null };
    }
    const deny = (reason: string) => ({ externalAuth: null, denied: reason });
    if (target.state === 'invalid') return deny(`annotation auth-url: ${target.message}`);
    const refused = refusedAuthPeer(target.value, ctx.addressPolicy ?? STRICT_ADDRESS_POLICY);
    if (refused !== null) {
      r.warn('auth-url', `${refused}; the locations answer 503`);
      return deny(`annotation auth-url: ${refused}`);
    }
    const method = r.read('auth-method', httpMethod);
    if (method.state === 'invalid') return deny(`annotation auth-method: ${method.message}`);
    const headers = r.read('auth-response-headers', headerNames);
    if (headers.state === 'invalid') return deny(`annotation auth-response-headers: ${headers.message}`);
    const proxySetHeaders = readProxySetHeaders(r, ing.metadata.namespace ?? 'default', ctx);
    if (typeof proxySetHeaders === 'string') return deny(`annotation auth-proxy-set-headers: ${proxySetHeaders}`);
    if (r.has('enable-global-auth')) r.warn('enable-global-auth', 'ignored: the Ingress has auth-url of its own');
    return {
      externalAuth: {
        url: target.value,
        host: new URL(target.value).hostname === AUTH_HOST_VARIABLE ? AUTH_HOST_VARIABLE : hostHeader(target.value),
        method: method.state === 'ok' ? method.value : '',
        signin: r.get('auth-signin', httpUrl, ''),
        signinRedirectParam: r.get('auth-signin-redirect-param', paramName, ''),
        responseHeaders: headers.state === 'ok' ? headers.value : [],
        cacheKey: r.get('auth-cache-key', cacheKey, ''),
        cacheDuration: r.get('auth-cache-duration', cacheDurations, [...DEFAULT_AUTH_CACHE_DURATION]),
        requestRedirect: r.get('auth-request-redirect', requestRedirect, ''),
        alwaysSetCookie: r.get('auth-always-set-cookie', bool, false),
        snippet: readAuthSnippet(r, ctx.settings, ctx.addressPolicy),
        proxySetHeaders,
        keepalive: readKeepalive(r, target.value),
      },
      denied: null,
    };
  },
};
