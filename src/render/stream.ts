// The stream block's TCP/UDP services (the --tcp-services-configmap and
// --udp-services-configmap): one static upstream and server per port.
import type { Endpoint, L4Service } from '../model/core/types.js';
import * as f from './filters.js';
import { listenAddress } from './filters.js';
import type { NginxRuntime } from './runtime.js';

export function streamServers(tcp: readonly L4Service[], udp: readonly L4Service[], rt: NginxRuntime): string {
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
export function upstreamServers(endpoints: readonly Endpoint[]): string {
  if (endpoints.length === 0) return '        server 127.0.0.1:1 down;\n';
  return endpoints.map((e) => `        server ${bracket(f.cidr(e.address, 'endpoint address'))}:${f.num(e.port, 'endpoint port')};\n`).join('');
}
