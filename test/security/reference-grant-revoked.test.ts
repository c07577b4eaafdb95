// A ReferenceGrant revoked takes back what it granted at the next sync: `ingress-rx controller
// --enable-gateway-api` against the fake API server, with real NGINX. While team-b grants them, an
// HTTPRoute of team-a is served by team-b's Service and the infra Gateway's HTTPS listener serves
// team-b's certificate; once both grants are deleted the route's rule answers 500 with
// ResolvedRefs=False/RefNotPermitted, the listener no longer serves team-b's key, and team-a's own
// route is served throughout, over HTTP/1.1 and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer, type FakeObject } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { service, slices, startController, tlsSecret, type CliProcess } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';
import { tlsExchange } from '../support/tls-exchange.js';

const V1 = 'gateway.networking.k8s.io/v1';
const BETA = 'gateway.networking.k8s.io/v1beta1';
let fake: FakeApiServer;
let ctl: CliProcess;
let web: EchoServer;
let api: EchoServer;
let cert: GeneratedCertificate;
const over = protocolMatrix(test, () => ctl);
const tmp = mkdtempSync(join(tmpdir(), 'irx-grant-revoked-'));

const route = (name: string, host: string, backend: { name: string; namespace?: string }): FakeObject => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
  spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: [{ ...backend, port: 80 }] }] },
});
const GRANTS = [
  {
    apiVersion: BETA, kind: 'ReferenceGrant', metadata: { name: 'routes-to-api', namespace: 'team-b' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }], to: [{ group: '', kind: 'Service', name: 'api' }] },
  },
  {
    apiVersion: BETA, kind: 'ReferenceGrant', metadata: { name: 'gateway-to-cert', namespace: 'team-b' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'infra' }], to: [{ group: '', kind: 'Secret', name: 'cert' }] },
  },
];
type Cond = { type: string; status: string; reason: string };
const resolvedRefs = () => ((fake.get(V1, 'HTTPRoute', 'cross', 'team-a')?.status as { parents?: Array<{ conditions: Cond[] }> } | undefined)
  ?.parents?.[0]?.conditions ?? []).find((c) => c.type === 'ResolvedRefs');

test.before(async () => {
  cert = await generateCertificate(tmp, 'cross.test');
  web = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  api = await startEchoServer({ address: '127.0.0.3', name: 'api' });
  fake = await startFakeApiServer();
  fake.create({ apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } });
  fake.create({
    apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'rx', listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        { name: 'https', port: 443, protocol: 'HTTPS', hostname: 'cross.test', tls: { mode: 'Terminate', certificateRefs: [{ name: 'cert', namespace: 'team-b' }] }, allowedRoutes: { namespaces: { from: 'All' } } },
      ],
    },
  });
  fake.create(service('team-a', 'web'));
  for (const s of slices('team-a', 'web', [web])) fake.create(s);
  fake.create(service('team-b', 'api'));
  for (const s of slices('team-b', 'api', [api])) fake.create(s);
  fake.create(tlsSecret('team-b', 'cert', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')));
  for (const g of GRANTS) fake.create(g);
  fake.create(route('own', 'own.test', { name: 'web' }));
  fake.create(route('cross', 'cross.test', { name: 'api', namespace: 'team-b' }));
  writeFileSync(join(tmp, 'kubeconfig'), fake.kubeConfig().exportConfig());
  ctl = await startController({
    kubeconfig: join(tmp, 'kubeconfig'),
    args: ['--enable-gateway-api', '--disable-leader-election', '--allow-upstream-addresses=loopback'],
    env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
  });
  await ctl.until('cross.test', '/', (r) => r.backend === 'api', { what: 'the granted route served' });
});

test.after(async () => {
  await ctl?.stop();
  await fake?.close();
  await web?.close();
  await api?.close();
  rmSync(tmp, { recursive: true, force: true });
});

over.both('granted: team-a\'s route is served by team-b\'s Service, over TLS with team-b\'s certificate', async (p) => {
  const r = await p.request('cross.test', '/', { https: true, ca: readFileSync(cert.certPath) });
  assert.is(r.status, 200);
  assert.is(r.backend, 'api');
  assert.is((await tlsExchange(ctl.ports.https, 'cross.test')).cn, 'cross.test');
});

test('revoked: both grants deleted, the route\'s reference is refused in its status', async () => {
  for (const g of GRANTS) fake.delete(g.apiVersion, g.kind, g.metadata.name, g.metadata.namespace);
  await waitFor(() => resolvedRefs()?.reason === 'RefNotPermitted', { what: 'ResolvedRefs=False/RefNotPermitted after the revocation', timeoutMs: 20_000 });
  assert.is(resolvedRefs()?.status, 'False');
  await ctl.until('cross.test', '/', (r) => r.status === 500, { what: 'the revoked backend no longer served' });
});

over.both('revoked: the rule answers 500, team-b\'s certificate is no longer served, team-a\'s own route is', async (p) => {
  const r = await p.request('cross.test', '/');
  assert.is(r.status, 500, `${r.status} from ${String(r.backend)}`);
  assert.is.not(r.backend, 'api');
  assert.is.not((await tlsExchange(ctl.ports.https, 'cross.test')).cn, 'cross.test', 'team-b\'s certificate is not served once revoked');
  const own = await p.request('own.test', '/');
  assert.is(own.status, 200);
  assert.is(own.backend, 'web');
});

test.run();
