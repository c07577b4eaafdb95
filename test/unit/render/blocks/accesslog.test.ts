// access-log block: `access_log off` in the access slot, or only the metrics log when request
// metrics are on (access_log off would stop that one too).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { METRICS_LOG_FORMAT_NAME } from '../../../../src/render/metrics-log.js';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('a location with its access log on prints nothing; off prints access_log off before the other access rules', () => {
  assert.not.match(renderLocation({}).locationsText, 'access_log');
  const off = renderLocation({ accessLog: false, denylist: ['10.0.0.0/8'] }).locationsText;
  inOrder(off, 'rewrite_by_lua_block', 'access_log off;', 'deny 10.0.0.0/8;', 'proxy_pass');
});

test('with request metrics, a location without access log keeps the metrics log', () => {
  const text = renderLocation({ accessLog: false }, { runtime: { metricsLog: '/var/lib/ingress-rx/logs/metrics.log' } }).locationsText;
  assert.match(text, `access_log "/var/lib/ingress-rx/logs/metrics.log" ${METRICS_LOG_FORMAT_NAME}`);
  assert.not.match(text, 'access_log off');
});

test('enable-rewrite-log prints rewrite_log on', () => {
  assert.match(renderLocation({ rewriteLog: true }).locationsText, 'rewrite_log on;');
  assert.not.match(renderLocation({}).locationsText, 'rewrite_log');
});

test.run();
