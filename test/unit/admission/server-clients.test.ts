// The webhook server shared between clients it cannot tell apart but by address: connections and
// bodies in flight per client and in all (the client holding the most gives way), and reviews
// answered one at a time, next the client that used least review time. Real HTTPS; clients on
// loopback addresses of their own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { silentLogger } from '../../../src/log.js';
import { startWebhookServer, type WebhookServer } from '../../../src/admission/server.js';
import type { Reviewer, ReviewResult } from '../../../src/admission/review.js';
import { waitFor } from '../../support/wait.js';

const certs = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const CA = readFileSync(`${certs}default.crt`);
const fixture = JSON.parse(readFileSync(new URL('../../fixtures/admission/create-ingress.json', import.meta.url), 'utf8')) as { request: Record<string, any> };

/** The order reviews reach the reviewer; a name starting with `slow` costs 30 ms of the server's loop. */
const seen: string[] = [];
const reviewer: Reviewer = {
  review(ing): ReviewResult {
    seen.push(ing.metadata.name);
    if (ing.metadata.name.startsWith('slow')) { const end = performance.now() + 30; while (performance.now() < end) { /* busy */ } }
    return { served: true, reason: '', allowed: true, findings: [], tested: 1, viewMs: 0, buildMs: 0, configBytes: () => 0 };
  },
};

let webhook: WebhookServer;
test.before(async () => {
  webhook = await startWebhookServer({
    address: '127.0.0.1:0', certFile: `${certs}default.crt`, keyFile: `${certs}default.key`, logger: silentLogger(), reviewer,
    maxConnectionsPerClient: 4, maxConnections: 10, maxBodyBytes: 256 * 1024, maxInFlightBytesPerClient: 400 * 1024, maxInFlightBytes: 700 * 1024,
    handshakeTimeoutMs: 2000, headersTimeoutMs: 2000, requestTimeoutMs: 4000, timeoutCheckIntervalMs: 100,
  });
});
test.after(() => webhook.close());

function body(name: string): string {
  return JSON.stringify({ ...fixture, request: { ...fixture.request, uid: name, name, object: { ...fixture.request.object, metadata: { ...fixture.request.object.metadata, name } } } });
}

function review(name: string, from: string, agent: Agent | false = false): Promise<{ status: number; uid?: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: webhook.port, method: 'POST', path: '/', ca: CA, servername: 'ingress.local', agent, localAddress: from, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d; });
      res.on('end', () => { let uid: string | undefined; try { uid = JSON.parse(text).response.uid; } catch { /* not a review */ } resolve({ status: res.statusCode ?? 0, uid }); });
    });
    req.on('error', () => resolve({ status: 0 }));
    req.end(body(name));
  });
}

async function tls(from: string): Promise<TLSSocket> {
  const s = tlsConnect({ host: '127.0.0.1', port: webhook.port, ca: CA, servername: 'ingress.local', localAddress: from } as ConnectionOptions);
  s.on('error', () => {});
  await new Promise<void>((resolve, reject) => { s.once('secureConnect', () => resolve()); s.once('error', reject); });
  return s;
}

const closed = (s: TLSSocket) => new Promise<void>((resolve) => { if (s.destroyed) resolve(); else s.once('close', () => resolve()); });

test('a client at its connection limit: its oldest idle connection gives way to its new one', async () => {
  const mine = [await tls('127.0.1.1'), await tls('127.0.1.1'), await tls('127.0.1.1'), await tls('127.0.1.1')];
  const fifth = await tls('127.0.1.1');
  await closed(mine[0]!);
  assert.ok(!fifth.destroyed, 'the new one is kept');
  for (const s of [...mine, fifth]) s.destroy();
  await waitFor(() => webhook.connections() === 0, { what: 'all closed' });
});

test('every connection taken: the client holding the most gives one up to a client with none', async () => {
  const hog: TLSSocket[] = [];
  // Three addresses of 4 (their limit) and one of 2: 14 asked, at most 10 in all.
  for (const a of [1, 2, 3]) for (let i = 0; i < 4; i++) hog.push(await tls(`127.0.2.${a}`).catch(() => null as unknown as TLSSocket));
  await waitFor(() => webhook.connections() === 10, { what: 'the server full' });
  const r = await review('newcomer', '127.0.2.9');
  assert.is(r.status, 200, 'a client with no connection still gets in');
  assert.is(r.uid, 'newcomer');
  for (const s of hog) s?.destroy();
  await waitFor(() => webhook.connections() === 0, { what: 'all closed' });
});

test('bodies in flight: a client may not hold more than its share; when all is held, the biggest holder gives way', async () => {
  const half = (s: TLSSocket, size: number) => {
    s.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
    s.write(Buffer.alloc(size - 1, 0x20));
  };
  const got = new Map<TLSSocket, string>();
  const watch = (s: TLSSocket) => { got.set(s, ''); s.on('data', (d: Buffer) => got.set(s, got.get(s)! + d.toString('utf8'))); return s; };
  // One client: two bodies of 200 KB fit its 400 KB, a third does not.
  const a = [watch(await tls('127.0.3.1')), watch(await tls('127.0.3.1')), watch(await tls('127.0.3.1'))];
  for (const s of a) half(s, 200 * 1024);
  await waitFor(() => [...got.values()].some((t) => t.startsWith('HTTP/1.1 503')), { what: 'one refused' });
  assert.is([...got.values()].filter((t) => /^HTTP\/1\.1 503 [^]*from this address/.test(t)).length, 1, 'one of the three, for this address\'s share');
  // Another client fills the rest (300 KB of 700 KB are left): then a third client with a small
  // body makes the biggest holder (the first, 400 KB) give up a body.
  const b = [watch(await tls('127.0.3.2')), watch(await tls('127.0.3.2'))];
  for (const s of b) half(s, 150 * 1024);
  await waitFor(() => webhook.inFlightBytes() > 650 * 1024, { what: 'the budget full' });
  const r = await review('small', '127.0.3.3');
  assert.is(r.status, 200);
  assert.ok(a.some((s) => /this address holds the most/.test(got.get(s)!)), 'a body of the biggest holder was refused');
  for (const s of [...a, ...b]) s.destroy();
  await waitFor(() => webhook.inFlightBytes() === 0, { what: 'released' });
});

test('reviews are answered one at a time, next the client that used least: costly reviews without pause delay another\'s by one', async () => {
  // The quick clients hold kept-alive connections, as the API server does.
  const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })];
  await review('warm-1', '127.0.4.2', agents[0]);
  await review('warm-2', '127.0.4.3', agents[1]);
  seen.length = 0;
  const slowAgent = new Agent({ keepAlive: true, maxSockets: 4 });
  const slow = Array.from({ length: 12 }, (_, i) => review(`slow-${i}`, '127.0.4.1', slowAgent));
  await waitFor(() => seen.length >= 2, { what: 'the slow client served' });
  const quick = await Promise.all([review('quick-1', '127.0.4.2', agents[0]), review('quick-2', '127.0.4.3', agents[1])]);
  assert.equal(quick.map((r) => r.status), [200, 200]);
  assert.equal((await Promise.all(slow)).map((r) => r.status), Array(12).fill(200));
  // Once read, a quick review waits for the slow one in progress, and maybe one more whose turn came first.
  const firstQuick = Math.min(seen.indexOf('quick-1'), seen.indexOf('quick-2'));
  const slowBefore = seen.slice(0, firstQuick).filter((n) => n.startsWith('slow')).length;
  assert.ok(slowBefore <= 4, `the first quick review after ${slowBefore} slow ones (order: ${seen.join(' ')})`);
  assert.ok(Math.abs(seen.indexOf('quick-1') - seen.indexOf('quick-2')) <= 2, `both quick ones together (order: ${seen.join(' ')})`);
  assert.ok(seen.indexOf('quick-2') < seen.indexOf('slow-11'), 'not left for after the slow client');
  for (const a of [...agents, slowAgent]) a.destroy();
});

test.run();
