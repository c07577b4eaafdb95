// custom-http-errors block: the location intercepts the statuses (errors slot) and hands each to
// an internal location, made once per server and backend, that asks the default backend (or the
// default-backend annotation's) for the page.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation, renderServer } from '../../../support/render-blocks.js';

test('error_page per status in the errors slot; one internal location per status and backend', () => {
  const view = renderServer([
    { path: '/a', customHttpErrors: [404, 503] },
    { path: '/b', customHttpErrors: [404], defaultBackend: 'custom-default-backend-default-errors' },
    { path: '/c', customHttpErrors: [404] },
  ]);
  inOrder(view.locationsText, 'location "/a"', 'proxy_intercept_errors on;', 'error_page 404 = @custom_upstream-default-backend_404;',
    'error_page 503 = @custom_upstream-default-backend_503;', 'proxy_pass');
  inOrder(view.locationsText, 'location "/b"', 'error_page 404 = @custom_custom-default-backend-default-errors_404;');
  assert.is(view.extra.match(/location @custom_upstream-default-backend_404 \{/g)?.length, 1, view.extra);
  inOrder(view.extra, 'location @custom_custom-default-backend-default-errors_404 {', 'proxy_set_header X-Code 404;',
    'set $proxy_upstream_name "custom-default-backend-default-errors";', 'balancer.rewrite("custom-default-backend-default-errors")');
});

test('no statuses, no directives', () => {
  const view = renderServer([{}]);
  assert.not.match(view.locationsText, 'error_page');
  assert.is(view.extra, '');
});

test('disable-proxy-intercept-errors keeps the error pages but not proxy_intercept_errors', () => {
  const text = renderLocation({ customHttpErrors: [503], disableProxyInterceptErrors: true }).locationsText;
  assert.match(text, 'error_page 503');
  assert.not.match(text, 'proxy_intercept_errors');
});

test.run();
