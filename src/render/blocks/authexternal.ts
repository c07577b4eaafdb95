// authexternal group: auth_request to an internal location per Ingress location that proxies a
// body-less subrequest to the auth service (optionally cached), copies chosen response headers
// upstream, passes the service's Set-Cookie to the client and sends a 401 to auth-signin.
import { AUTH_HOST_VARIABLE, type ExternalAuthConfig } from '../../model/annotations/authexternal.js';
import type { NginxSettings } from '../../model/config/settings.js';
import * as f from '../filters.js';
import { RenderError } from '../filters.js';
import { I, NONE, directives } from './layout.js';
import { modsecurityOff } from './modsecurity.js';
import type { LocationContext, RenderBlock, Shared } from './types.js';

const AUTH_CACHE = Object.freeze(['auth_cache'] as const);

const CACHE_VALID = /^((\d{3}|any)\s+)*(\d{1,19}(ms|s|m|h|d|w|M|y)?)+$/;

const authLocationName = (c: LocationContext): string => `/_external-auth-${c.id()}`;

/** The internal location that makes the subrequest. */
function authLocation(ea: ExternalAuthConfig, name: string, settings: NginxSettings): string {
  const target = f.url(ea.url, 'auth-url');
  let hostHeader = '$proxy_host';
  const hostVariable = ea.host === AUTH_HOST_VARIABLE;
  if (hostVariable) hostHeader = AUTH_HOST_VARIABLE;
  else if (ea.host) hostHeader = f.host(ea.host, 'auth-host');
  if (ea.method && !/^[A-Z]{1,20}$/.test(ea.method)) throw new RenderError('auth-method', `not an HTTP method: ${JSON.stringify(ea.method.slice(0, 50))}`);
  const b: string[] = [
    'internal',
    // As ingress-nginx: auth subrequests are logged (and counted in request metrics) only with enable-auth-access-log.
    ...(settings.enableAuthAccessLog ? [] : ['access_log off']),
    ...modsecurityOff(settings),
    'proxy_pass_request_body off',
    'proxy_set_header Content-Length ""',
    'proxy_set_header X-Forwarded-Proto ""',
    'proxy_set_header X-Request-ID $req_id',
    ...(ea.method ? [`proxy_method ${ea.method}`] : []),
    'proxy_set_header X-Original-URI $request_uri',
    'proxy_set_header X-Scheme $pass_access_scheme',
    'proxy_set_header X-Original-URL $scheme://$http_host$request_uri',
    'proxy_set_header X-Original-Method $request_method',
    'proxy_set_header X-Sent-From "nginx-ingress-controller"',
    'proxy_set_header X-Real-IP $remote_addr',
    'proxy_set_header X-Forwarded-For $full_x_forwarded_for',
    'proxy_set_header X-Auth-Request-Redirect $request_uri',
    `proxy_set_header Host ${hostHeader}`,
    'proxy_http_version 1.1',
    'proxy_pass_request_headers on',
  ];
  if (ea.cacheKey !== '') {
    // The key names the auth location (host and path), as ingress-nginx's does: one zone is shared
    // by every Ingress, and another host's cached 200 must not open this one. NGINX caches only
    // buffered responses.
    b.push('proxy_buffering on', 'proxy_cache auth_cache', `proxy_cache_key ${f.quoteWithVariables(`${name}:${ea.cacheKey}`, 'auth-cache-key')}`);
    for (const d of ea.cacheDuration.length ? ea.cacheDuration : ['200 202 401 5m']) {
      if (!CACHE_VALID.test(d)) throw new RenderError('auth-cache-duration', `invalid: ${JSON.stringify(d.slice(0, 50))}`);
      b.push(`proxy_cache_valid ${d.split(/\s+/).join(' ')}`);
    }
  }
  b.push(`set $target ${target}`);
  // proxy_pass with variables parses its URL per request, and `http://unix:/path:` names a
  // socket: whatever a variable holds, the subrequest never goes there.
  const guard = hostVariable ? `${I}if ($target ~* "^https?://unix:") {\n${I}    return 500;\n${I}}\n` : '';
  return `\n        location = ${f.path(name)} {\n${directives(b)}${guard}${I}proxy_pass $target;\n        }\n`;
}

/** The response headers copied upstream: the variable each is kept in, and the header. */
function responseHeaders(ea: ExternalAuthConfig): Array<{ var: string; upstreamVar: string; name: string }> {
  return ea.responseHeaders.map((h, i) => {
    const n = f.headerName(h, 'auth-response-headers');
    return { var: `authHeader${i}`, upstreamVar: n.toLowerCase().replace(/-/g, '_'), name: n };
  });
}

function signin(ea: ExternalAuthConfig): string {
  if (!ea.signin) return '';
  const param = ea.signinRedirectParam || 'rd';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(param)) throw new RenderError('auth-signin-redirect-param', 'invalid parameter name');
  const withRd = /[?&]rd=/.test(ea.signin) ? ea.signin : `${ea.signin}${ea.signin.includes('?') ? '&' : '?'}${param}=$pass_access_scheme://$http_host$escaped_request_uri`;
  return f.url(withRd, 'auth-signin');
}

function access(c: LocationContext, ea: ExternalAuthConfig): string {
  // The auth service's Set-Cookie reaches the client (oauth2-proxy refreshes its session so).
  const d = [`auth_request ${f.quoteLiteral(authLocationName(c))}`, 'auth_request_set $auth_cookie $upstream_http_set_cookie', 'add_header Set-Cookie $auth_cookie'];
  for (const h of responseHeaders(ea)) d.push(`auth_request_set $${h.var} $upstream_http_${h.upstreamVar}`, `${c.hdr} ${h.name} $${h.var}`);
  let out = directives(d);
  const url = signin(ea);
  if (url) out += `${I}set_by_lua_block $escaped_request_uri {\n${I}    return ngx.escape_uri(ngx.var.request_uri)\n${I}}\n${I}error_page 401 = ${url};\n`;
  return out;
}

export const authExternalBlock: RenderBlock = {
  group: 'authexternal',
  applied: 'directives',
  location: {
    access: (c) => (c.loc.externalAuth ? access(c, c.loc.externalAuth) : ''),
    headers: ({ loc }) => (loc.externalAuth && loc.externalAuth.responseHeaders.length > 0 ? {} : null),
    internal: (c): readonly Shared[] => {
      if (!c.loc.externalAuth) return NONE;
      const ea = c.loc.externalAuth;
      const name = authLocationName(c);
      return [{ name, text: () => authLocation(ea, name, c.settings) }];
    },
    uses: ({ loc }) => (loc.externalAuth && loc.externalAuth.cacheKey !== '' ? AUTH_CACHE : NONE),
  },
};
