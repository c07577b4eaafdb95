// rewrite block: app-root's redirect of `/` (redirect slot), the SSL-redirect words of the Lua
// phase, the rewrite of the matched path (errors slot), X-Forwarded-Prefix (headers).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/defaults.js';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

const REWRITE = { ...defaultAnnotations(defaultSettings()).rewrite, sslRedirect: false };

test('app-root, the SSL-redirect words, rewrite-target and X-Forwarded-Prefix, each in its slot', () => {
  const text = renderLocation({
    path: '/api', rewrite: { ...REWRITE, appRoot: '/app', sslRedirect: true, preserveTrailingSlash: true, target: '/v2/$1', xForwardedPrefix: '/api' },
  }).locationsText;
  inOrder(text, 'if ($uri = /) {', 'return 302 "$scheme://$redirect_http_host/app";', 'rewrite_by_lua_block {', 'lua_ingress.rewrite("ssl-redirect preserve-trailing-slash", "app.example.com")',
    'rewrite "(?i)^/api" "/v2/$1" break;', 'proxy_set_header X-Forwarded-Prefix "/api";', 'proxy_set_header Host $this_host;', 'proxy_pass');
});

test('no redirect words without a redirect; a regex host rewrites with the path as a regex', () => {
  assert.not.match(renderLocation({ rewrite: REWRITE }).locationsText, 'lua_ingress.rewrite');
  const text = renderLocation({ path: '/api/(.*)', rewrite: { ...REWRITE, target: '/$1' } }, { server: { useRegex: true } }).locationsText;
  assert.match(text, 'rewrite "(?i)/api/(.*)" "/$1" break;');
});

test('use-port-in-redirects differing from the ConfigMap prints port_in_redirect', () => {
  assert.match(renderLocation({ rewrite: { ...defaultAnnotations(defaultSettings()).rewrite, usePortInRedirects: true } }).locationsText, 'port_in_redirect on;');
  assert.not.match(renderLocation({}).locationsText, 'port_in_redirect');
});

test.run();
