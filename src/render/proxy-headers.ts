// The proxy headers every location sends upstream (ConfigMap forwarded-for-header,
// proxy-add-original-uri-header, proxy-set-headers), set once at http level. NGINX inherits
// proxy_set_header only into a location that defines none, so a location that adds a header of
// its own prints this whole set again (see the location frame).
import type { NginxSettings } from '../model/core/config/settings.js';
import * as f from './filters.js';

/**
 * The variables the standard headers read. Without use-forwarded-headers and use-proxy-protocol,
 * $best_http_host, $pass_access_scheme and $full_x_forwarded_for are maps that only pass on
 * $this_host, $scheme and $remote_addr: reading those directly spares every request
 * one to two map evaluations (each a copy) per header. The maps stay defined for whatever else
 * reads them; where a snippet may `set` one of them (snippet annotations allowed, or a ConfigMap
 * snippet), the headers read the maps as ingress-nginx's do.
 */
export function headerVariables(s: NginxSettings): { host: string; port: string; scheme: string; forwardedFor: string } {
  // $pass_port stays: it announces HTTPS on a port of its own (--https-port, the ssl-passthrough proxy port) as 443.
  return readsPassMaps(s)
    ? { host: '$best_http_host', port: '$pass_port', scheme: '$pass_access_scheme', forwardedFor: '$full_x_forwarded_for' }
    : { host: '$this_host', port: '$pass_port', scheme: '$scheme', forwardedFor: '$remote_addr' };
}

function readsPassMaps(s: NginxSettings): boolean {
  const snippets = s.allowSnippetAnnotations || s.httpSnippet !== '' || s.serverSnippet !== '' || s.locationSnippet !== '';
  return s.useForwardedHeaders || s.useProxyProtocol || snippets;
}

/**
 * What the `$pass_port` map reads. Where $pass_server_port only passes $server_port on (as in
 * headerVariables), the map reads $server_port itself: the same value with one map evaluation
 * fewer per request (0.4k instructions, docs/performance.md).
 */
export function passPortSource(s: NginxSettings): string {
  return readsPassMaps(s) ? '$pass_server_port' : '$server_port';
}

export function standardHeaders(s: NginxSettings, hdr: string, host = headerVariables(s).host, connection = '$connection_upgrade'): string[] {
  const v = headerVariables(s);
  return [
    `${hdr} Host ${host}`,
    `${hdr} Upgrade $http_upgrade`,
    `${hdr} Connection ${connection}`,
    `${hdr} X-Request-ID $req_id`,
    `${hdr} X-Real-IP $remote_addr`,
    `${hdr} ${f.headerName(s.forwardedForHeader, 'forwarded-for-header')} ${v.forwardedFor}`,
    `${hdr} X-Forwarded-Host ${v.host}`,
    `${hdr} X-Forwarded-Port ${v.port}`,
    `${hdr} X-Forwarded-Proto ${v.scheme}`,
    `${hdr} X-Forwarded-Scheme ${v.scheme}`,
    `${hdr} X-Scheme ${v.scheme}`,
    ...(s.proxyAddOriginalUriHeader ? [`${hdr} X-Original-URI $request_uri`] : []),
    // What the client sent, passed on as ingress-nginx does (empty: not sent).
    `${hdr} X-Original-Forwarded-For $http_${f.headerName(s.forwardedForHeader, 'forwarded-for-header').toLowerCase().replace(/-/g, '_')}`,
    // forwarded-host-header names this one only; the Host comes from X-Forwarded-Host (as ingress-nginx).
    `${hdr} X-Original-Forwarded-Host $http_${f.headerName(s.forwardedHostHeader, 'forwarded-host-header').toLowerCase().replace(/-/g, '_')}`,
    `${hdr} Proxy ""`,
    ...Object.entries(s.proxySetHeaders).map(([k, v]) => `${hdr} ${f.headerName(k, 'proxy-set-headers')} ${f.quoteWithVariables(v, `proxy-set-headers[${k}]`)}`),
  ];
}

/** The http-level block of standard proxy headers. */
export function httpProxyHeaders(s: NginxSettings): string {
  return standardHeaders(s, 'proxy_set_header').map((d) => `    ${d};\n`).join('');
}
