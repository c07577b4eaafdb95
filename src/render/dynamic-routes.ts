// What nginx.conf holds for dynamic hosts (docs/dynamic-routes.md): no server block of their own;
// the default server and every static wildcard server ask the Lua router in their server
// rewrite phase whether the request's host is in the route table and, if so, move the request
// to one internal location where lua/router.lua does what the host's location would.
import type { NginxSettings } from '../model/config/settings.js';
import type { Server } from '../model/types.js';
import { standardHeaders } from './proxy-headers.js';

/** The URI the router's location is reached by; a request for it from outside is 404 (internal). */
export const DYNAMIC_ROUTE_URI = '/.ingress-rx/dynamic-route';

/** Whether the server hands requests for dynamic hosts to the router. */
export function routesDynamicHosts(server: Server, dynamicRoutes: boolean): boolean {
  return dynamicRoutes && (server.hostname === '_' || server.hostname.startsWith('*.'));
}

/** Server level, after the guards: before any location is chosen. */
export const DYNAMIC_ROUTE_HOOK = `        # Dynamic hosts: the Lua router serves them (lua/router.lua).
        set_by_lua_block $dynamic_route_uri {
            return router.find()
        }
        if ($dynamic_route_uri) {
            rewrite ^ ${DYNAMIC_ROUTE_URI} last;
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
export function dynamicRouteLocation(s: NginxSettings): string {
  const headers = standardHeaders(s, 'proxy_set_header', '$dynamic_upstream_host', '$dynamic_connection')
    .map((d) => `            ${d};\n`).join('');
  return `        location = ${DYNAMIC_ROUTE_URI} {
            internal;
            set $dynamic_upstream_uri $request_uri;
            set $proxy_alternative_upstream_name "";
            set $dynamic_upstream_host $best_http_host;
            set $dynamic_connection $connection_upgrade;
            rewrite_by_lua_block {
                router.serve()
            }
            header_filter_by_lua_block {
                balancer.header_filter()
                lua_ingress.header()
                router.header_filter()
            }
${headers}            proxy_pass http://upstream_balancer$dynamic_upstream_uri;
        }
`;
}
