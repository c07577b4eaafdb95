// The controller's API clients keep their connections alive: client-node alone opens a new
// connection (a new TLS handshake) for every request, which at 10k Ingresses was most of what a
// status write cost. Against the fake API server over HTTPS, with a bearer token.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver.js';
import { makeCertificate } from '../../support/pod-cluster.js';
import { makeKeepAliveApiClient } from '../../../src/streams/kube-client.js';

const dir = mkdtempSync(join(tmpdir(), 'irx-kube-client-'));
let fake: FakeApiServer;

test.before(async () => {
  const { cert, key } = makeCertificate(dir, 'api', 'kube-apiserver', ['127.0.0.1']);
  fake = await startFakeApiServer({ tls: { cert, key }, tokens: { 'controller-token': 'system:serviceaccount:ingress:ingress-rx' } });
  for (let i = 0; i < 3; i++) {
    fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `app-${i}`, namespace: 'shop' }, spec: { rules: [{ host: `app-${i}.test` }] } });
  }
});

test.after(async () => {
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function reads(api: NetworkingV1Api, n: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push((await api.readNamespacedIngress({ name: `app-${i % 3}`, namespace: 'shop' })).metadata!.name!);
  return names;
}

test('client-node alone opens a connection per request', async () => {
  const before = fake.connections;
  await reads(fake.kubeConfig().makeApiClient(NetworkingV1Api), 6);
  assert.is(fake.connections - before, 6);
});

test('a kept-alive client reuses its connections, with the same authentication', async () => {
  const api = makeKeepAliveApiClient(fake.kubeConfig(), NetworkingV1Api);
  const before = fake.connections;
  const sent = fake.requests.length;
  assert.equal(await reads(api, 6), ['app-0', 'app-1', 'app-2', 'app-0', 'app-1', 'app-2']);
  assert.is(fake.connections - before, 1, 'one request after the other: one connection');

  // Ten at once take ten connections at most, and the requests after them take no new one.
  await Promise.all(Array.from({ length: 10 }, () => reads(api, 1)));
  const afterConcurrent = fake.connections;
  assert.ok(afterConcurrent - before <= 11, `${afterConcurrent - before} connections`);
  await reads(api, 6);
  assert.is(fake.connections, afterConcurrent);

  const mine = fake.requests.slice(sent);
  assert.is(mine.length, 22);
  assert.ok(mine.every((r) => r.user === 'system:serviceaccount:ingress:ingress-rx' && r.status === 200), 'every request authenticated by its token');
});

test.run();
