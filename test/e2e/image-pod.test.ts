// Drop-in for real: ingress-nginx's official install (deploy/static/provider/cloud/deploy.yaml of
// controller-v1.15.1), with only the controller's image replaced by the one scripts/image.sh builds
// from the Dockerfile, run as the kubelet runs it (test/support/pod.ts: uid 101, gid 82,
// NET_BIND_SERVICE only, no_new_privs, the manifest's args and env, the webhook certificate and
// service-account token mounted read-only) against the fake API server serving the manifests'
// objects over TLS with the token checked and the manifests' RBAC enforced. It starts, binds 80
// and 443 as uid 101, passes its probes, publishes the Service's address, wins the Lease, answers
// an AdmissionReview, serves an Ingress, and on /wait-shutdown then SIGTERM drains and exits 0.
import { test } from 'uvu';
import { readFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { loadavg } from 'node:os';
import { ingressNginxManifests, NAMESPACE, RELEASE } from '../support/ingress-nginx-manifests.js';
import { admissionReview, reportingFailure, IMAGE, LB_ADDRESS, POD, probe, startPodCluster, startUntilReady, type PodCluster } from '../support/pod-cluster.js';
import type { RunningPod } from '../support/pod.js';
import { ingress, sendRequest, service, slices } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

const BACKEND = { address: '10.244.1.10', port: 8080, name: 'web-a' };
const NET_BIND_SERVICE = '0000000000000400';
let cluster: PodCluster;
let pod: RunningPod;
let readyMs: number;
let readyCpu: number;

test.before(() => reportingFailure(setUp));

async function setUp(): Promise<void> {
  const manifests = ingressNginxManifests(IMAGE);
  const deployment = manifests.find((m) => m.kind === 'Deployment')!;
  assert.is(deployment.spec.template.spec.containers[0].image, IMAGE, `only the image of ${RELEASE}'s Deployment is changed`);
  cluster = await startPodCluster(manifests, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
    service('shop', 'web'),
    ...slices('shop', 'web', [BACKEND]),
    ingress('shop', 'web', { host: 'shop.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] }),
  ]);
  // The LoadBalancer Service's address, as the cloud provider sets it.
  const svc = cluster.fake.get('v1', 'Service', 'ingress-nginx-controller', NAMESPACE)!;
  cluster.fake.set({ ...svc, status: { loadBalancer: { ingress: [{ ip: LB_ADDRESS }] } } });
  ({ pod, readyMs, readyCpu } = await startUntilReady(cluster, [BACKEND]));
}

test.after(async () => {
  await cluster?.close();
});

test('it starts and turns ready: the probes of the manifest (:10254/healthz) pass', async () => {
  assert.is(await probe(pod.healthzPort, '/healthz'), 200, 'liveness');
  assert.is(await probe(pod.healthzPort, '/healthz'), 200, 'readiness');
  process.stdout.write(`container start to ready: ${readyMs} ms, the controller's CPU ${readyCpu} s (load average ${loadavg()[0]!.toFixed(1)})\n`);
});

test('NGINX binds 80 and 443 as uid 101 with only NET_BIND_SERVICE, under no_new_privs; the chain from tini carries it', () => {
  const procs = pod.processes();
  const byName = (re: RegExp) => procs.filter((p) => re.test(p.argv.join(' ')));
  const tini = procs.find((p) => p.argv[0] === '/usr/bin/tini')!;
  const node = byName(/\/app\/bin\/ingress-rx controller/)[0]!;
  const master = byName(/^nginx: master process/)[0]!;
  const workers = byName(/^nginx: worker process/);
  assert.ok(tini && node && master && workers.length > 0, procs.map((p) => p.argv.join(' ')).join('\n'));
  assert.equal(node.argv.slice(3), ['--publish-service=ingress-nginx/ingress-nginx-controller', '--election-id=ingress-nginx-leader',
    '--controller-class=k8s.io/ingress-nginx', '--ingress-class=nginx', '--configmap=ingress-nginx/ingress-nginx-controller',
    '--validating-webhook=:8443', '--validating-webhook-certificate=/usr/local/certificates/cert', '--validating-webhook-key=/usr/local/certificates/key'],
  'the manifest\'s args, $(POD_NAMESPACE) expanded, reach the controller');
  assert.is(tini.status.NSpid?.split(/\s+/).at(-1), '1', 'tini is PID 1');
  for (const p of procs) {
    assert.match(p.status.Uid!, /^101\s+101\s+101\s+101$/, `${p.argv[0]}: uid`);
    assert.match(p.status.Gid!, /^82\s+82\s+82\s+82$/);
    assert.is(p.status.CapBnd, NET_BIND_SERVICE, `${p.argv[0]}: bounding set`);
    assert.is(p.status.NoNewPrivs, '1', `${p.argv[0]}: no_new_privs`);
  }
  // As runc leaves it, tini holds the capability only in its permitted set (its file capability, +p).
  assert.equal([tini.status.CapPrm, tini.status.CapEff, tini.status.CapInh, tini.status.CapAmb], [NET_BIND_SERVICE, '0000000000000000', '0000000000000000', '0000000000000000']);
  for (const p of [node, master, ...workers]) {
    assert.is(p.status.CapEff, NET_BIND_SERVICE, `${p.argv[0]}: effective`);
    assert.is(p.status.CapAmb, NET_BIND_SERVICE, `${p.argv[0]}: ambient, raised by /nginx-ingress-controller`);
  }
  // The listening sockets on 80 and 443 in the pod's network namespace, and who owns them.
  const listening = podSockets(master.pid).filter((s) => s.state === '0A');
  for (const port of [80, 443]) {
    const socket = listening.find((s) => s.port === port);
    assert.ok(socket, `something listens on ${port}`);
    assert.is(socket!.uid, 101, `port ${port} is bound by uid 101`);
  }
});

/** /proc/<pid>/net/tcp{,6}: the sockets of the process's network namespace. */
function podSockets(pid: number): Array<{ port: number; state: string; uid: number }> {
  const out: Array<{ port: number; state: string; uid: number }> = [];
  for (const file of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${file}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 8) continue;
      out.push({ port: parseInt(f[1]!.split(':')[1]!, 16), state: f[3]!, uid: Number(f[7]) });
    }
  }
  return out;
}

test('LD_PRELOAD=/usr/local/lib/libmimalloc.so: the file is there, programs run in the container load it; the capable chain drops it', async () => {
  // tini and /nginx-ingress-controller carry a file capability, so glibc's loader runs them in
  // secure-execution mode and removes LD_PRELOAD from their environment: node and NGINX, started
  // below them, run with glibc's malloc (in ingress-nginx's image musl ignores it in its capable
  // binaries likewise).
  const chain = pod.processes().filter((p) => /^nginx: |\/app\/bin\/ingress-rx/.test(p.argv.join(' ')));
  assert.ok(chain.length >= 3);
  for (const p of chain) assert.not.match(p.maps, /libmimalloc/, `${p.argv[0]}: LD_PRELOAD did not reach it`);
  // A program the kubelet starts in the container without capabilities (kubectl exec, a hook) loads it.
  const exec = await pod.exec(['/bin/sh', '-c', 'grep -c libmimalloc /proc/self/maps']);
  assert.is(exec.code, 0, exec.output);
  assert.ok(Number(exec.output.trim()) > 0, exec.output);
  assert.not.match(pod.output() + exec.output, /cannot be preloaded/);
  // Were the file absent, every such program would say so on stderr, and run on.
  const missing = await pod.exec(['/usr/bin/env', 'LD_PRELOAD=/usr/local/lib/absent.so', '/bin/echo', 'ran']);
  assert.is(missing.code, 0);
  assert.match(missing.output, /ERROR: ld\.so: object '\/usr\/local\/lib\/absent\.so' from LD_PRELOAD cannot be preloaded .*: ignored\.\nran/);
});

test('the Ingress of class nginx is served over HTTP and HTTPS from the backend behind its Service', async () => {
  const http = await sendRequest(pod.ports[80]!, 'shop.example', '/cart');
  assert.is(http.status, 200);
  assert.is(http.backend, BACKEND.name);
  const https = await sendRequest(pod.ports[443]!, 'shop.example', '/cart', { https: true });
  assert.is(https.status, 200);
  assert.is(https.backend, BACKEND.name);
});

test('the Service\'s address (--publish-service) is published in the Ingress status; the Lease of --election-id is won', async () => {
  const status = await waitFor(() => {
    const ing = cluster.fake.get('networking.k8s.io/v1', 'Ingress', 'web', 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } };
    return ing.status?.loadBalancer?.ingress?.length ? ing.status.loadBalancer.ingress : undefined;
  }, { timeoutMs: 30_000, what: 'the Ingress status' });
  assert.equal(status, [{ ip: LB_ADDRESS }]);
  const lease = cluster.fake.get('coordination.k8s.io/v1', 'Lease', 'ingress-nginx-leader', NAMESPACE) as unknown as { spec: { holderIdentity: string } };
  assert.is(lease.spec.holderIdentity, POD.name);
});

test('the validating webhook on :8443 answers an AdmissionReview with the mounted certificate', async () => {
  const fine = await admissionReview(pod.ports[8443]!, cluster.webhookCA, ingress('shop', 'fresh', { host: 'fresh.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] }) as never);
  assert.is(fine.allowed, true);
  const taken = await admissionReview(pod.ports[8443]!, cluster.webhookCA, ingress('shop', 'thief', { host: 'shop.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] }) as never);
  assert.is(taken.allowed, false);
  assert.match(taken.status!.message, /already defined by the older Ingress shop\/web/);
});

test('every API request was the service account\'s, and the manifests\' RBAC allowed each one', () => {
  const requests = cluster.fake.requests;
  assert.ok(requests.length > 10);
  assert.equal(requests.filter((r) => r.user !== `system:serviceaccount:${NAMESPACE}:ingress-nginx`).map((r) => r.path), []);
  assert.equal(requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.path}`), []);
  assert.ok(requests.some((r) => r.verb === 'update' && /\/ingresses\/web\/status$/.test(r.path)), 'status written with update, as the Role grants');
});

test('preStop /wait-shutdown drains (an in-flight request completes), then SIGTERM: exit 0 within the grace period', async () => {
  const inFlight = sendRequest(pod.ports[80]!, 'shop.example', '/__delay/2000');
  await waitFor(() => pod.processes().some((p) => /^nginx: worker/.test(p.argv.join(' '))), { what: 'workers' });
  const t0 = Date.now();
  const hook = await pod.exec(['/wait-shutdown']);
  assert.is(hook.code, 0, hook.output);
  assert.match(hook.output, /NGINX has stopped/);
  const slow = await inFlight;
  assert.is(slow.status, 200, 'the request in flight when the shutdown began completed');
  assert.is.not(await probe(pod.healthzPort, '/healthz'), 200, 'not ready while shutting down');
  assert.not.ok(pod.processes().some((p) => /^nginx: /.test(p.argv.join(' '))), 'no NGINX left');
  pod.kill('SIGTERM');
  const code = await pod.exited;
  const took = Date.now() - t0;
  assert.is(code, 0, pod.output().slice(-2000));
  const grace = ingressNginxManifests(IMAGE).find((m) => m.kind === 'Deployment')!.spec.template.spec.terminationGracePeriodSeconds as number;
  assert.ok(took < grace * 1000, `stopped in ${took} ms, within ${grace} s`);
  process.stdout.write(`preStop + SIGTERM to exit: ${took} ms\n`);
});

test.run();
