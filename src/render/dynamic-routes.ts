// What nginx.conf holds for dynamic hosts (docs/dynamic-routes.md): no server block of their own.
// A default server whose only location is the built-in default backend's `/` routes in that
// location itself: lua/router.lua serves a dynamic host's request where it is, and hands any
// other to the default backend's location, kept as a named location. Any other default server,
// and every static wildcard server, asks the router in its server rewrite phase whether the
// request's host is in the route table and, if so, moves the request to one internal location
// where the router does what the host's location would; their own locations stay as they are.
import type { NginxSettings } from '../model/core/config/settings.js';
import type { BackendTLSLocation, Location, Server } from '../model/core/types.js';
import type { AuxiliaryFile } from './blocks/types.js';
import * as f from './filters.js';
import { RenderError } from './filters.js';
import { secretFile, secretFilePath } from './secret-files.js';
import { headerVariables, standardHeaders } from './proxy-headers.js';
import { METRICS_LOG_ROUTED_FORMAT_NAME, metricsAccessLog } from './metrics-log.js';
import type { NginxRuntime } from './runtime.js';
import { httpAccessLog } from './settings-directives.js';

/** The URI the router's location is reached by; a request for it from outside is 404 (internal). */
export const DYNAMIC_ROUTE_URI = '/.ingress-rx/dynamic-route';

/** Whether requests for dynamic hosts can reach the server: the default one, or a wildcard. */
export function servesDynamicHosts(server: Server, dynamicRoutes: boolean): boolean {
  return dynamicRoutes && (server.hostname === '_' || server.hostname.startsWith('*.'));
}

/** Stands in nginx.conf for whether it reads a location variable where dynamic hosts' requests go. */
export const LOCATION_VARIABLES_READ_TOKEN = '\u0000@@ingress-rx-location-variables-read@@\u0000';

// A read of a variable a static location sets for its route (`set $namespace …` is a write).
const LOCATION_VARIABLE_READ = /(?<!set )\$\{?(?:namespace|ingress_name|service_name|service_port|location_path)\b/;

/**
 * Whether the text reads $namespace, $ingress_name, $service_name, $service_port or
 * $location_path. The router writes them per request (a lookup by name each) only where
 * nginx.conf's http level, or a server dynamic hosts' requests reach, reads them (lua/router.lua).
 */
export function readsLocationVariables(text: string): boolean {
  return LOCATION_VARIABLE_READ.test(text);
}

// Stand in the router's locations for the `set_by_lua_block $proxy_host` they have only where
// nginx.conf reads $proxy_host: the one that takes the route find() chose, and the root's.
const PROXY_HOST_MOVED_TOKEN = '\u0000@@ingress-rx-proxy-host-moved@@\u0000';
const PROXY_HOST_ROOT_TOKEN = '\u0000@@ingress-rx-proxy-host-root@@\u0000';
// A read of $proxy_host (a static location's `set $proxy_host $proxy_upstream_name` is a write).
const PROXY_HOST_READ = /(?<!set )\$\{?proxy_host\b/;

/** Whether the text reads $proxy_host (a log format, a snippet, …). */
export function readsProxyHost(text: string): boolean {
  return PROXY_HOST_READ.test(text);
}

/**
 * A server's text with its router location's $proxy_host: the route's backend when `read`, as
 * a static location's (./location.ts); NGINX's own (never read) otherwise, which costs
 * no Lua entry per request. Lua cannot write the variable by name (NGINX does not hash it).
 */
export function withRouterProxyHost(text: string, read: boolean): string {
  const set = (moved: boolean): string => (read ? `            set_by_lua_block $proxy_host {\n                return router.proxy_host(${moved ? 'true' : ''})\n            }\n` : '');
  return text.split(PROXY_HOST_MOVED_TOKEN).join(set(true)).replace(PROXY_HOST_ROOT_TOKEN, set(false))
    .replace(PROXY_HOST_PORT_TOKEN, (_, port: string) => (read ? `            set_by_lua_block $proxy_host {\n                return router.proxy_host(false, ":${port}")\n            }\n` : ''));
}

// The same in a Gateway listener port's `/` (the port is in the token).
const PROXY_HOST_PORT_TOKEN = /\u0000@@ingress-rx-proxy-host-port:(\d+)@@\u0000/g;

/** The named location the built-in default backend's `/` becomes when the router takes `/`. */
export const DEFAULT_ROOT_LOCATION = '@ingress_rx_default_backend';

/** How the server hands requests for dynamic hosts to the router, if it does. */
export type RouterPlacement = 'none' | 'hook' | 'root';

/**
 * `root` when the server's only location is the built-in default backend's `/` (no Ingress's):
 * routing there costs no second Lua entry, no internal move and no URI restored, and no
 * location of the server can take a dynamic host's path first. `hook` otherwise.
 */
export function routerPlacement(server: Server, dynamicRoutes: boolean, ordered: readonly Location[]): RouterPlacement {
  if (!servesDynamicHosts(server, dynamicRoutes)) return 'none';
  const only = ordered.length === 1 ? ordered[0]! : null;
  const builtInRoot = only !== null && only.ingress === null && only.path === '/' && only.pathType === 'Prefix';
  return server.hostname === '_' && builtInRoot ? 'root' : 'hook';
}

/** Server level, after the guards: before any location is chosen. */
export const DYNAMIC_ROUTE_HOOK = `        # Dynamic hosts: the Lua router serves them (lua/router.lua).
        set_by_lua_block $dynamic_route_uri {
            return router.find()
        }
        if ($dynamic_route_uri) {
            rewrite ^ $dynamic_route_uri last;
        }
`;

/**
 * The router's location. The variables the location would set are left to the router (a
 * denied route sets none, as a denied location), but for the ones the same for every route,
 * set here by NGINX before the router runs (cheaper than a write from Lua); the request URI goes
 * upstream unchanged unless the route rewrites it. Its header filter is the server's (./view.ts) plus the route's
 * response headers. The standard proxy headers are the http level's, with Host and Connection
 * from variables a route's upstream-vhost and connection-proxy-header may set
 * (lua/route_upstream_headers.lua).
 */
export function dynamicRouteLocation(s: NginxSettings, runtime: NginxRuntime): string {
  return movedLocation(s, runtime, DYNAMIC_ROUTE_URI, false, '');
}

/** The codes a retry location's name tells by its bits (lua/router.lua, src/model/gateway/retry.ts). */
const RETRY_CODE_BITS = [500, 502, 503, 504] as const;

/**
 * The router's locations for routes that the dynamic-route location cannot serve as they ask,
 * moved there by lua/router.lua: HTTPRoute retries (one location per set of retried codes:
 * proxy_next_upstream is per location, and which answer to retry is NGINX's choice, made before
 * any Lua runs; the balancer gives the tries) and backends reached over HTTP/2 cleartext
 * (grpc_pass, which speaks HTTP/2 upstream for any request). Always there, so a route that
 * needs one is served without a reload.
 */
export function routerVariantLocations(s: NginxSettings, runtime: NginxRuntime): string {
  let out = '';
  for (const h2c of [false, true]) {
    const base = `${DYNAMIC_ROUTE_URI}${h2c ? '-h2c' : ''}`;
    const next = h2c ? 'grpc_next_upstream' : 'proxy_next_upstream';
    if (h2c) out += movedLocation(s, runtime, base, true, '');
    for (let mask = 0; mask < 1 << RETRY_CODE_BITS.length; mask++) {
      const codes = RETRY_CODE_BITS.filter((_, i) => (mask & (1 << i)) !== 0).map((c) => ` http_${c}`).join('');
      out += movedLocation(s, runtime, `${base}-retry-${mask}`, h2c, `            ${next} error timeout${codes};
            ${next}_tries 0;
`);
    }
  }
  return out + BACKEND_TLS_TOKEN;
}

// Stands in the router's servers for the TLS locations (Configuration.backendTLSLocations):
// the same in every server, and not part of any server's cached text (withBackendTLS).
const BACKEND_TLS_TOKEN = '\u0000@@ingress-rx-backend-tls@@\u0000';

/** The secret-file name of a TLS location's files: ':' is in no Kubernetes name, so no Secret's file is ever its. */
const tlsFileId = (id: string): string => `:backendtlspolicy-${id}`;

/**
 * The router's TLS locations (src/model/gateway/backend-tls.ts): a route whose backend has a
 * BackendTLSPolicy is moved to the one of its policy's hostname, CA bundle and Gateway client
 * certificate, which proxy_ssl_* only a location can set in NGINX 1.22. They pass to
 * upstream_balancer_tls, whose connections are never kept (./blocks/proxyssl.ts). Retries
 * and h2c are not combined with them (the model names such routes).
 */
export function backendTLSLocationsText(s: NginxSettings, runtime: NginxRuntime, locations: readonly BackendTLSLocation[]): string {
  let out = '';
  for (const l of locations) {
    if (!/^[0-9a-f]{16}$/.test(l.id)) throw new RenderError('BackendTLSPolicy', `TLS location id ${JSON.stringify(l.id.slice(0, 40))} is not 16 hex digits`);
    const file = tlsFileId(l.id);
    const ssl = [
      `proxy_ssl_trusted_certificate ${f.quoteLiteral(secretFilePath(runtime, file, 'ca.crt'), 'BackendTLSPolicy')}`,
      'proxy_ssl_verify on',
      'proxy_ssl_verify_depth 4',
      'proxy_ssl_protocols TLSv1.2 TLSv1.3',
      'proxy_ssl_ciphers DEFAULT',
      `proxy_ssl_name ${f.quoteLiteral(f.host(l.hostname, 'BackendTLSPolicy.spec.validation.hostname'), 'BackendTLSPolicy.spec.validation.hostname')}`,
      'proxy_ssl_server_name on',
      ...(l.clientCertificate ? [
        `proxy_ssl_certificate ${f.quoteLiteral(secretFilePath(runtime, file, 'tls.crt'), 'Gateway.spec.tls.backend')}`,
        `proxy_ssl_certificate_key ${f.quoteLiteral(secretFilePath(runtime, file, 'tls.key'), 'Gateway.spec.tls.backend')}`,
      ] : []),
    ].map((d) => `            ${d};\n`).join('');
    out += movedLocation(s, runtime, `${DYNAMIC_ROUTE_URI}-tls-${l.id}`, false, ssl, 'https://upstream_balancer_tls$dynamic_upstream_uri');
  }
  return out;
}

/** The files the TLS locations name (written beside nginx.conf before it is tested). */
export function backendTLSFiles(runtime: NginxRuntime, locations: readonly BackendTLSLocation[]): AuxiliaryFile[] {
  const out: AuxiliaryFile[] = [];
  for (const l of locations) {
    out.push(secretFile(runtime, tlsFileId(l.id), 'ca.crt', l.ca));
    if (l.clientCertificate) out.push(secretFile(runtime, tlsFileId(l.id), 'tls.crt', l.clientCertificate.cert), secretFile(runtime, tlsFileId(l.id), 'tls.key', l.clientCertificate.key));
  }
  return out;
}

/** A router server's text with its TLS locations in place of their token. */
export function withBackendTLS(text: string, locations: string): string {
  // Every router server of the text (the listener ports' servers are one part).
  return text.split(BACKEND_TLS_TOKEN).join(locations);
}

function movedLocation(s: NginxSettings, runtime: NginxRuntime, uri: string, h2c: boolean, extra: string, pass = 'http://upstream_balancer$dynamic_upstream_uri'): string {
  return routerLocation(s, runtime, `= ${uri}`, `            internal;
            set $dynamic_upstream_uri $request_uri;
${PROXY_HOST_MOVED_TOKEN}${extra}`, 'router.serve()', h2c ? null : pass);
}

/**
 * The default server's `/` when the router takes it (placement `root`): a dynamic host's request
 * is served here (the URI is the request's own, so a bare proxy_pass sends it unchanged, or as
 * the route rewrote it, as a static location's would); any other goes to the default backend.
 */
export function dynamicRouteRootLocation(s: NginxSettings, runtime: NginxRuntime): string {
  return routerLocation(s, runtime, '"/"', PROXY_HOST_ROOT_TOKEN, `router.route(${JSON.stringify(DEFAULT_ROOT_LOCATION)})`, 'http://upstream_balancer');
}

/**
 * The `/` of a Gateway listener port's server (./listener-ports.ts): the router looks the request
 * up among the hosts of that port only (`host:port` in the route table); anything else is 404.
 */
export function listenerPortRootLocation(s: NginxSettings, runtime: NginxRuntime, port: number, notFound: string): string {
  return routerLocation(s, runtime, '"/"', `\u0000@@ingress-rx-proxy-host-port:${port}@@\u0000`, `router.route(${JSON.stringify(notFound)}, ":${port}")`, 'http://upstream_balancer');
}

/** `pass`: proxy_pass's URL; null: grpc_pass (HTTP/2 cleartext, without the hop-by-hop headers HTTP/2 forbids). */
function routerLocation(s: NginxSettings, runtime: NginxRuntime, matcher: string, first: string, call: string, pass: string | null): string {
  const headers = (pass === null
    ? standardHeaders(s, 'grpc_set_header', '$dynamic_upstream_host').filter((d) => !/^grpc_set_header (Upgrade|Connection) /.test(d))
    : standardHeaders(s, 'proxy_set_header', '$dynamic_upstream_host', '$dynamic_connection'))
    .map((d) => `            ${d};\n`).join('');
  // With the metrics log, the routed format (one variable for the route's four fields) in place
  // of the http level's, whose access log is then repeated (a location's access_log replaces them).
  const main = runtime.metricsLog ? httpAccessLog(s, runtime) : '';
  const logs = runtime.metricsLog
    ? `${main ? `            ${main};\n` : ''}            ${metricsAccessLog(runtime.metricsLog, METRICS_LOG_ROUTED_FORMAT_NAME)};\n`
    : '';
  return `        location ${matcher} {
${first}            set $proxy_alternative_upstream_name "";
            set $dynamic_upstream_host ${headerVariables(s).host};
            set $dynamic_connection $connection_upgrade;
            rewrite_by_lua_block {
                ${call}
            }
            header_filter_by_lua_block {
                balancer.header_filter()
                lua_ingress.header()
                router.header_filter()
            }
${logs}${headers}            ${pass === null ? 'grpc_pass grpc://upstream_balancer' : `proxy_pass ${pass}`};
        }
`;
}
