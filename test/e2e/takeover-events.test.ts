// A path takeover on a shared host (docs/security.md) in `ingress-rx controller` against the
// in-process fake API server with real NGINX: a Warning Event with reason Takeover on both
// Ingresses, and the validating webhook (over HTTPS, as the API server calls it) warns the
// younger namespace before its Ingress is stored.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer } from '../support/fake-apiserver.js';
import { ingress, type CliProcess } from '../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, WEBHOOK_CA, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { admissionReview } from '../support/admission-review.js';

let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let webhookPort: number;
const HOST = 'shared.test';

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'secret' }, { address: '127.0.0.3', name: 'evil' }],
    webhook: true,
    objects: ({ echo: [secret, evil] }) => [
      NGINX_CLASS,
      ...echoService('team-b', 'secret', [secret]),
      ...echoService('team-a', 'evil', [evil]),
      ingress('team-b', 'victim', {
        host: HOST, className: 'nginx', created: '2026-01-01T00:00:00Z',
        annotations: { 'nginx.ingress.kubernetes.io/whitelist-source-range': '10.9.0.0/16' }, paths: [{ path: '/admin', service: 'secret' }],
      }),
      ingress('team-a', 'exact', { host: HOST, className: 'nginx', created: '2026-02-01T00:00:00Z', paths: [{ path: '/admin', pathType: 'Exact', service: 'evil' }] }),
    ],
    flags: ['--election-id=ingress-rx-takeover', '--allow-upstream-addresses=loopback'],
  });
  ({ fake, ctl, webhookPort } = cluster);
  await ctl.until(HOST, '/admin', (r) => r.backend === 'evil', { what: "team-a's Exact /admin served" });
});

test.after(() => cluster?.stop());

test('both Ingresses get a Warning Event with reason Takeover naming the other and an example request', async () => {
  assert.is((await ctl.request(HOST, '/admin/x')).status, 403, "the rest of team-b's /admin keeps its allowlist");
  const takeover = (ns: string) => waitFor(() => fake.list('v1', 'Event', ns).find((e) => (e as { reason?: string }).reason === 'Takeover') as
    { involvedObject: { name: string; namespace: string }; message: string; type: string } | undefined, { what: `a Takeover Event in ${ns}` });
  const onTaker = await takeover('team-a');
  assert.is(onTaker.involvedObject.name, 'exact');
  assert.is(onTaker.type, 'Warning');
  assert.match(onTaker.message, /takes traffic of Ingress team-b\/victim \(namespace team-b\): on host shared\.test Exact path \/admin wins requests that path \/admin \(location "= \/admin"\) matches, e\.g\. \/admin/);
  const onVictim = await takeover('team-b');
  assert.is(onVictim.involvedObject.name, 'victim');
  assert.match(onVictim.message, /Ingress team-a\/exact of namespace team-a takes traffic of this Ingress: on host shared\.test Exact path \/admin/);
});

test('the webhook warns a younger namespace whose path would take an older one\'s requests, before it is stored', async () => {
  const candidate = ingress('team-a', 'deeper', { host: HOST, className: 'nginx', paths: [{ path: '/admin/deep', service: 'evil' }] });
  const response = await admissionReview({ port: webhookPort, ca: WEBHOOK_CA, namespace: 'team-a', object: candidate, uid: 'takeover-1' });
  assert.is(response.allowed, true, 'served as ingress-nginx serves it: warned, not refused');
  assert.ok(response.warnings?.some((w) => /takes traffic of Ingress team-b\/victim .*path \/admin\/deep \(location "\/admin\/deep\/"\) wins requests that path \/admin \(location "\/admin\/"\) matches, e\.g\. \/admin\/deep\//.test(w)), JSON.stringify(response.warnings));
});

test.run();
