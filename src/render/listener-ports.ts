// The servers of Gateway listener ports other than 80 and 443 (Configuration.listenerPorts;
// docs/gateway-api.md, "Listener ports"): one per port, the only server on its socket, where the
// Lua router answers among the hosts of that port's listeners and nothing else does (no Ingress,
// no default backend: a request no route takes is 404). The port of HTTPS listeners is TLS (HTTP/2
// by ALPN with use-http2): the certificate callback looks the SNI up among that port's hosts
// (`host:port`) and listeners (lua/certificate.lua), as the router does the Host.
import type { Configuration } from '../model/core/types.js';
import type { NginxRuntime } from './runtime.js';
import * as f from './filters.js';
import { listenAddress } from './filters.js';
import { spoofedClientGuard } from './settings-directives.js';
import { listenerPortRootLocation, routerVariantLocations } from './dynamic-routes.js';

const NOT_FOUND = '@ingress_rx_listener_no_route';

/** The servers' text, '' when there are none. */
export function listenerPortServers(config: Configuration, runtime: NginxRuntime): string {
  const ports = config.listenerPorts ?? [];
  if (ports.length === 0 || !config.dynamicRoutes) return '';
  const s = config.settings;
  const flags = `${s.useProxyProtocol ? ' proxy_protocol' : ''}`;
  const guards = (s.blockCidrs.length > 0 ? '        if ($block_cidr) {\n            return 403;\n        }\n' : '')
    + (s.blockUserAgents.length > 0 ? '        if ($block_ua) {\n            return 403;\n        }\n' : '')
    + (s.blockReferers.length > 0 ? '        if ($block_ref) {\n            return 403;\n        }\n' : '')
    + spoofedClientGuard(s);
  let text = '';
  const ssl = ` ssl${s.useHttp2 ? ' http2' : ''}`;
  for (const { port, local, tls } of ports) {
    const listen = runtime.listenAddresses.map(listenAddress).map((a) => `        listen ${a}:${f.num(local, 'gateway-listener-ports')} default_server${flags}${tls ? ssl : ''};\n`).join('');
    const certificate = tls ? `        ssl_certificate_by_lua_block {
            fallback_certificate.set()
            certificate.call(":${f.num(port, 'gateway listener port')}")
        }
` : '';
    text += `    ## start server Gateway listener port ${port}
    server {
        server_name _;
${listen}${certificate}${guards}${listenerPortRootLocation(s, runtime, port, NOT_FOUND)}${routerVariantLocations(s, runtime)}        location ${NOT_FOUND} {
            return 404;
        }
    }
    ## end server Gateway listener port ${port}
`;
  }
  return text;
}
