// proxy group: the proxy directives where the location differs from the ConfigMap defaults set at
// http level (grpc_* for a gRPC backend, which always prints its timeouts).
import type { Location } from '../../model/types.js';
import type { NginxSettings } from '../../model/config/settings.js';
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
  const p = loc.proxy;
  const grpc = loc.backendProtocol === 'GRPC' || loc.backendProtocol === 'GRPCS';
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
  if (p.nextUpstream.join(' ') !== s.proxyNextUpstream.join(' ')) out.push(`${px}_next_upstream ${nextUpstream(p.nextUpstream, 'proxy-next-upstream')}`);
  if (p.nextUpstreamTimeout !== s.proxyNextUpstreamTimeout) out.push(`${px}_next_upstream_timeout ${f.duration(p.nextUpstreamTimeout, 'proxy-next-upstream-timeout')}`);
  if (p.nextUpstreamTries !== s.proxyNextUpstreamTries) out.push(`${px}_next_upstream_tries ${f.num(p.nextUpstreamTries, 'proxy-next-upstream-tries')}`);
  return directives(out);
}

export const proxyBlock: RenderBlock = {
  group: 'proxy',
  applied: 'directives',
  location: {
    proxy: ({ loc, settings }) => proxyDirectives(loc, settings),
  },
};
