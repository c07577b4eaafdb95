// What fails only for HTTP/2 clients, found when a value is read: Lua APIs lua-nginx-module refuses
// inside HTTP/2 requests, and TLS settings HTTP/2 clients refuse; warned on the ConfigMap too.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HTTP2_FAILURE, http2LuaProblem, http2TlsProblem } from '../../../src/model/checks/http2.js';
import { parseConfigMap } from '../../../src/model/core/config/parse.js';

const KEYS = { protocols: 'ssl-protocols', ciphers: 'ssl-ciphers' };

test('a snippet calling ngx.location.capture(_multi), ngx.req.socket or ngx.req.raw_header is named with its line', () => {
  assert.is(http2LuaProblem('more_set_headers "X: y";'), null);
  assert.is(http2LuaProblem('access_by_lua_block { ngx.log(ngx.ERR, "capture") }'), null);
  for (const [api, line] of [['location.capture', 1], ['location.capture_multi', 2], ['req.socket', 2], ['req.raw_header', 3]] as const) {
    const text = `${'\n'.repeat(line - 1)}content_by_lua_block { local x = ngx.${api}(...) }`;
    assert.is(http2LuaProblem(text), `${HTTP2_FAILURE}line ${line}: lua-nginx-module refuses ngx.${api} inside an HTTP/2 request (those requests answer 500)`, api);
  }
});

test('TLS HTTP/2 clients refuse: no TLS 1.2 or 1.3, or TLS 1.2 alone without an ECDHE/DHE AEAD cipher', () => {
  assert.is(http2TlsProblem(['TLSv1.2', 'TLSv1.3'], 'AES128-SHA', KEYS), null, 'TLS 1.3 is always there for them');
  assert.is(http2TlsProblem(['TLSv1.2'], 'ECDHE-ECDSA-AES128-GCM-SHA256:AES128-SHA', KEYS), null);
  assert.is(http2TlsProblem(['TLSv1.2'], 'ECDHE-RSA-CHACHA20-POLY1305', KEYS), null);
  assert.is(http2TlsProblem(['TLSv1.2'], 'DHE-RSA-AES256-GCM-SHA384', KEYS), null);
  assert.is(http2TlsProblem(['TLSv1.2'], 'AES128-SHA:AES256-SHA', KEYS)?.key, 'ssl-ciphers');
  assert.is(http2TlsProblem(['TLSv1.2'], 'AES128-GCM-SHA256', KEYS)?.key, 'ssl-ciphers', 'AEAD without an ephemeral key exchange');
  assert.is(http2TlsProblem(['TLSv1.2'], 'ECDHE-RSA-AES128-SHA256', KEYS)?.key, 'ssl-ciphers', 'ephemeral, but CBC');
  // An OpenSSL cipher string is expanded as NGINX's OpenSSL expands it.
  assert.is(http2TlsProblem(['TLSv1.2'], 'HIGH:!aNULL:!MD5', KEYS), null);
  assert.is(http2TlsProblem(['TLSv1.2'], 'HIGH:!AESGCM:!CHACHA20:!AESCCM', KEYS)?.key, 'ssl-ciphers');
  const old = http2TlsProblem(['TLSv1', 'TLSv1.1'], 'HIGH', KEYS);
  assert.is(old?.key, 'ssl-protocols');
  assert.ok(old?.message.startsWith(HTTP2_FAILURE));
});

test('the ConfigMap: warned, kept; nothing said with use-http2 false', () => {
  const parse = (data: Record<string, string>) => parseConfigMap(data, { object: 'ConfigMap ingress/cfg' });
  const data = {
    'ssl-protocols': 'TLSv1.2', 'ssl-ciphers': 'AES128-SHA', 'annotations-risk-level': 'Critical',
    'location-snippet': 'rewrite_by_lua_block {\n  ngx.req.raw_header()\n}', 'stream-snippet': 'server { listen 9000; content_by_lua_block { ngx.req.socket() } }',
  };
  const { settings, warnings } = parse(data);
  assert.equal(warnings.filter((w) => w.message.startsWith(HTTP2_FAILURE)).map((w) => w.field).sort(), ['data["location-snippet"]', 'data["ssl-ciphers"]']);
  assert.is(settings.sslCiphers, 'AES128-SHA', 'kept: HTTP/1.1 clients are served');
  assert.match(settings.locationSnippet, /raw_header/);
  assert.equal(parse({ ...data, 'use-http2': 'false' }).warnings.filter((w) => w.message.startsWith(HTTP2_FAILURE)), []);
});

test.run();
