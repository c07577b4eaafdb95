// The validating webhook's port is one of the controller's own: `ingress-rx controller` against
// the fake API server, with loopback upstreams allowed (--allow-upstream-addresses=loopback) and
// the webhook on a loopback port, a tenant's EndpointSlice names 127.0.0.1 and that port (HTTPS to
// it, as the webhook speaks). The endpoint is refused by name, NGINX never dials the webhook (its
// host answers 503), and the other Ingresses are served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingress, type CliProcess } from '../support/local-harness.js';
import { shopCluster, startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

let cluster: ClusterController | undefined;
let ctl: CliProcess;
let webhookPort: number;
const over = protocolMatrix(test, () => ctl);

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'web' }],
    webhook: true,
    objects: ({ echo, webhookPort }) => [
      ...shopCluster(echo),
      // The attacker's namespace: an endpoint on the webhook's address and port.
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook', namespace: 'evil' }, spec: { ports: [{ name: 'https', port: 443, targetPort: webhookPort }] } },
      {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
        metadata: { name: 'hook-0', namespace: 'evil', labels: { 'kubernetes.io/service-name': 'hook' } },
        addressType: 'IPv4', ports: [{ name: 'https', port: webhookPort }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
      ingress('evil', 'hook', {
        host: 'hook.evil.test', className: 'nginx', paths: [{ path: '/', service: 'hook', port: 443 }],
        annotations: { 'nginx.ingress.kubernetes.io/backend-protocol': 'HTTPS' },
      }),
    ],
    flags: ['--disable-leader-election', '--allow-upstream-addresses=loopback'],
    serving: 'shop.test',
  });
  ({ ctl, webhookPort } = cluster);
});

test.after(() => cluster?.stop());

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
