// The first request to the API server (src/streams/kube-reach.ts), against a real HTTP server:
// ingress-nginx's backoff between tries (no real waiting: the sleep is recorded), success once the
// server answers, and no retry for what waiting cannot fix.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { REACH_BACKOFF, reachApiServer, serverProblem } from '../../../src/streams/kube-reach.js';

async function apiServer(statuses: number[]): Promise<{ server: Server; kc: KubeConfig; tries: () => number }> {
  let tries = 0;
  const server = createServer((req, res) => {
    const status = statuses[Math.min(tries, statuses.length - 1)]!;
    tries++;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 200 ? '{"major":"1","minor":"30","gitVersion":"v1.30.2"}' : `{"kind":"Status","code":${status}}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }, { name: 'u' });
  return { server, kc, tries: () => tries };
}

const recorder = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => { waits.push(ms); } };
};

test('an unready server is asked again with ingress-nginx\'s backoff until it answers', async () => {
  const { server, kc, tries } = await apiServer([503, 500, 200]);
  const r = recorder();
  try {
    assert.equal(await reachApiServer(kc, { sleep: r.sleep, random: () => 0 }), { ok: true, version: 'v1.30.2' });
    assert.is(tries(), 3);
    assert.equal(r.waits, [1000, 1500]);
  } finally {
    server.close();
  }
});

test('a server that never answers is given up after 10 tries and 9 waits (75–82 s), naming the last error', async () => {
  const { server, kc, tries } = await apiServer([503]);
  const r = recorder();
  try {
    const reach = await reachApiServer(kc, { sleep: r.sleep, random: () => 1 });
    assert.is(reach.ok, false);
    assert.match((reach as { error: string }).error, /^the API server http:\/\/127\.0\.0\.1:\d+ does not answer: HTTP 503$/);
    assert.is(tries(), REACH_BACKOFF.steps);
    assert.is(r.waits.length, REACH_BACKOFF.steps - 1);
    assert.equal(r.waits.slice(0, 3), [1100, 1650, 2475], 'factor 1.5, jitter up to 10%');
    const total = r.waits.reduce((a, b) => a + b, 0);
    assert.is(total, 82_377, '1 s × (1.5⁹ − 1) / 0.5, plus 10%');
  } finally {
    server.close();
  }
});

test('refused credentials, a refused connection setting and a missing server fail at once', async () => {
  const { server, kc, tries } = await apiServer([401]);
  const r = recorder();
  try {
    const refused = await reachApiServer(kc, { sleep: r.sleep });
    assert.match((refused as { error: string }).error, /does not answer: HTTP 401$/);
    assert.is(tries(), 1);
    assert.equal(r.waits, []);
  } finally {
    server.close();
  }
  const plain = new KubeConfig();
  plain.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: false }, { name: 'u' });
  const noSkip = await reachApiServer(plain, { sleep: r.sleep });
  assert.match((noSkip as { error: string }).error, /HTTP protocol is not allowed/);
  assert.equal(r.waits, [], 'a setting of the client is not retried');
  const nowhere = new KubeConfig();
  nowhere.loadFromClusterAndUser({ name: 'c', server: 'https://undefined:undefined', skipTLSVerify: false }, { name: 'u' });
  assert.is(serverProblem(nowhere), 'the API server "https://undefined:undefined" is not a URL');
});

test('a refused connection is retried (the server may be starting)', async () => {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
  const r = recorder();
  const reach = await reachApiServer(kc, { sleep: r.sleep, backoff: { ...REACH_BACKOFF, steps: 3 } });
  assert.match((reach as { error: string }).error, /ECONNREFUSED/);
  assert.is(r.waits.length, 2);
});

test.run();
