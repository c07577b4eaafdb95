// The fake API server speaks the wire protocol client-node's typed clients and Watch expect:
// CRUD with conflicts, patches, the status subresource, selectors, watch semantics, failures.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  CoordinationV1Api, CoreV1Api, NetworkingV1Api, PatchStrategy, Watch, setHeaderOptions,
  type V1Ingress,
} from '@kubernetes/client-node';
import { FakeApiServer, parseSelector } from '../support/fake-apiserver.js';
import { waitFor } from '../support/wait.js';

const test = suite('fake apiserver');

async function withServer(fn: (s: FakeApiServer) => Promise<void>): Promise<void> {
  const server = await FakeApiServer.start();
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

const ingress = (name: string): V1Ingress => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: 'default' },
  spec: { rules: [{ host: `${name}.example.com` }] },
});

/** Opens a watch with client-node's own Watch; returns the events seen and a way to stop. */
async function watchAll(server: FakeApiServer, path: string, query: Record<string, string> = {}) {
  const events: Array<{ type: string; name?: string; rv?: string; code?: number }> = [];
  let ended: unknown = 'open';
  const ctl = await new Watch(server.kubeConfig()).watch(path, query, (type, obj) => {
    events.push({ type, name: obj?.metadata?.name, rv: obj?.metadata?.resourceVersion, code: obj?.code });
  }, (err) => {
    ended = err;
  });
  return { events, ended: () => ended, stop: () => ctl.abort() };
}

test('create, get, list with resourceVersion and labelSelector, replace, conflict, delete', async () => {
  await withServer(async (server) => {
    const net = server.kubeConfig().makeApiClient(NetworkingV1Api);
    const created = await net.createNamespacedIngress({ namespace: 'default', body: { ...ingress('a'), metadata: { name: 'a', labels: { app: 'x' } } } });
    assert.is(created.metadata?.namespace, 'default');
    assert.ok(created.metadata?.uid);
    assert.instance(created.metadata?.creationTimestamp, Date);
    await net.createNamespacedIngress({ namespace: 'default', body: ingress('b') });
    const all = await net.listNamespacedIngress({ namespace: 'default' });
    assert.equal(all.items.map((i) => i.metadata?.name), ['a', 'b']);
    assert.is(all.metadata?.resourceVersion, server.resourceVersion);
    const selected = await net.listIngressForAllNamespaces({ labelSelector: 'app in (x,y)' });
    assert.equal(selected.items.map((i) => i.metadata?.name), ['a']);

    const got = await net.readNamespacedIngress({ name: 'a', namespace: 'default' });
    got.spec!.rules = [{ host: 'changed.example.com' }];
    const replaced = await net.replaceNamespacedIngress({ name: 'a', namespace: 'default', body: got });
    assert.is(replaced.spec?.rules?.[0].host, 'changed.example.com');
    assert.ok(Number(replaced.metadata?.resourceVersion) > Number(got.metadata?.resourceVersion));
    assert.is(replaced.metadata?.generation, 2);
    try {
      await net.replaceNamespacedIngress({ name: 'a', namespace: 'default', body: got }); // stale resourceVersion
      assert.unreachable('stale replace must conflict');
    } catch (err) {
      assert.is((err as { code?: number }).code, 409);
    }
    try {
      await net.createNamespacedIngress({ namespace: 'default', body: ingress('b') });
      assert.unreachable('duplicate create must fail');
    } catch (err) {
      assert.is((err as { code?: number }).code, 409);
    }
    await net.deleteNamespacedIngress({ name: 'a', namespace: 'default' });
    try {
      await net.readNamespacedIngress({ name: 'a', namespace: 'default' });
      assert.unreachable('deleted object must be gone');
    } catch (err) {
      assert.is((err as { code?: number }).code, 404);
    }
    assert.is(server.count({ verb: 'create' }), 3);
    assert.is(server.count({ verb: 'update' }), 2);
    assert.is(server.count({ verb: 'delete' }), 1);
  });
});

test('status subresource: replace and merge-patch touch only status; a plain update keeps it', async () => {
  await withServer(async (server) => {
    const net = server.kubeConfig().makeApiClient(NetworkingV1Api);
    await net.createNamespacedIngress({ namespace: 'default', body: ingress('s') });
    const lb = { loadBalancer: { ingress: [{ ip: '10.0.0.9' }] } };
    const cur = await net.readNamespacedIngress({ name: 's', namespace: 'default' });
    await net.replaceNamespacedIngressStatus({ name: 's', namespace: 'default', body: { ...cur, spec: { rules: [] }, status: lb } });
    let now = await net.readNamespacedIngress({ name: 's', namespace: 'default' });
    assert.is(now.status?.loadBalancer?.ingress?.[0].ip, '10.0.0.9');
    assert.is(now.spec?.rules?.[0].host, 's.example.com', 'spec untouched by a status update');

    await net.patchNamespacedIngressStatus(
      { name: 's', namespace: 'default', body: { status: { loadBalancer: { ingress: [{ hostname: 'lb.example.com' }] } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    now = await net.readNamespacedIngress({ name: 's', namespace: 'default' });
    assert.equal(now.status?.loadBalancer?.ingress?.map((i) => i.hostname), ['lb.example.com']);

    await net.replaceNamespacedIngress({ name: 's', namespace: 'default', body: { ...now, status: {} } });
    now = await net.readNamespacedIngress({ name: 's', namespace: 'default' });
    assert.equal(now.status?.loadBalancer?.ingress?.map((i) => i.hostname), ['lb.example.com'], 'status kept by a main update');
    assert.is(server.count({ verb: 'patch', path: '/status' }), 1);
  });
});

test('patch: JSON patch (the client default), merge and strategic-merge', async () => {
  await withServer(async (server) => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'c' }, data: { a: '1', b: '2' } } });
    await core.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: [{ op: 'replace', path: '/data/a', value: '10' }] });
    await core.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { b: null, c: '3' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.patchNamespacedConfigMap({ name: 'c', namespace: 'default', body: { data: { d: '4' } } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    const cm = await core.readNamespacedConfigMap({ name: 'c', namespace: 'default' });
    assert.equal(cm.data, { a: '10', c: '3', d: '4' });
  });
});

test('leases (coordination.k8s.io), events and cluster-scoped nodes are served', async () => {
  await withServer(async (server) => {
    const kc = server.kubeConfig();
    const coord = kc.makeApiClient(CoordinationV1Api);
    const lease = await coord.createNamespacedLease({ namespace: 'ingress', body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 } } });
    lease.spec!.holderIdentity = 'pod-b';
    const taken = await coord.replaceNamespacedLease({ name: 'leader', namespace: 'ingress', body: lease });
    assert.is(taken.spec?.holderIdentity, 'pod-b');
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedEvent({ namespace: 'default', body: { metadata: { generateName: 'ing-' }, involvedObject: { kind: 'Ingress', name: 'a' }, reason: 'Sync', message: 'Scheduled for sync' } });
    assert.is(server.list('v1', 'Event', 'default').length, 1);
    server.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.0.1' }] } });
    const node = await core.readNode({ name: 'n1' });
    assert.is(node.status?.addresses?.[0].address, '192.168.0.1');
    assert.not.ok(node.metadata?.namespace);
  });
});

test('watch: history from a resourceVersion, label-selector transitions, bookmarks, 410 after compaction', async () => {
  await withServer(async (server) => {
    const a = server.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n', labels: { sel: 'yes' } } });
    const rv = server.resourceVersion;
    server.update({ ...a, metadata: { ...a.metadata, labels: { sel: 'no' } } });
    const w = await watchAll(server, '/api/v1/namespaces/n/configmaps', { resourceVersion: String(Number(a.metadata.resourceVersion) - 1), labelSelector: 'sel=yes', allowWatchBookmarks: 'true' });
    await waitFor(() => w.events.length === 2);
    assert.equal(w.events.map((e) => e.type), ['ADDED', 'DELETED'], 'leaving the selector is a DELETED');
    server.sendBookmarks();
    await waitFor(() => w.events.length === 3);
    assert.equal(w.events[2], { type: 'BOOKMARK', name: undefined, rv: server.resourceVersion, code: undefined });
    w.stop();

    server.compact();
    const gone = await watchAll(server, '/api/v1/namespaces/n/configmaps', { resourceVersion: rv });
    await waitFor(() => gone.ended() !== 'open');
    assert.is((gone.ended() as { statusCode?: number }).statusCode, 410, 'HTTP 410 Gone');
    server.goneMode = 'event';
    const inStream = await watchAll(server, '/api/v1/namespaces/n/configmaps', { resourceVersion: rv });
    await waitFor(() => inStream.ended() !== 'open');
    assert.equal(inStream.events.map((e) => [e.type, e.code]), [['ERROR', 410]]);
  });
});

test('watch from "" sends the current objects; dropWatches, failNext, stop/start', async () => {
  await withServer(async (server) => {
    server.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, type: 'Opaque' });
    const w = await watchAll(server, '/api/v1/secrets');
    await waitFor(() => w.events.length === 1 && server.openWatches === 1);
    assert.is(w.events[0].type, 'ADDED');
    server.dropWatches();
    await waitFor(() => w.ended() !== 'open');
    assert.is(server.openWatches, 0);

    server.failNext(1, 503);
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    try {
      await core.listSecretForAllNamespaces();
      assert.unreachable('injected failure');
    } catch (err) {
      assert.is((err as { code?: number }).code, 503);
    }
    assert.is((await core.listSecretForAllNamespaces()).items.length, 1);

    await server.stop();
    try {
      await core.listSecretForAllNamespaces();
      assert.unreachable('refused while stopped');
    } catch (err) {
      assert.match(String((err as Error).message), /ECONNREFUSED/);
    }
    await server.start();
    assert.is((await core.listSecretForAllNamespaces()).items.length, 1);
    assert.equal(server.requests.filter((q) => q.verb === 'list').map((q) => q.status), [503, 200, 200]);
  });
});

test('label selector parsing', () => {
  const l = { app: 'web', tier: 'front' };
  assert.ok(parseSelector('')(l));
  assert.ok(parseSelector('app=web,tier')(l));
  assert.ok(parseSelector('app==web,!missing')(l));
  assert.not.ok(parseSelector('app!=web')(l));
  assert.ok(parseSelector('tier in (front, back),app notin (db)')(l));
  assert.not.ok(parseSelector('tier notin (front)')(l));
});

test.run();
