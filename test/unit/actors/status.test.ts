// The status writer against the fake API server: only the leader writes, only Ingresses whose
// status differs, at most ten at a time, on the timer and after syncs; on shutdown the last
// replica clears the status and any other leaves it.
import { setTimeout as delay } from 'node:timers/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BehaviorSubject } from 'rxjs';
import { CoordinationV1Api, CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';
import { silentLogger } from '../../../src/log.js';
import type { Ingress, LoadBalancerIngress } from '../../../src/store/kube-types.js';
import { createStatusWriter, type StatusWriter, type StatusWriterDeps } from '../../../src/actors/status.js';
import { otherReplicasRunning, readControllerPod } from '../../../src/actors/status-address.js';
import { createLeaderElector } from '../../../src/actors/leader-election.js';

const NS = 'ingress-rx';
const LABELS = { 'app.kubernetes.io/name': 'ingress-rx' };
const STATUS_PATCH = /\/apis\/networking\.k8s\.io\/v1\/namespaces\/[^/]+\/ingresses\/[^/]+\/status$/;

function ingress(name: string, status?: LoadBalancerIngress[]) {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name, namespace: 'apps' },
    spec: { ingressClassName: 'nginx', rules: [{ host: `${name}.example.com` }] },
    ...(status ? { status: { loadBalancer: { ingress: status } } } : {}),
  };
}

function pod(name: string) {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: { ...LABELS, 'pod-template-hash': 'h' } },
    spec: { nodeName: 'node-1', containers: [] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** What the store would hold: the Ingresses as the API has them now. */
function listed(fake: FakeApiServer): Ingress[] {
  return fake.list('networking.k8s.io/v1', 'Ingress') as unknown as Ingress[];
}
function statusOf(fake: FakeApiServer, name: string): unknown {
  return (fake.get('networking.k8s.io/v1', 'Ingress', name, 'apps') as { status?: { loadBalancer?: { ingress?: unknown } } }).status?.loadBalancer?.ingress;
}
const writes = (fake: FakeApiServer) => fake.count({ verb: 'update', path: STATUS_PATCH });

function writerDeps(fake: FakeApiServer, over: Partial<StatusWriterDeps> & { addresses?: () => Promise<LoadBalancerIngress[]> }): StatusWriterDeps {
  const kc = fake.kubeConfig();
  return {
    networking: kc.makeApiClient(NetworkingV1Api),
    addresses: async () => [{ ip: '192.0.2.1' }],
    otherReplicasRunning: async () => false,
    isLeader$: new BehaviorSubject(true),
    intervalMs: 60_000,
    updateStatusOnShutdown: true,
    logger: silentLogger(),
    ...over,
  };
}

/**
 * Runs `body` with a started status writer over `fake` (`over` its deps), then shuts the writer
 * down and closes the server, whether `body` passed or failed.
 */
async function withWriter(fake: FakeApiServer, over: Parameters<typeof writerDeps>[1], body: (writer: StatusWriter) => Promise<void>): Promise<void> {
  const writer = createStatusWriter(writerDeps(fake, over));
  try {
    writer.start();
    await body(writer);
  } finally {
    await writer.shutdown();
    await fake.close();
  }
}

/** A client over `fake` that notes when each read of an Ingress (the start of a write) begins: it observes the real client's calls, stubs nothing. */
function observeReads(fake: FakeApiServer): { networking: NetworkingV1Api; starts: number[] } {
  const networking = fake.kubeConfig().makeApiClient(NetworkingV1Api);
  const starts: number[] = [];
  const observed = new Proxy(networking, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'readNamespacedIngress' || typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        starts.push(performance.now());
        return v.apply(target, args);
      };
    },
  });
  return { networking: observed, starts };
}

test('only the leader writes, and only the Ingresses whose status differs', async () => {
  const fake = await startFakeApiServer();
  const leader = new BehaviorSubject(false);
  let addresses: LoadBalancerIngress[] = [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }];
  fake.create(ingress('a'));
  fake.create(ingress('b', [{ hostname: 'lb.example.com' }, { ip: '192.0.2.1' }])); // same set, other order
  fake.create(ingress('c', [{ ip: '192.0.2.99' }]));
  await withWriter(fake, { isLeader$: leader, addresses: async () => addresses }, async (writer) => {
    const follower = await writer.sync(listed(fake));
    assert.is(follower.leader, false);
    assert.is(writes(fake), 0, 'a follower writes nothing');

    // Becoming leader writes at once, with the Ingresses of the last sync.
    leader.next(true);
    await waitFor(() => writes(fake) === 2, { timeoutMs: 3000, what: 'the new leader\'s writes' });
    assert.equal(fake.requests.filter((r) => r.verb === 'update').map((r) => r.path.split('/')[7]).sort(), ['a', 'c']);
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }]);
    assert.equal(statusOf(fake, 'c'), [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }]);
    // The rest of the Ingress is untouched by a status write.
    assert.equal((fake.get('networking.k8s.io/v1', 'Ingress', 'a', 'apps') as unknown as { spec: unknown }).spec, ingress('a').spec);

    // Up to date now: nothing more to write.
    const run = await writer.sync(listed(fake));
    assert.equal(run.written, []);
    assert.is(run.unchanged, 3);
    assert.is(writes(fake), 2);

    addresses = [{ ip: '192.0.2.2' }];
    assert.equal((await writer.sync(listed(fake))).written, ['apps/a', 'apps/b', 'apps/c']);
    assert.is(writes(fake), 5);
    assert.equal(statusOf(fake, 'b'), [{ ip: '192.0.2.2' }]);
  });
});

test('the store lagging behind our own write does not cause a second write; someone else\'s change does', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  await withWriter(fake, { updateStatusOnShutdown: false }, async (writer) => {
    const before = listed(fake); // as the store holds it until the watch delivers our write
    assert.equal((await writer.sync(before)).written, ['apps/a']);
    assert.equal((await writer.sync(before)).written, [], 'same resourceVersion as when we wrote');
    assert.is(writes(fake), 1);

    const current = fake.get('networking.k8s.io/v1', 'Ingress', 'a', 'apps')!;
    fake.update({ ...current, status: { loadBalancer: { ingress: [{ ip: '198.51.100.1' }] } } });
    assert.equal((await writer.sync(listed(fake))).written, ['apps/a'], 'rewritten after another writer changed it');
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);
  });
});

test('statusChanged (a status-only event, no sync): our own write coming back writes nothing, someone else\'s status is restored, and the shutdown clears what the store last held', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  fake.create(ingress('other-class'));
  const writer = createStatusWriter(writerDeps(fake, {}));
  const current = (name: string) => fake.get('networking.k8s.io/v1', 'Ingress', name, 'apps') as unknown as Ingress;
  try {
    writer.start();
    const synced = listed(fake).filter((i) => i.metadata.name === 'a'); // the last sync served only a
    assert.equal((await writer.sync(synced)).written, ['apps/a']);
    assert.is(writes(fake), 1);
    // Our write comes back as an event: the store holds it, nothing to write.
    assert.is(writer.statusChanged(current('a')), undefined, 'our own echo: no run at all');
    assert.is(writes(fake), 1);

    // Someone else writes another address: restored, without a sync.
    fake.update({ ...current('a'), status: { loadBalancer: { ingress: [{ ip: '198.51.100.1' }] } } } as never);
    const run = writer.statusChanged(current('a'));
    assert.ok(run, 'a status that is not ours starts a run');
    assert.equal((await run).written, ['apps/a']);
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);
    assert.is(writer.statusChanged(current('a')), undefined, 'and its echo is ours again');

    // An Ingress the last sync did not serve is not ours to write.
    fake.update({ ...current('other-class'), status: { loadBalancer: { ingress: [{ ip: '198.51.100.1' }] } } } as never);
    assert.is(writer.statusChanged(current('other-class')), undefined);
    assert.is(writes(fake), 2);

    // No sync since our write: the shutdown still sees (through statusChanged) that a holds a status, and clears it.
    await writer.shutdown();
    assert.is(statusOf(fake, 'a'), undefined);
    assert.equal(statusOf(fake, 'other-class'), [{ ip: '198.51.100.1' }]);
  } finally {
    await writer.shutdown();
    await fake.close();
  }
});

test('the timer brings the status up to date without a sync', async () => {
  const fake = await startFakeApiServer();
  let addresses: LoadBalancerIngress[] = [{ ip: '192.0.2.1' }];
  fake.create(ingress('a'));
  await withWriter(fake, { intervalMs: 100, addresses: async () => addresses, updateStatusOnShutdown: false }, async (writer) => {
    await writer.sync(listed(fake));
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);
    addresses = [{ ip: '192.0.2.7' }];
    await waitFor(() => JSON.stringify(statusOf(fake, 'a')) === JSON.stringify([{ ip: '192.0.2.7' }]), { timeoutMs: 3000, what: 'timer-driven update' });
  });
});

test('at most ten writes at a time', async () => {
  const fake = await startFakeApiServer();
  for (let i = 0; i < 30; i++) fake.create(ingress(`ing-${String(i).padStart(2, '0')}`));
  const networking = fake.kubeConfig().makeApiClient(NetworkingV1Api);
  let inFlight = 0;
  let maxInFlight = 0;
  // Each write is held until a second one is in flight: concurrent writes get there whatever the
  // timing, sequential ones never would (they give up after 5 s, and the assertion below fails).
  let secondStarted!: () => void;
  const concurrent = new Promise<void>((resolve) => { secondStarted = resolve; });
  const giveUp = new AbortController();
  const gate = Promise.race([concurrent, delay(5000, undefined, { signal: giveUp.signal }).catch(() => undefined)]);
  // Observes the real client's calls (no stubbing): counts how many are in flight.
  const observed = new Proxy(networking, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'replaceNamespacedIngressStatus' || typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (inFlight >= 2) secondStarted();
        try {
          await gate;
          return await v.apply(target, args);
        } finally { inFlight--; }
      };
    },
  });
  const writer = createStatusWriter(writerDeps(fake, { networking: observed, updateStatusOnShutdown: false }));
  try {
    writer.start();
    const run = await writer.sync(listed(fake));
    assert.is(run.written.length, 30);
    assert.is(writes(fake), 30);
    assert.ok(maxInFlight <= 10, `max in flight ${maxInFlight}`);
    assert.ok(maxInFlight > 1, `writes run concurrently (${maxInFlight})`);
  } finally {
    giveUp.abort();
    await writer.shutdown();
    await fake.close();
  }
});

test('written as ingress-nginx does (get, then update of /status); an Ingress whose class changed since the store saw it is left alone', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  fake.create(ingress('b'));
  const seen = listed(fake);
  // Between the store's copy and the write, b moves to another controller's class.
  const b = fake.get('networking.k8s.io/v1', 'Ingress', 'b', 'apps')!;
  fake.update({ ...b, spec: { ...(b.spec as object), ingressClassName: 'other' } });
  await withWriter(fake, { updateStatusOnShutdown: false }, async (writer) => {
    await writer.sync(seen);
    assert.equal(fake.requests.filter((r) => r.verb === 'get' || r.verb === 'update').map((r) => `${r.verb} ${r.path.split('/').slice(6).join('/')}`).sort(),
      ['get ingresses/a', 'get ingresses/b', 'update ingresses/a/status']);
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);
    assert.is(statusOf(fake, 'b'), undefined);
  });
});

test('a failing write is reported and retried on the next run', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  fake.create(ingress('b'));
  await withWriter(fake, { updateStatusOnShutdown: false }, async (writer) => {
    fake.failNext(1, 500, (r) => r.verb === 'update' && r.path.endsWith('/ingresses/a/status'));
    const run = await writer.sync(listed(fake));
    assert.equal(run.written, ['apps/b']);
    assert.equal(run.failed.map((f) => f.ingress), ['apps/a']);
    assert.equal((await writer.sync(listed(fake))).written, ['apps/a']);
  });
});

test('with two replicas under leader election, only the leader\'s writer writes', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  fake.create(ingress('b'));
  const kc = fake.kubeConfig();
  const timings = { leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 250 };
  const electors = ['pod-a', 'pod-b'].map((identity) => createLeaderElector({
    coordination: kc.makeApiClient(CoordinationV1Api), namespace: NS, name: 'ingress-controller-leader', identity, logger: silentLogger(), ...timings,
  }));
  const leading = [false, false];
  electors.forEach((e, i) => e.isLeader$.subscribe((l) => { leading[i] = l; }));
  const writers = electors.map((e) => createStatusWriter(writerDeps(fake, { isLeader$: e.isLeader$, updateStatusOnShutdown: false })));
  try {
    for (const e of electors) e.start();
    for (const w of writers) w.start();
    await waitFor(() => leading.includes(true), { timeoutMs: 5000, what: 'a leader' });
    const runs = await Promise.all(writers.map((w) => w.sync(listed(fake))));
    assert.equal(runs.map((r) => r.leader), leading);
    assert.is(writes(fake), 2, 'each Ingress written once, by the leader');
  } finally {
    for (const w of writers) await w.shutdown();
    for (const e of electors) await e.stop();
    await fake.close();
  }
});

test('shutdown: the last replica clears the status; with another replica running, nothing is written', async () => {
  const fake = await startFakeApiServer();
  const core = fake.kubeConfig().makeApiClient(CoreV1Api);
  fake.create(pod('ctrl-a'));
  fake.create(ingress('a', [{ ip: '192.0.2.1' }]));
  fake.create(ingress('b'));
  const self = await readControllerPod(core, 'ctrl-a', NS);
  const deps = { otherReplicasRunning: () => otherReplicasRunning(core, self) };
  const writers: Array<ReturnType<typeof createStatusWriter>> = [];
  const writer = (over: Partial<StatusWriterDeps>) => {
    const w = createStatusWriter(writerDeps(fake, { ...deps, ...over }));
    writers.push(w);
    w.start();
    return w;
  };
  try {
    // Another replica runs: shutdown leaves the status to it.
    fake.create(pod('ctrl-b'));
    const notLast = writer({});
    await notLast.sync(listed(fake));
    const before = writes(fake);
    await notLast.shutdown();
    assert.is(writes(fake), before, 'not the last replica: no write on shutdown');
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);

    // --update-status-on-shutdown=false: nothing either, even as the last replica.
    fake.delete('v1', 'Pod', 'ctrl-b', NS);
    const keep = writer({ updateStatusOnShutdown: false });
    await keep.sync(listed(fake));
    await keep.shutdown();
    assert.is(writes(fake), before);

    // The last replica clears every served Ingress that has a status.
    const last = writer({});
    await last.sync(listed(fake));
    await last.shutdown();
    assert.is(writes(fake), before + 2);
    assert.is(statusOf(fake, 'a'), undefined);
    assert.is(statusOf(fake, 'b'), undefined);
    const after = writes(fake);
    assert.equal((await last.sync(listed(fake))).written, [], 'nothing after shutdown');
    assert.is(writes(fake), after);
  } finally {
    for (const w of writers) await w.shutdown();
    await fake.close();
  }
});

test('an Ingress that already holds the addresses when it is read is not written (no write, no echo)', async () => {
  const fake = await startFakeApiServer();
  fake.create(ingress('a'));
  fake.create(ingress('b'));
  const seen = listed(fake); // the store's copies: no status yet
  // Someone (another replica) writes b's status before ours reaches it.
  const b = fake.get('networking.k8s.io/v1', 'Ingress', 'b', 'apps')!;
  fake.update({ ...b, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
  const updatesBefore = writes(fake);
  await withWriter(fake, { updateStatusOnShutdown: false }, async (writer) => {
    await writer.sync(seen);
    assert.equal(fake.requests.filter((r) => r.verb === 'get').map((r) => r.path.split('/').pop()).sort(), ['a', 'b'], 'both read');
    assert.is(writes(fake) - updatesBefore, 1, 'only a written');
    assert.equal(statusOf(fake, 'a'), [{ ip: '192.0.2.1' }]);
    assert.equal(statusOf(fake, 'b'), [{ ip: '192.0.2.1' }]);
  });
});

test('writes are paced: at most writesPerSecond of them start each second', async () => {
  const fake = await startFakeApiServer();
  for (let i = 0; i < 12; i++) fake.create(ingress(`ing-${String(i).padStart(2, '0')}`));
  const { networking: observed, starts } = observeReads(fake);
  await withWriter(fake, { networking: observed, updateStatusOnShutdown: false, writesPerSecond: 40 }, async (writer) => {
    const run = await writer.sync(listed(fake));
    assert.is(run.written.length, 12);
    assert.is(starts.length, 12);
    // Unpaced, ten would begin in the same turn of the event loop; paced, 1/40 s apart (less a
    // millisecond of timer rounding).
    // Unpaced, the first ten (as many as may be in flight) begin in the same turn of the event
    // loop. Paced, 1/40 s apart on average: a busy event loop may let a few begin together, so
    // the bound is on the whole.
    assert.ok(starts[9]! - starts[0]! >= 0.9 * 9 * 25, `the first 10 writes began within ${(starts[9]! - starts[0]!).toFixed(0)} ms`);
  });
});

test('the last replica\'s clear on shutdown is not paced', async () => {
  const fake = await startFakeApiServer();
  for (let i = 0; i < 4; i++) fake.create(ingress(`ing-${i}`));
  const { networking: observed, starts } = observeReads(fake);
  const writer = createStatusWriter(writerDeps(fake, { networking: observed, writesPerSecond: 4 }));
  try {
    writer.start();
    assert.is((await writer.sync(listed(fake))).written.length, 4);
    assert.ok(starts[3]! - starts[0]! >= 0.9 * 3 * 250, 'the writes were paced');
    // Their echoes, as the watch brings them: what the shutdown clears.
    for (let i = 0; i < 4; i++) writer.statusChanged(fake.get('networking.k8s.io/v1', 'Ingress', `ing-${i}`, 'apps') as unknown as Ingress);
  } finally {
    starts.length = 0;
    await writer.shutdown();
    await fake.close();
  }
  assert.is(starts.length, 4);
  for (let i = 0; i < 4; i++) assert.is(statusOf(fake, `ing-${i}`), undefined);
  // Paced at 4/s the four clears would begin over 750 ms; ten may begin at once.
  assert.ok(starts[3]! - starts[0]! < 200, `the clears began over ${(starts[3]! - starts[0]!).toFixed(0)} ms`);
});

test.run();
