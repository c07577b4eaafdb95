// The Helm chart's (4.15.1) common non-default values with the image swapped: a DaemonSet with
// hostPort 80/443, --enable-metrics=true, --watch-ingress-without-class=true and
// --default-ssl-certificate, run as the kubelet runs it (see image-pod.test.ts) against a cluster
// of 1,000 Ingresses: the time from container start to the readiness probe passing is printed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadavg } from 'node:os';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { helmCommonValues, NAMESPACE } from '../support/ingress-nginx-manifests.js';
import { IMAGE, makeCertificate, reportingFailure, probe, startPodCluster, startUntilReady, type PodCluster } from '../support/pod-cluster.js';
import type { RunningPod } from '../support/pod.js';
import type { FakeObject } from '../support/fake-apiserver.js';
import { ingress, sendRequest, service, slices, tlsSecret } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

const INGRESSES = 1000;
const BACKEND = { address: '10.244.2.10', port: 8080, name: 'app' };
let cluster: PodCluster;
let pod: RunningPod;
let readyMs: number;
let readyCpu: number;

test.before(() => reportingFailure(setUp));

async function setUp(): Promise<void> {
  const manifests = helmCommonValues(IMAGE, `${NAMESPACE}/default-cert`);
  const objects: FakeObject[] = [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }, service('apps', 'app'), ...slices('apps', 'app', [BACKEND])];
  for (let i = 0; i < INGRESSES; i++) {
    objects.push(ingress('apps', `app-${i}`, { host: `app-${i}.example`, className: 'nginx', paths: [{ path: '/', service: 'app' }] }));
  }
  // No class at all: served with --watch-ingress-without-class.
  objects.push(ingress('apps', 'classless', { host: 'classless.example', paths: [{ path: '/', service: 'app' }] }));
  cluster = await startPodCluster(manifests, objects);
  const cert = makeCertificate(cluster.dir, 'default', 'default.example', ['default.example']);
  cluster.fake.create(tlsSecret(NAMESPACE, 'default-cert', cert.cert, cert.key));
  ({ pod, readyMs, readyCpu } = await startUntilReady(cluster, [BACKEND], 240_000));
}

test.after(async () => {
  await cluster?.close();
});

test(`ready with ${INGRESSES} Ingresses; the last of them and the class-less one are served on the hostPorts`, async () => {
  process.stdout.write(`container start to ready with ${INGRESSES} Ingresses: ${readyMs} ms, the controller's CPU ${readyCpu} s (load average ${loadavg()[0]!.toFixed(1)})\n`);
  const last = await sendRequest(pod.ports[80]!, `app-${INGRESSES - 1}.example`, '/');
  assert.is(last.status, 200);
  assert.is(last.backend, BACKEND.name);
  assert.is((await sendRequest(pod.ports[80]!, 'classless.example', '/')).backend, BACKEND.name, '--watch-ingress-without-class=true');
});

test('--default-ssl-certificate: the catch-all HTTPS server presents the Secret\'s certificate', async () => {
  const presented = await new Promise<string>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: pod.ports[443]!, servername: 'unknown.example', rejectUnauthorized: false }, () => {
      resolve(new X509Certificate(s.getPeerX509Certificate()!.raw).subject);
      s.end();
    });
    s.on('error', reject);
  });
  assert.match(presented, /CN=default\.example/);
});

test('--enable-metrics=true: request metrics on the metrics port the chart declares', async () => {
  await sendRequest(pod.ports[80]!, 'app-1.example', '/');
  const text = await waitFor(async () => {
    const r = await sendRequest(pod.ports[10254]!, '127.0.0.1', '/metrics');
    return /nginx_ingress_controller_requests\{[^}]*ingress="app-1"/.test(r.body) ? r.body : undefined;
  }, { timeoutMs: 20_000, what: 'request metrics' });
  assert.match(text, /nginx_ingress_controller_requests\{[^}]*host="app-1\.example"/);
  assert.is(await probe(pod.healthzPort, '/healthz'), 200);
});

test('the DaemonSet\'s pod stops as the Deployment\'s: /wait-shutdown, SIGTERM, exit 0', async () => {
  const hook = await pod.exec(['/wait-shutdown']);
  assert.is(hook.code, 0, hook.output);
  pod.kill('SIGTERM');
  assert.is(await pod.exited, 0, pod.output().slice(-2000));
});

test.run();
