// ratelimit block: the limits in the access slot and their zones at http level, named after the
// location and made once for the two pieces of a Prefix split.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RateLimitConfig } from '../../../../src/model/ingress/annotations/ratelimit.js';
import { inOrder, renderLocation, renderServer } from '../../../support/render-blocks.js';

const RL: RateLimitConfig = { rps: 5, rpm: 0, connections: 3, burstMultiplier: 2, limitRate: 100, limitRateAfter: 0, allowlist: [] };

test('limits in the access slot, zones at http level', () => {
  const view = renderLocation({ rateLimit: RL, allowlist: ['10.0.0.0/8'] });
  const zone = /limit_conn (rl_[0-9a-f]{12})_conn 3;/.exec(view.locationsText)?.[1];
  assert.ok(zone, view.locationsText);
  inOrder(view.locationsText, 'deny all;', `limit_conn ${zone}_conn 3;`, `limit_req zone=${zone}_rps burst=10 nodelay;`, 'limit_rate 100k;', 'proxy_pass');
  assert.is(view.httpLevel, `    limit_conn_zone $binary_remote_addr zone=${zone}_conn:5m;\n    limit_req_zone $binary_remote_addr zone=${zone}_rps:5m rate=5r/s;\n`);
});

test('limit-whitelist networks get an empty key; the pieces of a Prefix split share one zone set', () => {
  const rl = { ...RL, connections: 0, allowlist: ['10.0.0.0/8'] };
  const view = renderServer([
    { path: '/p/', pathType: 'Prefix', ingressPath: '/p', rateLimit: rl },
    { path: '/p', pathType: 'Exact', ingressPath: '/p', rateLimit: rl },
  ]);
  assert.is(view.httpLevel.match(/limit_req_zone/g)?.length, 1, view.httpLevel);
  assert.match(view.httpLevel, /geo \$rl_[0-9a-f]{12}_allowed \{\n        default 0;\n        10\.0\.0\.0\/8 1;\n    \}/);
  assert.match(view.httpLevel, /map \$rl_[0-9a-f]{12}_allowed \$rl_[0-9a-f]{12}_key \{\n        0 \$binary_remote_addr;\n        1 "";/);
});

test('limit-conn-zone-variable keys the zones, and another key names other zones (NGINX refuses a zone whose key changed)', () => {
  const rateLimit = RL;
  const plain = renderLocation({ rateLimit }).httpLevel;
  const keyed = renderLocation({ rateLimit }, { settings: { limitConnZoneVariable: '$binary_remote_addr$http_x_tenant' } }).httpLevel;
  assert.match(plain, /limit_conn_zone \$binary_remote_addr zone=rl_\w+_conn:5m;/);
  assert.match(keyed, /limit_conn_zone \$binary_remote_addr\$http_x_tenant zone=rl_\w+_[0-9a-f]{8}_conn:5m;/);
  assert.match(keyed, /limit_req_zone \$binary_remote_addr\$http_x_tenant zone=rl_\w+_[0-9a-f]{8}_rps:5m/);
});

test.run();
