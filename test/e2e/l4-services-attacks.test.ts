// TCP/UDP services tried as an attacker would (issue 30), `ingress-rx controller` against the fake
// API server with real NGINX. The ConfigMap is the operator's; the Service an entry names is its
// namespace's. A tenant's ExternalName name is refused on its own (before, it reached the stream
// upstream, which the renderer refused, and every reload of the cluster failed; NGINX itself
// would resolve it past the address policy: here `vm`, which /etc/hosts maps to 127.0.0.1); an
// entry on a port another process holds, or on the controller's own ssl-passthrough port, is
// named and left out while the other entries and every other change apply.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, createServer, type Server } from 'node:net';
import type { FakeApiServer } from '../support/fake-apiserver.js';
import { dbgQuarantine, ingress, type CliProcess } from '../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { freePort } from '../support/ports.js';

let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let db: Server;
let taken: Server;
const ports = { good: 0, sneak: 0, taken: 0, passthrough: 0, proxy: 0 };

/** The first bytes a TCP client gets from `port` (or why it got none). */
function banner(port: number, send = ''): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    const done = (v: string) => { s.destroy(); resolve(v); };
    s.setTimeout(3000, () => done(got || 'timeout'));
    s.on('connect', () => { if (send) s.write(send); });
    s.on('data', (d) => { got += d.toString('utf8'); if (got.includes('\n')) done(got); });
    s.on('error', (e: NodeJS.ErrnoException) => done(got || e.code || e.message));
    s.on('close', () => done(got || 'closed'));
  });
}

const tcpServices = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp-services', namespace: 'ingress' }, data });
const staticHost = (name: string) => ingress('shop', name, {
  host: `${name}.test`, className: 'nginx', paths: [{ path: '/', service: 'web' }],
  // A directive of its own: the host has a server block, so it is served only once a reload succeeded.
  annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '3m' },
});

const quarantined = () => dbgQuarantine(ctl.workdir);

test.before(async () => {
  db = createServer((s) => { s.end('hello from db\n'); });
  await new Promise<void>((r) => db.listen(0, '127.0.0.3', r));
  for (const k of Object.keys(ports) as Array<keyof typeof ports>) ports[k] = await freePort();
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'web' }],
    objects: ({ echo }) => [
      NGINX_CLASS,
      ...echoService('shop', 'web', echo),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'db', namespace: 'shop' }, spec: { ports: [{ name: 'db', port: 5432, targetPort: 5432 }] } },
      {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'db-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'db' } },
        addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.3'], conditions: { ready: true } }], ports: [{ name: 'db', port: (db.address() as { port: number }).port, protocol: 'TCP' }],
      },
      staticHost('first'),
      tcpServices({ [ports.good]: 'shop/db:5432' }),
    ],
    flags: ['--election-id=irx-l4', '--allow-upstream-addresses=loopback', '--tcp-services-configmap=ingress/tcp-services',
      '--enable-ssl-passthrough', `--ssl-passthrough-proxy-port=${ports.proxy}`],
    serving: 'first.test',
  });
  ({ fake, ctl } = cluster);
  await waitFor(async () => (await banner(ports.good)) === 'hello from db\n', { what: 'the TCP service' });
});

test.after(async () => {
  await cluster?.stop();
  db?.close();
  taken?.close();
});

test('a tenant\'s ExternalName name is refused for a TCP service: reloads go on, and it never reaches the node\'s own ports', async () => {
  // `vm` resolves (through /etc/hosts) to 127.0.0.1: resolved by NGINX, the port would reach the controller's /healthz.
  fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'sneak', namespace: 'shop' }, spec: { type: 'ExternalName', externalName: 'vm', ports: [{ name: 'h', port: ctl.ports.healthz }] } });
  fake.set(tcpServices({ [ports.good]: 'shop/db:5432', [ports.sneak]: `shop/sneak:${ctl.ports.healthz}` }));
  fake.create(staticHost('after-sneak'));
  await ctl.until('after-sneak.test', '/', (r) => r.status === 200, { what: 'a reload after it', timeoutMs: 20_000 });
  const answer = await banner(ports.sneak, 'GET /healthz HTTP/1.0\r\n\r\n');
  assert.not.match(answer, /HTTP\/1\.[01] 200/, 'the controller\'s health port is not reachable through the tenant\'s name');
  // Named in the log (JSON: its quotes are escaped).
  await waitFor(() => /Service shop\/sneak: externalName \\"vm\\" is a name; a TCP\/UDP service takes an address/.test(ctl.output()), { what: 'the entry refused by name' });
  assert.is(await banner(ports.good), 'hello from db\n');
});

test('an entry on a port another process holds is set aside and named; the other entries and every other change apply', async () => {
  taken = createServer(() => {});
  await new Promise<void>((r) => taken.listen(ports.taken, '0.0.0.0', r));
  fake.set(tcpServices({ [ports.good]: 'shop/db:5432', [ports.taken]: 'shop/db:5432' }));
  fake.create(staticHost('after-taken'));
  await ctl.until('after-taken.test', '/', (r) => r.status === 200, { what: 'the other change, in spite of the taken port', timeoutMs: 30_000 });
  const report = await waitFor(async () => { const t = await quarantined(); return t.includes(`ingress/tcp-services:${ports.taken}`) ? t : null; }, { what: 'the entry named' });
  assert.match(report, new RegExp(`ConfigMap ingress/tcp-services:${ports.taken} .*data\\["${ports.taken}"\\]: NGINX refuses it: bind\\(\\) to \\S+:${ports.taken} failed`));
  assert.is(await banner(ports.good), 'hello from db\n', 'the other entry is served');
  // Once the port is free and the ConfigMap changes, the entry is tried again and served.
  await new Promise<void>((r) => taken.close(() => r()));
  fake.set(tcpServices({ [ports.good]: 'shop/db:5432', [ports.taken]: 'shop/db:5432', [ports.sneak]: 'shop/db:5432' }));
  await waitFor(async () => (await banner(ports.taken)) === 'hello from db\n', { what: 'the entry back', timeoutMs: 30_000 });
  await waitFor(async () => !(await quarantined()).includes('tcp-services'), { what: 'the quarantine report without it' });
});

test('an entry on the controller\'s own ssl-passthrough port is refused by name; reloads go on', async () => {
  fake.set(tcpServices({ [ports.good]: 'shop/db:5432', [ports.proxy]: 'shop/db:5432' }));
  fake.create(staticHost('after-proxy'));
  await ctl.until('after-proxy.test', '/', (r) => r.status === 200, { what: 'a reload after it', timeoutMs: 30_000 });
  await waitFor(() => new RegExp(`data\\[\\\\"${ports.proxy}\\\\"\\]: port ${ports.proxy} is reserved by the controller`).test(ctl.output()), { what: 'the entry refused' });
  assert.is(await banner(ports.good), 'hello from db\n');
});

test.run();
