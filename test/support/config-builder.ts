// Hand-built Configurations for render and reload tests: the smallest valid model objects,
// with ingress-nginx's defaults, that a test then overrides field by field.
import { DYNAMIC_ROUTES_OFF } from '../../src/model/ingress/dynamic-routes.js';
import { defaultSettings } from '../../src/model/core/config/defaults.js';
import type { NginxSettings } from '../../src/model/core/config/settings.js';
import type { ProxyConfig } from '../../src/model/ingress/annotations/proxy.js';
import type { Backend, Configuration, Location, LocationSettings, Server } from '../../src/model/core/types.js';
import { NO_AFFINITY, makeBackend } from '../../src/model/ingress/backends.js';
import { defaultAnnotations, locationTemplate } from '../../src/model/ingress/annotations/index.js';
import { withLocationSettings } from '../../src/model/core/location-settings.js';
import { makeLocation } from '../../src/model/ingress/fragments.js';

export function proxyDefaults(s: NginxSettings = defaultSettings()): ProxyConfig {
  return {
    connectTimeout: s.proxyConnectTimeout,
    sendTimeout: s.proxySendTimeout,
    readTimeout: s.proxyReadTimeout,
    bodySize: s.proxyBodySize,
    bufferSize: s.proxyBufferSize,
    buffersNumber: s.proxyBuffersNumber,
    buffering: s.proxyBuffering,
    requestBuffering: s.proxyRequestBuffering,
    nextUpstream: [...s.proxyNextUpstream],
    nextUpstreamTimeout: s.proxyNextUpstreamTimeout,
    nextUpstreamTries: s.proxyNextUpstreamTries,
    httpVersion: s.proxyHttpVersion,
    clientBodyBufferSize: s.clientBodyBufferSize,
    busyBuffersSize: s.proxyBusyBuffersSize,
    maxTempFileSize: s.proxyMaxTempFileSize,
    cookieDomain: s.proxyCookieDomain,
    cookiePath: s.proxyCookiePath,
    redirectFrom: s.proxyRedirectFrom,
    redirectTo: s.proxyRedirectTo,
  };
}

/**
 * A location as the model makes it for an Ingress without annotations (every group's defaults,
 * whatever groups there are), without the SSL redirect, with overrides.
 */
export function location(over: LocationOverrides = {}): Location {
  const ns = over.ingress?.namespace ?? 'default';
  const svc = over.service ?? { name: 'web', port: '80' };
  const settings = defaultSettings();
  const d = defaultAnnotations(settings);
  const base = makeLocation('/', 'Prefix', { namespace: ns, name: 'web' }, null, `${ns}-${svc.name}-${svc.port}`, locationTemplate(d), settings, false);
  const own: Record<string, unknown> = {};
  const settingsOver: Record<string, unknown> = { rewrite: { ...d.rewrite, sslRedirect: false } };
  for (const [k, v] of Object.entries(over)) (k in base.settings ? settingsOver : own)[k] = v;
  return { ...base, service: svc, ...own, settings: withLocationSettings(base.settings, settingsOver) };
}

/** A location's own fields and its settings' fields, side by side, as a test overrides them. */
export type LocationOverrides = Partial<Omit<Location, 'settings'>> & Partial<LocationSettings>;

export function server(hostname: string, over: Partial<Server> = {}): Server {
  return {
    hostname,
    aliases: [],
    sslPassthrough: false,
    certificate: null,
    tlsSecret: null,
    redirectFromToWWW: false,
    useRegex: false,
    serverSnippet: '',
    locations: [location()],
    staticBecause: DYNAMIC_ROUTES_OFF,
    ...over,
  };
}

/** A round-robin backend as the model makes it, with overrides. */
export function backend(name: string, endpoints: { address: string; port: string }[] = [], over: Partial<Backend> = {}): Backend {
  return {
    ...makeBackend({ name, service: null, port: '80', endpoints, sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {}, loadBalance: 'round_robin' }),
    ...over,
  };
}

/** A configuration with the catch-all server `_` (404 from the default backend) and the given servers. */
export function configuration(servers: Server[] = [], over: Partial<Configuration> = {}, settings: Partial<NginxSettings> = {}): Configuration {
  const catchAll = server('_', { locations: [location({ ingress: null, service: null, backend: 'upstream-default-backend', isDefBackend: true })] });
  const all = [catchAll, ...servers].sort((a, b) => (a.hostname === '_' ? -1 : b.hostname === '_' ? 1 : a.hostname.localeCompare(b.hostname)));
  return {
    servers: all,
    backends: [backend('upstream-default-backend')],
    tcpEndpoints: [],
    udpEndpoints: [],
    certificates: {},
    defaultCertificate: null,
    settings: { ...defaultSettings(), workerProcesses: '1', ...settings },
    dynamicRoutes: false,
    ...over,
  };
}

/** The hand-built configurations rendered to golden files in test/fixtures/render/. */
export function goldenConfigurations(): Record<string, Configuration> {
  const s = defaultSettings();
  return {
    'minimal': configuration([server('app.example.com')]),
    'paths': configuration([server('paths.example.com', {
      aliases: ['alias.example.com'],
      locations: [
        location({ path: '/exact', pathType: 'Exact' }),
        location({ path: '/prefix', pathType: 'Prefix' }),
        location({ path: '/impl', pathType: 'ImplementationSpecific' }),
        location(),
      ],
    })]),
    'rewrite-regex': configuration([server('re.example.com', {
      useRegex: true,
      locations: [
        location({ path: '/api(/|$)(.*)', pathType: 'ImplementationSpecific', rewrite: { ...location().settings.rewrite, target: '/$2', xForwardedPrefix: '/api' } }),
        location({ path: '/app/[0-9]{3}', pathType: 'ImplementationSpecific' }),
      ],
    })]),
    'redirects': configuration([
      server('old.example.com', { locations: [location({ redirect: { url: 'https://new.example.com$request_uri', code: 301 } })] }),
      server('root.example.com', { redirectFromToWWW: true, locations: [location({ rewrite: { ...location().settings.rewrite, appRoot: '/app1', sslRedirect: true, forceSSLRedirect: true } })] }),
    ]),
    'annotations': configuration([server('full.example.com', {
      locations: [
        location({
          path: '/cors', pathType: 'Prefix',
          cors: { enabled: true, allowOrigin: ['https://a.example.com', 'https://*.b.example.com'], allowMethods: 'GET, PUT, POST', allowHeaders: 'DNT,Authorization', exposeHeaders: 'X-Total', allowCredentials: true, maxAge: 1728000 },
          upstreamVhost: 'internal.svc', connectionHeader: 'keep-alive',
          proxy: { ...proxyDefaults(s), connectTimeout: 10, readTimeout: 120, bodySize: '8m', bufferSize: '16k', buffering: 'on', nextUpstream: ['error', 'timeout', 'http_502'] },
        }),
        location({
          path: '/auth', pathType: 'Prefix',
          basicAuth: { type: 'basic', realm: 'Authentication Required - foo', secret: 'default/basic-auth', secretType: 'auth-file', users: ['foo:$apr1$FTCzEiDL$7Vvl0sDT3hx3nuqVCPoAy/'] },
          allowlist: ['10.0.0.0/8', '127.0.0.1', '::1'], denylist: ['192.168.1.1/32'],
        }),
        location({
          path: '/ext', pathType: 'Prefix',
          externalAuth: { url: 'http://127.0.0.1:9/auth?x=1', host: '', method: 'GET', signin: 'https://login.example.com/start', signinRedirectParam: 'rd', responseHeaders: ['X-User', 'X-Email'], cacheKey: '$remote_user$http_authorization', cacheDuration: ['200 202 10m', '401 1m'], requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {}, keepalive: null },
          rateLimit: { rps: 10, rpm: 300, connections: 5, burstMultiplier: 5, limitRate: 100, limitRateAfter: 1024, allowlist: ['10.0.0.0/8'] },
        }),
        location({ path: '/errors', pathType: 'Prefix', customHttpErrors: [404, 503], defaultBackend: 'default-custom-errors-80' }),
        location({ path: '/grpc', pathType: 'Prefix', backendProtocol: 'GRPC' }),
        location({ path: '/secure', pathType: 'Prefix', backendProtocol: 'HTTPS', accessLog: false }),
        location({ path: '/denied', pathType: 'Prefix', denied: 'auth-secret default/missing not found' }),
        location({ path: '/snippet', pathType: 'Prefix', configurationSnippet: 'more_set_headers "X-Snippet: 1";' }),
      ],
      serverSnippet: 'location = /server-snippet { return 200 "ok"; }',
    })], {}, {
      addHeaders: { 'X-Frame-Options': 'DENY' }, proxySetHeaders: { 'X-Custom': 'v$host' },
      blockCidrs: ['203.0.113.0/24'], blockUserAgents: ['~*badbot', 'curl/7.1'], blockReferers: ['~*spam\\.example'],
      useForwardedHeaders: true, computeFullForwardedFor: true, useGzip: true, enableRealIp: true,
      hideHeaders: ['X-Powered-By'], skipAccessLogUrls: ['/healthz'],
    }),
    'l4': configuration([server('tcp.example.com')], {
      tcpEndpoints: [{ port: 9000, backend: { namespace: 'default', name: 'db', port: '5432' }, endpoints: [{ address: '10.0.0.5', port: '5432' }, { address: 'fd00::5', port: '5432' }], proxyProtocol: { decode: false, encode: true } }],
      udpEndpoints: [{ port: 5353, backend: { namespace: 'kube-system', name: 'dns', port: '53' }, endpoints: [], proxyProtocol: { decode: false, encode: false } }],
    }),
  };
}

/** A configuration in which every string field of the target server is printed somewhere. */
export function hostileBase(hostname = 'target.example.com'): Mutable<Configuration> {
  const full = location({
    path: '/t', pathType: 'Prefix',
    rewrite: { target: '/x', useRegex: false, appRoot: '/app', sslRedirect: true, forceSSLRedirect: false, preserveTrailingSlash: false, xForwardedPrefix: '/p', usePortInRedirects: false },
    redirect: null,
    cors: { enabled: true, allowOrigin: ['https://a.example.com'], allowMethods: 'GET', allowHeaders: 'X-A', exposeHeaders: 'X-B', allowCredentials: true, maxAge: 10 },
    basicAuth: { type: 'basic', realm: 'realm', secret: 'default/basic', secretType: 'auth-file', users: ['u:$apr1$FTCzEiDL$7Vvl0sDT3hx3nuqVCPoAy/'] },
    externalAuth: { url: 'http://127.0.0.1:9/auth', host: 'auth.example.com', method: 'GET', signin: 'https://login.example.com/', signinRedirectParam: 'rd', responseHeaders: ['X-User'], cacheKey: '$remote_user', cacheDuration: ['200 1m'], requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {}, keepalive: null },
    allowlist: ['10.0.0.0/8'], denylist: ['10.1.0.0/16'],
    rateLimit: { rps: 1, rpm: 0, connections: 0, burstMultiplier: 1, limitRate: 0, limitRateAfter: 0, allowlist: ['10.0.0.0/8'] },
    proxy: { ...proxyDefaults(), bodySize: '2m', bufferSize: '8k', nextUpstream: ['error'], clientBodyBufferSize: '16k' },
    upstreamVhost: 'vhost', connectionHeader: 'close', customHttpErrors: [404], defaultBackend: 'default-errors-80',
  });
  const redirect = location({ path: '/r', pathType: 'Exact', redirect: { url: 'https://r.example.com/', code: 301 } });
  return mutable(configuration([server(hostname, { aliases: ['alias.example.com'], locations: [full, redirect] })], {}, {
    addHeaders: { 'X-Add': 'v' }, proxySetHeaders: { 'X-Set': 'v' }, blockCidrs: ['203.0.113.0/24'], blockUserAgents: ['bot'], blockReferers: ['ref'],
    hideHeaders: ['X-Hide'], skipAccessLogUrls: ['/skip'],
  }));
}

export interface HostileField {
  /** Where the value goes. */
  field: string;
  /** A substring the RenderError must contain when the value is refused. */
  label: string;
  /** Prefix that gets the value past the field's basic shape (a path starts with /). */
  prefix?: string;
  /** A valid value for the field (default: prefix + 'benign'). */
  benign?: string;
  set(config: Mutable<Configuration>, value: string): void;
}

/**
 * A model object a test may change in place. The model's types are readonly (the incremental
 * build and the renderer's caches rely on model objects never changing); a test that builds a
 * hostile or broken configuration by hand writes through this type.
 */
export type Mutable<T> = T extends object ? { -readonly [K in keyof T]: Mutable<T[K]> } : T;

/** `value`, writable: for tests that change hand-built model objects. */
export function mutable<T>(value: T): Mutable<T> {
  return value as Mutable<T>;
}

function target(c: Mutable<Configuration>): Mutable<Server> {
  return c.servers.find((s) => s.hostname !== '_')!;
}
function loc0(c: Mutable<Configuration>): Mutable<Location> {
  return target(c).locations[0]!;
}

/** Every string field a Configuration prints, with how to put a value there. */
export const HOSTILE_FIELDS: HostileField[] = [
  { field: 'server.hostname', benign: 'benign.example.com', label: 'host', set: (c, v) => { target(c).hostname = v; } },
  { field: 'server.aliases[0]', benign: 'benign.example.com', label: 'server-alias', set: (c, v) => { target(c).aliases = [v]; } },
  { field: 'location.path', label: 'path', prefix: '/', set: (c, v) => { loc0(c).path = v; } },
  { field: 'location.path (regex server)', label: 'path', prefix: '/', set: (c, v) => { target(c).useRegex = true; loc0(c).path = v; } },
  { field: 'location.ingress.namespace', label: 'namespace', set: (c, v) => { loc0(c).ingress = { namespace: v, name: 'web' }; } },
  { field: 'location.ingress.name', label: 'ingress name', set: (c, v) => { loc0(c).ingress = { namespace: 'default', name: v }; } },
  { field: 'location.service.name', label: 'service name', set: (c, v) => { loc0(c).service = { name: v, port: '80' }; } },
  { field: 'location.service.port', benign: '80', label: 'service port', set: (c, v) => { loc0(c).service = { name: 'web', port: v }; } },
  { field: 'location.backend', label: 'backend', set: (c, v) => { loc0(c).backend = v; } },
  { field: 'location.denied', label: 'denied', set: (c, v) => { loc0(c).denied = v; } },
  { field: 'location.rewrite.target', label: 'rewrite-target', prefix: '/', set: (c, v) => { loc0(c).settings.rewrite.target = v; } },
  { field: 'location.rewrite.appRoot', label: 'app-root', prefix: '/', set: (c, v) => { loc0(c).settings.rewrite.appRoot = v; } },
  { field: 'location.rewrite.xForwardedPrefix', label: 'x-forwarded-prefix', set: (c, v) => { loc0(c).settings.rewrite.xForwardedPrefix = v; } },
  { field: 'location.redirect.url', label: 'permanent-redirect', prefix: 'https://r.example.com/', set: (c, v) => { const l = target(c).locations[1]!; l.settings = { ...l.settings, redirect: { url: v, code: 301 } }; } },
  { field: 'location.cors.allowOrigin[0]', benign: 'https://benign.example.com', label: 'cors-allow-origin', prefix: 'https://', set: (c, v) => { loc0(c).settings.cors!.allowOrigin = [v]; } },
  { field: 'location.cors.allowMethods', label: 'header', set: (c, v) => { loc0(c).settings.cors!.allowMethods = v; } },
  { field: 'location.cors.allowHeaders', label: 'header', set: (c, v) => { loc0(c).settings.cors!.allowHeaders = v; } },
  { field: 'location.cors.exposeHeaders', label: 'header', set: (c, v) => { loc0(c).settings.cors!.exposeHeaders = v; } },
  { field: 'location.basicAuth.realm', label: 'auth-realm', set: (c, v) => { loc0(c).settings.basicAuth!.realm = v; } },
  { field: 'location.basicAuth.secret', label: 'auth-secret', set: (c, v) => { loc0(c).settings.basicAuth!.secret = v; } },
  { field: 'location.externalAuth.url', label: 'auth-url', prefix: 'http://127.0.0.1:9/', set: (c, v) => { loc0(c).settings.externalAuth!.url = v; } },
  { field: 'location.externalAuth.host', benign: 'benign.example.com', label: 'auth-host', set: (c, v) => { loc0(c).settings.externalAuth!.host = v; } },
  { field: 'location.externalAuth.method', benign: 'GET', label: 'auth-method', set: (c, v) => { loc0(c).settings.externalAuth!.method = v; } },
  { field: 'location.externalAuth.signin', label: 'auth-signin', prefix: 'https://login.example.com/', set: (c, v) => { loc0(c).settings.externalAuth!.signin = v; } },
  { field: 'location.externalAuth.signinRedirectParam', label: 'auth-signin-redirect-param', set: (c, v) => { loc0(c).settings.externalAuth!.signinRedirectParam = v; } },
  { field: 'location.externalAuth.responseHeaders[0]', benign: 'X-Ok', label: 'auth-response-headers', set: (c, v) => { loc0(c).settings.externalAuth!.responseHeaders = [v]; } },
  { field: 'location.externalAuth.cacheKey', label: 'auth-cache-key', set: (c, v) => { loc0(c).settings.externalAuth!.cacheKey = v; } },
  { field: 'location.externalAuth.cacheDuration[0]', benign: '200 1m', label: 'auth-cache-duration', set: (c, v) => { loc0(c).settings.externalAuth!.cacheDuration = [v]; } },
  { field: 'location.allowlist[0]', benign: '10.2.0.0/16', label: 'whitelist-source-range', set: (c, v) => { const l = loc0(c); l.settings = { ...l.settings, allowlist: [v] }; } },
  { field: 'location.denylist[0]', benign: '10.2.0.0/16', label: 'denylist-source-range', set: (c, v) => { const l = loc0(c); l.settings = { ...l.settings, denylist: [v] }; } },
  { field: 'location.rateLimit.allowlist[0]', benign: '10.2.0.0/16', label: 'limit-whitelist', set: (c, v) => { loc0(c).settings.rateLimit!.allowlist = [v]; } },
  { field: 'location.proxy.bodySize', benign: '4k', label: 'proxy-body-size', set: (c, v) => { loc0(c).settings.proxy.bodySize = v; } },
  { field: 'location.proxy.bufferSize', benign: '4k', label: 'proxy-buffer-size', set: (c, v) => { loc0(c).settings.proxy.bufferSize = v; } },
  { field: 'location.proxy.clientBodyBufferSize', benign: '4k', label: 'client-body-buffer-size', set: (c, v) => { loc0(c).settings.proxy.clientBodyBufferSize = v; } },
  { field: 'location.proxy.nextUpstream[0]', benign: 'timeout', label: 'proxy-next-upstream', set: (c, v) => { loc0(c).settings.proxy.nextUpstream = [v]; } },
  { field: 'location.upstreamVhost', label: 'upstream-vhost', set: (c, v) => { const l = loc0(c); l.settings = { ...l.settings, upstreamVhost: v }; } },
  { field: 'location.connectionHeader', label: 'connection-proxy-header', set: (c, v) => { const l = loc0(c); l.settings = { ...l.settings, connectionHeader: v }; } },
  { field: 'location.defaultBackend', label: 'default-backend', set: (c, v) => { const l = loc0(c); l.settings = { ...l.settings, defaultBackend: v }; } },
  { field: 'settings.addHeaders (value)', label: 'header', set: (c, v) => { c.settings.addHeaders = { 'X-Add': v }; } },
  { field: 'settings.addHeaders (name)', benign: 'X-Ok', label: 'header', set: (c, v) => { c.settings.addHeaders = { [v]: 'v' }; } },
  { field: 'settings.proxySetHeaders (value)', label: 'proxy-set-headers', set: (c, v) => { c.settings.proxySetHeaders = { 'X-Set': v }; } },
  { field: 'settings.proxySetHeaders (name)', benign: 'X-Ok', label: 'proxy-set-headers', set: (c, v) => { c.settings.proxySetHeaders = { [v]: 'v' }; } },
  { field: 'settings.blockCidrs[0]', benign: '10.2.0.0/16', label: 'block-cidrs', set: (c, v) => { c.settings.blockCidrs = [v]; } },
  { field: 'settings.blockUserAgents[0]', label: 'block-user-agents', set: (c, v) => { c.settings.blockUserAgents = [v]; } },
  { field: 'settings.blockReferers[0]', label: 'block-referers', set: (c, v) => { c.settings.blockReferers = [v]; } },
  { field: 'settings.sslCiphers', label: 'ssl-ciphers', set: (c, v) => { c.settings.sslCiphers = v; } },
  { field: 'settings.forwardedForHeader', benign: 'X-Ok', label: 'forwarded-for-header', set: (c, v) => { c.settings.forwardedForHeader = v; } },
  { field: 'settings.logFormatUpstream', label: 'log-format-upstream', set: (c, v) => { c.settings.logFormatUpstream = v; } },
  { field: 'settings.skipAccessLogUrls[0]', label: 'skip-access-log-urls', set: (c, v) => { c.settings.skipAccessLogUrls = [v]; } },
  { field: 'settings.hideHeaders[0]', benign: 'X-Ok', label: 'hide-headers', set: (c, v) => { c.settings.hideHeaders = [v]; } },
  { field: 'settings.gzipTypes[0]', benign: 'text/plain', label: 'gzip-types', set: (c, v) => { c.settings.useGzip = true; c.settings.gzipTypes = [v]; } },
  { field: 'settings.sslEcdhCurve', label: 'ssl-ecdh-curve', set: (c, v) => { c.settings.sslEcdhCurve = v; } },
  { field: 'settings.largeClientHeaderBuffers', benign: '4 8k', label: 'large-client-header-buffers', set: (c, v) => { c.settings.largeClientHeaderBuffers = v; } },
  { field: 'settings.workerShutdownTimeout', benign: '10s', label: 'worker-shutdown-timeout', set: (c, v) => { c.settings.workerShutdownTimeout = v; } },
  { field: 'settings.sslSessionTimeout', benign: '10m', label: 'ssl-session-timeout', set: (c, v) => { c.settings.sslSessionTimeout = v; } },
  { field: 'settings.upstreamKeepaliveTime', benign: '1h', label: 'upstream-keepalive-time', set: (c, v) => { c.settings.upstreamKeepaliveTime = v; } },
  { field: 'settings.proxyRealIpCidr[0]', benign: '10.2.0.0/16', label: 'proxy-real-ip-cidr', set: (c, v) => { c.settings.enableRealIp = true; c.settings.proxyRealIpCidr = [v]; } },
  { field: 'settings.sslSessionCacheSize', benign: '10m', label: 'ssl-session-cache-size', set: (c, v) => { c.settings.sslSessionCacheSize = v; } },
  { field: 'settings.clientHeaderBufferSize', benign: '1k', label: 'client-header-buffer-size', set: (c, v) => { c.settings.clientHeaderBufferSize = v; } },
  { field: 'settings.proxyBodySize', benign: '1m', label: 'proxy-body-size', set: (c, v) => { c.settings.proxyBodySize = v; } },
  { field: 'settings.workerProcesses', benign: '2', label: 'worker-processes', set: (c, v) => { c.settings.workerProcesses = v; } },
  { field: 'tcpEndpoints[0].endpoints[0].address', benign: '10.0.0.9', label: 'endpoint address', set: (c, v) => { c.tcpEndpoints = [{ port: 9000, backend: { namespace: 'd', name: 'db', port: '1' }, endpoints: [{ address: v, port: '1' }], proxyProtocol: { decode: false, encode: false } }]; } },
  { field: 'tcpEndpoints[0].backend.name', label: '', set: (c, v) => { c.tcpEndpoints = [{ port: 9000, backend: { namespace: 'd', name: v, port: '1' }, endpoints: [{ address: '10.0.0.1', port: '1' }], proxyProtocol: { decode: false, encode: false } }]; } },
];
