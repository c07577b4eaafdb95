// The validating webhook's port is one of the controller's own: `ingress-rx controller` against
// the fake API server, with loopback upstreams allowed (--allow-upstream-addresses=loopback) and
// the webhook on a loopback port, a tenant's EndpointSlice names 127.0.0.1 and that port (HTTPS to
// it, as the webhook speaks). The endpoint is refused by name, NGINX never dials the webhook (its
// host answers 503), and the other Ingresses are served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startController, type CliProcess } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';

let fake: FakeApiServer;
let ctl: CliProcess;
let echo: EchoServer;
let webhookPort: number;
const over = protocolMatrix(test, () => ctl);
const tmp = mkdtempSync(join(tmpdir(), 'irx-webhook-port-'));
const certs = new URL('../fixtures/model/_certs/', import.meta.url).pathname;

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  webhookPort = await freePort();
  fake = await startFakeApiServer();
  fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } });
  fake.create(service('shop', 'web'));
  for (const s of slices('shop', 'web', [echo])) fake.create(s);
  fake.create(ingress('shop', 'web', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  // The attacker's namespace: an endpoint on the webhook's address and port.
  fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'evil' }, spec: { ports: [{ name: 'https', port: 443, targetPort: webhookPort }] } });
  fake.create({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'hook-0', namespace: 'evil', labels: { 'kubernetes.io/service-name': 'hook' } },
    addressType: 'IPv4', ports: [{ name: 'https', port: webhookPort }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  });
  fake.create(ingress('evil', 'hook', {
    host: 'hook.evil.test', className: 'nginx', paths: [{ path: '/', service: 'hook', port: 443 }],
    annotations: { 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS' },
  }));
  writeFileSync(join(tmp, 'kubeconfig'), fake.kubeConfig().exportConfig());
  ctl = await startController({
    kubeconfig: join(tmp, 'kubeconfig'),
    args: ['--disable-leader-election', '--allow-upstream-addresses=loopback', `--validating-webhook=127.0.0.1:${webhookPort}`,
      `--validating-webhook-certificate=${join(certs, 'default.crt')}`, `--validating-webhook-key=${join(certs, 'default.key')}`],
    env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
  });
  await ctl.until('shop.test', '/', (r) => r.status === 200, { what: 'the controller serving' });
  await waitFor(() => /validating webhook listening/.test(ctl.output()), { what: 'the webhook' });
});

test.after(async () => {
  await ctl?.stop();
  await fake?.close();
  await echo?.close();
  rmSync(tmp, { recursive: true, force: true });
});

over.both('an endpoint on the validating webhook\'s port of this node is refused by name; NGINX never dials the webhook', async (p) => {
  const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind":"AdmissionReview"}' };
  await ctl.until('hook.evil.test', '/validate', (x) => x.status !== 404, { ...post, what: 'the host served' });
  const r = await p.request('hook.evil.test', '/validate', post);
  assert.is(r.status, 503, `the webhook's port answered through NGINX: ${r.status} ${r.body.slice(0, 200)}`);
  assert.not.match(r.body, /AdmissionReview|admission/i);
  await waitFor(() => new RegExp(`EndpointSlice evil/hook-0.*127\\.0\\.0\\.1.*port ${webhookPort} of this node is one of the controller's own listeners`).test(ctl.output()),
    { what: 'the endpoint refused by name' });
  assert.is((await p.request('shop.test', '/')).status, 200, 'the other tenant is served');
});

test.run();
