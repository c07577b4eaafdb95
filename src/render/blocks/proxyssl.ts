// proxyssl group: TLS towards the backend in each location of the Ingress and, unless
// proxy-ssl-location-only, in the server block from the host's oldest such Ingress (as
// ingress-nginx). A gRPC location gets the same settings as grpc_ssl_* (proxy_ssl_* would not
// reach grpc_pass). The verification settings come with the CA bundle only, as in ingress-nginx.
import type { ProxySSLConfig } from '../../model/ingress/annotations/proxyssl.js';
import type { NginxSettings } from '../../model/core/config/settings.js';
import type { Location, Server } from '../../model/core/types.js';
import { upstreamVhostVariable } from '../../model/ingress/annotations/upstreamvhost.js';
import * as f from '../filters.js';
import type { NginxRuntime } from '../runtime.js';
import { secretFile, secretFilePath } from '../secret-files.js';
import { directives } from './layout.js';
import type { AuxiliaryFile, RenderBlock } from './types.js';

/** The directives (without `;`) for `p`; `prefix` is proxy_ssl_ or grpc_ssl_. */
function sslDirectives(p: ProxySSLConfig, runtime: NginxRuntime, prefix: string, where: 'location' | 'server'): string[] {
  const out: string[] = [];
  if (p.ca !== null) {
    out.push(
      `${prefix}trusted_certificate ${f.quoteLiteral(secretFilePath(runtime, p.secret, 'ca.crt'), 'proxy-ssl-secret')}`,
      `${prefix}ciphers ${f.opensslList(p.ciphers, 'proxy-ssl-ciphers')}`,
      `${prefix}protocols ${p.protocols.map((x) => f.opensslList(x, 'proxy-ssl-protocols')).join(' ')}`,
      `${prefix}verify ${f.onoff(p.verify === 'on', 'proxy-ssl-verify')}`,
      `${prefix}verify_depth ${f.num(p.verifyDepth, 'proxy-ssl-verify-depth')}`,
    );
  }
  if (p.name !== '') out.push(`${prefix}name ${p.name.includes('$') ? f.quoteWithVariables(p.name, 'proxy-ssl-name', {}, upstreamVhostVariable) : f.quoteLiteral(f.host(p.name, 'proxy-ssl-name'), 'proxy-ssl-name')}`);
  // ingress-nginx prints the server's only with a name; each location's always.
  if (where === 'location' || p.name !== '') out.push(`${prefix}server_name ${f.onoff(p.serverName === 'on', 'proxy-ssl-server-name')}`);
  if (p.clientCertificate !== null) {
    out.push(
      `${prefix}certificate ${f.quoteLiteral(secretFilePath(runtime, p.secret, 'tls.crt'), 'proxy-ssl-secret')}`,
      `${prefix}certificate_key ${f.quoteLiteral(secretFilePath(runtime, p.secret, 'tls.key'), 'proxy-ssl-secret')}`,
    );
  }
  return out;
}

function filesOf(p: ProxySSLConfig | null, runtime: NginxRuntime): AuxiliaryFile[] {
  if (p === null) return [];
  const out: AuxiliaryFile[] = [];
  if (p.ca !== null) out.push(secretFile(runtime, p.secret, 'ca.crt', p.ca));
  if (p.clientCertificate !== null) out.push(secretFile(runtime, p.secret, 'tls.crt', p.clientCertificate.cert), secretFile(runtime, p.secret, 'tls.key', p.clientCertificate.key));
  return out;
}

/**
 * Whether the location talks TLS to its backend with proxy-ssl-* settings (its own, or the
 * server's it inherits). NGINX's upstream keepalive finds a kept connection by the peer's
 * address alone, not by the TLS settings it was made with: such a location uses a balancer
 * whose connections are never kept (upstream_balancer_tls in nginx.conf.liquid), so that no
 * other location sends requests over a connection made with this one's client certificate, and
 * this one never skips its checks on a connection another made.
 */
export function usesBackendTLS(loc: Location, server: Server, settings: NginxSettings): boolean {
  if (loc.settings.backendProtocol !== 'HTTPS' && loc.settings.backendProtocol !== 'GRPCS' && loc.settings.backendProtocol !== 'AUTO_HTTP') return false;
  return loc.settings.proxySSL !== null || (!settings.proxySSLLocationOnly && (server.tlsSettings?.proxySSL ?? null) !== null);
}

/** proxy_pass's host under ingress-nginx, whose every location passes to `upstream_balancer` (NGINX's default proxy_ssl_name, whatever $proxy_host is set to). */
const INGRESS_NGINX_PROXY_HOST = 'upstream_balancer';

export const proxySSLBlock: RenderBlock = {
  group: 'proxyssl',
  applied: 'directives',
  location: {
    proxy: ({ loc, server, settings, runtime, hdr }) => {
      const prefix = hdr === 'grpc_set_header' ? 'grpc_ssl_' : 'proxy_ssl_';
      const inherited = settings.proxySSLLocationOnly ? null : server.tlsSettings?.proxySSL ?? null;
      // The server's proxy_ssl_* never reach grpc_pass: a gRPC location inheriting them gets them as grpc_ssl_*.
      const out = loc.settings.proxySSL ? sslDirectives(loc.settings.proxySSL, runtime, prefix, 'location')
        : inherited !== null && prefix === 'grpc_ssl_' ? sslDirectives(inherited, runtime, prefix, 'location') : [];
      // With no proxy-ssl-name, NGINX names the backend by proxy_pass's host: ingress-nginx's is
      // upstream_balancer (the SNI sent, the name verified), which ours must stay though its
      // TLS locations pass to upstream_balancer_tls.
      if (usesBackendTLS(loc, server, settings) && (loc.settings.proxySSL?.name || inherited?.name || '') === '') out.push(`${prefix}name ${INGRESS_NGINX_PROXY_HOST}`);
      return directives(out);
    },
    uses: ({ loc, server, settings }) => (usesBackendTLS(loc, server, settings) ? ['tls_upstream'] : []),
  },
  server: {
    directives: ({ server, settings, runtime }) => {
      const p = server.tlsSettings?.proxySSL ?? null;
      if (p === null || settings.proxySSLLocationOnly) return '';
      return `\n${sslDirectives(p, runtime, 'proxy_ssl_', 'server').map((d) => `        ${d};\n`).join('')}`;
    },
  },
  files: (loc: Location, runtime) => (loc.denied ? [] : filesOf(loc.settings.proxySSL, runtime)),
  serverFiles: (server, runtime) => filesOf(server.tlsSettings?.proxySSL ?? null, runtime),
};
