// `ingress-rx controller` end to end against the in-process fake API server (real list/watch
// wire protocol) with real NGINX: serves what the cluster holds, follows watch events, survives
// dropped watches and 410 Gone, writes Ingress status as leader, records reload Events, and
// reviews Ingresses on its validating webhook against what it watches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer } from '../support/fake-apiserver.js';
import type { EchoServer } from '../support/echo-server.js';
import { ingress, slices, startController, type CliProcess } from '../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, WEBHOOK_CA, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { freePort } from '../support/ports.js';
import { admissionReview } from '../support/admission-review.js';
import { createServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protocolMatrix } from '../support/protocols.js';

let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
let a: EchoServer;
let b: EchoServer;
let kubeconfig: string;
let webhookPort: number;

const web = () => ({ ...ingress('shop', 'web', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }) });

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'a' }, { address: '127.0.0.3', name: 'b' }],
    webhook: true,
    objects: ({ echo: [a] }) => [
      NGINX_CLASS,
      ...echoService('shop', 'web', [a]),
      ...echoService('shop', 'marks', [a]),
      web(),
      // Snippets allowed, so that an Ingress can carry what NGINX refuses.
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } },
      // An Ingress of another class is not served.
      ingress('shop', 'other', { host: 'other.test', className: 'traefik', paths: [{ path: '/', service: 'web' }] }),
    ],
    // The echo backends run on loopback, which a controller refuses unless allowed.
    flags: ['--publish-status-address=192.0.2.10,lb.example.test', '--election-id=ingress-rx-test', '--configmap=ingress/nginx', '--enable-metrics', '--report-status-classes', '--allow-upstream-addresses=loopback'],
  });
  ({ fake, ctl, webhookPort, kubeconfig, echo: [a, b] } = cluster);
});

test.after(() => cluster?.stop());

over.both('serves the Ingresses of its class from the cluster', async (p) => {
  await p.until('shop.test', '/', (r) => r.backend === 'a', { what: 'shop.test served by a' });
  assert.is((await p.request('other.test', '/')).status, 404);
});

test('request metrics follow the metrics flags; the leader reports its election', async () => {
  await ctl.until('shop.test', '/', (r) => r.status === 200);
  for (let i = 0; i < 3; i++) await ctl.request('shop.test', '/metered');
  const text = await waitFor(async () => {
    const body = (await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz })).body;
    // Awaited at 1: the gauge reads 0 until the Lease is taken, which a loaded machine delays.
    return /nginx_ingress_controller_leader_election_status\{name="ingress-rx-test"[^}]*\} 1/.test(body) && /nginx_ingress_controller_requests\{[^}]*status="2xx"/.test(body) ? body : null;
  }, { timeoutMs: 15_000, what: 'request metrics and the election status' });
  const requests = text.split('\n').filter((l) => l.startsWith('nginx_ingress_controller_requests{'));
  assert.ok(requests.every((l) => /status="\dxx"/.test(l)), '--report-status-classes');
  assert.ok(requests.some((l) => l.includes('controller_namespace="ingress"') && l.includes('controller_pod="ingress-rx-0"') && l.includes('host="shop.test"') && l.includes('ingress="web"')));
  assert.match(text, /nginx_ingress_controller_leader_election_status\{name="ingress-rx-test",controller_namespace="ingress",controller_class="k8s.io\/ingress-nginx",controller_pod="ingress-rx-0"\} 1/);
});

test('the leader takes the Lease and writes the Ingress status, sorted', async () => {
  const lease = await waitFor(() => fake.get('coordination.k8s.io/v1', 'Lease', 'ingress-rx-test', 'ingress'), { what: 'the lease' });
  assert.is((lease.spec as { holderIdentity: string }).holderIdentity, 'ingress-rx-0');
  const status = await waitFor(() => {
    const ing = fake.get('networking.k8s.io/v1', 'Ingress', 'web', 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } } | undefined;
    return ing?.status?.loadBalancer?.ingress?.length ? ing.status.loadBalancer.ingress : undefined;
  }, { what: 'Ingress status' });
  assert.equal(status, [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }]);
  const other = fake.get('networking.k8s.io/v1', 'Ingress', 'other', 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } };
  assert.not.ok(other.status?.loadBalancer?.ingress?.length, 'an Ingress of another class gets no status');
});

/** The sync log: one line per sync the controller ran. */
const syncLines = () => ctl.output().split('\n').filter((l) => /"msg":"sync \d+: /.test(l));
const lbOf = (name: string) => (fake.get('networking.k8s.io/v1', 'Ingress', name, 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } } | undefined)?.status?.loadBalancer?.ingress ?? [];
const OURS = [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }];

test('the controller\'s own status writes cost no sync; a status someone else wrote is restored, without a sync either', async () => {
  await waitFor(() => lbOf('web').length > 0, { what: 'the status written after Ready' });
  const ready = ctl.output().split('\n').findIndex((l) => l.includes('"msg":"ready: '));
  assert.ok(ready >= 0, 'the ready line');
  const before = syncLines().length;
  const ing = fake.get('networking.k8s.io/v1', 'Ingress', 'web', 'shop')!;
  fake.update({ ...ing, status: { loadBalancer: { ingress: [{ ip: '203.0.113.9' }] } } } as never);
  await waitFor(() => JSON.stringify(lbOf('web')) === JSON.stringify(OURS), { what: 'the status restored' });
  // New Ingresses come later on the same watch: once each is served and has its status, every
  // earlier Ingress event (the status writes coming back, ours and the other's) was taken in.
  for (const name of ['mark-1', 'mark-2']) {
    fake.create(ingress('shop', name, { host: `${name}.test`, className: 'nginx', paths: [{ path: '/', service: 'marks' }] }));
    await ctl.until(`${name}.test`, '/', (r) => r.backend === 'a', { what: `${name}.test served` });
    await waitFor(() => lbOf(name).length > 0, { what: `the status of ${name}` });
  }
  const after = syncLines().slice(before);
  assert.is(after.length, 2, `one sync per new Ingress, none for the status writes:\n${after.join('\n')}`);
  for (const line of after) assert.is((JSON.parse(line) as { events: number }).events, 1, line);
  assert.equal(ctl.output().split('\n').slice(ready).filter((l) => /"msg":"sync \d+: /.test(l)).length, 2, 'no sync after Ready but the two new Ingresses\'');
});

test('a reload is recorded as a Kubernetes Event', async () => {
  const events = await waitFor(() => {
    const list = [...fake.list('v1', 'Event', 'ingress'), ...fake.list('events.k8s.io/v1', 'Event', 'ingress')];
    return list.length ? list : undefined;
  }, { what: 'an Event' });
  assert.ok(events.some((e) => JSON.stringify(e).includes('RELOAD')));
});

test('an Ingress NGINX refuses is quarantined with a Warning Event on it; the others still apply', async () => {
  fake.create(ingress('shop', 'broken', {
    host: 'broken.test', className: 'nginx', paths: [{ path: '/', service: 'web' }],
    annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'not_a_directive on;' },
  }));
  fake.create(ingress('shop', 'fine', { host: 'fine.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  await ctl.until('fine.test', '/', (r) => r.status === 200, { what: 'fine.test next to the broken Ingress' });
  const event = await waitFor(() => fake.list('v1', 'Event', 'shop').find((e) => JSON.stringify(e).includes('Quarantined')) as { involvedObject: { name: string }; message: string } | undefined, { what: 'a Quarantined Event' });
  assert.is(event.involvedObject.name, 'broken');
  assert.match(event.message, /not_a_directive/);
  assert.is(await ctl.metric('nginx_ingress_controller_errors'), 0);
});

/** An AdmissionReview for an Ingress of namespace shop, sent to the controller's webhook. */
const review = (object: unknown) => admissionReview({ port: webhookPort, ca: WEBHOOK_CA, namespace: 'shop', object });

test('the validating webhook reviews against the watched cluster: a taken host and path is refused, a good Ingress passes', async () => {
  // Without a creationTimestamp, as in a hand-made review: it is the newest Ingress.
  const thief = ingress('shop', 'thief', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] });
  const refused = await review(thief);
  assert.is(refused.allowed, false);
  assert.match(refused.status!.message, /host shop\.test path \/ \(Prefix\) is already defined by the older Ingress shop\/web/);
  const fine = await review(ingress('shop', 'fresh', { host: 'fresh.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  assert.is(fine.allowed, true);
  const theirs = await review(ingress('shop', 'theirs', { host: 'shop.test', className: 'traefik', paths: [{ path: '/', service: 'web' }] }));
  assert.is(theirs.allowed, true, 'another class is not ours to judge');
  assert.is(await ctl.metric('nginx_ingress_controller_check_errors'), 1);
  // The last accepted review, fresh, is tested with shop/web: they share the Service web (a
  // shared backend's policies, cookie affinity say, reach both).
  assert.is(await ctl.metric('nginx_ingress_controller_admission_tested_ingresses'), 2);
  // Measured in the webhook's thread when the scrape asks for it.
  assert.ok(await ctl.metric('nginx_ingress_controller_admission_config_size') > 100, 'the accepted review\'s server, in bytes');
});

test('an EndpointSlice change through the watch is applied without a reload', async () => {
  const reloads = await ctl.metric('nginx_ingress_controller_success');
  for (const s of slices('shop', 'web', [b])) fake.set(s);
  await ctl.until('shop.test', '/', (r) => r.backend === 'b', { what: 'endpoint b' });
  assert.is(await ctl.metric('nginx_ingress_controller_success'), reloads);
});

test('dropped watches and 410 Gone end in a relist: later changes still arrive', async () => {
  fake.dropWatches();
  fake.set(web());
  fake.create(ingress('shop', 'late', { host: 'late.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  await ctl.until('late.test', '/', (r) => r.status === 200, { what: 'late.test after dropped watches' });
  fake.compact();
  fake.expireWatches();
  fake.delete('networking.k8s.io/v1', 'Ingress', 'late', 'shop');
  await ctl.until('late.test', '/', (r) => r.status === 404, { what: 'late.test deleted after 410 Gone' });
});

test('--record logs the objects as listed, fields the store leaves out included; managedFields never', async () => {
  const [slice] = slices('shop', 'marks', [a]);
  const endpoints = (slice!.endpoints as Array<Record<string, unknown>>).map((e) => ({ ...e, nodeName: 'node-recorded' }));
  fake.set({ ...slice!, endpoints, metadata: { ...slice!.metadata, managedFields: [{ manager: 'managed-recorded', operation: 'Update' }] } });
  const dir = mkdtempSync(join(tmpdir(), 'irx-record-'));
  const recording = join(dir, 'controller.record');
  const recorder = await startController({
    kubeconfig,
    args: ['--record', recording, '--disable-leader-election', '--publish-status-address=192.0.2.10', '--allow-upstream-addresses=loopback'],
    env: { POD_NAME: 'ingress-rx-2', POD_NAMESPACE: 'ingress' },
  });
  try {
    await recorder.logged('initial list complete', 'the initial list');
  } finally {
    await recorder.stop();
  }
  const log = readFileSync(recording, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  assert.ok(log.includes('"nodeName":"node-recorded"'), 'the EndpointSlice as listed');
  assert.not.ok(log.includes('managed-recorded'), 'no managedFields');
});

test('NGINX unable to start on any configuration (HTTP port taken): exits 1 with NGINX\'s error', async () => {
  const port = await freePort();
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(port, '0.0.0.0', r));
  try {
    const started = await startController({ kubeconfig, args: [`--http-port=${port}`, '--election-id=ingress-rx-test-taken'], env: { POD_NAME: 'ingress-rx-1', POD_NAMESPACE: 'ingress' } })
      .then((c) => c, (e: Error) => e);
    if (!(started instanceof Error)) {
      await started.stop('SIGKILL');
      assert.unreachable('the controller became ready with its HTTP port taken');
    } else {
      assert.match(started.message, /exited with 1/);
      assert.match(started.message, /bind\(\) to 0\.0\.0\.0:\d+ failed \(98: Address already in use\)/);
    }
  } finally {
    taken.close();
  }
});

test('SIGTERM: exits 0', async () => {
  assert.is(await ctl.stop('SIGTERM'), 0);
});

test.run();
