// ingress-nginx test/e2e/status/update.go, ported: `ingress-rx controller` against the fake API
// server with --publish-status-address. The e2e test cuts the controller off the API server (it
// talks through a kubectl proxy it kills), clears the Ingress's status and deletes the leader
// Lease meanwhile, then lets the controller reconnect: the status is written again. The port
// stops and restarts the fake API server on its port instead of the proxy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ported } from '../port.js';
import type { FakeApiServer } from '../../../support/fake-apiserver.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, type ClusterController } from '../../../support/cluster-controller.js';
import { waitFor } from '../../../support/wait.js';

const NS = 'status-update';
const HOST = 'status-update';
const ELECTION = 'ingress-controller-leader';
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.37.10', name: 'echo' }],
    objects: ({ echo }) => [NGINX_CLASS, ...echoService(NS, 'echo', echo), ingress(NS, HOST, { host: HOST, className: 'nginx', paths: [{ path: '/', service: 'echo' }] })],
    flags: [`--election-id=${ELECTION}`, '--election-ttl=4s', '--allow-upstream-addresses=loopback', '--publish-status-address=1.1.0.0'],
    env: { POD_NAMESPACE: NS },
  });
  ({ fake, ctl } = cluster);
});
test.after(() => cluster?.stop());

const statusOf = () => (fake.get('networking.k8s.io/v1', 'Ingress', HOST, NS) as { status?: { loadBalancer?: { ingress?: unknown[] } } } | undefined)?.status?.loadBalancer?.ingress ?? [];

its.noClient('status/update.go:43', 'the status written to the Ingress', async () => {
  await ctl.until(HOST, '/', (r) => r.status === 200, { what: `${HOST} served` });
  await waitFor(() => statusOf().length === 1, { what: 'the first status update', timeoutMs: 30_000 });
  assert.equal(statusOf(), [{ ip: '1.1.0.0' }]);
  // Cut off: the status cleared and the Lease deleted while the controller cannot see it.
  await fake.stop();
  const ing = fake.get('networking.k8s.io/v1', 'Ingress', HOST, NS)!;
  fake.set({ ...ing, status: { loadBalancer: { ingress: [] } } } as never);
  assert.ok(fake.delete('coordination.k8s.io/v1', 'Lease', ELECTION, NS), 'the leader Lease deleted');
  assert.equal(statusOf(), []);
  await fake.start();
  await waitFor(() => statusOf().length === 1, { what: 'the status written after the reconnection', timeoutMs: 60_000 });
  assert.equal(statusOf(), [{ ip: '1.1.0.0' }]);
});

test.run();
