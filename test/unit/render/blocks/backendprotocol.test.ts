// backend-protocol block: the pass directive of each protocol; gRPC sends its headers with
// grpc_set_header, so it prints the whole set.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderLocation } from '../../../support/render-blocks.js';

test('each protocol its pass directive', () => {
  const pass = (backendProtocol: 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS' | 'AUTO_HTTP' | 'FCGI') => renderLocation({ backendProtocol }).locationsText;
  assert.match(pass('HTTP'), 'proxy_pass http://upstream_balancer;');
  assert.match(pass('HTTPS'), 'proxy_pass https://upstream_balancer;');
  assert.match(pass('AUTO_HTTP'), 'proxy_pass $scheme://upstream_balancer;');
  assert.match(pass('GRPCS'), 'grpc_pass grpcs://upstream_balancer;');
  assert.match(pass('FCGI'), 'include /etc/nginx/fastcgi_params;\n            fastcgi_pass upstream_balancer;');
  const grpc = pass('GRPC');
  assert.match(grpc, 'grpc_set_header Host $this_host;');
  assert.not.match(grpc, 'proxy_set_header');
});

test.run();
