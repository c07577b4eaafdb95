// ssl-passthrough group: with --enable-ssl-passthrough, a stream server on the HTTPS port reads
// the SNI and hands a passthrough host's TLS to its backend untouched, or to NGINX's HTTPS
// servers (moved to 127.0.0.1:proxyPort). Without the flag the annotation is ignored, saying so.
import type { NginxSettings } from '../../model/core/config/settings.js';
import type { Backend, Server } from '../../model/core/types.js';
import * as f from '../filters.js';
import { listenAddress } from '../filters.js';
import { passthroughSocketPath, type NginxRuntime } from '../runtime.js';
import { upstreamServers } from '../stream.js';
import { sniRoutes } from '../../model/core/sni.js';
import type { RenderBlock } from './types.js';

export const sslPassthroughBlock: RenderBlock = { group: 'sslpassthrough', applied: 'stream' };

const HTTPS = 'ingress_rx_https';

/** ingress-nginx ignores the annotation without --enable-ssl-passthrough; so do we, saying so. */
export function passthroughOff(server: Server): string {
  const ing = server.locations.find((l) => l.ingress)?.ingress;
  const who = ing ? `Ingress ${ing.namespace}/${ing.name}` : `server ${server.hostname}`;
  return `${who}: ssl-passthrough is set on host ${server.hostname} but --enable-ssl-passthrough is off; TLS is terminated by NGINX`;
}

/**
 * The stream servers of ssl-passthrough: on the HTTPS port, the SNI picks a passthrough host's
 * backend or NGINX's HTTPS servers (127.0.0.1:proxyPort). PROXY protocol is per stream server,
 * not per destination, so the SNI server sends it to every route, and each passthrough route
 * goes through its own unix-socket server that takes the header off before the backend.
 */
export function passthroughStream(servers: readonly Server[], backends: readonly Backend[], rt: NginxRuntime, proxyPort: number, s: NginxSettings, warn: (msg: string) => void): string {
  const byName = new Map(backends.map((b) => [b.name, b]));
  const ids = new Map<string, number>();
  // The stream upstream of a passthrough server; NGINX's HTTPS when it has no backend for `/`.
  const upstreams = new Map<Server, string>();
  const upstreamOf = (server: Server | null): string => {
    if (server === null) return HTTPS;
    let name = upstreams.get(server);
    if (name === undefined) {
      const root = server.locations.find((l) => l.path === '/' && !l.isDefBackend && l.denied === null);
      const backend = root ? byName.get(root.backend) : undefined;
      if (!backend) {
        warn(`server ${server.hostname}: ssl-passthrough needs a backend for the path "/"; TLS is terminated by NGINX`);
        name = HTTPS;
      } else {
        if (!ids.has(backend.name)) ids.set(backend.name, ids.size);
        name = `ingress_rx_passthrough_${ids.get(backend.name)}`;
      }
      upstreams.set(server, name);
    }
    return name;
  };
  // Names first (a name some server has), then wildcards: a host's one label deep, an alias's at any depth, as server_name matches.
  const routes = sniRoutes(servers);
  let out = '\n    # ssl-passthrough\n    map $ssl_preread_server_name $ingress_rx_passthrough {\n        hostnames;\n';
  for (const r of routes.names) out += `        ${f.host(r.name, 'host')} ${upstreamOf(r.server)};\n`;
  for (const r of routes.wildcards) {
    const name = f.host(r.name, 'host');
    out += `        ${r.anyDepth ? name : `"~*^[\\w-]+${name.slice(1).replace(/\./g, '\\.')}$"`} ${upstreamOf(r.server)};\n`;
  }
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
