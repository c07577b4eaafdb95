// ingress-nginx test/e2e/metrics/metrics.go, ported: `ingress-rx controller` against the fake API
// server, real NGINX, its request metrics read from /metrics on the healthz port. The e2e test
// restarts the controller with each It's flags; the port runs two controllers, one per set of
// flags: A excludes two socket metric families and leaves --metrics-per-undefined-host off, B
// excludes a family that does not exist and turns --metrics-per-undefined-host on. Requests are
// counted once NGINX has written them to the metrics log the controller reads: the port awaits
// the count of a request to the Ingress's host in the same controller, sent after the request
// the It looks for. The e2e chart sets --enable-metrics (controller.metrics.enabled), as the port does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ported } from '../port.js';
import { startFakeCluster } from '../fixture.js';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { ingress, sendRequest, service, slices, startController, type CliProcess } from '../../../support/local-harness.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

const NS = 'metrics';
const HOST = 'foo.com';
let cluster: Awaited<ReturnType<typeof startFakeCluster>>;
let echo: EchoServer;
let a: CliProcess;
let b: CliProcess;
const onA = ported(test, () => a);
const onB = ported(test, () => b);

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.36.10', name: 'echo' });
  cluster = await startFakeCluster([service(NS, 'echo'), ...slices(NS, 'echo', [echo]), ingress(NS, HOST, { host: HOST, className: 'nginx', paths: [{ path: '/', service: 'echo' }] })]);
  const start = (name: string, flags: string[]) => startController({
    kubeconfig: cluster.kubeconfig,
    args: [`--election-id=irx-conformance-metrics-${name}`, '--allow-upstream-addresses=loopback', '--update-status=false', '--enable-metrics=true', ...flags],
    env: { POD_NAME: `ingress-rx-${name}`, POD_NAMESPACE: NS },
  });
  [a, b] = await Promise.all([
    start('a', ['--exclude-socket-metrics=nginx_ingress_controller_request_size,nginx_ingress_controller_header_duration_seconds']),
    start('b', ['--exclude-socket-metrics=non_existing_metric_does_not_affect_existing_metrics', '--metrics-per-undefined-host=true']),
  ]);
  await Promise.all([a, b].map((c) => c.until(HOST, '/', (r) => r.status === 200, { what: `${HOST} served` })));
});
test.after(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await cluster?.close();
  await echo?.close();
});

const metrics = async (c: CliProcess) => (await sendRequest(c.ports.healthz, '127.0.0.1', '/metrics')).body;
/** The series of `family` (with labels). */
const series = (text: string, family: string) => text.split('\n').filter((l) => l.startsWith(`${family}{`));
/** The count of requests to HOST with `path`'s status, as the metrics log reported them. */
const requestCount = (text: string, status: string) => series(text, 'nginx_ingress_controller_requests')
  .filter((l) => l.includes(`host="${HOST}"`) && l.includes(`status="${status}"`))
  .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

/** Sends `first`, then a request to HOST the controller counts, and returns /metrics once it has counted it (so `first` too). */
async function counted(c: CliProcess, p: ProtocolClient, first: () => Promise<unknown>): Promise<string> {
  await first();
  const before = requestCount(await metrics(c), '200');
  assert.is((await p.request(HOST, '/')).status, 200);
  return waitFor(async () => { const t = await metrics(c); return requestCount(t, '200') > before ? t : null; }, { what: 'the requests counted' });
}

onA.both('metrics/metrics.go:51', async (p) => {
  const text = await counted(a, p, async () => assert.is((await p.request(HOST, '/')).status, 200));
  assert.equal(series(text, 'nginx_ingress_controller_request_size'), []);
  assert.equal(series(text, 'nginx_ingress_controller_header_duration_seconds_count'), []);
  assert.not.equal(series(text, 'nginx_ingress_controller_response_size_count'), [], 'the other families are there');
});

onB.both('metrics/metrics.go:73', async (p) => {
  const text = await counted(b, p, async () => assert.is((await p.request(HOST, '/')).status, 200));
  assert.ok(series(text, 'nginx_ingress_controller_request_size_count').some((l) => l.includes(`host="${HOST}"`)), text);
});

onB.both('metrics/metrics.go:95', async (p) => {
  const wildcard = `wildcard-${p.tag}.${HOST}`;
  const text = await counted(b, p, async () => assert.is((await p.request(wildcard, '/')).status, 404));
  assert.ok(series(text, 'nginx_ingress_controller_requests').some((l) => l.includes(`host="${wildcard}"`)), text);
});

onA.both('metrics/metrics.go:128', async (p) => {
  const wildcard = `wildcard-${p.tag}.${HOST}`;
  const text = await counted(a, p, async () => assert.is((await p.request(wildcard, '/')).status, 404));
  assert.not.ok(series(text, 'nginx_ingress_controller_requests').some((l) => l.includes(wildcard)), text);
});

test.run();
