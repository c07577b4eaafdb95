// redirect block: permanent/temporal-redirect as the first directive after the variables, and the
// from-to-www redirect server printed after its server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('the redirect in the redirect slot, before the Lua phase', () => {
  const text = renderLocation({ redirect: { url: 'https://new.example.com/x', code: 308 } }).locationsText;
  inOrder(text, 'set $proxy_alternative_upstream_name "";', 'return 308 "https://new.example.com/x";', 'rewrite_by_lua_block');
});

test('the www twin redirects to the host, on the same ports without default_server', () => {
  const view = renderLocation({}, { wwwRedirectFrom: 'www.app.example.com', server: { redirectFromToWWW: true } });
  inOrder(view.after, '## start server www.app.example.com', 'server_name www.app.example.com;', 'listen *:80;',
    'return lua_ingress.www_redirect_target("app.example.com")', 'return 308 $redirect_to;', '## end server www.app.example.com');
  assert.not.match(view.after, 'default_server');
  assert.is(renderLocation({}).after, '');
});

test('relative-redirects differing from the ConfigMap prints absolute_redirect', () => {
  assert.match(renderLocation({ relativeRedirects: true }).locationsText, 'absolute_redirect off;');
  assert.not.match(renderLocation({}).locationsText, 'absolute_redirect');
});

test.run();
