// proxy group: the proxy directives where the location differs from the ConfigMap defaults set at
// http level (grpc_* for a gRPC backend, which always prints its timeouts), and the rewriting of
// the answer's Set-Cookie and Location headers.
import type { Location } from '../../model/core/types.js';
import { effectiveBusyBuffers } from '../../model/checks/proxy-details.js';
import type { NginxSettings } from '../../model/core/config/settings.js';
import * as f from '../filters.js';
import { RenderError } from '../filters.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

const NEXT_UPSTREAM = new Set(['error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504', 'http_403', 'http_404', 'http_429', 'non_idempotent', 'off']);

/** proxy_next_upstream's values, checked against NGINX's list. */
export function nextUpstream(values: readonly string[], field: string): string {
  if (values.length === 0) throw new RenderError(field, 'empty');
  for (const v of values) if (!NEXT_UPSTREAM.has(v)) throw new RenderError(field, `unknown value ${JSON.stringify(v.slice(0, 50))}`);
  return values.join(' ');
}

function proxyDirectives(loc: Location, s: NginxSettings): string {
  const p = loc.settings.proxy;
  const grpc = loc.settings.backendProtocol === 'GRPC' || loc.settings.backendProtocol === 'GRPCS';
  const out: string[] = [];
  const px = grpc ? 'grpc' : 'proxy';
  if (grpc || p.connectTimeout !== s.proxyConnectTimeout) out.push(`${px}_connect_timeout ${f.duration(p.connectTimeout, 'proxy-connect-timeout')}`);
  if (grpc || p.sendTimeout !== s.proxySendTimeout) out.push(`${px}_send_timeout ${f.duration(p.sendTimeout, 'proxy-send-timeout')}`);
  if (grpc || p.readTimeout !== s.proxyReadTimeout) out.push(`${px}_read_timeout ${f.duration(p.readTimeout, 'proxy-read-timeout')}`);
  if (p.bodySize !== s.proxyBodySize) out.push(`client_max_body_size ${f.size(p.bodySize, 'proxy-body-size')}`);
  if (p.clientBodyBufferSize !== s.clientBodyBufferSize) out.push(`client_body_buffer_size ${f.size(p.clientBodyBufferSize, 'client-body-buffer-size')}`);
  if (p.bufferSize !== s.proxyBufferSize || p.buffersNumber !== s.proxyBuffersNumber) {
    out.push(`${px}_buffer_size ${f.size(p.bufferSize, 'proxy-buffer-size')}`, `${px}_buffers ${f.num(p.buffersNumber, 'proxy-buffers-number')} ${f.size(p.bufferSize, 'proxy-buffer-size')}`);
  }
  if (p.buffering !== s.proxyBuffering) out.push(`proxy_buffering ${f.onoff(p.buffering, 'proxy-buffering')}`);
  if (p.requestBuffering !== s.proxyRequestBuffering) out.push(`proxy_request_buffering ${f.onoff(p.requestBuffering, 'proxy-request-buffering')}`);
  if (p.httpVersion !== s.proxyHttpVersion) out.push(`proxy_http_version ${f.httpVersion(p.httpVersion, 'proxy-http-version')}`);
  if (!sameValues(p.nextUpstream, s.proxyNextUpstream)) out.push(`${px}_next_upstream ${nextUpstream(p.nextUpstream, 'proxy-next-upstream')}`);
  if (p.nextUpstreamTimeout !== s.proxyNextUpstreamTimeout) out.push(`${px}_next_upstream_timeout ${f.duration(p.nextUpstreamTimeout, 'proxy-next-upstream-timeout')}`);
  if (p.nextUpstreamTries !== s.proxyNextUpstreamTries) out.push(`${px}_next_upstream_tries ${f.num(p.nextUpstreamTries, 'proxy-next-upstream-tries')}`);
  // Checked by the parser against this location's buffers; NGINX's own value is printed when the
  // location's buffers differ from http level's, whose busy size it would otherwise inherit.
  if (p.busyBuffersSize !== s.proxyBusyBuffersSize) out.push(`proxy_busy_buffers_size ${f.size(effectiveBusyBuffers(p.busyBuffersSize, p.bufferSize), 'proxy-busy-buffers-size')}`);
  if (p.maxTempFileSize !== s.proxyMaxTempFileSize) out.push(`proxy_max_temp_file_size ${f.size(p.maxTempFileSize, 'proxy-max-temp-file-size')}`);
  if (p.cookieDomain !== s.proxyCookieDomain) out.push(cookieRewrite('proxy_cookie_domain', p.cookieDomain, 'proxy-cookie-domain'));
  if (p.cookiePath !== s.proxyCookiePath) out.push(cookieRewrite('proxy_cookie_path', p.cookiePath, 'proxy-cookie-path'));
  if (p.redirectFrom !== s.proxyRedirectFrom || p.redirectTo !== s.proxyRedirectTo) {
    const redirect = proxyRedirect(p.redirectFrom, p.redirectTo);
    if (redirect !== proxyRedirect(s.proxyRedirectFrom, s.proxyRedirectTo)) out.push(redirect || 'proxy_redirect off');
  }
  return directives(out);
}

/** Whether two value lists are the same (what joining each with a space compared, without the strings). */
function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return a.join(' ') === b.join(' ');
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a.join(' ') === b.join(' ');
  return true;
}

function cookieRewrite(directive: string, value: string, field: string): string {
  if (value === 'off') return `${directive} off`;
  const [from, to] = value.split(' ');
  return `${directive} ${f.quote(from, field)} ${f.quote(to, field)}`;
}

/**
 * proxy_redirect for proxy-redirect-from/-to, as ingress-nginx: `off` and `default` alone, the
 * pair unless the replacement is `off` ('': NGINX's default, which rewrites nothing here). NGINX
 * takes `default` only after proxy_pass, so it is printed as what it means with
 * `proxy_pass http://upstream_balancer`.
 */
export function proxyRedirect(from: string, to: string): string {
  if (from === 'off') return 'proxy_redirect off';
  if (from === 'default') return 'proxy_redirect http://upstream_balancer/ /';
  if (to === 'off') return '';
  return `proxy_redirect ${f.quote(from, 'proxy-redirect-from')} ${f.quote(to, 'proxy-redirect-to')}`;
}

/** NGINX's own proxy_max_temp_file_size (and ingress-nginx's default). */
const NGINX_MAX_TEMP_FILE_SIZE = '1024m';

/** The http-level defaults of the answer's rewriting and buffers (ConfigMap keys). */
export function httpProxyDetails(s: NginxSettings): string {
  const out = [
    cookieRewrite('proxy_cookie_domain', s.proxyCookieDomain, 'proxy-cookie-domain'),
    cookieRewrite('proxy_cookie_path', s.proxyCookiePath, 'proxy-cookie-path'),
    proxyRedirect(s.proxyRedirectFrom, s.proxyRedirectTo),
  ];
  if (s.proxyMaxTempFileSize !== NGINX_MAX_TEMP_FILE_SIZE) out.push(`proxy_max_temp_file_size ${f.size(s.proxyMaxTempFileSize, 'proxy-max-temp-file-size')}`);
  if (s.proxyBusyBuffersSize !== '') out.push(`proxy_busy_buffers_size ${f.size(s.proxyBusyBuffersSize, 'proxy-busy-buffers-size')}`);
  return out.filter((d) => d !== '').map((d) => `    ${d};\n`).join('');
}

export const proxyBlock: RenderBlock = {
  group: 'proxy',
  applied: 'directives',
  location: {
    proxy: ({ loc, settings }) => proxyDirectives(loc, settings),
  },
};
