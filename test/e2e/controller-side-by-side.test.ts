// Migration side by side (docs/migration.md): ingress-rx installed next to a running
// ingress-nginx, with a class, controller value, election id, ConfigMap and webhook of its own,
// and ingress-nginx's RBAC (names changed) enforced by the fake API server. The running
// ingress-nginx is simulated by what it leaves in the cluster: its IngressClass, ConfigMap, Lease
// and the status it wrote. ingress-rx serves only its class, never writes the other's status or
// Lease, ignores the other's ConfigMap, lets the other's Ingresses pass its webhook, and an
// operator moves an Ingress between the two (both ways) by changing its class.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeApiServer, FakeObject } from '../support/fake-apiserver.js';
import { ingress, type CliProcess } from '../support/local-harness.js';
import { echoService, startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { ingressNginxManifests } from '../support/ingress-nginx-manifests.js';
import { admissionReview, makeCertificate } from '../support/pod-cluster.js';
import { waitFor } from '../support/wait.js';

const RX_NS = 'ingress-rx';
const RX_SA = `system:serviceaccount:${RX_NS}:ingress-rx`;
const NGINX_ADDRESS = '192.0.2.10';
const RX_ADDRESS = '192.0.2.50';
const WEBHOOK = 'ingress-rx-controller-admission.ingress-rx.svc';
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let webhookPort: number;
let webhookCA: string;
const tmp = mkdtempSync(join(tmpdir(), 'irx-side-'));

/** ingress-nginx's ClusterRole, Role and bindings, renamed for a second install (docs/migration.md, step 1). */
function rxRbac(): FakeObject[] {
  const rename = (o: { metadata: { name: string; namespace?: string } }) => ({ ...o, metadata: { ...o.metadata, name: 'ingress-rx', ...(o.metadata.namespace ? { namespace: RX_NS } : {}) } });
  const subjects = [{ kind: 'ServiceAccount', name: 'ingress-rx', namespace: RX_NS }];
  return ingressNginxManifests('unused').filter((m) => /Role/.test(m.kind)).map((m) => {
    const o = rename(m) as FakeObject & { rules?: Array<{ resourceNames?: string[] }>; roleRef?: { name: string }; subjects?: unknown };
    if (o.rules) o.rules = o.rules.map((r) => (r.resourceNames ? { ...r, resourceNames: ['ingress-rx-leader'] } : r));
    if (o.roleRef) { o.roleRef = { ...o.roleRef, name: 'ingress-rx' }; o.subjects = subjects; }
    return o;
  });
}

const statusOf = (name: string) => (fake.get('networking.k8s.io/v1', 'Ingress', name, 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } }).status?.loadBalancer?.ingress;
const statusWrites = (name: string, since = 0) => fake.count({ verb: 'update', path: `/namespaces/shop/ingresses/${name}/status`, since });
const byOtherController = (o: FakeObject) => ({ ...o, status: { loadBalancer: { ingress: [{ ip: NGINX_ADDRESS }] } } });

test.before(async () => {
  // The webhook's certificate, for the name the API server calls it by (makeCertificate writes webhook.crt and webhook.key).
  webhookCA = makeCertificate(tmp, 'webhook', WEBHOOK, [WEBHOOK]).ca;
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'shop' }],
    api: { tokens: { 'rx-token': RX_SA }, rbac: true },
    objects: ({ fake, echo }) => {
      // The running ingress-nginx: its install, its Lease, and the status it wrote on its Ingresses.
      for (const o of ingressNginxManifests('registry.k8s.io/ingress-nginx/controller:v1.15.1')) fake.create(o as FakeObject);
      fake.set({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ingress-nginx-controller', namespace: 'ingress-nginx' }, data: { 'server-tokens': 'true' } });
      return [
        { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'ingress-nginx-leader', namespace: 'ingress-nginx' }, spec: { holderIdentity: 'ingress-nginx-controller-abc', leaseDurationSeconds: 30 } },
        // ingress-rx beside it.
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: RX_NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ingress-rx', namespace: RX_NS } },
        ...rxRbac(),
        { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'ingress-rx' }, spec: { controller: 'k8s.io/ingress-rx' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ingress-rx-controller', namespace: RX_NS }, data: {} },
        // The applications.
        ...echoService('shop', 'web', echo),
        byOtherController(ingress('shop', 'old', { host: 'old.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] })),
        byOtherController(ingress('shop', 'legacy', { host: 'legacy.example', annotations: { 'kubernetes.io/ingress.class': 'nginx' }, paths: [{ path: '/', service: 'web' }] })),
        ingress('shop', 'new', { host: 'new.example', className: 'ingress-rx', paths: [{ path: '/', service: 'web' }] }),
      ];
    },
    webhook: { cert: join(tmp, 'webhook.crt'), key: join(tmp, 'webhook.key') },
    flags: ['--ingress-class=ingress-rx', '--controller-class=k8s.io/ingress-rx', '--election-id=ingress-rx-leader',
      `--configmap=${RX_NS}/ingress-rx-controller`, `--publish-status-address=${RX_ADDRESS}`, '--status-update-interval=5',
      // The echo backend listens on loopback, which the address policy refuses unless told.
      '--allow-upstream-addresses=loopback'],
    env: { POD_NAME: 'ingress-rx-controller-0', POD_NAMESPACE: RX_NS },
  });
  ({ fake, ctl, webhookPort } = cluster);
});

test.after(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test('serves only its own class: the other controller\'s Ingresses (by class name and by annotation) get its 404', async () => {
  await ctl.until('new.example', '/', (r) => r.backend === 'shop', { what: 'new.example' });
  assert.is((await ctl.request('old.example', '/')).status, 404);
  assert.is((await ctl.request('legacy.example', '/')).status, 404);
});

test('the other controller\'s ConfigMap has no effect (server-tokens there, not here)', async () => {
  const r = await ctl.request('new.example', '/');
  assert.is(r.headers.server, undefined, 'ingress-rx\'s own ConfigMap leaves server-tokens off: no Server header, as ingress-nginx');
});

test('writes the status of its own Ingresses only, and leads with its own Lease', async () => {
  await waitFor(() => JSON.stringify(statusOf('new')) === JSON.stringify([{ ip: RX_ADDRESS }]), { timeoutMs: 20_000, what: 'new\'s status' });
  assert.equal(statusOf('old'), [{ ip: NGINX_ADDRESS }]);
  assert.equal(statusOf('legacy'), [{ ip: NGINX_ADDRESS }]);
  assert.is(statusWrites('old') + statusWrites('legacy'), 0, 'no write to the other controller\'s Ingresses');
  const lease = (name: string, ns: string) => (fake.get('coordination.k8s.io/v1', 'Lease', name, ns) as unknown as { spec: { holderIdentity: string } }).spec.holderIdentity;
  assert.is(lease('ingress-rx-leader', RX_NS), 'ingress-rx-controller-0');
  assert.is(lease('ingress-nginx-leader', 'ingress-nginx'), 'ingress-nginx-controller-abc');
  assert.is(fake.count({ path: '/leases/ingress-nginx-leader' }), 0, 'the other Lease is not even read');
});

test('its webhook lets the other class\'s Ingresses pass, and judges its own', async () => {
  const theirs = await admissionReview(webhookPort, webhookCA, ingress('shop', 'theirs', { host: 'new.example', className: 'nginx', paths: [{ path: '/', service: 'web' }] }) as never, WEBHOOK);
  assert.is(theirs.allowed, true, 'another class is not ours to judge, even on a host ingress-rx serves');
  const ours = await admissionReview(webhookPort, webhookCA, ingress('shop', 'ours', { host: 'new.example', className: 'ingress-rx', paths: [{ path: '/', service: 'web' }] }) as never, WEBHOOK);
  assert.is(ours.allowed, false);
});

test('moving an Ingress to ingress-rx: change its class; ingress-rx serves it and publishes its own address', async () => {
  const old = fake.get('networking.k8s.io/v1', 'Ingress', 'old', 'shop') as FakeObject & { spec: { ingressClassName: string } };
  fake.update({ ...old, spec: { ...old.spec, ingressClassName: 'ingress-rx' } });
  await ctl.until('old.example', '/', (r) => r.backend === 'shop', { what: 'old.example moved to ingress-rx' });
  await waitFor(() => JSON.stringify(statusOf('old')) === JSON.stringify([{ ip: RX_ADDRESS }]), { timeoutMs: 20_000, what: 'old\'s status, now ingress-rx\'s' });
});

test('moving it back: ingress-rx stops serving it and no longer writes its status', async () => {
  const cur = fake.get('networking.k8s.io/v1', 'Ingress', 'old', 'shop') as FakeObject & { spec: { ingressClassName: string } };
  fake.update(byOtherController({ ...cur, spec: { ...cur.spec, ingressClassName: 'nginx' } }));
  await ctl.until('old.example', '/', (r) => r.status === 404, { what: 'old.example back to ingress-nginx' });
  const since = Date.now();
  // A later sync and status round (a new Ingress of ingress-rx's gets its status) leaves it alone.
  fake.create(ingress('shop', 'later', { host: 'later.example', className: 'ingress-rx', paths: [{ path: '/', service: 'web' }] }));
  await waitFor(() => JSON.stringify(statusOf('later')) === JSON.stringify([{ ip: RX_ADDRESS }]), { timeoutMs: 20_000, what: 'a later status round' });
  assert.is(statusWrites('old', since), 0);
  assert.equal(statusOf('old'), [{ ip: NGINX_ADDRESS }]);
});

test('the renamed ingress-nginx RBAC was all ingress-rx needed: no request was refused', () => {
  assert.equal(fake.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.path}`), []);
  assert.ok(fake.requests.every((r) => r.user === RX_SA));
});

test.run();
