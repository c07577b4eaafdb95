// Turns model objects into the small view objects the templates lay out: location matchers,
// per-location directive strings that differ from the http-level defaults, auth and error
// locations, rate-limit zones. Everything printed from here goes through a filter.
import { createHash } from 'node:crypto';
import type { Backend, CorsConfig, Endpoint, IngressRef, Location, Server, L4Service } from '../model/types.js';
import type { NginxSettings } from '../model/config/settings.js';
import { sortShort } from '../model/sort.js';
import { authFilePath, passthroughSocketPath, type NginxRuntime } from './runtime.js';
import { modsecurityLocation, modsecurityOff } from './modsecurity.js';
import * as f from './filters.js';
import { RenderError, listenAddress } from './filters.js';
import { AUTH_HOST_VARIABLE } from '../model/annotations/authexternal.js';
import { metricsAccessLog } from './metrics-log.js';

/**
 * One `location` block. liquidjs costs a few microseconds per output node, so the directive
 * groups are built here as dense strings (every value through a filter) and locationText lays
 * them out.
 */
export interface LocationView {
  matcher: string;
  loc: Location;
  denied: boolean;
  deniedReason: string;
  /** `set $namespace ...` … `set $proxy_alternative_upstream_name ""`. */
  variables: string;
  /** permanent/temporal redirect `return`, app-root. */
  redirect: string;
  /** The rewrite_by_lua phase (the Lua wiring contract). */
  luaPhases: string;
  /** access_log, allow/deny, rate limits, basic and external auth. */
  access: string;
  corsOriginRegex: string | null;
  /** custom-http-errors and rewrite-target. */
  errors: string;
  /** The standard proxy headers, upstream-vhost, x-forwarded-prefix, proxy-set-headers. */
  headers: string;
  /** Proxy directives that differ from the http-level defaults. */
  proxy: string;
  snippet: string;
  /** The pass directive without `;`. */
  pass: string;
  errorBackendId: string;
}

export interface ServerView {
  server: Server;
  /** The host and its aliases (the `## start server` marker). */
  names: string;
  /** What server_name lists: `names`, with a wildcard host as a one-label regex. */
  serverName: string;
  listen: string[];
  blockUserAgents: boolean;
  blockReferers: boolean;
  locations: LocationView[];
  /**
   * The parts of the server block as dense strings: liquidjs costs microseconds per output
   * node, which at 10k servers is most of a full render, so server.liquid prints a few of them.
   */
  listenText: string;
  /**
   * header_filter_by_lua, once per server: every location that defines none inherits it. Left
   * out when the server-snippet sets its own (NGINX refuses duplicates).
   */
  luaPhases: string;
  /** The block-cidrs, block-user-agents and block-referers guards. */
  guards: string;
  /** The server-snippet, through its filter. */
  snippet: string;
  /** The location blocks, laid out (see locationText). */
  locationsText: string;
  /** Internal locations (external auth, custom errors). */
  extra: string;
  /** The from-to-www redirect server, printed after this one. */
  redirectServer: string;
  /** Directives this server needs at http level (rate-limit zones). */
  httpLevel: string;
  /** Whether a location uses the external-auth cache. */
  authCache: boolean;
  /** Values the renderer refused: each denied or left out its location. */
  problems: RenderProblem[];
}

/**
 * A value the renderer could not express, and what became of it: the location answers 503 or is
 * left out, or the whole server is left out. It names the Ingresses concerned.
 */
export interface RenderProblem {
  ingresses: IngressRef[];
  host: string;
  path?: string;
  /** The field (annotation, `path`, …) the renderer refused. */
  field: string;
  message: string;
  outcome: 'location denied (503)' | 'location left out' | 'server-snippet left out' | 'server left out';
}

export interface ServerContext {
  settings: NginxSettings;
  runtime: NginxRuntime;
  /** The host to redirect to when this server has from-to-www and the other name is not a server. */
  wwwRedirectFrom: string | null;
  /** ssl-passthrough is in effect: HTTPS arrives from the SNI stream server on 127.0.0.1:proxyPort. */
  passthroughPort?: number;
}

const I = '            '; // location body indent

export function shortId(...parts: string[]): string {
  return createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 12);
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The location's match: one per model location (the model made the Prefix split's twins). */
function matcher(server: Server, loc: Location): string {
  const field = 'path';
  if (loc.pathType === 'Exact') {
    // NGINX answers `/p` with a 301 to `/p/` when a proxied location is named `/p/`, exact or
    // not; the spec says Exact `/p/` does not match `/p`, which a regex location does not do.
    const exact = f.path(loc.path, field);
    if (loc.path.length > 1 && loc.path.endsWith('/')) return `~ ${f.regex(`^${escapeRegex(loc.path)}$`, field)}`;
    return `= ${exact}`;
  }
  if (server.useRegex) return `~* ${f.regex(`^${loc.path}`, field)}`;
  return f.path(loc.path, field);
}

function passDirective(loc: Location): { pass: string; hdr: string } {
  switch (loc.backendProtocol) {
    case 'HTTPS': return { pass: 'proxy_pass https://upstream_balancer', hdr: 'proxy_set_header' };
    case 'GRPC': return { pass: 'grpc_pass grpc://upstream_balancer', hdr: 'grpc_set_header' };
    case 'GRPCS': return { pass: 'grpc_pass grpcs://upstream_balancer', hdr: 'grpc_set_header' };
    // As ingress-nginx: the scheme of the request (an upstream name works in a variable proxy_pass).
    case 'AUTO_HTTP': return { pass: 'proxy_pass $scheme://upstream_balancer', hdr: 'proxy_set_header' };
    case 'FCGI': return { pass: 'include /etc/nginx/fastcgi_params;\n' + `${I}fastcgi_pass upstream_balancer`, hdr: 'proxy_set_header' };
    default: return { pass: 'proxy_pass http://upstream_balancer', hdr: 'proxy_set_header' };
  }
}

const NEXT_UPSTREAM = new Set(['error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504', 'http_403', 'http_404', 'http_429', 'non_idempotent', 'off']);

export function nextUpstream(values: string[], field: string): string {
  if (values.length === 0) throw new RenderError(field, 'empty');
  for (const v of values) if (!NEXT_UPSTREAM.has(v)) throw new RenderError(field, `unknown value ${JSON.stringify(v.slice(0, 50))}`);
  return values.join(' ');
}

/** Proxy directives where the location differs from the ConfigMap defaults set at http level. */
function proxyDirectives(loc: Location, s: NginxSettings): string {
  const p = loc.proxy;
  const grpc = loc.backendProtocol === 'GRPC' || loc.backendProtocol === 'GRPCS';
  const out: string[] = [];
  const px = grpc ? 'grpc' : 'proxy';
  if (grpc || p.connectTimeout !== s.proxyConnectTimeout) out.push(`${px}_connect_timeout ${f.duration(p.connectTimeout, 'proxy-connect-timeout')}`);
  if (grpc || p.sendTimeout !== s.proxySendTimeout) out.push(`${px}_send_timeout ${f.duration(p.sendTimeout, 'proxy-send-timeout')}`);
  if (grpc || p.readTimeout !== s.proxyReadTimeout) out.push(`${px}_read_timeout ${f.duration(p.readTimeout, 'proxy-read-timeout')}`);
  if (p.bodySize !== s.proxyBodySize) out.push(`client_max_body_size ${f.size(p.bodySize, 'proxy-body-size')}`);
  if (p.clientBodyBufferSize !== s.clientBodyBufferSize) out.push(`client_body_buffer_size ${f.size(p.clientBodyBufferSize, 'client-body-buffer-size')}`);
  if (p.bufferSize !== s.proxyBufferSize || p.buffersNumber !== s.proxyBuffersNumber) {
    out.push(`${px}_buffer_size ${f.size(p.bufferSize, 'proxy-buffer-size')}`, `${px}_buffers ${f.num(p.buffersNumber, 'proxy-buffers-number')} ${f.size(p.bufferSize, 'proxy-buffer-size')}`);
  }
  if (p.buffering !== s.proxyBuffering) out.push(`proxy_buffering ${f.onoff(p.buffering, 'proxy-buffering')}`);
  if (p.requestBuffering !== s.proxyRequestBuffering) out.push(`proxy_request_buffering ${f.onoff(p.requestBuffering, 'proxy-request-buffering')}`);
  if (p.httpVersion !== s.proxyHttpVersion) out.push(`proxy_http_version ${f.httpVersion(p.httpVersion, 'proxy-http-version')}`);
  if (p.nextUpstream.join(' ') !== s.proxyNextUpstream.join(' ')) out.push(`${px}_next_upstream ${nextUpstream(p.nextUpstream, 'proxy-next-upstream')}`);
  if (p.nextUpstreamTimeout !== s.proxyNextUpstreamTimeout) out.push(`${px}_next_upstream_timeout ${f.duration(p.nextUpstreamTimeout, 'proxy-next-upstream-timeout')}`);
  if (p.nextUpstreamTries !== s.proxyNextUpstreamTries) out.push(`${px}_next_upstream_tries ${f.num(p.nextUpstreamTries, 'proxy-next-upstream-tries')}`);
  return out.map((d) => `${I}${d};\n`).join('');
}

function rateLimit(loc: Location, id: string): { limits: string; zones: string } {
  const rl = loc.rateLimit;
  if (!rl) return { limits: '', zones: '' };
  const zone = `rl_${id}`;
  let key = '$binary_remote_addr';
  let zones = '';
  if (rl.allowlist.length > 0) {
    key = `$${zone}_key`;
    zones += `    geo $${zone}_allowed {\n        default 0;\n${rl.allowlist.map((c) => `        ${f.cidr(c, 'limit-whitelist')} 1;\n`).join('')}    }\n`;
    zones += `    map $${zone}_allowed ${key} {\n        0 $binary_remote_addr;\n        1 "";\n    }\n`;
  }
  const mult = Math.max(1, Math.floor(rl.burstMultiplier || 1));
  const lines: string[] = [];
  if (rl.connections > 0) {
    zones += `    limit_conn_zone ${key} zone=${zone}_conn:5m;\n`;
    lines.push(`limit_conn ${zone}_conn ${f.num(rl.connections, 'limit-connections')}`);
  }
  if (rl.rps > 0) {
    zones += `    limit_req_zone ${key} zone=${zone}_rps:5m rate=${f.num(rl.rps, 'limit-rps')}r/s;\n`;
    lines.push(`limit_req zone=${zone}_rps burst=${f.num(rl.rps * mult, 'limit-burst-multiplier')} nodelay`);
  }
  if (rl.rpm > 0) {
    zones += `    limit_req_zone ${key} zone=${zone}_rpm:5m rate=${f.num(rl.rpm, 'limit-rpm')}r/m;\n`;
    lines.push(`limit_req zone=${zone}_rpm burst=${f.num(rl.rpm * mult, 'limit-burst-multiplier')} nodelay`);
  }
  if (rl.limitRateAfter > 0) lines.push(`limit_rate_after ${f.num(rl.limitRateAfter, 'limit-rate-after')}k`);
  if (rl.limitRate > 0) lines.push(`limit_rate ${f.num(rl.limitRate, 'limit-rate')}k`);
  return { limits: lines.map((d) => `${I}${d};\n`).join(''), zones };
}

const CACHE_VALID = /^((\d{3}|any)\s+)*(\d{1,19}(ms|s|m|h|d|w|M|y)?)+$/;

interface ExternalAuthView {
  location: string;
  headers: { var: string; upstreamVar: string; name: string }[];
  signin: string;
}

function externalAuth(loc: Location, id: string, accessLog: boolean, internalExtra: readonly string[]): { view: ExternalAuthView | null; block: string; cache: boolean } {
  const ea = loc.externalAuth;
  if (!ea) return { view: null, block: '', cache: false };
  const name = `/_external-auth-${id}`;
  const target = f.url(ea.url, 'auth-url');
  let hostHeader = '$proxy_host';
  const hostVariable = ea.host === AUTH_HOST_VARIABLE;
  if (hostVariable) hostHeader = AUTH_HOST_VARIABLE;
  else if (ea.host) hostHeader = f.host(ea.host, 'auth-host');
  if (ea.method && !/^[A-Z]{1,20}$/.test(ea.method)) throw new RenderError('auth-method', `not an HTTP method: ${JSON.stringify(ea.method.slice(0, 50))}`);
  const cache = ea.cacheKey !== '';
  const b: string[] = [
    'internal',
    // As ingress-nginx: auth subrequests are logged (and counted in request metrics) only with enable-auth-access-log.
    ...(accessLog ? [] : ['access_log off']),
    ...internalExtra,
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
  if (cache) {
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
  const block = `\n        location = ${f.path(name)} {\n${b.map((d) => `${I}${d};\n`).join('')}${guard}${I}proxy_pass $target;\n        }\n`;
  const headers = ea.responseHeaders.map((h, i) => {
    const n = f.headerName(h, 'auth-response-headers');
    return { var: `authHeader${i}`, upstreamVar: n.toLowerCase().replace(/-/g, '_'), name: n };
  });
  let signin = '';
  if (ea.signin) {
    const param = ea.signinRedirectParam || 'rd';
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(param)) throw new RenderError('auth-signin-redirect-param', 'invalid parameter name');
    const withRd = /[?&]rd=/.test(ea.signin) ? ea.signin : `${ea.signin}${ea.signin.includes('?') ? '&' : '?'}${param}=$pass_access_scheme://$http_host$escaped_request_uri`;
    signin = f.url(withRd, 'auth-signin');
  }
  return { view: { location: name, headers, signin }, block, cache };
}

function customErrorLocations(loc: Location, backendId: string, seen: Set<string>, internalExtra: readonly string[]): string {
  let out = '';
  const backend = loc.defaultBackend ?? 'upstream-default-backend';
  for (const code of loc.customHttpErrors) {
    const name = `@custom_${backendId}_${f.num(code, 'custom-http-errors')}`;
    if (seen.has(name)) continue;
    seen.add(name);
    const b = [
      'internal',
      ...internalExtra,
      'proxy_intercept_errors off',
      `proxy_set_header X-Code ${code}`,
      'proxy_set_header X-Format $http_accept',
      'proxy_set_header X-Original-URI $request_uri',
      'proxy_set_header X-Namespace $namespace',
      'proxy_set_header X-Ingress-Name $ingress_name',
      'proxy_set_header X-Service-Name $service_name',
      'proxy_set_header X-Service-Port $service_port',
      'proxy_set_header X-Request-ID $req_id',
      'proxy_set_header Host $best_http_host',
      `set $proxy_upstream_name ${f.quote(backend, 'default-backend')}`,
      'rewrite (.*) / break',
      'proxy_pass http://upstream_balancer',
    ];
    out += `\n        location ${name} {\n${b.map((d) => `${I}${d};\n`).join('')}${I}rewrite_by_lua_block {\n${I}    balancer.rewrite(${f.luaString(backend, 'default-backend')})\n${I}}\n        }\n`;
  }
  return out;
}

function corsOriginRegex(origins: string[]): string | null {
  if (origins.length === 0 || origins.includes('*')) return null;
  const alts = origins.map((o) => {
    // Any scheme, as ingress-nginx allows (`file://x`); the parser gave scheme://host[:port].
    if (!/^[a-z][a-z0-9+.-]{0,15}:\/\/[A-Za-z0-9.*:-]+\/?$/.test(o)) throw new RenderError('cors-allow-origin', `not scheme://host[:port]: ${JSON.stringify(o.slice(0, 100))}`);
    // `https://*.example.com` allows one sub-domain level, as ingress-nginx does.
    return escapeRegex(o.replace(/\/$/, '')).replace('\\*\\.', '[A-Za-z0-9-]+\\.');
  });
  return f.regex(`^(${alts.join('|')})$`, 'cors-allow-origin');
}

const lines = (ds: string[]): string => ds.map((d) => `${I}${d};\n`).join('');

/**
 * The request's $host as a Lua literal when the server block has one exact name (so $host is
 * that name), else '': the Lua then reads the variable.
 */
function knownHost(server: Server): string {
  return server.hostname === '_' || server.hostname.startsWith('*') || server.aliases.length > 0 ? '' : f.luaString(f.host(server.hostname), 'host');
}

/**
 * The rewrite phase, run for every proxied request, so it carries what the model knows as
 * constants: the SSL redirect only where the location has one (its settings as words, see
 * lua/lua_ingress.lua) and the server's host, and the backend name unless a
 * configuration-snippet could `set` another $proxy_upstream_name. header_filter_by_lua is set
 * once per server (ServerView.luaPhases) and inherited by every location that defines none.
 */
function luaPhases(loc: Location, host: string): string {
  const rw = loc.rewrite;
  const flags: string[] = [];
  if (f.luaBool(rw.forceSSLRedirect, 'force-ssl-redirect') === 'true') flags.push('force-ssl-redirect');
  if (f.luaBool(rw.sslRedirect, 'ssl-redirect') === 'true') flags.push('ssl-redirect');
  if (flags.length > 0 && f.luaBool(rw.preserveTrailingSlash, 'preserve-trailing-slash') === 'true') flags.push('preserve-trailing-slash');
  const redirect = flags.length > 0 ? `${I}    lua_ingress.rewrite(${f.luaString(flags.join(' '))}${host ? `, ${host}` : ''})\n` : '';
  let args = loc.configurationSnippet === '' ? f.luaString(loc.backend, 'backend') : 'nil';
  // default-backend: where the request goes while the backend has no endpoint (decided per request).
  if (loc.defaultBackend) args += `, ${f.luaString(loc.defaultBackend, 'default-backend')}`;
  else if (args === 'nil') args = '';
  return `${I}rewrite_by_lua_block {\n${redirect}${I}    balancer.rewrite(${args})\n${I}}\n`;
}

/**
 * The proxy headers every location sends, also set once at http level. NGINX inherits
 * proxy_set_header only into a location that defines none, so a location that adds a header of
 * its own prints this whole set again.
 */
export function standardHeaders(s: NginxSettings, hdr: string, host = '$best_http_host', connection = '$connection_upgrade'): string[] {
  return [
    `${hdr} Host ${host}`,
    `${hdr} Upgrade $http_upgrade`,
    `${hdr} Connection ${connection}`,
    `${hdr} X-Request-ID $req_id`,
    `${hdr} X-Real-IP $remote_addr`,
    `${hdr} ${f.headerName(s.forwardedForHeader, 'forwarded-for-header')} $full_x_forwarded_for`,
    `${hdr} X-Forwarded-Host $best_http_host`,
    `${hdr} X-Forwarded-Port $pass_port`,
    `${hdr} X-Forwarded-Proto $pass_access_scheme`,
    `${hdr} X-Forwarded-Scheme $pass_access_scheme`,
    `${hdr} X-Scheme $pass_access_scheme`,
    ...(s.proxyAddOriginalUriHeader ? [`${hdr} X-Original-URI $request_uri`] : []),
    // What the client sent, passed on as ingress-nginx does (empty: not sent).
    `${hdr} X-Original-Forwarded-For $http_${f.headerName(s.forwardedForHeader, 'forwarded-for-header').toLowerCase().replace(/-/g, '_')}`,
    `${hdr} X-Original-Forwarded-Host $http_x_forwarded_host`,
    `${hdr} Proxy ""`,
    ...Object.entries(s.proxySetHeaders).map(([k, v]) => `${hdr} ${f.headerName(k, 'proxy-set-headers')} ${f.quoteWithVariables(v, `proxy-set-headers[${k}]`)}`),
  ];
}

/** The http-level block of standard proxy headers (see standardHeaders). */
export function httpProxyHeaders(s: NginxSettings): string {
  return standardHeaders(s, 'proxy_set_header').map((d) => `    ${d};\n`).join('');
}

// No log_by_lua: the EWMA learns in the header filter (see lua/balancer.lua).
const serverLua = (host: string) => `        header_filter_by_lua_block {\n            balancer.header_filter()\n            lua_ingress.header(${host})\n        }\n`;
const SERVER_LUA_PHASES = /\bheader_filter_by_lua/;

/** A snippet that may set proxy headers itself (directly or through an include). */
const SETS_HEADERS = /\b(proxy_set_header|grpc_set_header|include)\b/;

function locationView(server: Server, loc: Location, matcher: string, ctx: ServerContext, id: string, host: string): { view: LocationView; extra: string; zones: string; cache: boolean } {
  const { pass, hdr } = passDirective(loc);
  const denied = loc.denied !== null || loc.basicAuth?.type === 'digest';
  const rl = rateLimit(loc, id);
  const ea = denied ? { view: null, block: '', cache: false } : externalAuth(loc, id, ctx.settings.enableAuthAccessLog, modsecurityOff(ctx.settings));
  const backendId = (loc.defaultBackend ?? 'upstream-default-backend').replace(/[^A-Za-z0-9_-]/g, '_');

  const variables = `${I}set $namespace ${f.quote(loc.ingress?.namespace ?? '', 'namespace')};\n`
    + `${I}set $ingress_name ${f.quote(loc.ingress?.name ?? '', 'ingress name')};\n`
    + `${I}set $service_name ${f.quote(loc.service?.name ?? '', 'service name')};\n`
    + `${I}set $service_port ${f.quote(loc.service?.port ?? '', 'service port')};\n`
    // The request metrics' path label: the Ingress rule's path, empty for the built-in default backend (as ingress-nginx).
    + `${I}set $location_path ${f.quote(loc.ingress ? loc.ingressPath ?? loc.path : '', 'path')};\n`
    + `${I}set $proxy_upstream_name ${f.quote(loc.backend, 'backend')};\n`
    + `${I}set $proxy_alternative_upstream_name "";\n`;

  let redirect = '';
  if (loc.redirect) redirect += lines([`return ${f.num(loc.redirect.code, 'redirect code')} ${f.redirectTarget(loc.redirect.url, 'permanent-redirect')}`]);
  if (loc.rewrite.appRoot !== '') redirect += `${I}if ($uri = /) {\n${I}    return 302 ${f.appRoot(loc.rewrite.appRoot, 'app-root')};\n${I}}\n`;

  const access: string[] = [];
  // `access_log off` would stop the metrics log too: such a location keeps only that one.
  if (!loc.accessLog) access.push(ctx.runtime.metricsLog ? metricsAccessLog(ctx.runtime.metricsLog) : 'access_log off');
  // The denylist first, as ingress-nginx: NGINX takes the first rule that matches.
  for (const c of loc.denylist) access.push(`deny ${f.cidr(c, 'denylist-source-range')}`);
  for (const c of loc.allowlist) access.push(`allow ${f.cidr(c, 'whitelist-source-range')}`);
  if (loc.allowlist.length > 0) access.push('deny all');
  let accessText = lines(access) + rl.limits + modsecurityLocation(loc, ctx.settings, ctx.runtime, I);
  if (loc.basicAuth && !denied) {
    accessText += lines([`auth_basic ${f.quote(loc.basicAuth.realm, 'auth-realm')}`, `auth_basic_user_file ${f.quoteLiteral(authFilePath(ctx.runtime, loc.basicAuth.secret), 'auth-secret')}`]);
  }
  if (ea.view) {
    // The auth service's Set-Cookie reaches the client (oauth2-proxy refreshes its session so).
    const d = [`auth_request ${f.quoteLiteral(ea.view.location)}`, 'auth_request_set $auth_cookie $upstream_http_set_cookie', 'add_header Set-Cookie $auth_cookie'];
    for (const h of ea.view.headers) d.push(`auth_request_set $${h.var} $upstream_http_${h.upstreamVar}`, `${hdr} ${h.name} $${h.var}`);
    accessText += lines(d);
    if (ea.view.signin) {
      accessText += `${I}set_by_lua_block $escaped_request_uri {\n${I}    return ngx.escape_uri(ngx.var.request_uri)\n${I}}\n${I}error_page 401 = ${ea.view.signin};\n`;
    }
  }

  const errors: string[] = [];
  if (loc.customHttpErrors.length > 0) {
    errors.push('proxy_intercept_errors on');
    for (const code of loc.customHttpErrors) errors.push(`error_page ${f.num(code, 'custom-http-errors')} = @custom_${backendId}_${code}`);
  }
  if (loc.rewrite.target !== '') {
    const re = f.regex(server.useRegex ? `(?i)${loc.path}` : `(?i)^${escapeRegex(loc.path)}`, 'path');
    errors.push(`rewrite ${re} ${f.rewriteTarget(loc.rewrite.target, 'rewrite-target')} break`);
  }

  const s = ctx.settings;
  // Own headers (or a snippet/server-snippet that may set some) stop NGINX from inheriting the
  // http-level set, so such a location prints the full set.
  // Basic auth keeps the client's credentials from the backend, as ingress-nginx does.
  const basicAuth = loc.basicAuth !== null && !denied;
  const ownHeaders = hdr !== 'proxy_set_header' || loc.rewrite.xForwardedPrefix !== '' || loc.upstreamVhost !== '' || loc.connectionHeader !== ''
    || basicAuth || (ea.view !== null && ea.view.headers.length > 0) || SETS_HEADERS.test(loc.configurationSnippet) || SETS_HEADERS.test(server.serverSnippet);
  const headers = ownHeaders ? [
    ...(loc.rewrite.xForwardedPrefix !== '' ? [`${hdr} X-Forwarded-Prefix ${f.quote(loc.rewrite.xForwardedPrefix, 'x-forwarded-prefix')}`] : []),
    ...(basicAuth ? [`${hdr} Authorization ""`] : []),
    ...standardHeaders(s, hdr,
      loc.upstreamVhost !== '' ? f.quote(loc.upstreamVhost, 'upstream-vhost') : '$best_http_host',
      loc.connectionHeader !== '' ? f.quote(loc.connectionHeader, 'connection-proxy-header') : '$connection_upgrade'),
  ] : [];

  const view: LocationView = {
    matcher,
    loc,
    denied,
    deniedReason: f.comment(loc.denied ?? 'auth-type digest is not supported'),
    variables,
    redirect,
    luaPhases: luaPhases(loc, host),
    access: accessText,
    corsOriginRegex: loc.cors ? corsOf(loc.cors).regex : null,
    errors: lines(errors),
    headers: headers.length ? `\n${lines(headers)}` : '',
    proxy: proxyDirectives(loc, s),
    snippet: loc.configurationSnippet !== '' ? `${I}# configuration-snippet\n${I}${f.snippet(loc.configurationSnippet, 'configuration-snippet').split('\n        ').join(`\n${I}`)}\n` : '',
    pass,
    errorBackendId: backendId,
  };
  return { view, extra: ea.block, zones: rl.zones, cache: ea.cache };
}

/**
 * A wildcard host (`*.foo.com`, already through the host filter) as a server_name regex that
 * covers exactly one DNS label, as the Ingress spec says and ingress-nginx renders it (NGINX's
 * own `*.foo.com` would also match `a.b.foo.com`). `$subdomain` holds the label.
 */
function wildcardServerName(host: string): string {
  return `"~^(?<subdomain>[\\w-]+)${host.slice(1).replace(/\./g, '\\.')}$"`;
}

/** Builds the view of one server; errors name the server and the location. */
export function serverView(server: Server, ctx: ServerContext): ServerView {
  const s = ctx.settings;
  const isDefault = server.hostname === '_';
  let names = f.host(server.hostname, 'host');
  let serverName = names.startsWith('*.') ? wildcardServerName(names) : names;
  for (const alias of server.aliases) {
    const a = f.host(alias, 'server-alias');
    names += ` ${a}`;
    serverName += ` ${a}`;
  }
  const { listen, listenText } = listenLines(ctx, isDefault);
  const locations: LocationView[] = [];
  const seenMatchers = new Set<string>();
  const seenIds = new Set<string>();
  const errorLocationNames = new Set<string>();
  const problems: RenderProblem[] = [];
  let extra = '';
  let httpLevel = '';
  let authCache = false;
  const host = knownHost(server);
  const ordered = server.useRegex ? sortShort([...server.locations], (a, b) => b.path.length - a.path.length) : server.locations;
  for (const loc of ordered) {
    let m: string;
    try {
      m = matcher(server, loc);
    } catch (err) {
      problems.push(problemOf(server, loc, err, 'location left out'));
      continue;
    }
    if (seenMatchers.has(m)) continue;
    seenMatchers.add(m);
    // Only rate-limit zones and external-auth locations are named by it: no sha1 otherwise.
    // The two pieces of a Prefix split share one (one rate-limit counter, one auth location).
    const id = loc.rateLimit || loc.externalAuth
      ? shortId(server.hostname, loc.ingressPath ?? loc.path, loc.ingressPath !== undefined ? 'Prefix' : loc.pathType) : '';
    let r: ReturnType<typeof locationView>;
    let errorLocations = '';
    try {
      r = locationView(server, loc, m, ctx, id, host);
      if (!r.view.denied) errorLocations = customErrorLocations(loc, r.view.errorBackendId, errorLocationNames, modsecurityOff(ctx.settings));
    } catch (err) {
      // One value the renderer cannot express denies its location (503), not the server.
      const problem = problemOf(server, loc, err, 'location denied (503)');
      problems.push(problem);
      r = { view: deniedView(loc, m, `${problem.field}: ${problem.message}`), extra: '', zones: '', cache: false };
    }
    locations.push(r.view);
    if (id === '' || !seenIds.has(id)) {
      seenIds.add(id);
      extra += r.extra;
      httpLevel += r.zones;
    }
    extra += errorLocations;
    authCache ||= r.cache;
  }
  let redirectServer = '';
  if (ctx.wwwRedirectFrom) {
    const from = f.host(ctx.wwwRedirectFrom, 'from-to-www-redirect');
    const listenLines = listen.map((l) => `        listen ${l.replace(' default_server', '').replace(' reuseport', '')};\n`).join('');
    // As ingress-nginx: the port is always named and one trailing slash dropped (lua_ingress.lua).
    redirectServer = `\n    ## start server ${from}\n    server {\n        server_name ${from};\n${listenLines}`
      + `        set_by_lua_block $redirect_to {\n            return lua_ingress.www_redirect_target(${f.luaString(f.host(server.hostname), 'host')})\n        }\n`
      + `        return ${f.num(s.httpRedirectCode, 'http-redirect-code')} $redirect_to;\n    }\n    ## end server ${from}\n`;
  }
  const blockUserAgents = s.blockUserAgents.length > 0;
  const blockReferers = s.blockReferers.length > 0;
  return {
    server, names, serverName, listen, blockUserAgents, blockReferers, locations,
    listenText,
    luaPhases: SERVER_LUA_PHASES.test(server.serverSnippet) ? '' : serverLua(host),
    guards: (s.blockCidrs.length > 0 ? '        if ($block_cidr) {\n            return 403;\n        }\n' : '')
      + (blockUserAgents ? '        if ($block_ua) {\n            return 403;\n        }\n' : '')
      + (blockReferers ? '        if ($block_ref) {\n            return 403;\n        }\n' : ''),
    snippet: serverSnippet(server, problems),
    locationsText: locationsText(locations),
    extra, redirectServer, httpLevel, authCache, problems,
  };
}

/** The server-snippet, or '' (reported) when the renderer refuses it: the server keeps its locations. */
function serverSnippet(server: Server, problems: RenderProblem[]): string {
  if (server.serverSnippet === '') return '';
  try {
    return `\n        # server-snippet\n        ${f.snippet(server.serverSnippet, 'server-snippet')}\n`;
  } catch (err) {
    const message = err instanceof RenderError ? err.message.slice(err.field.length + 2) : String((err as Error)?.message ?? err);
    problems.push({ ingresses: [], host: server.hostname, field: 'server-snippet', message, outcome: 'server-snippet left out' });
    return '';
  }
}

/** A location the renderer could not express: it answers 503, saying why in a comment. */
function deniedView(loc: Location, matcher: string, reason: string): LocationView {
  return {
    matcher, loc, denied: true, deniedReason: f.comment(reason), variables: '', redirect: '', luaPhases: '', access: '',
    corsOriginRegex: null, errors: '', headers: '', proxy: '', snippet: '', pass: '', errorBackendId: '',
  };
}

function problemOf(server: Server, loc: Location, err: unknown, outcome: RenderProblem['outcome']): RenderProblem {
  const field = err instanceof RenderError ? err.field : 'location';
  const message = err instanceof RenderError ? err.message.slice(err.field.length + 2) : String((err as Error)?.message ?? err);
  return { ingresses: loc.ingress ? [loc.ingress] : [], host: server.hostname, path: loc.path, field, message, outcome };
}

/**
 * The location blocks, concatenated rather than joined: the renderer flattens the whole server
 * text once, and a join here would copy every location's text one time more.
 */
function locationsText(locations: readonly LocationView[]): string {
  let text = '';
  for (const l of locations) text += locationText(l);
  return text;
}

interface Listen {
  settings: NginxSettings;
  runtime: NginxRuntime;
  passthroughPort: number | undefined;
  listen: string[];
  listenText: string;
}

/** The last listen directives made, for the default server and for the others: the same for every server of a render. */
const listenMemo: Array<Listen | undefined> = [undefined, undefined];

function listenLines(ctx: ServerContext, isDefault: boolean): Listen {
  const { settings: s, runtime: rt, passthroughPort } = ctx;
  const known = listenMemo[isDefault ? 1 : 0];
  if (known && known.settings === s && known.runtime === rt && known.passthroughPort === passthroughPort) return known;
  const listen: string[] = [];
  const flags = `${isDefault ? ' default_server' : ''}${isDefault && s.reusePort ? ' reuseport' : ''}${s.useProxyProtocol ? ' proxy_protocol' : ''}`;
  const ssl = ` ssl${s.useHttp2 ? ' http2' : ''}`;
  for (const a of rt.listenAddresses.map(listenAddress)) {
    listen.push(`${a}:${f.num(rt.httpPort)}${flags}`);
    if (passthroughPort === undefined) listen.push(`${a}:${f.num(rt.httpsPort)}${flags}${ssl}`);
  }
  // The SNI stream server always sends the PROXY protocol, so the client address is kept.
  if (passthroughPort !== undefined) listen.push(`127.0.0.1:${f.num(passthroughPort, 'ssl-passthrough-proxy-port')}${flags.replace(' proxy_protocol', '')} proxy_protocol${ssl}`);
  const made = { settings: s, runtime: rt, passthroughPort, listen, listenText: listen.map((l) => `        listen ${l};\n`).join('') };
  listenMemo[isDefault ? 1 : 0] = made;
  return made;
}

/** One location block, laid out; every part was built through its filters above. */
export function locationText(l: LocationView): string {
  if (l.denied) return `        location ${l.matcher} {\n${I}# denied: ${l.deniedReason}\n${I}return 503;\n        }\n`;
  return `        location ${l.matcher} {\n${l.variables}${l.redirect}${l.luaPhases}${l.access}${l.loc.cors ? corsOf(l.loc.cors).text : ''}`
    + `${l.errors}${l.headers}${l.proxy}${l.snippet}${I}${l.pass};\n        }\n`;
}

/**
 * An Ingress's CORS origin regex and directives, made once per CORS setting: the locations of
 * an Ingress share its parsed annotations, so its CORS object too.
 */
const corsMemo = new WeakMap<CorsConfig, { regex: string | null; text: string }>();

function corsOf(cors: CorsConfig): { regex: string | null; text: string } {
  let made = corsMemo.get(cors);
  if (made === undefined) {
    const regex = corsOriginRegex(cors.allowOrigin);
    made = { regex, text: corsText(cors, regex) };
    corsMemo.set(cors, made);
  }
  return made;
}

/**
 * CORS as ingress-nginx sets it: a request whose Origin is allowed (any request with `*`) gets
 * the whole Access-Control-* set; a preflight (OPTIONS) of it is answered 204 here. Other
 * origins get no CORS header and their OPTIONS goes to the backend.
 */
function corsText(cors: CorsConfig, originRegex: string | null): string {
  const origin = originRegex
    ? `${I}set $cors "";\n${I}set $cors_allow_origin "";\n${I}if ($http_origin ~* ${originRegex}) {\n${I}    set $cors "true";\n${I}    set $cors_allow_origin $http_origin;\n${I}}\n`
    : `${I}set $cors "true";\n${I}set $cors_allow_origin "*";\n`;
  const headers = [
    '"Access-Control-Allow-Origin: $cors_allow_origin"',
    ...(cors.allowCredentials ? ['"Access-Control-Allow-Credentials: true"'] : []),
    f.moreHeader('Access-Control-Allow-Methods', cors.allowMethods),
    f.moreHeader('Access-Control-Allow-Headers', cors.allowHeaders),
    ...(cors.exposeHeaders !== '' ? [f.moreHeader('Access-Control-Expose-Headers', cors.exposeHeaders)] : []),
    f.moreHeader('Access-Control-Max-Age', cors.maxAge),
  ].map((h) => `${I}    more_set_headers ${h};\n`).join('');
  return `${origin}${I}if ($request_method = OPTIONS) {\n${I}    set $cors "\${cors}options";\n${I}}\n`
    + `${I}if ($cors = "true") {\n${headers}${I}}\n`
    + `${I}if ($cors = "trueoptions") {\n${headers}`
    + `${I}    more_set_headers "Content-Type: text/plain; charset=utf-8";\n`
    + `${I}    more_set_headers "Content-Length: 0";\n`
    + `${I}    return 204;\n${I}}\n`;
}

export function prefixError(err: unknown, where: string): Error {
  if (err instanceof RenderError) return new RenderError(`${where}: ${err.field}`, err.message.slice(err.field.length + 2));
  return new Error(`${where}: ${(err as Error).message ?? String(err)}`);
}

/** The stream block body for TCP/UDP services: one static upstream and server per port. */
export function streamServers(tcp: L4Service[], udp: L4Service[], rt: NginxRuntime): string {
  let out = '';
  for (const [proto, list] of [['tcp', tcp], ['udp', udp]] as const) {
    for (const svc of list) {
      const port = f.num(svc.port, `${proto}-services port`);
      const name = `${proto}-${port}`;
      const servers = upstreamServers(svc.endpoints);
      out += `\n    # ${proto} ${f.comment(`${svc.backend.namespace}/${svc.backend.name}:${svc.backend.port}`)}\n    upstream ${name} {\n${servers}    }\n`;
      out += `    server {\n${rt.listenAddresses.map(listenAddress).map((a) => `        listen ${a}:${port}${proto === 'udp' ? ' udp' : ''}${svc.proxyProtocol.decode ? ' proxy_protocol' : ''};\n`).join('')}`;
      out += `${svc.proxyProtocol.encode ? '        proxy_protocol on;\n' : ''}        proxy_pass ${name};\n    }\n`;
    }
  }
  return out;
}

function bracket(addr: string): string {
  return addr.includes(':') ? `[${addr}]` : addr;
}

/** The `server` lines of a static stream upstream; a down placeholder when it has no endpoint. */
function upstreamServers(endpoints: readonly Endpoint[]): string {
  if (endpoints.length === 0) return '        server 127.0.0.1:1 down;\n';
  return endpoints.map((e) => `        server ${bracket(f.cidr(e.address, 'endpoint address'))}:${f.num(e.port, 'endpoint port')};\n`).join('');
}

/**
 * The stream servers of ssl-passthrough: on the HTTPS port, the SNI picks a passthrough host's
 * backend or NGINX's HTTPS servers (127.0.0.1:proxyPort). PROXY protocol is per stream server,
 * not per destination, so the SNI server sends it to every route, and each passthrough route
 * goes through its own unix-socket server that takes the header off before the backend.
 */
export function passthroughStream(servers: readonly Server[], backends: readonly Backend[], rt: NginxRuntime, proxyPort: number, s: NginxSettings, warn: (msg: string) => void): string {
  const byName = new Map(backends.map((b) => [b.name, b]));
  const routes: { host: string; id: number; backend: Backend }[] = [];
  const ids = new Map<string, number>();
  for (const server of servers) {
    if (!server.sslPassthrough || server.hostname === '_') continue;
    const root = server.locations.find((l) => l.path === '/' && !l.isDefBackend && l.denied === null);
    const backend = root ? byName.get(root.backend) : undefined;
    if (!backend) {
      warn(`server ${server.hostname}: ssl-passthrough needs a backend for the path "/"; TLS is terminated by NGINX`);
      continue;
    }
    if (!ids.has(backend.name)) ids.set(backend.name, ids.size);
    for (const h of [server.hostname, ...server.aliases]) routes.push({ host: f.host(h, 'host'), id: ids.get(backend.name)!, backend });
  }
  let out = '\n    # ssl-passthrough\n    map $ssl_preread_server_name $ingress_rx_passthrough {\n        hostnames;\n';
  for (const r of routes) out += `        ${r.host} ingress_rx_passthrough_${r.id};\n`;
  out += '        default ingress_rx_https;\n    }\n';
  out += `    upstream ingress_rx_https {\n        server 127.0.0.1:${f.num(proxyPort, 'ssl-passthrough-proxy-port')};\n    }\n`;
  out += `    server {\n${rt.listenAddresses.map(listenAddress).map((a) => `        listen ${a}:${f.num(rt.httpsPort)}${s.useProxyProtocol ? ' proxy_protocol' : ''};\n`).join('')}`;
  if (s.useProxyProtocol) {
    out += s.proxyRealIpCidr.map((c) => `        set_real_ip_from ${f.cidr(c, 'proxy-real-ip-cidr')};\n`).join('');
    // As ingress-nginx (its Go TCP proxy): how long the SNI server waits for the PROXY header.
    out += `        proxy_protocol_timeout ${f.duration(s.proxyProtocolHeaderTimeout, 'proxy-protocol-header-timeout')};\n`;
  }
  out += '        ssl_preread on;\n        proxy_protocol on;\n        proxy_pass $ingress_rx_passthrough;\n    }\n';
  for (const [name, id] of ids) {
    const backend = byName.get(name)!;
    const sock = passthroughSocket(rt, id);
    const ends = upstreamServers(backend.endpoints);
    out += `\n    # ssl-passthrough backend ${f.comment(name)}\n    upstream ingress_rx_passthrough_${id} {\n        server ${sock};\n    }\n`;
    out += `    upstream ingress_rx_passthrough_${id}_endpoints {\n${ends}    }\n`;
    out += `    server {\n        listen ${sock} proxy_protocol;\n        proxy_pass ingress_rx_passthrough_${id}_endpoints;\n    }\n`;
  }
  return out;
}

/** The unix socket of a passthrough route's inner stream server. */
function passthroughSocket(rt: NginxRuntime, id: number): string {
  return f.quoteLiteral(`unix:${passthroughSocketPath(rt, id)}`, 'runtime.prefix');
}
