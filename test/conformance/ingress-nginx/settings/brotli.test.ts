// ingress-nginx test/e2e/settings/brotli.go, ported: with enable-brotli, brotli-types and
// brotli-min-length, an answer of that type is brotli-compressed from that length on, for a client
// that accepts br (Debian's brotli filter module), and the body decodes with the brotli library
// (Node's zlib) to what the upstream sent. httpbun's /bytes/<n> is the echo's.
import { test } from 'uvu';
import { brotliDecompressSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'brotli.test';
const MIN = 24;

test.before(async () => {
  fx = await startFixture('brotli', { configmap: { 'enable-brotli': 'true', 'brotli-types': 'application/octet-stream', 'brotli-min-length': String(MIN) } });
  await fx.applyAndWait('ingress.json', [fx.single('brotli', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/brotli.go:38', async (p) => {
  const long = await p.request(HOST, `/__bytes/${MIN}`, { headers: { 'Accept-Encoding': 'br' } });
  assert.is(long.status, 200);
  assert.is(long.headers['content-type'], 'application/octet-stream');
  assert.is(long.headers['content-encoding'], 'br');
  assert.is(brotliDecompressSync(long.bytes).toString(), 'x'.repeat(MIN), 'the brotli stream decodes to the upstream\'s bytes');
  const short = await p.request(HOST, `/__bytes/${MIN - 1}`, { headers: { 'Accept-Encoding': 'br' } });
  assert.is(short.status, 200);
  assert.is(short.headers['content-type'], 'application/octet-stream');
  assert.is(short.headers['content-encoding'], undefined);
  assert.is(short.body, 'x'.repeat(MIN - 1));
});

test.run();
