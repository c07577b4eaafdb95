// authexternal group: auth_request to an internal location per Ingress location that proxies a
// body-less subrequest to the auth service (optionally cached), copies chosen response headers
// upstream, passes the service's Set-Cookie to the client and sends a 401 to auth-signin. A
// tenant's auth service is dialled through an upstream per location whose peer the auth
// location's rewrite phase chooses under the address policy (lua/external_auth.lua), keeping
// connections with auth-keepalive. auth_request serves HTTP/1.1 and HTTP/2 alike.
import { AUTH_HOST_VARIABLE, cacheKeyVariable, type AuthKeepalive, type ExternalAuthConfig } from '../../model/ingress/annotations/authexternal.js';
import type { NginxSettings } from '../../model/core/config/settings.js';
import * as f from '../filters.js';
import { RenderError } from '../filters.js';
import { escapedValue } from '../header-values.js';
import { I, NONE, directives } from './layout.js';
import { modsecurityOff } from './modsecurity.js';
import type { LocationContext, RenderBlock, Shared } from './types.js';

const AUTH_CACHE = Object.freeze(['auth_cache'] as const);

const CACHE_VALID = /^((\d{3}|any)\s+)*(\d{1,19}(ms|s|m|h|d|w|M|y)?)+$/;

/**
 * The internal auth location. Its name holds a space, which no Ingress path may
 * (src/model/core/paths.ts): another Ingress on the host cannot declare the same location and so make
 * NGINX refuse the configuration.
 */
const authLocationName = (c: LocationContext): string => `/_external-auth ${c.id()}`;
const keepaliveUpstreamName = (c: LocationContext): string => `auth_keepalive_${c.id()}`;

/** Headers the auth location frames its request with; a ConfigMap header of the same name replaces the line. */
function standardAuthHeaders(ea: ExternalAuthConfig, hostHeader: string, requestRedirect: string): Array<[string, string]> {
  return [
    ['Content-Length', '""'],
    ['X-Forwarded-Proto', '""'],
    ['X-Request-ID', '$req_id'],
    ['X-Original-URI', '$request_uri'],
    ['X-Scheme', '$pass_access_scheme'],
    ['X-Original-URL', '$scheme://$http_host$request_uri'],
    ['X-Original-Method', '$request_method'],
    ['X-Sent-From', '"nginx-ingress-controller"'],
    ['X-Real-IP', '$remote_addr'],
    ['X-Forwarded-For', '$full_x_forwarded_for'],
    ['X-Auth-Request-Redirect', requestRedirect],
    ['Host', hostHeader],
  ];
}

/**
 * The internal location that makes the subrequest; `upstream` names the kept-alive upstream.
 * `bodySize` is the protected location's proxy-body-size: NGINX checks the request's
 * Content-Length against the subrequest's location too, so a body the location takes would
 * otherwise fail the auth check (413, answered 500), as ingress-nginx's auth location repeats it.
 */
function authLocation(ea: ExternalAuthConfig, name: string, settings: NginxSettings, upstream: string | null, bodySize: string): string {
  const target = f.url(ea.url, 'auth-url');
  const hostVariable = ea.host === AUTH_HOST_VARIABLE;
  // Not $proxy_host: the subrequest shares the protected location's variables, where it names that location's upstream.
  const hostHeader = hostVariable ? AUTH_HOST_VARIABLE : ea.host ? f.host(ea.host, 'auth-host') : f.quoteLiteral(new URL(ea.url).host, 'auth-url');
  if (ea.method && !/^[A-Z]{1,20}$/.test(ea.method)) throw new RenderError('auth-method', `not an HTTP method: ${JSON.stringify(ea.method.slice(0, 50))}`);
  const own = new Set(Object.keys(ea.proxySetHeaders).map((h) => h.toLowerCase()));
  // Values with a variable a client fills ($uri, a header) are escaped before they reach the auth request (../header-values.ts).
  let setup = '';
  const escaped = (quoted: string, variable: string, place: 'header' | 'url'): string => {
    const e = escapedValue(quoted, variable, place);
    setup += e.setup;
    return e.value;
  };
  const requestRedirect = ea.requestRedirect ? escaped(f.quoteWithVariables(ea.requestRedirect, 'auth-request-redirect'), 'auth_request_redirect', 'header') : '$request_uri';
  const ownHeaders = Object.entries(ea.proxySetHeaders).map(([h, v], i) => `proxy_set_header ${f.headerName(h, 'auth-proxy-set-headers')} ${escaped(f.quoteWithVariables(v, `auth-proxy-set-headers[${h}]`), `auth_header_${i}`, 'header')}`);
  const targetValue = escapedValue(upstream ? keepaliveTarget(ea.url, upstream) : target, 'target', 'url');
  const b: string[] = [
    'internal',
    // As ingress-nginx: auth subrequests are logged (and counted in request metrics) only with enable-auth-access-log.
    ...(settings.enableAuthAccessLog ? [] : ['access_log off']),
    ...modsecurityOff(settings),
    ...(bodySize === settings.proxyBodySize ? [] : [`client_max_body_size ${f.size(bodySize, 'proxy-body-size')}`]),
    'proxy_pass_request_body off',
    ...standardAuthHeaders(ea, hostHeader, requestRedirect).filter(([h]) => !own.has(h.toLowerCase())).flatMap(([h, v]) => [
      ...(h === 'X-Original-URI' && ea.method ? [`proxy_method ${ea.method}`] : []),
      `proxy_set_header ${h} ${v}`,
    ]),
    ...ownHeaders,
    'proxy_http_version 1.1',
    'proxy_pass_request_headers on',
  ];
  if (upstream) {
    // Connections to the upstream are kept only for HTTP/1.1 without `Connection: close`.
    if (ea.keepalive!.connections > 0) b.push('proxy_set_header Connection ""');
    b.push(`proxy_ssl_name ${hostVariable ? AUTH_HOST_VARIABLE : f.quoteLiteral(new URL(ea.url).hostname, 'auth-url')}`);
  }
  if (ea.cacheKey !== '') {
    // The key names the auth location (host and path), as ingress-nginx's does: one zone is shared
    // by every Ingress, and another host's cached 200 must not open this one. NGINX caches only
    // buffered responses.
    b.push('proxy_buffering on', 'proxy_cache auth_cache', `proxy_cache_key ${f.quoteWithVariables(`${name}:${ea.cacheKey}`, 'auth-cache-key', {}, cacheKeyVariable)}`);
    for (const d of ea.cacheDuration.length ? ea.cacheDuration : ['200 202 401 5m']) {
      if (!CACHE_VALID.test(d)) throw new RenderError('auth-cache-duration', `invalid: ${JSON.stringify(d.slice(0, 50))}`);
      b.push(`proxy_cache_valid ${d.split(/\s+/).join(' ')}`);
    }
  }
  const snippet = ea.snippet === '' ? '' : `${I}# auth-snippet\n${I}${f.snippet(ea.snippet, 'auth-snippet').split('\n        ').join(`\n${I}`)}\n`;
  const setTarget = targetValue.setup || directives([`set $target ${targetValue.value}`]);
  // proxy_pass with variables parses its URL per request, and `http://unix:/path:` names a
  // socket: whatever a variable holds, the subrequest never goes there.
  const guard = hostVariable ? `${I}if ($target ~* "^https?://unix:") {\n${I}    return 500;\n${I}}\n` : '';
  const peer = ea.keepalive ? peerChoice(name, ea.keepalive) : '';
  return `\n        location = ${f.quoteLiteral(name, 'auth-url')} {\n${directives(b)}${setup}${snippet}${setTarget}${guard}${peer}${I}proxy_pass $target;\n        }\n`;
}

/** The rewrite phase of the auth subrequest choosing the auth service's address under the address policy. */
function peerChoice(name: string, ka: AuthKeepalive): string {
  const host = ka.peerHost === AUTH_HOST_VARIABLE ? 'host_from_request = true' : `host = ${f.luaString(ka.peerHost, 'auth-url')}`;
  return `${I}rewrite_by_lua_block {\n${I}    require("external_auth").choose_peer(${f.luaString(name, 'auth-url')}, { ${host}, port = ${f.num(ka.peerPort, 'auth-url')} })\n${I}}\n`;
}

/** The auth URL with its host and port replaced by the kept-alive upstream's name (NGINX finds the upstream by that name). */
function keepaliveTarget(authUrl: string, upstream: string): string {
  const m = /^(https?):\/\/[^/?#]+(.*)$/i.exec(authUrl);
  if (!m) throw new RenderError('auth-url', 'not an http(s) URL');
  return f.url(`${m[1]!.toLowerCase()}://${upstream}${m[2]}`, 'auth-url');
}

function keepaliveUpstream(ka: AuthKeepalive, name: string): string {
  const pool = ka.connections === 0 ? ''
    : `        keepalive ${f.num(ka.connections, 'auth-keepalive')};\n        keepalive_requests ${f.num(ka.requests, 'auth-keepalive-requests')};\n`
      + `        keepalive_timeout ${f.num(ka.timeout, 'auth-keepalive-timeout')}s;\n`;
  return `    upstream ${name} {\n        server 0.0.0.1; # placeholder: the peer was chosen under the address policy before the subrequest\n`
    + `        balancer_by_lua_block {\n            require("external_peer").balance()\n        }\n${pool}    }\n`;
}

/** The response headers copied upstream: the variable each is kept in, and the header. */
function responseHeaders(ea: ExternalAuthConfig): Array<{ var: string; upstreamVar: string; name: string }> {
  return ea.responseHeaders.map((h, i) => {
    const n = f.headerName(h, 'auth-response-headers');
    return { var: `authHeader${i}`, upstreamVar: n.toLowerCase().replace(/-/g, '_'), name: n };
  });
}

/**
 * Where a 401 sends the client: auth-signin with `rd=` the request's own URL, naming the validated
 * host (never the raw Host header) and the escaped URI; a variable a client fills in auth-signin
 * itself is escaped first (../header-values.ts).
 */
function signin(ea: ExternalAuthConfig): { setup: string; value: string } | null {
  if (!ea.signin) return null;
  const param = ea.signinRedirectParam || 'rd';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(param)) throw new RenderError('auth-signin-redirect-param', 'invalid parameter name');
  const withRd = /[?&]rd=/.test(ea.signin) ? ea.signin : `${ea.signin}${ea.signin.includes('?') ? '&' : '?'}${param}=$pass_access_scheme://$redirect_http_host$escaped_request_uri`;
  return escapedValue(f.redirectUrl(withRd, 'auth-signin'), 'auth_signin', 'header');
}

function access(c: LocationContext, ea: ExternalAuthConfig): string {
  // The auth service's Set-Cookie reaches the client (oauth2-proxy refreshes its session so);
  // by default only on the answers add_header covers (2xx, 3xx), with always-set-cookie on all.
  const d = [
    `auth_request ${f.quoteLiteral(authLocationName(c))}`,
    'auth_request_set $auth_cookie $upstream_http_set_cookie',
    `add_header Set-Cookie $auth_cookie${ea.alwaysSetCookie ? ' always' : ''}`,
  ];
  for (const h of responseHeaders(ea)) d.push(`auth_request_set $${h.var} $upstream_http_${h.upstreamVar}`, `${c.hdr} ${h.name} $${h.var}`);
  let out = directives(d);
  const url = signin(ea);
  if (url) out += `${I}set_by_lua_block $escaped_request_uri {\n${I}    return ngx.escape_uri(ngx.var.request_uri)\n${I}}\n${url.setup}${I}error_page 401 = ${url.value};\n`;
  return out;
}

export const authExternalBlock: RenderBlock = {
  group: 'authexternal',
  applied: 'directives',
  location: {
    access: (c) => (c.loc.settings.externalAuth ? access(c, c.loc.settings.externalAuth) : ''),
    headers: ({ loc }) => (loc.settings.externalAuth && loc.settings.externalAuth.responseHeaders.length > 0 ? {} : null),
    internal: (c): readonly Shared[] => {
      if (!c.loc.settings.externalAuth) return NONE;
      const ea = c.loc.settings.externalAuth;
      const name = authLocationName(c);
      const upstream = ea.keepalive ? keepaliveUpstreamName(c) : null;
      return [{ name, text: () => authLocation(ea, name, c.settings, upstream, c.loc.settings.proxy.bodySize) }];
    },
    http: (c): readonly Shared[] => {
      const ka = c.loc.settings.externalAuth?.keepalive;
      if (!ka) return NONE;
      const name = keepaliveUpstreamName(c);
      return [{ name, text: () => keepaliveUpstream(ka, name) }];
    },
    uses: ({ loc }) => (loc.settings.externalAuth && loc.settings.externalAuth.cacheKey !== '' ? AUTH_CACHE : NONE),
  },
};
