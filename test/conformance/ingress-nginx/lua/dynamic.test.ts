// ingress-nginx test/e2e/lua/{dynamic_configuration,dynamic_certificates}.go, ported on one
// controller, a host (and Service) per It and protocol. "Without reloading" is what NGINX shows:
// the same master's workers keep serving, nginx_ingress_controller_success (reloads) does not
// move, and the running nginx.conf is the same text. Certificates are read from the TLS handshake
// (the first certificate's name), over the protocol's ALPN.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type PeerCertificate } from 'node:tls';
import { certificate, startFixture, untilSynced, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, service, slices, tlsSecret } from '../../../support/local-harness.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'dynamic';

/** When a manifest was last written or removed: a reload it causes must not be taken for the It's. */
let lastWrite = 0;

test.before(async () => {
  fx = await startFixture(NS);
  const { write, remove } = fx.ctl;
  fx.ctl.write = (file, objects) => { lastWrite = Date.now(); write(file, objects); };
  fx.ctl.remove = (file) => { lastWrite = Date.now(); remove(file); };
});
test.after(() => fx.stop());

/** A Service `name` over `n` of the echo endpoints (0: none). */
const scaled = (name: string, n: number) => [service(NS, name), ...slices(NS, name, fx.echo.slice(0, n))];
const ewma = (host: string, svc: string, tls?: string) => ingress(NS, host, {
  host, paths: [{ path: '/', service: svc }], annotations: { 'nginx.ingress.kubernetes.io/load-balance': 'ewma' },
  ...(tls ? { tls: [{ hosts: [tls], secretName: tls }] } : {}),
});

/** What shows a reload: NGINX's workers, the reload counter, the running nginx.conf. */
async function nginxState() {
  await untilSynced(fx.ctl, lastWrite);
  const master = readFileSync(join(fx.ctl.workdir, 'nginx.pid'), 'utf8').trim();
  const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).sort().join(' ');
  return { workers, reloads: await fx.ctl.metric('nginx_ingress_controller_success'), conf: (await fx.ctl.control('/nginx.conf')).body };
}
async function assertNoReload(before: Awaited<ReturnType<typeof nginxState>>) {
  const after = await nginxState();
  assert.is(after.reloads, before.reloads, 'no reload counted');
  assert.is(after.workers, before.workers, 'the same NGINX workers');
  assert.ok(after.conf === before.conf, 'the same nginx.conf');
}

/** The endpoints Lua balances `svc`'s backend over (ewma may keep picking the one it measured faster). */
async function luaEndpoints(svc: string): Promise<number> {
  const backends = JSON.parse((await fx.ctl.control('/configuration/backends')).body) as Array<{ name: string; endpoints?: unknown[] }>;
  return backends.find((b) => b.name === `${NS}-${svc}-80`)?.endpoints?.length ?? 0;
}

/** The first certificate NGINX presents for the server name `sni` with the protocol's ALPN, and the status of a request. */
async function https(p: ProtocolClient, sni: string, host = sni): Promise<{ status: number; cert: PeerCertificate; chain: number }> {
  const cert = await new Promise<{ cert: PeerCertificate; chain: number }>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: fx.ctl.ports.https, servername: sni, rejectUnauthorized: false, ALPNProtocols: [p.protocol === 'HTTP/2' ? 'h2' : 'http/1.1'] }, () => {
      const c = s.getPeerCertificate(true);
      let chain = 1;
      for (let x = c; x.issuerCertificate && x.issuerCertificate !== x && chain < 5; x = x.issuerCertificate) chain++;
      s.end();
      resolve({ cert: c, chain });
    });
    s.on('error', reject);
  });
  const r = await p.request(host, '/', { https: true, sni });
  return { status: r.status, ...cert };
}
/** A host with a TLS section answers plain HTTP with ssl-redirect's 308 (with the default certificate too). */
const redirected = (r: { status: number }) => r.status === 308;
const dnsName = (c: PeerCertificate) => /DNS:([^,]+)/.exec(c.subjectaltname ?? '')?.[1];

/** ingress-nginx's ensureHTTPSRequest: 200, one certificate, its first DNS name `expected`. */
async function servesCertificate(p: ProtocolClient, host: string, expected: string, sni = host): Promise<PeerCertificate> {
  const r = await https(p, sni, host);
  assert.is(r.status, 200, `${host} over HTTPS`);
  assert.is(r.chain, 1);
  assert.is(dnsName(r.cert), expected);
  return r.cert;
}
const untilCertificate = (p: ProtocolClient, host: string, expected: string, extra: (c: PeerCertificate) => boolean = () => true) =>
  waitFor(async () => { const r = await https(p, host).catch(() => null); return r?.status === 200 && dnsName(r.cert) === expected && extra(r.cert) ? r.cert : null; }, { what: `${host} with the certificate of ${expected}` });

// ---- dynamic_configuration.go

its.both('lua/dynamic_configuration.go:49', async (p) => {
  const host = `${p.tag}.balancer.foo.com`;
  await fx.applyAndWait(`${host}.json`, [...scaled(`${p.tag}-balancer`, 2), ewma(host, `${p.tag}-balancer`)], host);
  assert.is((await p.request(host, '/')).status, 200);
  // The e2e test greps for the balancer_by_lua directive, which has no effect of its own to provoke
  // beyond the peers Lua picks (the Its below): read it in the running configuration.
  assert.match((await fx.ctl.control('/nginx.conf')).body, /balancer_by_lua_(block|file)/);
});

/** The It's host served by one endpoint, then scaled to two: Lua holds both, no reload. */
async function scaleToTwo(p: ProtocolClient, kind: string): Promise<{ host: string; svc: string }> {
  const host = `${p.tag}.${kind}.foo.com`;
  const svc = `${p.tag}-${kind}`;
  await fx.applyAndWait(`${host}.json`, [...scaled(svc, 1), ewma(host, svc)], host);
  const before = await nginxState();
  fx.apply(`${host}.json`, [...scaled(svc, 2), ewma(host, svc)]);
  await waitFor(async () => (await luaEndpoints(svc)) === 2, { what: 'two endpoints in Lua' });
  assert.is((await p.request(host, '/')).status, 200);
  await assertNoReload(before);
  return { host, svc };
}

its.both('lua/dynamic_configuration.go:56', async (p) => {
  await scaleToTwo(p, 'endpoints');
});

its.both('lua/dynamic_configuration.go:81', async (p) => {
  const { host, svc } = await scaleToTwo(p, 'down');
  fx.apply(`${host}.json`, [...scaled(svc, 0), ewma(host, svc)]);
  await p.until(host, '/', (r) => r.status === 503, { what: 'scaled to zero' });
});

its.both('lua/dynamic_configuration.go:119', async (p) => {
  const host = `${p.tag}.scaling.foo.com`;
  const svc = `${p.tag}-scalingecho`;
  await fx.applyAndWait(`${host}.json`, [...scaled(svc, 0), ewma(host, svc)], host, '/', (r) => r.status === 503);
  const original = (await p.request(host, '/')).status;
  fx.apply(`${host}.json`, [...scaled(svc, 2), ewma(host, svc)]);
  const success = (await p.until(host, '/', (r) => r.status !== 503, { what: 'scaled to two' })).status;
  fx.apply(`${host}.json`, [...scaled(svc, 0), ewma(host, svc)]);
  const failure = (await p.until(host, '/', (r) => r.status !== 200, { what: 'scaled to zero' })).status;
  assert.equal([original, success, failure], [503, 200, 503]);
});

its.both('lua/dynamic_configuration.go:165', async (p) => {
  const host = `${p.tag}.annotation.foo.com`;
  const svc = `${p.tag}-annotation`;
  await fx.applyAndWait(`${host}.json`, [...scaled(svc, 2), ewma(host, svc)], host);
  const before = await nginxState();
  const rr = ingress(NS, host, { host, paths: [{ path: '/', service: svc }], annotations: { 'nginx.ingress.kubernetes.io/load-balance': 'round_robin' } });
  fx.apply(`${host}.json`, [...scaled(svc, 2), rr]);
  // round_robin alternates the two endpoints: four requests in a row reach both, in turns.
  await waitFor(async () => {
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push(String((await p.request(host, '/')).backend));
    return seen[0] !== seen[1] && seen[1] !== seen[2] && seen[2] !== seen[3];
  }, { what: 'round_robin applied' });
  assert.is((await p.request(host, '/')).status, 200);
  await assertNoReload(before);
});

// ---- dynamic_certificates.go

its.both('lua/dynamic_certificates.go:45', async (p) => {
  const host = `${p.tag}.add-tls.foo.com`;
  await fx.applyAndWait(`${host}.json`, [ewma(host, 'echo')], host);
  const c = await certificate([host]);
  fx.apply(`${host}.json`, [ewma(host, 'echo', host), tlsSecret(NS, host, c.cert, c.key)]);
  await untilCertificate(p, host, host);
  await servesCertificate(p, host, host);
});

its.both('lua/dynamic_certificates.go:70', async (p) => {
  const host = `${p.tag}.missing.foo.com`;
  await fx.applyAndWait(`${host}.json`, [ewma(host, 'echo', host)], host, '/', redirected);
  await untilCertificate(p, host, 'ingress.local');
  const before = await nginxState();
  await servesCertificate(p, host, 'ingress.local');
  const c = await certificate([host]);
  fx.apply(`${host}-secret.json`, [tlsSecret(NS, host, c.cert, c.key)]);
  await untilCertificate(p, host, host);
  await servesCertificate(p, host, host);
  await assertNoReload(before);
});

/** The Context's BeforeEach: an Ingress with TLS whose Secret comes later; its certificate served. */
async function tlsConfigured(p: ProtocolClient, name: string): Promise<{ host: string; cert: PeerCertificate }> {
  const host = `${p.tag}.${name}.foo.com`;
  await fx.applyAndWait(`${host}.json`, [ewma(host, 'echo', host)], host, '/', redirected);
  await untilCertificate(p, host, 'ingress.local');
  const c = await certificate([host]);
  fx.apply(`${host}-secret.json`, [tlsSecret(NS, host, c.cert, c.key)]);
  return { host, cert: await untilCertificate(p, host, host) };
}

its.both('lua/dynamic_certificates.go:145', async (p) => {
  const { host } = await tlsConfigured(p, 'trailing-dot');
  // The server name and Host with a trailing dot (RFC 6066 leaves it out of SNI; NGINX and
  // Lua's certificate lookup drop it): the host's certificate and its Ingress.
  const r = await https(p, `${host}.`);
  assert.is(r.status, 200);
  assert.is(dnsName(r.cert), host);
});

its.both('lua/dynamic_certificates.go:149', async (p) => {
  const { host, cert } = await tlsConfigured(p, 'update');
  const before = await nginxState();
  const c = await certificate([host]);
  fx.apply(`${host}-secret.json`, [tlsSecret(NS, host, c.cert, c.key)]);
  const updated = await untilCertificate(p, host, host, (x) => x.fingerprint256 !== cert.fingerprint256);
  assert.is.not(updated.fingerprint256, cert.fingerprint256);
  await servesCertificate(p, host, host);
  await assertNoReload(before);
});

its.both('lua/dynamic_certificates.go:185', async (p) => {
  const { host } = await tlsConfigured(p, 'deleted');
  const before = await nginxState();
  fx.ctl.remove(`${host}-secret.json`);
  await untilCertificate(p, host, 'ingress.local');
  await servesCertificate(p, host, 'ingress.local');
  await assertNoReload(before);
});

its.both('lua/dynamic_certificates.go:218', async (p) => {
  const { host } = await tlsConfigured(p, 'rule-host');
  const newHost = `${p.tag}.foo2.com`;
  // The rule's host changes; the TLS section still names the old one.
  const moved = ingress(NS, host, { host: newHost, paths: [{ path: '/', service: 'echo' }], tls: [{ hosts: [host], secretName: host }] });
  await fx.applyAndWait(`${host}.json`, [moved], newHost);
  await untilCertificate(p, newHost, 'ingress.local');
  await servesCertificate(p, newHost, 'ingress.local');
});

its.both('lua/dynamic_certificates.go:233', async (p) => {
  const { host } = await tlsConfigured(p, 'remove-tls');
  fx.apply(`${host}.json`, [ewma(host, 'echo')]);
  await untilCertificate(p, host, 'ingress.local');
  // The certificate and the redirect may change in two steps of one sync: await both.
  const r = await fx.ctl.until(host, '/', (x) => x.status !== 308, { what: 'plain HTTP served, not redirected' });
  assert.is(r.status, 200, 'served over plain HTTP, not redirected');
});

test.run();
