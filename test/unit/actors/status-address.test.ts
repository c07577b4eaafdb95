// Status address discovery: the pure rules, then each source (flag, publish-service of every
// type, controller pods' nodes) read from the fake API server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CoreV1Api } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver.js';
import {
  addressesFromFlag, discoverStatusAddresses, nodeAddress, otherReplicasRunning, readControllerPod,
  replicaLabels, sameAddresses, standardizeAddresses, type ControllerPod,
} from '../../../src/actors/status-address.js';

const NS = 'ingress-rx';
const LABELS = { 'app.kubernetes.io/name': 'ingress-rx', 'app.kubernetes.io/component': 'controller' };

test('the flag: comma-separated IPs and hostnames, sorted and de-duplicated', () => {
  assert.equal(addressesFromFlag('1.2.3.4, lb.example.com,1.2.3.4,, 2001:db8::1'),
    [{ ip: '1.2.3.4' }, { ip: '2001:db8::1' }, { hostname: 'lb.example.com' }]);
  assert.equal(addressesFromFlag(''), []);
});

test('standardize sorts by hostname then IP, drops empties and duplicates, ignores ports', () => {
  assert.equal(standardizeAddresses([{ hostname: 'b' }, { ip: '10.0.0.2' }, { hostname: 'a' }, { ip: '10.0.0.1', ports: [{ port: 80, protocol: 'TCP' }] }, { ip: '10.0.0.2' }, {}]),
    [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }, { hostname: 'a' }, { hostname: 'b' }]);
  assert.ok(sameAddresses([{ ip: '1.1.1.1' }, { hostname: 'x' }], [{ hostname: 'x' }, { ip: '1.1.1.1' }]));
  assert.not.ok(sameAddresses([{ ip: '1.1.1.1' }], [{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]));
  assert.not.ok(sameAddresses([{ ip: '1.1.1.1' }], [{ hostname: '1.1.1.1' }]));
  assert.ok(sameAddresses(undefined, []));
});

test('a node reports its ExternalIP, or its InternalIP when asked or when it has no external one', () => {
  const both = { status: { addresses: [{ type: 'Hostname', address: 'n1' }, { type: 'InternalIP', address: '10.0.0.1' }, { type: 'ExternalIP', address: '203.0.113.1' }] } };
  const internalOnly = { status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } };
  assert.is(nodeAddress(both, false), '203.0.113.1');
  assert.is(nodeAddress(both, true), '10.0.0.1');
  assert.is(nodeAddress(internalOnly, false), '10.0.0.2');
  assert.is(nodeAddress({ status: {} }, false), undefined);
});

test('replica labels leave out the per-revision ones', () => {
  assert.equal(replicaLabels({ ...LABELS, 'pod-template-hash': 'abc', 'controller-revision-hash': 'x', 'pod-template-generation': '2' }), LABELS);
});

// ---- against the fake API server ----

function pod(name: string, node: string, opts: { ready?: boolean; phase?: string; labels?: Record<string, string>; deleting?: boolean } = {}) {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      name, namespace: NS, labels: opts.labels ?? { ...LABELS, 'pod-template-hash': name.slice(-1) },
      ...(opts.deleting ? { deletionTimestamp: '2026-11-22T00:00:00Z' } : {}),
    },
    spec: { nodeName: node, containers: [{ name: 'controller', image: 'ingress-rx' }] },
    status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

function node(name: string, addresses: Array<[string, string]>) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { addresses: addresses.map(([type, address]) => ({ type, address })) } };
}

function service(name: string, spec: Record<string, unknown>, status?: Record<string, unknown>) {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec, ...(status ? { status } : {}) };
}

async function cluster(): Promise<{ fake: FakeApiServer; core: CoreV1Api; self: ControllerPod }> {
  const fake = await startFakeApiServer();
  fake.create(node('node-1', [['InternalIP', '10.0.0.1'], ['ExternalIP', '203.0.113.1']]));
  fake.create(node('node-2', [['InternalIP', '10.0.0.2']]));
  fake.create(node('node-3', [['InternalIP', '10.0.0.3'], ['ExternalIP', '203.0.113.3']]));
  fake.create(node('node-4', [['InternalIP', '10.0.0.4'], ['ExternalIP', '203.0.113.4']]));
  fake.create(pod('ctrl-a', 'node-1'));
  fake.create(pod('ctrl-b', 'node-2'));
  fake.create(pod('ctrl-c', 'node-1')); // a second replica on node-1: one address
  fake.create(pod('ctrl-d', 'node-3', { ready: false }));
  fake.create(pod('ctrl-e', 'node-3', { phase: 'Pending' }));
  fake.create(pod('other', 'node-4', { labels: { app: 'something-else' } }));
  const core = fake.kubeConfig().makeApiClient(CoreV1Api);
  const self = await readControllerPod(core, 'ctrl-a', NS);
  return { fake, core, self };
}

const none = { publishStatusAddress: '', publishService: '', reportNodeInternalIpAddress: false };

test('the controller pod is read for its labels, without the revision label', async () => {
  const { fake, self } = await cluster();
  try {
    const { uid, ...rest } = self;
    assert.equal(rest, { name: 'ctrl-a', namespace: NS, labels: LABELS });
    assert.is(uid, fake.get('v1', 'Pod', 'ctrl-a', NS)!.metadata.uid);
  } finally {
    await fake.close();
  }
});

test('without flags: the nodes of the running, ready replicas (external, else internal)', async () => {
  const { fake, core, self } = await cluster();
  try {
    assert.equal(await discoverStatusAddresses(core, self, none), [{ ip: '10.0.0.2' }, { ip: '203.0.113.1' }]);
    assert.equal(await discoverStatusAddresses(core, self, { ...none, reportNodeInternalIpAddress: true }), [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }]);
    // node-4 runs an unrelated pod, node-3 only unready ones: never asked for.
    assert.is(fake.count({ verb: 'get', path: '/api/v1/nodes/node-3' }), 0);
    assert.is(fake.count({ verb: 'get', path: '/api/v1/nodes/node-4' }), 0);
    const list = fake.requests.find((r) => r.verb === 'list' && r.path === `/api/v1/namespaces/${NS}/pods`);
    assert.is(list?.query.labelSelector, 'app.kubernetes.io/component=controller,app.kubernetes.io/name=ingress-rx');
  } finally {
    await fake.close();
  }
});

test('--publish-status-address wins and asks the API nothing', async () => {
  const { fake, core, self } = await cluster();
  try {
    const before = fake.requests.length;
    assert.equal(await discoverStatusAddresses(core, self, { ...none, publishStatusAddress: 'lb.example.com,192.0.2.9' }),
      [{ ip: '192.0.2.9' }, { hostname: 'lb.example.com' }]);
    assert.is(fake.requests.length, before);
  } finally {
    await fake.close();
  }
});

test('--publish-service of each type', async () => {
  const { fake, core, self } = await cluster();
  try {
    fake.create(service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.10', externalIPs: ['198.51.100.7', '192.0.2.1'] },
      { loadBalancer: { ingress: [{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }] } }));
    fake.create(service('cip', { type: 'ClusterIP', clusterIP: '10.96.0.11' }));
    fake.create(service('ext', { type: 'ExternalName', externalName: 'edge.example.net' }));
    fake.create(service('np', { type: 'NodePort', clusterIP: '10.96.0.12' }));
    fake.create(service('np-ext', { type: 'NodePort', clusterIP: '10.96.0.13', externalIPs: ['198.51.100.8'] }));
    const via = (name: string) => discoverStatusAddresses(core, self, { ...none, publishService: `${NS}/${name}` });
    assert.equal(await via('lb'), [{ ip: '192.0.2.1' }, { ip: '198.51.100.7' }, { hostname: 'lb.example.com' }]);
    assert.equal(await via('cip'), [{ ip: '10.96.0.11' }]);
    assert.equal(await via('ext'), [{ hostname: 'edge.example.net' }]);
    assert.equal(await via('np'), [{ ip: '10.0.0.2' }, { ip: '203.0.113.1' }]);
    assert.equal(await via('np-ext'), [{ ip: '198.51.100.8' }]);
  } finally {
    await fake.close();
  }
});

test('a missing --publish-service is an error, not an empty status', async () => {
  const { fake, core, self } = await cluster();
  try {
    let failed = false;
    try {
      await discoverStatusAddresses(core, self, { ...none, publishService: `${NS}/missing` });
    } catch {
      failed = true;
    }
    assert.ok(failed);
  } finally {
    await fake.close();
  }
});

test('other replicas: running or starting ones count, terminating ones and this pod do not', async () => {
  const fake = await startFakeApiServer();
  const core = fake.kubeConfig().makeApiClient(CoreV1Api);
  try {
    fake.create(pod('ctrl-a', 'node-1'));
    fake.create(pod('other', 'node-1', { labels: { app: 'x' } }));
    const self = await readControllerPod(core, 'ctrl-a', NS);
    assert.is(await otherReplicasRunning(core, self), false);
    fake.create(pod('ctrl-old', 'node-2', { deleting: true }));
    fake.create(pod('ctrl-failed', 'node-2', { phase: 'Failed' }));
    assert.is(await otherReplicasRunning(core, self), false);
    fake.create(pod('ctrl-new', 'node-2', { phase: 'Pending', ready: false }));
    assert.is(await otherReplicasRunning(core, self), true);
  } finally {
    await fake.close();
  }
});

test('a pod without labels stands for itself alone, not for every pod of its namespace', async () => {
  const { fake, core } = await cluster();
  try {
    fake.create(pod('lonely', 'node-4', { labels: {} }));
    const self = await readControllerPod(core, 'lonely', NS);
    assert.equal(self.labels, {});
    assert.equal(await discoverStatusAddresses(core, self, none), [{ ip: '203.0.113.4' }]);
    assert.is(await otherReplicasRunning(core, self), false);
  } finally {
    await fake.close();
  }
});

test.run();
