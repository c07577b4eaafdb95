// Objects that NGINX takes one by one but refuses together (a clash): two stream-snippets on one
// port, a tenant's snippet on the port of the operator's, two `listen ... default_server` or
// `listen ... reuseport` of one address in server-snippets, a snippet on a port another process
// holds. The newer Ingress (in the served order, oldest first) is set aside and named with the
// older one it clashes with, whichever of the two NGINX's error line points at; the older one and
// the ConfigMap are never quarantined for it, and every other change of the sync applies.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, createServer, type Server } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { dbgQuarantine, ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { freePorts } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;
/** TCP services that greet with their name: whose stream-snippet holds a port shows in the banner. */
const banners: Server[] = [];
const bannerPorts: Record<string, number> = {};
/** [shared stream port, operator's stream port, default_server port, reuseport port, port held by another process, moved-to port] */
let ports: number[] = [];
let held: Server;

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' },
  data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical', ...data },
});
const streamServer = (port: number, banner: string) => `server { listen 127.0.0.1:${port}; proxy_pass 127.0.0.3:${bannerPorts[banner]}; }`;
const web = (ns: string, name: string, host: string, created: string, annotations: Record<string, string> = {}) =>
  ingress(ns, name, { host, created, paths: [{ path: '/', service: 'web' }], annotations });
// The service each namespace's Ingresses name.
const webOf = (ns: string) => [service(ns, 'web'), ...slices(ns, 'web', [echo])];

/** The first line a TCP client gets from `port`, or why it got none. */
function banner(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    const done = (v: string) => { s.destroy(); resolve(v.trim()); };
    s.setTimeout(3000, () => done(got || 'timeout'));
    s.on('data', (d) => { got += d.toString('utf8'); if (got.includes('\n')) done(got); });
    s.on('error', (e: NodeJS.ErrnoException) => done(got || e.code || e.message));
    s.on('close', () => done(got || 'closed'));
  });
}

const quarantined = () => dbgQuarantine(ctl.workdir);
/**
 * Each clash costs a narrowing round of small `nginx -t` probes (~1.5 s each on an idle machine,
 * several times that on a loaded one): the first test's five take one sync.
 */
const NARROWING_MS = 90_000;
const untilQuarantined = (pattern: RegExp, what: string) =>
  waitFor(async () => { const r = await quarantined(); return pattern.test(r) ? r : null; }, { what, timeoutMs: NARROWING_MS });

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  for (const name of ['victim', 'hostile', 'operator', 'careless', 'moved']) {
    const server = createServer((s) => { s.end(`${name}\n`); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.3', r));
    banners.push(server);
    bannerPorts[name] = (server.address() as { port: number }).port;
  }
  ports = await freePorts(6);
  held = createServer((s) => { s.end('held by another process\n'); });
  await new Promise<void>((r) => held.listen(ports[4]!, '127.0.0.1', r));
  ctl = await startLocal({
    args: ['--configmap', 'ingress/nginx'],
    files: {
      'cm.json': [configMap({ 'stream-snippet': streamServer(ports[1]!, 'operator') })],
      'svc.json': [...webOf('tenant-a'), ...webOf('tenant-b'), ...webOf('tenant-c')],
      // Tenant A's Ingresses came first.
      'a.json': [
        web('tenant-a', 'victim', 'victim.test', '2026-01-01T00:00:00Z', { [`${P}/stream-snippet`]: streamServer(ports[0]!, 'victim') }),
        web('tenant-a', 'default-a', 'default-a.test', '2026-01-01T00:00:01Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[2]} default_server;` }),
        web('tenant-a', 'reuse-a', 'reuse-a.test', '2026-01-01T00:00:02Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[3]} reuseport;` }),
      ],
    },
  });
  await ctl.until('victim.test', '/', (r) => r.status === 200, { what: 'tenant A served' });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
  for (const s of [...banners, held]) s?.close();
});

test('the newer of two clashing Ingresses is set aside and named, whichever NGINX names; the older ones, the ConfigMap and the sync\'s other changes apply', async () => {
  ctl.write('b.json', [
    // Its host sorts first, so its stream-snippet is read first and NGINX's duplicate-listen error
    // names tenant A's line: a hostile tenant making the older Ingress look guilty.
    web('tenant-b', 'hostile', 'aaa-hostile.test', '2026-06-01T00:00:00Z', { [`${P}/stream-snippet`]: streamServer(ports[0]!, 'hostile') }),
    // The port of the operator's stream-snippet: NGINX names this line, in the stream block.
    web('tenant-b', 'operator-port', 'operator-port.test', '2026-06-01T00:00:01Z', { [`${P}/stream-snippet`]: streamServer(ports[1]!, 'careless') }),
    web('tenant-b', 'default-b', 'default-b.test', '2026-06-01T00:00:02Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[2]} default_server;` }),
    web('tenant-b', 'reuse-b', 'reuse-b.test', '2026-06-01T00:00:03Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[3]} reuseport;` }),
    // A port that another process holds: `nginx -t` takes it, the reload cannot bind it.
    web('tenant-b', 'held-port', 'held-port.test', '2026-06-01T00:00:04Z', { [`${P}/stream-snippet`]: streamServer(ports[4]!, 'careless') }),
    web('tenant-b', 'good', 'good-b.test', '2026-06-01T00:00:05Z'),
  ]);
  await ctl.until('good-b.test', '/', (r) => r.status === 200, { what: 'the good Ingress of the same sync', timeoutMs: NARROWING_MS });
  const report = await untilQuarantined(/held-port/, 'every clashing Ingress named');
  assert.match(report, /tenant-b\/hostile.*clashes with the older Ingress tenant-a\/victim/);
  assert.match(report, /tenant-b\/default-b.*clashes with the older Ingress tenant-a\/default-a/);
  assert.match(report, /tenant-b\/reuse-b.*clashes with the older Ingress tenant-a\/reuse-a/);
  assert.match(report, /tenant-b\/operator-port/);
  assert.match(report, /tenant-b\/held-port.*could not bind/);
  assert.not.match(report, /^Ingress tenant-a\//m, 'no older Ingress is quarantined');
  assert.not.match(report, /ConfigMap/, 'the ConfigMap is not quarantined');
  assert.is(await banner(ports[0]!), 'victim', 'the older Ingress keeps its stream port');
  assert.is(await banner(ports[1]!), 'operator', 'the operator keeps its stream port');
  assert.is(await banner(ports[4]!), 'held by another process');
  assert.is(await ctl.metric('ingress_rx_quarantined_objects'), 5);
  await ctl.logged(/quarantined Ingress tenant-b\/hostile/);
});

over.both('the older Ingresses are served, on their hosts and on the ports their snippets listen on; the newer ones are not', async (p) => {
  for (const host of ['victim.test', 'default-a.test', 'reuse-a.test', 'good-b.test']) assert.is((await p.request(host, '/')).status, 200, host);
  for (const host of ['aaa-hostile.test', 'default-b.test', 'reuse-b.test']) assert.is((await p.request(host, '/')).status, 404, `${host} is set aside`);
  // default_server: any host on that port reaches tenant A's server; reuseport: its host does.
  assert.is((await ctl.request('anything.test', '/', { port: ports[2]! })).status, 200);
  assert.is((await ctl.request('reuse-a.test', '/', { port: ports[3]! })).status, 200);
});

test('when the older Ingress moves off the port, the one it clashed with leaves quarantine and is served', async () => {
  ctl.write('a.json', [
    web('tenant-a', 'victim', 'victim.test', '2026-01-01T00:00:00Z', { [`${P}/stream-snippet`]: streamServer(ports[5]!, 'moved') }),
    web('tenant-a', 'default-a', 'default-a.test', '2026-01-01T00:00:01Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[2]} default_server;` }),
    web('tenant-a', 'reuse-a', 'reuse-a.test', '2026-01-01T00:00:02Z', { [`${P}/server-snippet`]: `listen 127.0.0.1:${ports[3]} reuseport;` }),
  ]);
  await ctl.until('aaa-hostile.test', '/', (r) => r.status === 200, { what: 'the newer Ingress served once the clash is gone', timeoutMs: NARROWING_MS });
  await waitFor(async () => (await banner(ports[0]!)) === 'hostile', { what: 'the newer Ingress\'s snippet on the freed port', timeoutMs: NARROWING_MS });
  assert.is(await banner(ports[5]!), 'moved');
  const report = await waitFor(async () => { const r = await quarantined(); return /hostile/.test(r) ? null : r; }, { what: 'hostile to leave quarantine', timeoutMs: NARROWING_MS });
  assert.match(report, /tenant-b\/default-b/, 'the other clashes stay set aside');
  assert.not.match(report, /^(ConfigMap|Ingress tenant-a\/)/m);
});

over.both('the Ingress released from quarantine is served; those still set aside are not', async (p) => {
  assert.is((await p.request('aaa-hostile.test', '/')).status, 200);
  assert.is((await p.request('default-b.test', '/')).status, 404);
});

test.run();
