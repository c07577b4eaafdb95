// A cluster for running ingress-nginx's manifests with the ingress-rx image (test/e2e/image-pod*):
// the fake API server as a cluster serves it (HTTPS with its own CA, the service account's token
// checked, the manifests' RBAC enforced) loaded with the manifests' objects, the controller's Pod
// and its Node; the webhook's certificate as ingress-nginx's certgen Job writes it into the
// Secret the Deployment mounts; and the controller container run by pod.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createConnection, type Server } from 'node:net';
import { pipeServer } from './pipe.js';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer, type FakeObject } from './fake-apiserver.js';
import { NAMESPACE, type Manifest } from './ingress-nginx-manifests.js';
import { runPod, type ContainerManifest, type RunningPod } from './pod.js';
import { waitFor } from './wait.js';

export const IMAGE = process.env.IRX_IMAGE ?? 'localhost/ingress-rx:dev';
export const POD = { name: 'ingress-nginx-controller-7c9f8d6b5-x2x4q', namespace: NAMESPACE, ip: '10.244.0.5' };
export const NODE = 'node-1';
export const LB_ADDRESS = '203.0.113.7';
export const WEBHOOK_DNS = `ingress-nginx-controller-admission.${NAMESPACE}.svc`;
const SERVICE_ACCOUNT = `system:serviceaccount:${NAMESPACE}:ingress-nginx`;

export interface PodCluster {
  fake: FakeApiServer;
  dir: string;
  /** PEM of the CA that signed the webhook's certificate (the ValidatingWebhookConfiguration's caBundle). */
  webhookCA: string;
  /** Runs the controller container of the workload (Deployment or DaemonSet) among `objects`. */
  start(opts?: { backends?: Array<{ address: string; port: number; name: string }> }): Promise<RunningPod>;
  close(): Promise<void>;
}

/** The image's presence, checked first: scripts/test.sh builds it (scripts/image.sh). */
export function assertImageBuilt(): void {
  if (process.getuid?.() !== 0) throw new Error('running the image as the kubelet does needs root (bwrap, buildah, nsenter)');
  try {
    execFileSync('buildah', ['inspect', '--type', 'image', IMAGE], { stdio: 'ignore' });
  } catch {
    throw new Error(`the image ${IMAGE} is not built: run bash scripts/image.sh (scripts/test.sh does)`);
  }
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A CA and a certificate it signs for `names` (DNS names and IP addresses), as PEM files in `dir`. */
export function makeCertificate(dir: string, prefix: string, cn: string, names: string[]): { ca: string; cert: string; key: string } {
  openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${prefix}-ca.key`, '-out', `${prefix}-ca.crt`, '-days', '2', '-subj', `/CN=${prefix}-ca`);
  openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${prefix}.key`, '-out', `${prefix}.csr`, '-subj', `/CN=${cn}`);
  const san = names.map((n) => (/^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`)).join(',');
  writeFileSync(join(dir, `${prefix}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  openssl(dir, 'x509', '-req', '-in', `${prefix}.csr`, '-CA', `${prefix}-ca.crt`, '-CAkey', `${prefix}-ca.key`, '-CAcreateserial', '-out', `${prefix}.crt`, '-days', '2', '-extfile', `${prefix}.ext`);
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { ca: read(`${prefix}-ca.crt`), cert: read(`${prefix}.crt`), key: read(`${prefix}.key`) };
}

export async function startPodCluster(objects: Manifest[], extra: FakeObject[] = []): Promise<PodCluster> {
  assertImageBuilt();
  const dir = mkdtempSync('/tmp/irxcl-');
  const api = makeCertificate(dir, 'apiserver', 'kube-apiserver', ['127.0.0.1', 'kubernetes', 'kubernetes.default.svc']);
  const webhook = makeCertificate(dir, 'webhook', WEBHOOK_DNS, ['ingress-nginx-controller-admission', WEBHOOK_DNS]);
  const token = `token-${Math.random().toString(36).slice(2)}`;
  const fake = await startFakeApiServer({ tls: { cert: api.cert, key: api.key }, tokens: { [token]: SERVICE_ACCOUNT }, rbac: true });
  for (const o of objects) {
    if (o.kind === 'ValidatingWebhookConfiguration') {
      // What the certgen patch Job does: the CA into the webhook's caBundle.
      o.webhooks[0].clientConfig.caBundle = Buffer.from(webhook.ca).toString('base64');
    }
    fake.create(o as FakeObject);
  }
  const workload = objects.find((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet')!;
  const template = workload.spec.template;
  fake.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE }, status: { addresses: [{ type: 'InternalIP', address: '192.0.2.21' }] } });
  fake.create({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: POD.name, namespace: POD.namespace, labels: { ...template.metadata.labels, 'pod-template-hash': '7c9f8d6b5' } },
    spec: { nodeName: NODE, serviceAccountName: template.spec.serviceAccountName, containers: template.spec.containers },
    status: { phase: 'Running', podIP: POD.ip, hostIP: '192.0.2.21', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  // The Secret the certgen create Job writes (keys ca, cert, key), projected as the volume's files.
  fake.create({
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ingress-nginx-admission', namespace: NAMESPACE },
    data: { ca: b64(webhook.ca), cert: b64(webhook.cert), key: b64(webhook.key) },
  });
  const certDir = join(dir, 'webhook-cert');
  mkdirSync(certDir);
  writeFileSync(join(certDir, 'ca'), webhook.ca);
  writeFileSync(join(certDir, 'cert'), webhook.cert);
  writeFileSync(join(certDir, 'key'), webhook.key);
  for (const o of extra) fake.create(o);

  // The API server as the pod's network reaches it.
  const apiSocket = join(dir, 'api.sock');
  const apiPipe: Server = pipeServer(() => createConnection(fake.port, '127.0.0.1'));
  await new Promise<void>((resolve) => apiPipe.listen(apiSocket, resolve));

  const pods: RunningPod[] = [];
  return {
    fake, dir, webhookCA: webhook.ca,
    async start(opts = {}) {
      const container = template.spec.containers[0] as ContainerManifest;
      const volumes = Object.fromEntries((template.spec.volumes as Array<{ name: string }>).map((v) => [v.name, certDir]));
      const pod = await runPod({
        image: IMAGE, pod: POD, container, volumes, serviceAccount: { token, caCert: api.ca },
        apiServer: { port: 6443, socket: apiSocket }, backends: opts.backends,
      });
      pods.push(pod);
      return pod;
    },
    async close() {
      for (const p of pods) await p.remove();
      apiPipe.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Runs a test file's set-up, printing its error: uvu prints nothing for one thrown in a before hook. */
export async function reportingFailure(setUp: () => Promise<void>): Promise<void> {
  try {
    await setUp();
  } catch (err) {
    process.stderr.write(`setting up the pod failed: ${(err as Error).stack ?? String(err)}\n`);
    throw err;
  }
}

/** The kubelet's httpGet probe: the status code, 0 when nothing answered within the timeout. */
export function probe(port: number, path: string, timeoutMs = 1000): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, timeout: timeoutMs, agent: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
    req.on('timeout', () => { req.destroy(); resolve(0); });
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Waits until the readiness probe passes; resolves with when it first did. */
export async function untilReady(pod: RunningPod, timeoutMs = 120_000): Promise<number> {
  await waitFor(async () => {
    if (pod.exitCode() !== undefined) throw new Error(`the container exited with ${pod.exitCode()}: ${pod.output().slice(-3000)}`);
    return (await probe(pod.healthzPort, '/healthz')) === 200;
  }, { timeoutMs, intervalMs: 200, what: 'the readiness probe' }).catch((err: Error) => { throw new Error(`${err.message}\ncontainer output: ${pod.output().slice(-3000)}`); });
  return Date.now();
}

/** The container started, its readiness probe awaited; the figures a test prints of its start. */
export async function startUntilReady(cluster: PodCluster, backends: Array<{ address: string; port: number; name: string }>, timeoutMs?: number): Promise<{ pod: RunningPod; readyMs: number; readyCpu: number }> {
  const startedAt = Date.now();
  const pod = await cluster.start({ backends });
  const readyAt = await untilReady(pod, timeoutMs);
  return { pod, readyMs: readyAt - startedAt, readyCpu: controllerCpuSeconds(pod) };
}

/** CPU seconds (user + system) the controller's node process has used so far: a figure load on the machine does not inflate as much as wall time. */
export function controllerCpuSeconds(pod: RunningPod): number {
  const node = pod.processes().find((p) => p.argv.includes('/app/bin/ingress-rx'));
  if (!node) return NaN;
  const fields = readFileSync(`/proc/${node.pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** An AdmissionReview as the API server sends it to the webhook Service, over TLS checked against `ca`. */
export function admissionReview(port: number, ca: string, object: { metadata: { name: string; namespace: string } }, servername = WEBHOOK_DNS): Promise<{ allowed: boolean; status?: { message: string } }> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: `review-${object.metadata.name}`, kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      name: object.metadata.name, namespace: object.metadata.namespace, operation: 'CREATE',
      userInfo: { username: 'kubernetes-admin' }, object, oldObject: null, dryRun: false,
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port, method: 'POST', path: '/networking/v1/ingresses', agent: false, ca, servername,
      headers: { 'content-type': 'application/json' },
    }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d; });
      res.on('end', () => { try { resolve((JSON.parse(text) as { response: never }).response); } catch (err) { reject(new Error(`${res.statusCode} ${text}: ${String(err)}`)); } });
    });
    req.on('error', reject);
    req.end(body);
  });
}
