// The proxy headers every location sends upstream (ConfigMap forwarded-for-header,
// proxy-add-original-uri-header, proxy-set-headers), set once at http level. NGINX inherits
// proxy_set_header only into a location that defines none, so a location that adds a header of
// its own prints this whole set again (see the location frame).
import type { NginxSettings } from '../model/config/settings.js';
import * as f from './filters.js';

export function standardHeaders(s: NginxSettings, hdr: string, host = '$best_http_host', connection = '$connection_upgrade'): string[] {
  return [
    `${hdr} Host ${host}`,
    `${hdr} Upgrade $http_upgrade`,
    `${hdr} Connection ${connection}`,
    `${hdr} X-Request-ID $req_id`,
    `${hdr} X-Real-IP $remote_addr`,
    `${hdr} ${f.headerName(s.forwardedForHeader, 'forwarded-for-header')} $full_x_forwarded_for`,
    `${hdr} X-Forwarded-Host $best_http_host`,
    `${hdr} X-Forwarded-Port $pass_port`,
    `${hdr} X-Forwarded-Proto $pass_access_scheme`,
    `${hdr} X-Forwarded-Scheme $pass_access_scheme`,
    `${hdr} X-Scheme $pass_access_scheme`,
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
