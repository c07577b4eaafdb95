// authexternal block: auth_request to an internal location per Ingress location (made once for
// the two pieces of a Prefix split), response headers copied upstream, Set-Cookie passed to the
// client, a 401 sent to auth-signin, and the http-level auth cache when a cache key is set.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ExternalAuthConfig } from '../../../../src/model/ingress/annotations/authexternal.js';
import { inOrder, renderLocation, renderServer } from '../../../support/render-blocks.js';
import { location } from '../../../support/config-builder.js';

const EA: ExternalAuthConfig = {
  url: 'http://auth.example.com/check', host: 'auth.example.com', method: '', signin: 'https://login.example.com/start',
  signinRedirectParam: '', responseHeaders: ['X-User'], cacheKey: '', cacheDuration: [],
  requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {}, keepalive: null,
};

test('auth_request and the copied headers in the access slot, the auth location in the server', () => {
  const view = renderLocation({ externalAuth: EA });
  const name = /auth_request "(\/_external-auth [0-9a-f]{12})";/.exec(view.locationsText)?.[1];
  assert.ok(name, view.locationsText);
  inOrder(view.locationsText, 'rewrite_by_lua_block', `auth_request "${name}";`, 'auth_request_set $auth_cookie $upstream_http_set_cookie;',
    'add_header Set-Cookie $auth_cookie;', 'auth_request_set $authHeader0 $upstream_http_x_user;', 'proxy_set_header X-User $authHeader0;',
    'error_page 401 = "https://login.example.com/start?rd=$pass_access_scheme://$redirect_http_host$escaped_request_uri";',
    'proxy_set_header Host $this_host;', 'proxy_pass');
  inOrder(view.extra, `location = "${name}" {`, 'internal;', 'access_log off;', 'proxy_set_header Host auth.example.com;', 'set $target "http://auth.example.com/check";', 'proxy_pass $target;');
  assert.equal(view.uses, []);
});

test('one auth location for the two pieces of a Prefix split; a cache key asks for the auth cache', () => {
  const ea = { ...EA, cacheKey: '$remote_user', responseHeaders: [] };
  const view = renderServer([
    { path: '/p/', pathType: 'Prefix', ingressPath: '/p', externalAuth: ea },
    { path: '/p', pathType: 'Exact', ingressPath: '/p', externalAuth: ea },
  ]);
  assert.is(view.extra.match(/location = "\/_external-auth /g)?.length, 1);
  assert.match(view.extra, 'proxy_cache auth_cache;');
  assert.equal(view.uses, ['auth_cache']);
});

test('an auth URL the renderer refuses denies the location and adds no auth location', () => {
  const view = renderLocation({ externalAuth: { ...EA, url: 'http://auth.example.com/"; return 200; #' } });
  assert.equal(view.problems.map((p) => p.field), ['auth-url']);
  assert.is(view.extra, '');
});

test('auth-proxy-set-headers replace the standard line of the same name; auth-request-redirect, always-set-cookie and auth-snippet', () => {
  const view = renderLocation({ externalAuth: {
    ...EA, proxySetHeaders: { 'X-Real-IP': '$http_x_client', 'X-Team': 'blue' }, requestRedirect: '/landing', alwaysSetCookie: true, snippet: 'proxy_set_header X-Snip on;',
  } });
  assert.match(view.locationsText, 'add_header Set-Cookie $auth_cookie always;');
  assert.not.match(view.extra, 'proxy_set_header X-Real-IP $remote_addr;');
  // A header a client fills may carry control bytes: escaped by Lua before it is sent; a literal is printed as it is.
  inOrder(view.extra, 'proxy_set_header X-Auth-Request-Redirect "/landing";', 'proxy_set_header X-Real-IP $auth_header_0;', 'proxy_set_header X-Team "blue";',
    'set $auth_header_0 "$http_x_client";', 'set_by_lua_block $auth_header_0 {', 'return require("util").header_value(ngx.var.auth_header_0)',
    '# auth-snippet', 'proxy_set_header X-Snip on;', 'proxy_pass $target;');
});

test('values with variables a client fills are escaped before they reach a header or the auth request line', () => {
  const view = renderLocation({ externalAuth: { ...EA, url: 'http://auth.example.com/check$uri', signin: 'https://login.example.com/start?rd=$scheme://$http_host$uri', requestRedirect: '$uri' } });
  inOrder(view.extra, 'proxy_set_header X-Auth-Request-Redirect $auth_request_redirect;', 'set $auth_request_redirect "$uri";',
    'return require("util").header_value(ngx.var.auth_request_redirect)', 'set $target "http://auth.example.com/check$uri";',
    'set_by_lua_block $target {', 'return require("util").url_value(ngx.var.target)', 'proxy_pass $target;');
  // The signin URL names the validated host, and its $uri is escaped.
  inOrder(view.locationsText, 'set $auth_signin "https://login.example.com/start?rd=$scheme://${redirect_http_host}$uri";',
    'return require("util").header_value(ngx.var.auth_signin)', 'error_page 401 = $auth_signin;');
});

test('auth-keepalive: auth_request as without it; the auth location chooses its peer in Lua; an upstream per location keeps connections', () => {
  const keepalive = { connections: 8, requests: 100, timeout: 30, peerHost: 'auth.example.com', peerPort: 80 };
  const view = renderLocation({ externalAuth: { ...EA, keepalive } });
  assert.not.match(view.locationsText, 'access_by_lua');
  inOrder(view.locationsText, 'auth_request "/_external-auth ', 'auth_request_set $authHeader0 $upstream_http_x_user;', 'proxy_set_header X-User $authHeader0;');
  const upstream = /upstream (auth_keepalive_[0-9a-f]{12}) \{/.exec(view.httpLevel)?.[1];
  assert.ok(upstream, view.httpLevel);
  inOrder(view.httpLevel, 'require("external_peer").balance()', 'keepalive 8;', 'keepalive_requests 100;', 'keepalive_timeout 30s;');
  inOrder(view.extra, 'proxy_set_header Connection "";', `set $target "http://${upstream}/check";`, 'rewrite_by_lua_block',
    'require("external_auth").choose_peer("/_external-auth ', '{ host = "auth.example.com", port = 80 }', 'proxy_pass $target;');
});

test('a tenant auth service without auth-keepalive: its peer chosen in Lua, through an upstream that keeps no connection', () => {
  const keepalive = { connections: 0, requests: 1000, timeout: 60, peerHost: '$host', peerPort: 443 };
  const view = renderLocation({ externalAuth: { ...EA, url: 'https://$host/oauth2/auth', host: '$host', keepalive } });
  assert.match(view.locationsText, 'auth_request "/_external-auth ');
  const upstream = /upstream (auth_keepalive_[0-9a-f]{12}) \{/.exec(view.httpLevel)?.[1];
  assert.ok(upstream, view.httpLevel);
  inOrder(view.httpLevel, 'require("external_peer").balance()', '}\n    }');
  assert.not.match(view.httpLevel, 'keepalive ');
  assert.not.match(view.extra, 'Connection');
  inOrder(view.extra, 'proxy_set_header Host $host;', `set $target "https://${upstream}/oauth2/auth";`, 'if ($target ~* "^https?://unix:")',
    'choose_peer("/_external-auth ', '{ host_from_request = true, port = 443 }', 'proxy_pass $target;');
});

test('the auth location repeats a proxy-body-size of its own: NGINX checks the request\'s Content-Length in the subrequest too', () => {
  const plain = renderLocation({ externalAuth: EA });
  assert.not.match(plain.extra, 'client_max_body_size');
  const big = renderLocation({ externalAuth: EA, proxy: { ...location().settings.proxy, bodySize: '8m' } });
  inOrder(big.extra, 'location = "/_external-auth ', 'client_max_body_size 8m;', 'proxy_pass_request_body off;');
});

test('a ConfigMap header value stays one quoted argument; one the renderer refuses denies the location', () => {
  const quoted = renderLocation({ externalAuth: { ...EA, proxySetHeaders: { 'X-A': 'b"; return 200; #' } } });
  assert.match(quoted.extra, 'proxy_set_header X-A "b\\"; return 200; #";');
  const view = renderLocation({ externalAuth: { ...EA, proxySetHeaders: { 'X-A': 'b\nreturn 200;' } } });
  assert.ok(view.problems.some((p) => p.field.startsWith('auth-proxy-set-headers')), JSON.stringify(view.problems));
  assert.is(view.extra, '');
});

test.run();
