// backend-protocol group: how the location passes the request to the balancer (proxy_pass with
// the protocol's scheme, grpc_pass, fastcgi_pass). A gRPC location sets its headers with
// grpc_set_header, so it prints the whole header set (none is inherited from http level).
import type { NginxSettings } from '../../model/core/config/settings.js';
import type { Location, Server } from '../../model/core/types.js';
import { I } from './layout.js';
import { usesBackendTLS } from './proxyssl.js';
import type { RenderBlock, Upstream } from './types.js';

const HTTP: Upstream = { pass: 'proxy_pass http://upstream_balancer', hdr: 'proxy_set_header' };

/** TLS towards the backend with proxy-ssl-* settings: the balancer whose connections are not kept (see proxyssl.ts). */
function tlsBalancer(loc: Location, server: Server, settings: NginxSettings): string {
  return usesBackendTLS(loc, server, settings) ? 'upstream_balancer_tls' : 'upstream_balancer';
}

function upstream(loc: Location, server: Server, settings: NginxSettings): Upstream {
  switch (loc.settings.backendProtocol) {
    case 'HTTPS': return { pass: `proxy_pass https://${tlsBalancer(loc, server, settings)}`, hdr: 'proxy_set_header' };
    case 'GRPC': return { pass: 'grpc_pass grpc://upstream_balancer', hdr: 'grpc_set_header' };
    case 'GRPCS': return { pass: `grpc_pass grpcs://${tlsBalancer(loc, server, settings)}`, hdr: 'grpc_set_header' };
    // As ingress-nginx: the scheme of the request (an upstream name works in a variable proxy_pass).
    case 'AUTO_HTTP': return { pass: `proxy_pass $scheme://${tlsBalancer(loc, server, settings)}`, hdr: 'proxy_set_header' };
    case 'FCGI': return { pass: 'include /etc/nginx/fastcgi_params;\n' + `${I}fastcgi_pass upstream_balancer`, hdr: 'proxy_set_header' };
    default: return HTTP;
  }
}

export const backendProtocolBlock: RenderBlock = {
  group: 'backendprotocol',
  applied: 'directives',
  location: {
    upstream,
    headers: ({ hdr }) => (hdr === HTTP.hdr ? null : {}),
  },
};
