// `ingress-rx local` end to end: HTTPS by SNI, SSL redirect, canary, cookie affinity, CORS,
// basic and external auth, allow/deny lists. Real NGINX, real HTTP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
let primary: EchoServer;
let canary: EchoServer;
let pool: EchoServer[];
let authServer: Server;
let cert: GeneratedCertificate;
const certDir = mkdtempSync(join(tmpdir(), 'irx-certs-'));
const P = 'nginx.ingress.kubernetes.io';
const over = protocolMatrix(test, () => ctl);

test.before(async () => {
  primary = await startEchoServer({ address: '127.0.0.2', name: 'primary' });
  canary = await startEchoServer({ address: '127.0.0.3', name: 'canary' });
  pool = await Promise.all([4, 5, 6].map((o) => startEchoServer({ address: `127.0.0.${o}`, name: `pool-${o}` })));
  authServer = createServer((req, res) => {
    const ok = req.headers['x-allow'] === 'yes';
    res.writeHead(ok ? 200 : 401, ok ? { 'x-auth-user': 'alice' } : {});
    res.end();
  });
  await new Promise<void>((r) => authServer.listen(0, '127.0.0.1', r));
  const authPort = (authServer.address() as AddressInfo).port;
  cert = await generateCertificate(certDir, 'tls.test');
  const hash = execFileSync('openssl', ['passwd', '-apr1', 's3cret']).toString().trim();

  const feature = (name: string, host: string, annotations: Record<string, string>, svc = 'primary') =>
    ingress('app', name, { host, annotations, paths: [{ path: '/', service: svc }] });
  ctl = await startLocal({
    files: {
      // Canary policies belong to a backend (as in ingress-nginx), so each canary scenario and
      // the plain hosts get Services of their own.
      'services.json': [
        service('app', 'primary'), ...slices('app', 'primary', [primary]),
        service('app', 'main-h'), ...slices('app', 'main-h', [primary]),
        service('app', 'canary-h'), ...slices('app', 'canary-h', [canary]),
        service('app', 'main-w'), ...slices('app', 'main-w', [primary]),
        service('app', 'canary-w'), ...slices('app', 'canary-w', [canary]),
        service('app', 'pool'), ...slices('app', 'pool', pool),
      ],
      'tls.json': [
        tlsSecret('app', 'tls-cert', await readText(cert.certPath), await readText(cert.keyPath)),
        ingress('app', 'tls', { host: 'tls.test', tls: [{ hosts: ['tls.test'], secretName: 'tls-cert' }], paths: [{ path: '/', service: 'primary' }] }),
        // cert-manager's HTTP-01 solver: an ImplementationSpecific path on the TLS host.
        ingress('app', 'acme-solver', { host: 'tls.test', annotations: { [`${P}/force-ssl-redirect`]: 'true' }, paths: [{ path: '/.well-known/acme-challenge/tok3n', pathType: 'ImplementationSpecific', service: 'primary' }] }),
      ],
      'canary.json': [
        feature('main', 'canary.test', {}, 'main-h'),
        feature('canary-header', 'canary.test', { [`${P}/canary`]: 'true', [`${P}/canary-by-header`]: 'X-Canary', [`${P}/canary-by-cookie`]: 'use_canary' }, 'canary-h'),
        feature('main-weight', 'weight.test', {}, 'main-w'),
        feature('canary-weight', 'weight.test', { [`${P}/canary`]: 'true', [`${P}/canary-weight`]: '30' }, 'canary-w'),
      ],
      'features.json': [
        feature('sticky', 'sticky.test', { [`${P}/affinity`]: 'cookie', [`${P}/session-cookie-name`]: 'route', [`${P}/session-cookie-path`]: '/' }, 'pool'),
        feature('rr', 'rr.test', {}, 'pool'),
        feature('cors', 'cors.test', { [`${P}/enable-cors`]: 'true', [`${P}/cors-allow-origin`]: 'https://app.example.com' }),
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'basic', namespace: 'app' }, data: { auth: Buffer.from(`bob:${hash}\n`).toString('base64') } },
        feature('basic', 'basic.test', { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: 'basic', [`${P}/auth-realm`]: 'Members only' }),
        feature('external', 'external.test', { [`${P}/auth-url`]: `http://127.0.0.1:${authPort}/check`, [`${P}/auth-response-headers`]: 'X-Auth-User' }),
        feature('allow', 'allow.test', { [`${P}/allowlist-source-range`]: '10.0.0.0/8' }),
        feature('allow-me', 'allowme.test', { [`${P}/allowlist-source-range`]: '127.0.0.1/32, 10.0.0.0/8' }),
        feature('deny', 'deny.test', { [`${P}/denylist-source-range`]: '127.0.0.0/8' }),
      ],
    },
  });
});

async function readText(p: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return readFile(p, 'utf8');
}

test.after(async () => {
  await ctl?.stop();
  await Promise.all([primary, canary, ...pool].map((e) => e?.close()));
  authServer?.close();
  rmSync(certDir, { recursive: true, force: true });
});

over.both('HTTPS serves the Secret\'s certificate by SNI, trusted with that certificate as CA', async (p) => {
  const r = await p.request('tls.test', '/', { https: true, ca: await readText(cert.certPath) });
  assert.is(r.status, 200);
  assert.is(r.backend, 'primary');
  assert.match(String(r.headers['strict-transport-security']), /max-age=31536000/);
});

over.http1Only('HTTP to a host with a certificate redirects to HTTPS with 308', 'the redirect answers plain HTTP', async (p) => {
  const r = await p.request('tls.test', '/path?q=1');
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://tls.test:${ctl.ports.https}/path?q=1`);
  // ACME HTTP-01 challenges (no-tls-redirect-locations) are answered over HTTP.
  const acme = await p.request('tls.test', '/.well-known/acme-challenge/tok3n');
  assert.is(acme.status, 200);
  assert.is(acme.json?.path, '/.well-known/acme-challenge/tok3n');
  // A host without a certificate is not redirected.
  assert.is((await p.request('canary.test', '/')).status, 200);
});

over.both('canary by header: always / never / absent', async (p) => {
  assert.is((await p.request('canary.test', '/', { headers: { 'X-Canary': 'always' } })).backend, 'canary');
  assert.is((await p.request('canary.test', '/', { headers: { 'X-Canary': 'never' } })).backend, 'primary');
  for (let i = 0; i < 5; i++) assert.is((await p.request('canary.test', '/')).backend, 'primary');
});

over.both('canary by cookie', async (p) => {
  assert.is((await p.request('canary.test', '/', { headers: { Cookie: 'use_canary=always' } })).backend, 'canary');
  assert.is((await p.request('canary.test', '/', { headers: { Cookie: 'use_canary=never' } })).backend, 'primary');
});

over.both('canary by weight: about 30 of 100 over 400 requests', async (p) => {
  let hits = 0;
  for (let i = 0; i < 400; i++) if ((await p.request('weight.test', '/')).backend === 'canary') hits++;
  // Binomial(400, 0.3): mean 120, sd ≈ 9.2; ±5 sd.
  assert.ok(hits > 74 && hits < 166, `canary hits: ${hits}`);
});

over.both('round robin spreads requests over all endpoints', async (p) => {
  const seen = new Map<string, number>();
  for (let i = 0; i < 30; i++) {
    const b = (await p.request('rr.test', '/')).backend!;
    seen.set(b, (seen.get(b) ?? 0) + 1);
  }
  assert.is(seen.size, 3);
});

over.both('cookie affinity pins a client to one endpoint', async (p) => {
  const first = await p.request('sticky.test', '/');
  const setCookie = String(first.headers['set-cookie'] ?? '');
  assert.match(setCookie, /^route=/);
  const cookie = setCookie.split(';')[0];
  for (let i = 0; i < 10; i++) {
    assert.is((await p.request('sticky.test', '/', { headers: { Cookie: cookie } })).backend, first.backend);
  }
});

over.both('CORS preflight answers 204 with the allowed origin', async (p) => {
  const r = await p.request('cors.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'GET' } });
  assert.is(r.status, 204);
  assert.is(r.headers['access-control-allow-origin'], 'https://app.example.com');
  assert.ok(r.headers['access-control-allow-methods']);
  const get = await p.request('cors.test', '/', { headers: { Origin: 'https://app.example.com' } });
  assert.is(get.headers['access-control-allow-origin'], 'https://app.example.com');
});

over.both('basic auth: 401 without credentials, 200 with', async (p) => {
  const denied = await p.request('basic.test', '/');
  assert.is(denied.status, 401);
  assert.match(String(denied.headers['www-authenticate']), /Members only/);
  const bad = await p.request('basic.test', '/', { headers: { Authorization: `Basic ${Buffer.from('bob:wrong').toString('base64')}` } });
  assert.is(bad.status, 401);
  const ok = await p.request('basic.test', '/', { headers: { Authorization: `Basic ${Buffer.from('bob:s3cret').toString('base64')}` } });
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'primary');
});

over.both('external auth: the auth service decides; its response header reaches the upstream', async (p) => {
  assert.is((await p.request('external.test', '/')).status, 401);
  const ok = await p.request('external.test', '/', { headers: { 'X-Allow': 'yes' } });
  assert.is(ok.status, 200);
  assert.is((ok.json?.headers as Record<string, string>)['x-auth-user'], 'alice');
});

over.both('allow and deny lists by source address', async (p) => {
  assert.is((await p.request('allow.test', '/')).status, 403);
  assert.is((await p.request('allowme.test', '/')).status, 200);
  assert.is((await p.request('deny.test', '/')).status, 403);
});

test.run();
