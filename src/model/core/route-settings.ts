// The per-location settings a dynamic route carries for the Lua router (lua/route_upstream.lua,
// lua/route_access.lua, lua/route_headers.lua, lua/route_cors.lua), one function per annotation group, each giving its route-table fields
// only where the location differs from what the router's own location inherits (the http level),
// so a plain route stays a plain entry. src/model/ingress/dynamic-routes.ts keeps an Ingress static when
// a value cannot be applied exactly this way.
import type { NginxSettings } from './config/settings.js';
import { corsHeaders, corsOriginPattern } from '../ingress/annotations/cors.js';
import type { ProxyConfig } from '../ingress/annotations/proxy.js';
import type { Location, RouteCors } from './types.js';

export interface RouteUpstream {
  /** proxy_connect_timeout, proxy_send_timeout, proxy_read_timeout in seconds; 0 = the http level's. */
  readonly timeouts?: readonly [number, number, number];
  /** proxy_next_upstream_tries (at most the http level's: see the proxy group's perRequest). */
  readonly tries?: number;
}

export interface RouteAccess {
  /** denylist-source-range then allowlist-source-range, as `deny`/`allow` in the location (CIDRs, validated). */
  readonly deny?: readonly string[];
  readonly allow?: readonly string[];
}

export interface RouteResponse {
  /** enable-cors: the pattern an allowed Origin matches ('' = every origin) and the headers after Access-Control-Allow-Origin. */
  readonly cors?: RouteCors;
  /** custom-headers: the response headers, in name order. */
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

export interface RouteTrace {
  /**
   * The span the router opens (lua/opentelemetry.lua): whether the client's trace is continued,
   * and the span's name — the operation name ($variables expanded), or '' for the route's path
   * taken literally. Absent: not traced.
   */
  readonly trace?: { readonly trust: boolean; readonly name: string };
}

/** Whether a location's requests are traced: its annotation, else the ConfigMap. */
export const tracedIn = (loc: Location, s: NginxSettings): boolean => (loc.settings.opentelemetry?.enable ?? s.enableOpentelemetry) === true;

/** opentelemetry group: the span of a traced location (only an HTTPRoute's rule is traced and dynamic: a traced Ingress stays static). */
export function routeTrace(loc: Location, s: NginxSettings): RouteTrace {
  if (!tracedIn(loc, s)) return {};
  return { trace: { trust: loc.settings.opentelemetry?.trust ?? s.opentelemetryTrustIncomingSpan, name: loc.settings.opentelemetry?.operationName || s.opentelemetryOperationName } };
}

/** proxy group: the timeouts and tries that differ from the http level's. */
export function routeUpstream(p: ProxyConfig, s: NginxSettings): RouteUpstream {
  const differs = (v: number, http: number) => (v === http ? 0 : v);
  const timeouts = [differs(p.connectTimeout, s.proxyConnectTimeout), differs(p.sendTimeout, s.proxySendTimeout), differs(p.readTimeout, s.proxyReadTimeout)] as const;
  return {
    ...(timeouts.some((t) => t !== 0) ? { timeouts } : {}),
    ...(p.nextUpstreamTries !== s.proxyNextUpstreamTries ? { tries: p.nextUpstreamTries } : {}),
  };
}

/** ipdenylist and ipallowlist groups: the location's lists (the ConfigMap's when the Ingress has none). */
export function routeAccess(loc: Location): RouteAccess {
  return {
    ...(loc.settings.denylist.length > 0 ? { deny: loc.settings.denylist } : {}),
    ...(loc.settings.allowlist.length > 0 ? { allow: loc.settings.allowlist } : {}),
  };
}

/** cors and customheaders groups: the response headers the location's more_set_headers set. */
export function routeResponse(loc: Location): RouteResponse {
  return {
    ...(loc.settings.cors ? { cors: { origin: corsOriginPattern(loc.settings.cors.allowOrigin) ?? '', headers: corsHeaders(loc.settings.cors) } } : {}),
    ...(loc.settings.customHeaders ? { headers: Object.entries(loc.settings.customHeaders) } : {}),
  };
}
