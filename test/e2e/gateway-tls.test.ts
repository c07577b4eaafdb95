// HTTPS listeners end to end (docs/gateway-api.md): `ingress-rx local` with real NGINX serves a
// Gateway's HTTPS listener on --https-port with the certificate of its certificateRefs, chosen by
// SNI through the same path as Ingress TLS (lua/certificate.lua), over HTTP/1.1 and HTTP/2,
// verified against the test's CA; a new route and a changed Secret are served without a reload;
// a tenant's Gateway naming another namespace's Secret without a grant never serves that key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { tlsExchange } from '../support/tls-exchange.js';

const V1 = 'gateway.networking.k8s.io/v1';
let ctl: LocalController;
let echo: EchoServer;
const over = protocolMatrix(test, () => ctl);
const reloads = () => ctl.metric('nginx_ingress_controller_success');
const dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
const certs: Record<string, GeneratedCertificate> = {};
const secretOf = (ns: string, name: string, c: GeneratedCertificate) => tlsSecret(ns, name, readFileSync(c.certPath, 'utf8'), readFileSync(c.keyPath, 'utf8'));
const ca = (name: string) => readFileSync(certs[name]!.certPath);

function gateway(ns: string, listeners: object[]) {
  return { apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: ns }, spec: { gatewayClassName: 'rx', listeners } };
}
const httpsListener = (refs: object[]) => ({ name: 'https', port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: refs }, allowedRoutes: { namespaces: { from: 'All' } } });

function route(name: string, gwNs: string, host: string) {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
    spec: { parentRefs: [{ name: 'gw', namespace: gwNs }], hostnames: [host], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
  };
}

test.before(async () => {
  for (const host of ['secure.test', 'later.test', 'stolen.test']) certs[host] = await generateCertificate(dir, host);
  certs['secure.test#2'] = await generateCertificate(dir, 'secure.test');
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({
    files: {
      'services.json': [service('team-a', 'web'), ...slices('team-a', 'web', [echo])],
      'secrets.json': [secretOf('infra', 'secure', certs['secure.test']!), secretOf('infra', 'later', certs['later.test']!), secretOf('team-b', 'stolen', certs['stolen.test']!)],
      'gateway.json': [
        { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
        gateway('infra', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }, httpsListener([{ name: 'secure' }, { name: 'later' }])]),
        // A tenant's own Gateway naming team-b's Secret, with no ReferenceGrant in team-b.
        gateway('team-a', [httpsListener([{ name: 'stolen', namespace: 'team-b' }])]),
      ],
      'routes.json': [route('secure', 'infra', 'secure.test'), route('steal', 'team-a', 'stolen.test')],
    },
  });
  await ctl.until('secure.test', '/', (r) => r.backend === 'web', { what: 'secure.test over TLS', https: true, ca: ca('secure.test') });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
  rmSync(dir, { recursive: true, force: true });
});

over.both('an HTTPS listener\'s certificate is served by SNI and verifies against its CA; the route is served over TLS', async (p) => {
  const r = await p.request('secure.test', '/x', { https: true, ca: ca('secure.test') });
  assert.is(r.status, 200);
  assert.is(r.backend, 'web');
  assert.is(r.json?.path, '/x');
});

test('a host on the HTTP and the HTTPS listener is served over plain HTTP/1.1 too, without a redirect', async () => {
  const r = await ctl.request('secure.test', '/plain');
  assert.is(r.status, 200, `status ${r.status} (location ${String(r.headers.location)})`);
  assert.is(r.backend, 'web');
});

test('attacker: a tenant\'s Gateway naming another namespace\'s Secret without a ReferenceGrant does not serve that certificate', async () => {
  const seen = await tlsExchange(ctl.ports.https, 'stolen.test');
  assert.is.not(seen.cn, 'stolen.test', 'team-b\'s certificate is not served');
  assert.match(await ctl.logged(/Secret team-b\/stolen is in another namespace and no ReferenceGrant/), /Gateway team-a\/gw/);
});

over.both('a new HTTPRoute through the HTTPS listener, and a changed Secret, are served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('later.json', [route('later', 'infra', 'later.test')]);
  await p.until('later.test', '/', (r) => r.backend === 'web', { what: 'later.test served with its certificate', https: true, ca: ca('later.test') });
  ctl.write('secrets.json', [secretOf('infra', 'secure', certs['secure.test#2']!), secretOf('infra', 'later', certs['later.test']!), secretOf('team-b', 'stolen', certs['stolen.test']!)]);
  await p.until('secure.test', '/', (r) => r.backend === 'web', { what: 'the new certificate of secure.test', https: true, ca: ca('secure.test#2') });
  // Back as it was, for the other protocol's run.
  ctl.remove('later.json');
  ctl.write('secrets.json', [secretOf('infra', 'secure', certs['secure.test']!), secretOf('infra', 'later', certs['later.test']!), secretOf('team-b', 'stolen', certs['stolen.test']!)]);
  await p.until('secure.test', '/', (r) => r.backend === 'web', { what: 'the first certificate again', https: true, ca: ca('secure.test') });
  await p.until('later.test', '/', (r) => r.status === 404, { what: 'later.test gone' });
  assert.is(await reloads(), before, 'no reload');
});

test.run();
