// authexternal block: auth_request to an internal location per Ingress location (made once for
// the two pieces of a Prefix split), response headers copied upstream, Set-Cookie passed to the
// client, a 401 sent to auth-signin, and the http-level auth cache when a cache key is set.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ExternalAuthConfig } from '../../../../src/model/annotations/authexternal.js';
import { inOrder, renderLocation, renderServer } from '../../../support/render-blocks.js';

const EA: ExternalAuthConfig = {
  url: 'http://auth.example.com/check', host: 'auth.example.com', method: '', signin: 'https://login.example.com/start',
  signinRedirectParam: '', responseHeaders: ['X-User'], cacheKey: '', cacheDuration: [],
};

test('auth_request and the copied headers in the access slot, the auth location in the server', () => {
  const view = renderLocation({ externalAuth: EA });
  const name = /auth_request "(\/_external-auth-[0-9a-f]{12})";/.exec(view.locationsText)?.[1];
  assert.ok(name, view.locationsText);
  inOrder(view.locationsText, 'rewrite_by_lua_block', `auth_request "${name}";`, 'auth_request_set $auth_cookie $upstream_http_set_cookie;',
    'add_header Set-Cookie $auth_cookie;', 'auth_request_set $authHeader0 $upstream_http_x_user;', 'proxy_set_header X-User $authHeader0;',
    'error_page 401 = "https://login.example.com/start?rd=$pass_access_scheme://$http_host$escaped_request_uri";',
    'proxy_set_header Host $best_http_host;', 'proxy_pass');
  inOrder(view.extra, `location = "${name}" {`, 'internal;', 'access_log off;', 'proxy_set_header Host auth.example.com;', 'set $target "http://auth.example.com/check";', 'proxy_pass $target;');
  assert.equal(view.uses, []);
});

test('one auth location for the two pieces of a Prefix split; a cache key asks for the auth cache', () => {
  const ea = { ...EA, cacheKey: '$remote_user', responseHeaders: [] };
  const view = renderServer([
    { path: '/p/', pathType: 'Prefix', ingressPath: '/p', externalAuth: ea },
    { path: '/p', pathType: 'Exact', ingressPath: '/p', externalAuth: ea },
  ]);
  assert.is(view.extra.match(/location = "\/_external-auth-/g)?.length, 1);
  assert.match(view.extra, 'proxy_cache auth_cache;');
  assert.equal(view.uses, ['auth_cache']);
});

test('an auth URL the renderer refuses denies the location and adds no auth location', () => {
  const view = renderLocation({ externalAuth: { ...EA, url: 'http://auth.example.com/"; return 200; #' } });
  assert.equal(view.problems.map((p) => p.field), ['auth-url']);
  assert.is(view.extra, '');
});

test.run();
