// Leader election against the fake API server, on the real clock with small timings
// (lease 1 s, renew deadline 0.5 s, retry 0.25 s): one leader among two, failover when the
// leader cannot renew, rejoin, release on stop, and the optimistic-concurrency path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { CoordinationV1Api, KubeConfig } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { freePort } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger } from '../../../src/log.js';
import { createLeaderElector, timingsFromElectionTTL, type LeaderElector } from '../../../src/actors/leader-election.js';

const NS = 'ingress-rx';
const LEASE = 'ingress-controller-leader';
const FAST = { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 250 };

/** A TCP proxy in front of the fake server that can be cut, so one client loses the API alone. */
class CuttableProxy {
  private cut = false;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(targetPort: number): Promise<CuttableProxy> {
    const port = await freePort();
    let proxy!: CuttableProxy;
    const server = createServer((client) => {
      if (proxy.cut) { client.destroy(); return; }
      const upstream = connect(targetPort, '127.0.0.1');
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on('close', () => proxy.sockets.delete(s));
        s.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    proxy = new CuttableProxy(server, `http://127.0.0.1:${port}`);
    return proxy;
  }
  disconnect(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }
  reconnect(): void {
    this.cut = false;
  }
  async close(): Promise<void> {
    this.disconnect();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

interface Candidate { id: string; elector: LeaderElector; leading: boolean; changes: Array<{ leading: boolean; at: number }> }

function candidate(kc: KubeConfig, id: string, timings = FAST, onChange?: () => void): Candidate {
  const elector = createLeaderElector({
    coordination: kc.makeApiClient(CoordinationV1Api), namespace: NS, name: LEASE, identity: id,
    logger: silentLogger(), ...timings,
  });
  const c: Candidate = { id, elector, leading: false, changes: [] };
  elector.isLeader$.subscribe((leading) => {
    c.leading = leading;
    c.changes.push({ leading, at: Date.now() });
    onChange?.();
  });
  return c;
}

function lease(fake: FakeApiServer): FakeObject & { spec?: Record<string, unknown> } {
  return fake.get('coordination.k8s.io/v1', 'Lease', LEASE, NS) as FakeObject & { spec?: Record<string, unknown> };
}

test('timings derive from --election-ttl as ingress-nginx does', () => {
  assert.equal(timingsFromElectionTTL(30_000), { leaseDurationMs: 30_000, renewDeadlineMs: 15_000, retryPeriodMs: 7_500 });
});

test('of two candidates exactly one leads; it creates and renews the lease', async () => {
  const fake = await startFakeApiServer();
  const kc = fake.kubeConfig();
  let maxLeaders = 0;
  const all: Candidate[] = [];
  const watch = () => { maxLeaders = Math.max(maxLeaders, all.filter((c) => c.leading).length); };
  const a = candidate(kc, 'pod-a', FAST, watch);
  const b = candidate(kc, 'pod-b', FAST, watch);
  all.push(a, b);
  try {
    a.elector.start();
    b.elector.start();
    const leader = await waitFor(() => all.find((c) => c.leading), { timeoutMs: 5000, what: 'a leader' });
    const l = lease(fake);
    assert.is(l.spec?.holderIdentity, leader.id);
    assert.is(l.spec?.leaseDurationSeconds, 1);
    assert.match(String(l.spec?.renewTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime format');
    const rv = l.metadata.resourceVersion;
    // Several retry periods later: still the same single leader, and the lease was renewed.
    const renewsBefore = fake.count({ verb: 'update', path: `/leases/${LEASE}` });
    await waitFor(() => fake.count({ verb: 'update', path: `/leases/${LEASE}` }) >= renewsBefore + 4, { timeoutMs: 5000, what: 'renewals' });
    assert.is(maxLeaders, 1);
    assert.is(lease(fake).spec?.holderIdentity, leader.id);
    assert.is.not(lease(fake).metadata.resourceVersion, rv);
    assert.is(all.filter((c) => c.leading).length, 1);
  } finally {
    await Promise.all([a.elector.stop(), b.elector.stop()]);
    await fake.close();
  }
});

test('when the leader cannot renew it steps down, the other takes over after the lease expires, and the old one rejoins as follower', async () => {
  const fake = await startFakeApiServer();
  const proxy = await CuttableProxy.start(fake.port);
  let bothLeading = false;
  const all: Candidate[] = [];
  const check = () => { if (all.filter((c) => c.leading).length > 1) bothLeading = true; };
  const a = candidate(kubeConfigFor(proxy.url), 'pod-a', FAST, check);
  all.push(a);
  let b: Candidate | undefined;
  try {
    a.elector.start();
    await waitFor(() => a.leading, { timeoutMs: 5000, what: 'pod-a leading' });
    b = candidate(fake.kubeConfig(), 'pod-b', FAST, check);
    all.push(b);
    b.elector.start();
    await waitFor(() => fake.count({ verb: 'get', path: `/leases/${LEASE}` }) >= 4, { timeoutMs: 5000 });
    assert.not.ok(b.leading, 'pod-b follows while pod-a renews');

    const lastRenewByA = Date.parse(String(lease(fake).spec?.renewTime));
    proxy.disconnect();
    await waitFor(() => !a.leading, { timeoutMs: 5000, what: 'pod-a stepping down' });
    await waitFor(() => b!.leading, { timeoutMs: 5000, what: 'pod-b leading' });
    const aDown = a.changes.at(-1)!.at;
    const bUp = b.changes.at(-1)!.at;
    assert.ok(aDown <= bUp, 'the old leader stepped down before the new one started');
    assert.ok(bUp - lastRenewByA >= 1000 - 50, `pod-b waited for the lease to expire (${bUp - lastRenewByA} ms)`);
    assert.ok(aDown - lastRenewByA <= 1000, `pod-a stepped down within the lease (${aDown - lastRenewByA} ms)`);
    const l = lease(fake);
    assert.is(l.spec?.holderIdentity, 'pod-b');
    assert.is(l.spec?.leaseTransitions, 1);

    // pod-a gets the API back: it keeps trying but follows while pod-b renews.
    proxy.reconnect();
    const getsBefore = fake.count({ verb: 'get', path: `/leases/${LEASE}` });
    await waitFor(() => fake.count({ verb: 'get', path: `/leases/${LEASE}` }) >= getsBefore + 6, { timeoutMs: 5000, what: 'both reading' });
    assert.not.ok(a.leading);
    assert.ok(b.leading);

    // pod-b stops: it releases the lease, so pod-a takes over without waiting for expiry.
    const stopAt = Date.now();
    await b.elector.stop();
    assert.is(lease(fake).spec?.holderIdentity, undefined, 'released');
    await waitFor(() => a.leading, { timeoutMs: 5000, what: 'pod-a leading again' });
    assert.ok(Date.now() - stopAt < 1000 + 250, 'took over within a retry period of the release (lease of 1 s after release)');
    assert.is(lease(fake).spec?.holderIdentity, 'pod-a');
    assert.not.ok(bothLeading, 'never two leaders at once');
  } finally {
    await a.elector.stop();
    await b?.elector.stop();
    await proxy.close();
    await fake.close();
  }
});

test('a held, unexpired lease is left alone; an expired one is taken with a transition', async () => {
  const fake = await startFakeApiServer();
  const kc = fake.kubeConfig();
  const micro = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');
  fake.create({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE, namespace: NS },
    spec: { holderIdentity: 'someone', leaseDurationSeconds: 3600, renewTime: micro(Date.now()), acquireTime: micro(Date.now()), leaseTransitions: 4 },
  });
  const a = candidate(kc, 'pod-a');
  try {
    a.elector.start();
    await waitFor(() => fake.count({ verb: 'get', path: `/leases/${LEASE}` }) >= 4, { timeoutMs: 5000 });
    assert.not.ok(a.leading);
    assert.is(fake.count({ verb: 'update', path: `/leases/${LEASE}` }), 0, 'no write while someone else holds it');

    const l = lease(fake);
    fake.update({ ...l, spec: { ...l.spec, renewTime: micro(Date.now() - 3_601_000) } });
    await waitFor(() => a.leading, { timeoutMs: 5000, what: 'taking the expired lease' });
    const taken = lease(fake);
    assert.is(taken.spec?.holderIdentity, 'pod-a');
    assert.is(taken.spec?.leaseTransitions, 5);
    assert.is(taken.spec?.leaseDurationSeconds, 1);
  } finally {
    await a.elector.stop();
    await fake.close();
  }
});

test('a conflicting write (409) is followed by an immediate re-read, not a wait', async () => {
  const fake = await startFakeApiServer();
  const slow = { leaseDurationMs: 20_000, renewDeadlineMs: 10_000, retryPeriodMs: 5_000 };
  const a = candidate(fake.kubeConfig(), 'pod-a', slow);
  try {
    fake.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE, namespace: NS }, spec: {} });
    fake.failNext(1, 409, (r) => r.verb === 'update' && r.path.includes('/leases/'));
    const t0 = Date.now();
    a.elector.start();
    await waitFor(() => a.leading, { timeoutMs: 3000, what: 'leading after the conflict' });
    assert.ok(Date.now() - t0 < slow.retryPeriodMs, 'did not wait a retry period');
    const leaseRequests = fake.requests.filter((r) => r.path.includes('/leases/')).map((r) => `${r.verb}:${r.status}`);
    assert.equal(leaseRequests, ['get:200', 'update:409', 'get:200', 'update:200']);
  } finally {
    await a.elector.stop();
    await fake.close();
  }
});

test('a missing lease is created; stop releases it and emits false', async () => {
  const fake = await startFakeApiServer();
  const a = candidate(fake.kubeConfig(), 'pod-a');
  try {
    a.elector.start();
    await waitFor(() => a.leading, { timeoutMs: 5000 });
    assert.is(fake.count({ verb: 'create', path: '/namespaces/ingress-rx/leases' }), 1);
    await a.elector.stop();
    assert.is(a.leading, false);
    const l = lease(fake);
    assert.is(l.spec?.holderIdentity, undefined);
    assert.is(l.spec?.leaseDurationSeconds, 1);
    const requestsAfterStop = fake.requests.length;
    await new Promise((r) => setTimeout(r, FAST.retryPeriodMs * 2)); // nothing may happen after stop
    assert.is(fake.requests.length, requestsAfterStop, 'no request after stop');
  } finally {
    await a.elector.stop();
    await fake.close();
  }
});

test.run();
