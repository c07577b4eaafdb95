// ingress-nginx test/e2e/annotations/clientbodybuffersize.go, ported: each It a host of its own on
// one controller. The e2e tests grep nginx.conf for client_body_buffer_size; the port sends
// request bodies on either side of the size: NGINX keeps a body that fits the buffer in memory
// and writes a larger one to a temporary file, which it reports in the error log (warn level,
// with the request's host). NGINX keeps in memory a body up to a quarter larger than the buffer
// (and what arrived with the headers), so the larger bodies here are a few times the size.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

const HOSTS: Record<string, string> = {
  'b1000.cbbs.test': '1000',
  'upper-k.cbbs.test': '1K',
  'lower-k.cbbs.test': '1k',
  'lower-m.cbbs.test': '1m',
  'upper-m.cbbs.test': '1M',
  'invalid.cbbs.test': '1b',
};

test.before(async () => {
  fx = await startFixture('clientbodybuffersize');
  fx.apply('ingresses.json', Object.entries(HOSTS).map(([host, size]) => fx.single(host.split('.')[0]!, host, { 'client-body-buffer-size': size })));
  await Promise.all(Object.keys(HOSTS).map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

const TEMP_FILE = 'a client request body is buffered to a temporary file';
const tempFileLines = (host: string) => readFileSync(fx.errorLog, 'utf8').split('\n').filter((l) => l.includes(TEMP_FILE) && l.includes(`host: "${host}"`)).length;

/** Whether NGINX wrote a POST body of `bytes` on `host` to a temporary file; the upstream receives it whole either way. */
async function bufferedToFile(p: ProtocolClient, host: string, bytes: number): Promise<boolean> {
  const before = tempFileLines(host);
  const r = await p.request(host, '/', { method: 'POST', body: 'b'.repeat(bytes) });
  assert.is(r.status, 200);
  assert.is(r.json?.bodyBytes, bytes);
  // The warning is written while the body is read, before the upstream is asked.
  return tempFileLines(host) > before;
}

its.both('annotations/clientbodybuffersize.go:37', async (p) => {
  assert.is(await bufferedToFile(p, 'b1000.cbbs.test', 4000), true, 'a 4000-byte body exceeds 1000 bytes');
  assert.is(await bufferedToFile(p, 'b1000.cbbs.test', 600), false);
});

its.both('annotations/clientbodybuffersize.go:59', async (p) => {
  assert.is(await bufferedToFile(p, 'upper-k.cbbs.test', 4000), true, 'a 4000-byte body exceeds 1K');
  assert.is(await bufferedToFile(p, 'upper-k.cbbs.test', 600), false);
});

its.both('annotations/clientbodybuffersize.go:81', async (p) => {
  assert.is(await bufferedToFile(p, 'lower-k.cbbs.test', 4000), true, 'a 4000-byte body exceeds 1k');
  assert.is(await bufferedToFile(p, 'lower-k.cbbs.test', 600), false);
});

// 100 KB would go to a file under the default buffer (8k); 1m holds it.
its.both('annotations/clientbodybuffersize.go:103', async (p) => {
  assert.is(await bufferedToFile(p, 'lower-m.cbbs.test', 100_000), false);
});

its.both('annotations/clientbodybuffersize.go:125', async (p) => {
  assert.is(await bufferedToFile(p, 'upper-m.cbbs.test', 100_000), false);
});

its.both('annotations/clientbodybuffersize.go:147', async (p) => {
  // `1b` is no size NGINX takes: the default (8k) stays, and the value is named in a warning.
  await fx.warned((w) => w.includes('client-body-buffer-size') && w.includes('1b'), 'the refused client-body-buffer-size 1b');
  assert.is(await bufferedToFile(p, 'invalid.cbbs.test', 100_000), true);
  assert.is(await bufferedToFile(p, 'invalid.cbbs.test', 4000), false);
});

test.run();
