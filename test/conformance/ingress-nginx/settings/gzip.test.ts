// ingress-nginx test/e2e/settings/gzip.go, ported: use-gzip and its keys, as a client accepting
// gzip sees them (Content-Encoding, Vary). The upstream answers httpbun's /xml, /html and
// /bytes/<n> as the echo's /__content/<type>/<n>. gzip-level changes only how small the answer
// gets, which depends on the zlib window NGINX picks for its length: for it the port also reads
// the running configuration. gzip-level and gzip-disable do not interfere and share a state.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gunzipSync } from 'node:zlib';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import type { Reply } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'gzip.test';
const XML = '/__content/application/xml/1000';
const HTML = '/__content/text/html/1000';
const bytes = (n: number) => `/__content/application/octet-stream/${n}`;

test.before(async () => {
  fx = await startFixture('gzip', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('gzip', HOST)], HOST);
});
test.after(() => fx.stop());

const get = (p: ProtocolClient, path: string, headers: Record<string, string> = {}) =>
  p.request(HOST, path, { headers: { 'Accept-Encoding': 'gzip', ...headers } });

function compressed(r: Reply, what: string, n = 1000): void {
  assert.is(r.status, 200, what);
  assert.is(r.headers['content-encoding'], 'gzip', `${what} is gzip-compressed`);
  assert.ok(r.bytes.length < n, `${what}: compressed, ${r.bytes.length} bytes for ${n}`);
  assert.is(gunzipSync(r.bytes).length, n, `${what} decodes to the upstream's ${n} bytes`);
}
function plain(r: Reply, what: string): void {
  assert.is(r.status, 200, what);
  assert.is(r.headers['content-encoding'], undefined, `${what} is sent as the backend sent it`);
}

its.both('settings/gzip.go:40', async (p) => {
  await fx.configure({});
  plain(await get(p, XML), '/xml');
});

its.both('settings/gzip.go:56', async (p) => {
  await fx.configure({ 'use-gzip': 'true' });
  const r = await get(p, XML);
  compressed(r, '/xml');
  assert.is(r.headers.vary, 'Accept-Encoding', 'gzip_vary on');
  // gzip-min-length's default, 256 bytes: a shorter answer is not worth it.
  plain(await get(p, '/__content/application/xml/255'), 'an answer under 256 bytes');
  compressed(await get(p, '/__content/application/json/300'), 'application/json, a default gzip-type', 300);
  plain(await get(p, bytes(1000)), 'application/octet-stream, not a default gzip-type');
  compressed(await get(p, XML, { 'User-Agent': 'Mozilla/45.0 (compatible; MSIE 6.0; Windows NT 5.1)' }), 'no gzip_disable by default: MSIE 6');
});

const LEVEL_AND_DISABLE = { 'use-gzip': 'true', 'gzip-level': '4', 'gzip-disable': 'msie6' };

its.both('settings/gzip.go:82', async (p) => {
  await fx.configure(LEVEL_AND_DISABLE);
  const r = await p.request(HOST, XML, { headers: { 'Accept-Encoding': 'gzip' } });
  compressed(r, '/xml');
  assert.match((await fx.ctl.control('/nginx.conf')).body, /\n\s*gzip_comp_level 4;/);
});

its.both('settings/gzip.go:102', async (p) => {
  await fx.configure(LEVEL_AND_DISABLE);
  compressed(await get(p, XML, { 'User-Agent': 'Mozilla/4.8 [en] (Windows NT 5.1; U)' }), 'another browser');
  plain(await get(p, XML, { 'User-Agent': 'Mozilla/45.0 (compatible; MSIE 6.0; Windows NT 5.1)' }), 'MSIE 6');
});

its.both('settings/gzip.go:132', async (p) => {
  await fx.configure({ 'use-gzip': 'true', 'gzip-min-length': '100', 'gzip-types': 'application/octet-stream' });
  const short = await get(p, bytes(99));
  plain(short, '99 bytes');
  assert.is(short.headers['content-type'], 'application/octet-stream');
  const long = await get(p, bytes(100));
  compressed(long, '100 bytes', 100);
  assert.is(long.headers['content-type'], 'application/octet-stream');
});

its.both('settings/gzip.go:164', async (p) => {
  await fx.configure({ 'use-gzip': 'true', 'gzip-types': 'text/html' });
  const xml = await get(p, XML);
  plain(xml, '/xml');
  assert.is(xml.headers['content-type'], 'application/xml');
  const html = await get(p, HTML);
  compressed(html, '/html');
  assert.is(html.headers['content-type'], 'text/html');
});

test.run();
