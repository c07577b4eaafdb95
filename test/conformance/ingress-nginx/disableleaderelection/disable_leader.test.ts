// ingress-nginx test/e2e/disableleaderelection/disable_leader.go, ported against the fake API
// server: `ingress-rx controller --disable-leader-election` routes as an elected controller does.
// Two Ingresses written after it started, each host serving only its own Prefix path; and, the
// flag's effect, no election Lease is ever written.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';

const NS = 'disableleaderelection';
const HOST1 = 'leader.election.disabled.com';
const HOST2 = 'leader.election.disabled2.com';
let cluster: ClusterFixture;
let ctl: CliProcess;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterFixture({ podNamespace: NS });
  cluster.fake.create(ingressClass());
  cluster.echoService(NS);
  ctl = await cluster.controller([`--watch-namespace=${NS}`, '--disable-leader-election']);
  cluster.fake.create(ingress(NS, HOST1, { host: HOST1, className: 'nginx', paths: [{ path: '/foo', service: 'echo' }] }));
  cluster.fake.create(ingress(NS, HOST2, { host: HOST2, className: 'nginx', paths: [{ path: '/ping', service: 'echo' }] }));
});
test.after(() => cluster.stop());

its.both('disableleaderelection/disable_leader.go:35', async (p) => {
  await p.until(HOST1, '/foo', (r) => r.status === 200);
  await p.until(HOST2, '/ping', (r) => r.status === 200);
  assert.is((await p.request(HOST1, '/bar')).status, 404);
  assert.is((await p.request(HOST2, '/foo')).status, 404);
  assert.is((await p.request(HOST2, '/pong')).status, 404);
  assert.is((await p.request(HOST1, '/ping')).status, 404);
  // Without an election the controller holds no Lease (an elected one holds its --election-id's).
  assert.equal(cluster.fake.list('coordination.k8s.io/v1', 'Lease', NS), []);
});

test.run();
