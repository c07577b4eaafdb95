// RBAC as a cluster enforces it: ingress-nginx v1.15.1's ClusterRole and Role are all the controller
// needs (image-pod.test.ts runs it with them, no request refused); with a permission missing,
// the API server's 403 is an error naming the verb and the resource, the controller stays not
// ready (it never serves an empty list as if it were the cluster), and once the permission is
// granted it recovers on its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer, FakeObject } from '../support/fake-apiserver.js';
import { ingressNginxManifests, NAMESPACE } from '../support/ingress-nginx-manifests.js';
import { ingress, sendRequest, service, type CliProcess } from '../support/local-harness.js';
import { startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';

const SA = `system:serviceaccount:${NAMESPACE}:ingress-nginx`;
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let clusterRole: FakeObject & { rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> };

test.before(async () => {
  cluster = await startClusterController({
    api: { tokens: { 'sa-token': SA }, rbac: true },
    objects: ({ fake }) => {
      for (const o of ingressNginxManifests('ingress-rx')) fake.create(o as FakeObject);
      // An operator's trimmed ClusterRole: Secrets may not be listed.
      clusterRole = fake.get('rbac.authorization.k8s.io/v1', 'ClusterRole', 'ingress-nginx') as typeof clusterRole;
      fake.update({ ...clusterRole, rules: clusterRole.rules.map((r) => ({ ...r, resources: r.resources.filter((x) => x !== 'secrets') })) });
      return [service('shop', 'web'), ingress('shop', 'web', { host: 'shop.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] })];
    },
    untilHealthy: false,
    flags: ['--election-id=ingress-nginx-leader', '--ingress-class=nginx', `--configmap=${NAMESPACE}/ingress-nginx-controller`, '--publish-status-address=192.0.2.1'],
    env: { POD_NAME: 'ingress-nginx-controller-0', POD_NAMESPACE: NAMESPACE },
  });
  ({ fake, ctl } = cluster);
});

test.after(() => cluster?.stop());

test('a 403 is an error naming the verb, the resource and the service account; the controller is not ready meanwhile', async () => {
  const line = await waitFor(() => ctl.output().split('\n').find((l) => l.includes('forbids')), { timeoutMs: 20_000, what: 'the forbidden error' });
  const log = JSON.parse(line) as { level: number; msg: string };
  assert.is(log.level, 50, 'logged as an error');
  assert.match(log.msg, 'the API server forbids list and watch of secrets (in all namespaces)');
  assert.match(log.msg, `User "${SA}" cannot list resource "secrets" in API group "" at the cluster scope`);
  assert.ok(fake.requests.some((r) => r.status === 403 && r.path === '/api/v1/secrets'));
  const health = await sendRequest(ctl.ports.healthz, '127.0.0.1', '/healthz');
  assert.is(health.status, 500, 'not ready: the cluster has not been read whole');
  assert.is((await sendRequest(ctl.ports.http, 'shop.example', '/').catch(() => ({ status: 0 }))).status !== 200, true);
});

test('granted the permission, it recovers on its own and serves', async () => {
  fake.update({ ...clusterRole, metadata: { ...clusterRole.metadata, resourceVersion: undefined } } as never);
  await waitFor(async () => (await sendRequest(ctl.ports.healthz, '127.0.0.1', '/healthz').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 60_000, what: 'ready after the grant' });
  const r = await sendRequest(ctl.ports.http, 'shop.example', '/');
  assert.is(r.status, 503, 'the Ingress is served (its Service has no endpoints)');
});

test.run();
