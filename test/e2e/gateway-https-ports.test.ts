// HTTPS listeners on ports other than 443, and ListenerSet listeners on ports other than 80/443
// (docs/gateway-api.md, "Listener ports"), against the fake API server with real NGINX and real
// TLS clients over HTTP/1.1 and HTTP/2 (ALPN). An HTTPS listener port is a TLS server of its own
// whose certificate is looked up by SNI among that port's hosts; a certificate or route change
// reloads nothing. The attacker and careless cases: another tenant's younger Gateway asking for a
// port with the other protocol, the controller's own port, another namespace's certificate without
// a ReferenceGrant, a host of port 8443 asked for on 443 and the other way round.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeApiServer, FakeObject } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { service, slices, tlsSecret, type CliProcess, type Reply } from '../support/local-harness.js';
import { freePorts } from '../support/ports.js';
import { protocolMatrix, type ProtocolClient } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';
import { GATEWAY_V1, startGatewayController } from '../support/gateway-local.js';

const GROUP = 'gateway.networking.k8s.io';
const INFRA = 'hp-infra';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-hp-'));
let ca = '';
let tenantCa = '';
let catchAllCa = '';
/** NGINX's ports for listener ports 8443 (HTTPS), 9090 (HTTP) and 9443 (HTTPS, ListenerSet only). */
let p8443 = 0;
let p9090 = 0;
let p9443 = 0;

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; message: string };
type ListenerStatus = { name: string; conditions: Cond[] };

const all = { namespaces: { from: 'All' } };
const https = (name: string, port: number, hostname: string | undefined, secret: string, secretNs?: string): Obj => ({
  name, port, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), allowedRoutes: all,
  tls: { certificateRefs: [{ group: '', kind: 'Secret', name: secret, ...(secretNs ? { namespace: secretNs } : {}) }] },
});
const http = (name: string, port: number, hostname?: string): Obj => ({ name, port, protocol: 'HTTP', ...(hostname ? { hostname } : {}), allowedRoutes: all });
const gateway = (ns: string, name: string, listeners: Obj[], created: string, extra: Obj = {}): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: ns, creationTimestamp: created }, spec: { gatewayClassName: 'hp', listeners, ...extra },
});
const route = (ns: string, name: string, parentRef: Obj, hostnames: string[], backend: string): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [parentRef], hostnames, rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
});

const gwListener = (gw: string, l: string, ns = INFRA) => (fake.get(GATEWAY_V1, 'Gateway', gw, ns)?.status as { listeners?: ListenerStatus[] } | undefined)?.listeners?.find((x) => x.name === l);
const setListener = (set: string, l: string, ns: string) => (fake.get(GATEWAY_V1, 'ListenerSet', set, ns)?.status as { listeners?: ListenerStatus[] } | undefined)?.listeners?.find((x) => x.name === l);
const cond = (l: ListenerStatus | undefined, type: string) => l?.conditions.find((c) => c.type === type);
const brief = (l: ListenerStatus | undefined, type: string) => { const c = cond(l, type); return c ? `${c.type}=${c.status}/${c.reason}` : undefined; };

/** An HTTPS request to NGINX's `port` with the SNI `sni` (the host's by default), trusting `trust` (none: any certificate). */
function tls(p: ProtocolClient, host: string, port: number, opts: { sni?: string; trust?: string } = {}): Promise<Reply> {
  return p.request(host, '/', { https: true, port, ...(opts.trust !== undefined ? { ca: opts.trust } : {}), ...(opts.sni !== undefined ? { sni: opts.sni } : {}) });
}
/** Whether the handshake fails (the certificate served does not verify against `trust`). */
async function untrusted(p: ProtocolClient, host: string, port: number, trust: string, sni?: string): Promise<boolean> {
  try {
    return (await tls(p, host, port, { trust, ...(sni ? { sni } : {}) })).status === 0;
  } catch {
    return true;
  }
}

test.before(async () => {
  [p8443, p9090, p9443] = await freePorts(3);
  for (const [i, name] of ['v1', 'v2', 'v3'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const server = await generateCertificate(join(tmp, 'certs'), 'a.hp.test', ['a.hp.test', 'b.hp.test', '*.wild.hp.test', 'thief.hp.test', 'any.hp.test', 'late.wild.hp.test']);
  const tenant = await generateCertificate(join(tmp, 'certs'), 'ls.hp.test', ['ls.hp.test']);
  const catchAll = await generateCertificate(join(tmp, 'certs'), 'unknown.hp.test', ['unknown.hp.test']);
  catchAllCa = readFileSync(catchAll.certPath, 'utf8');
  ca = readFileSync(server.certPath, 'utf8');
  tenantCa = readFileSync(tenant.certPath, 'utf8');
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'hp' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    ...['v1', 'v2', 'v3'].flatMap((n) => [INFRA, 'hp-tenant', 'hp-thief'].flatMap((ns) => [service(ns, n), ...slices(ns, n, [echo[n]!])])),
    tlsSecret(INFRA, 'server', ca, readFileSync(server.keyPath, 'utf8')),
    tlsSecret('hp-tenant', 'tenant', tenantCa, readFileSync(tenant.keyPath, 'utf8')),
    tlsSecret(INFRA, 'catch-all', catchAllCa, readFileSync(catchAll.keyPath, 'utf8')),
    gateway(INFRA, 'tls', [
      https('a-8443', 8443, 'a.hp.test', 'server'), https('wild-8443', 8443, '*.wild.hp.test', 'server'),
      https('b-443', 443, 'b.hp.test', 'server'), http('plain-9090', 9090, 'plain.hp.test'), https('any-8443', 8443, undefined, 'catch-all'),
    ], '2026-01-01T00:00:00Z', { allowedListeners: { namespaces: { from: 'All' } } }),
    route(INFRA, 'a', { name: 'tls', sectionName: 'a-8443' }, ['a.hp.test'], 'v1'),
    route(INFRA, 'wild', { name: 'tls', sectionName: 'wild-8443' }, ['*.wild.hp.test'], 'v3'),
    route(INFRA, 'b', { name: 'tls', sectionName: 'b-443' }, ['b.hp.test'], 'v2'),
    route(INFRA, 'plain', { name: 'tls', sectionName: 'plain-9090' }, ['plain.hp.test'], 'v2'),
    // Another tenant's younger Gateway: port 9090 over TLS and 8443 as plain HTTP are taken with the other protocol.
    gateway('hp-thief', 'late', [https('tls-9090', 9090, 'late.hp.test', 'server', INFRA), http('plain-8443', 8443, 'late.hp.test')], '2026-06-01T00:00:00Z'),
    route('hp-thief', 'late', { name: 'late', namespace: 'hp-thief' }, ['late.hp.test'], 'v1'),
    // The same tenant reading the infra namespace's certificate without a ReferenceGrant (the grant below is for another Secret).
    gateway('hp-thief', 'thief', [https('https', 8443, 'thief.hp.test', 'server', INFRA)], '2026-06-02T00:00:00Z'),
    route('hp-thief', 'thief', { name: 'thief', namespace: 'hp-thief' }, ['thief.hp.test'], 'v1'),
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'other', namespace: INFRA }, spec: { from: [{ group: GROUP, kind: 'Gateway', namespace: 'hp-thief' }], to: [{ group: '', kind: 'Secret', name: 'not-server' }] } },
    // A ListenerSet of another namespace on the Gateway: HTTPS on 8443 (its own certificate) and on 9443, HTTP on 9090.
    {
      apiVersion: GATEWAY_V1, kind: 'ListenerSet', metadata: { name: 'team', namespace: 'hp-tenant', creationTimestamp: '2026-02-01T00:00:00Z' },
      spec: { parentRef: { group: GROUP, kind: 'Gateway', name: 'tls', namespace: INFRA }, listeners: [
        https('ls-8443', 8443, 'ls.hp.test', 'tenant'), https('ls-9443', 9443, 'ls.hp.test', 'tenant'), http('ls-9090', 9090, 'ls-plain.hp.test'),
      ] },
    },
    route('hp-tenant', 'ls', { group: GROUP, kind: 'ListenerSet', name: 'team' }, ['ls.hp.test', 'ls-plain.hp.test'], 'v3'),
  ];
  ({ fake, ctl } = await startGatewayController(tmp, objects, ['--gateway-listener-ports', `8443=${p8443},9090=${p9090},9443=${p9443}`]));
  await waitFor(() => gwListener('thief', 'https', 'hp-thief') !== undefined && setListener('team', 'ls-9090', 'hp-tenant') !== undefined, { what: 'the status written', timeoutMs: 30_000 });
  await ctl.until('a.hp.test', '/', (r) => r.backend === 'v1', { what: 'a.hp.test on 8443', https: true, port: p8443, ca });
});

test.after(async () => {
  await ctl?.stop();
  await fake?.close();
  await Promise.all(Object.values(echo).map((e) => e.close()));
  rmSync(tmp, { recursive: true, force: true });
});

over.both('an HTTPS listener on 8443 is served over TLS at its mapped port with its certificateRefs\' certificate, by SNI', async (p) => {
  for (const [host, backend] of [['a.hp.test', 'v1'], ['x.wild.hp.test', 'v3']] as const) {
    const r = await tls(p, host, p8443, { trust: ca });
    assert.is(r.status, 200, host);
    assert.is(r.backend, backend, host);
  }
  // The HTTPS listener on 443 beside it.
  assert.is((await tls(p, 'b.hp.test', ctl.ports.https, { trust: ca })).backend, 'v2');
});

over.both('a host of port 8443 is never served on 443, nor one of 443 on 8443: their certificates stay on their ports too', async (p) => {
  const on443 = await tls(p, 'a.hp.test', ctl.ports.https);
  assert.is(on443.status, 404, 'a.hp.test on 443');
  assert.is(on443.backend, undefined);
  assert.ok(await untrusted(p, 'a.hp.test', ctl.ports.https, ca), 'port 8443\'s certificate is not served on 443');
  const on8443 = await tls(p, 'b.hp.test', p8443);
  assert.is(on8443.status, 404, 'b.hp.test on 8443');
  assert.is(on8443.backend, undefined);
  assert.ok(await untrusted(p, 'b.hp.test', p8443, ca), '443\'s certificate is not served on 8443');
});

over.both('on 8443, a name no host of the port has gets the certificate of the port\'s listener without hostname (none on 443)', async (p) => {
  const r = await tls(p, 'unknown.hp.test', p8443, { trust: catchAllCa });
  assert.is(r.status, 404, 'the certificate verifies; no route takes the host');
  assert.ok(await untrusted(p, 'unknown.hp.test', ctl.ports.https, catchAllCa), 'port 8443\'s listener without hostname gives nothing on 443');
});

over.both('on 8443, a Host of another listener than the SNI\'s is misdirected (421)', async (p) => {
  assert.is((await tls(p, 'x.wild.hp.test', p8443, { sni: 'a.hp.test', trust: ca })).status, 421);
  assert.is((await tls(p, 'a.hp.test', p8443, { sni: 'x.wild.hp.test', trust: ca })).status, 421);
  // Two hosts of one listener share a connection's SNI.
  assert.is((await tls(p, 'y.wild.hp.test', p8443, { sni: 'x.wild.hp.test', trust: ca })).backend, 'v3');
});

over.both('ListenerSet: HTTPS listeners on 8443 (beside the Gateway\'s) and 9443 (its own port) serve its own certificate', async (p) => {
  for (const port of [p8443, p9443]) {
    const r = await tls(p, 'ls.hp.test', port, { trust: tenantCa });
    assert.is(r.status, 200, `port ${port}`);
    assert.is(r.backend, 'v3', `port ${port}`);
  }
  assert.is(brief(setListener('team', 'ls-9443', 'hp-tenant'), 'Programmed'), 'Programmed=True/Programmed');
});

over.http1Only('ListenerSet and Gateway: HTTP listeners of both on port 9090 share its server', 'listener port 9090 is plain HTTP', async () => {
  assert.is((await ctl.request('plain.hp.test', '/', { port: p9090 })).backend, 'v2');
  assert.is((await ctl.request('ls-plain.hp.test', '/', { port: p9090 })).backend, 'v3');
  assert.is(brief(setListener('team', 'ls-9090', 'hp-tenant'), 'Accepted'), 'Accepted=True/Accepted');
});

over.both('attacker: a younger Gateway of another tenant asking for 9090 over TLS and 8443 as plain HTTP gets PortUnavailable; the older keeps both', async (p) => {
  for (const l of ['tls-9090', 'plain-8443']) {
    assert.is(brief(gwListener('late', l, 'hp-thief'), 'Accepted'), 'Accepted=False/PortUnavailable', l);
    assert.match(cond(gwListener('late', l, 'hp-thief'), 'Accepted')!.message, /port (9090|8443) is already served (over TLS \(HTTPS\)|as plain HTTP) for an older listener/);
  }
  assert.is(brief(gwListener('tls', 'plain-9090'), 'Programmed'), 'Programmed=True/Programmed');
  assert.is(brief(gwListener('tls', 'a-8443'), 'Programmed'), 'Programmed=True/Programmed');
  assert.is((await tls(p, 'late.hp.test', p8443)).status, 404, 'late.hp.test is not served on 8443');
  assert.is((await tls(p, 'a.hp.test', p8443, { trust: ca })).backend, 'v1', 'port 8443 is still TLS');
  if (p.protocol === 'HTTP/1.1') assert.is((await ctl.request('late.hp.test', '/', { port: p9090 })).status, 404, 'nor on 9090');
});

over.both('attacker: another namespace\'s certificate without a ReferenceGrant is not served on 8443 (RefNotPermitted)', async (p) => {
  assert.is(brief(gwListener('thief', 'https', 'hp-thief'), 'ResolvedRefs'), 'ResolvedRefs=False/RefNotPermitted');
  assert.ok(await untrusted(p, 'thief.hp.test', p8443, ca), 'the infra certificate is not served for the thief\'s host');
});

over.noRequest('careless: an HTTPS listener on the controller\'s own port is PortUnavailable, named', 'the Gateway status', async () => {
  fake.create(gateway('hp-thief', 'own', [https('healthz', ctl.ports.healthz, 'own.hp.test', 'server', INFRA)], '2026-06-03T00:00:00Z'));
  await waitFor(() => gwListener('own', 'healthz', 'hp-thief') !== undefined, { what: 'the status of Gateway own' });
  assert.is(brief(gwListener('own', 'healthz', 'hp-thief'), 'Accepted'), 'Accepted=False/PortUnavailable');
  assert.match(cond(gwListener('own', 'healthz', 'hp-thief'), 'Accepted')!.message, /which the controller uses itself \(--healthz-port\)/);
});

over.both('a route added on 8443 is served without a reload', async (p) => {
  const reloads = () => ctl.metric('nginx_ingress_controller_success');
  const before = await reloads();
  const name = `late-${p.tag}`;
  fake.create(route(INFRA, name, { name: 'tls', sectionName: 'wild-8443' }, [`${name}.wild.hp.test`], 'v2'));
  await p.until(`${name}.wild.hp.test`, '/', (r) => r.backend === 'v2', { https: true, port: p8443, ca, what: `${name} on 8443` });
  assert.is(await reloads(), before, 'no reload');
});

test.run();
