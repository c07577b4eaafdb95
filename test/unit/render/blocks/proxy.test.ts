// proxy block: the proxy directives where the location differs from the ConfigMap's http-level
// values (grpc_* for gRPC, which always prints its timeouts), in the proxy slot.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { proxyDefaults } from '../../../support/config-builder.js';
import { bodyLines, inOrder, renderLocation } from '../../../support/render-blocks.js';

test('only what differs from the ConfigMap, after the headers', () => {
  const none = bodyLines(renderLocation({}));
  assert.ok(!none.some((l) => /^(proxy_(connect|read|send)_timeout|client_max_body_size|proxy_buffer)/.test(l)), none.join('\n'));
  const text = renderLocation({ proxy: { ...proxyDefaults(), readTimeout: 120, bodySize: '8m', nextUpstream: ['error', 'http_502'] }, upstreamVhost: 'api.internal' }).locationsText;
  inOrder(text, 'proxy_set_header Host "api.internal";', 'proxy_read_timeout 120s;', 'client_max_body_size 8m;', 'proxy_next_upstream error http_502;', 'proxy_pass');
  assert.not.match(text, 'proxy_connect_timeout');
});

test('gRPC: grpc_* timeouts always; a proxy_next_upstream value NGINX does not know denies the location', () => {
  const text = renderLocation({ backendProtocol: 'GRPC' }).locationsText;
  inOrder(text, 'grpc_connect_timeout 5s;', 'grpc_send_timeout 60s;', 'grpc_read_timeout 60s;', 'grpc_pass grpc://upstream_balancer;');
  const view = renderLocation({ proxy: { ...proxyDefaults(), nextUpstream: ['error; return 200'] } });
  assert.equal(view.problems.map((p) => p.field), ['proxy-next-upstream']);
});

test('the answer\'s rewriting and buffers where they differ from the ConfigMap; proxy_redirect default as what it means', () => {
  const text = renderLocation({ proxy: { ...proxyDefaults(), cookieDomain: 'backend.local example.com', cookiePath: '/app/ /', redirectFrom: 'http://b/', redirectTo: '/', busyBuffersSize: '8k', maxTempFileSize: '0' } }).locationsText;
  inOrder(text, 'proxy_busy_buffers_size 8k;', 'proxy_max_temp_file_size 0;', 'proxy_cookie_domain "backend.local" "example.com";', 'proxy_cookie_path "/app/" "/";', 'proxy_redirect "http://b/" "/";', 'proxy_pass');
  assert.match(renderLocation({ proxy: { ...proxyDefaults(), redirectFrom: 'default' } }).locationsText, 'proxy_redirect http://upstream_balancer/ /;');
  assert.not.match(renderLocation({}).locationsText, /proxy_(cookie|redirect|busy|max_temp)/);
});

test.run();
