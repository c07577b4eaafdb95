// cors block: the Access-Control-* set for an allowed origin (any with `*`), the preflight
// answered 204, in the cors slot after the access rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CorsConfig } from '../../../../src/model/ingress/annotations/cors.js';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

const CORS: CorsConfig = {
  enabled: true, allowOrigin: ['*'], allowMethods: 'GET, PUT', allowHeaders: 'X-A', exposeHeaders: '', allowCredentials: true, maxAge: 60,
};

test('any origin: the set for every request, the preflight answered 204', () => {
  const text = renderLocation({ cors: CORS, denylist: ['10.0.0.0/8'] }).locationsText;
  inOrder(text, 'deny 10.0.0.0/8;', 'set $cors "true";', 'set $cors_allow_origin "*";', 'if ($request_method = OPTIONS) {',
    'more_set_headers "Access-Control-Allow-Origin: $cors_allow_origin";', 'more_set_headers "Access-Control-Allow-Credentials: true";',
    'more_set_headers "Access-Control-Allow-Methods: GET, PUT";', 'more_set_headers "Access-Control-Max-Age: 60";', 'return 204;', 'proxy_pass');
  assert.not.match(text, 'Expose-Headers');
});

test('listed origins: a case-insensitive match of the Origin, `*.` covering one label', () => {
  const text = renderLocation({ cors: { ...CORS, allowOrigin: ['https://a.example.com', 'https://*.example.org'], allowCredentials: false } }).locationsText;
  // The regex is a quoted NGINX string: its backslashes are doubled.
  assert.match(text, String.raw`if ($http_origin ~* "^(https://a\\.example\\.com|https://[A-Za-z0-9-]+\\.example\\.org)$") {`);
  assert.not.match(text, 'Allow-Credentials');
});

test('an origin the parser would not give denies the location, naming cors-allow-origin', () => {
  const view = renderLocation({ cors: { ...CORS, allowOrigin: ['https://a.example.com/path'] } });
  assert.equal(view.problems.map((p) => p.field), ['cors-allow-origin']);
});

test.run();
