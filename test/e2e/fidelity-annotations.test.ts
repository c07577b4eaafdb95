// Annotations as ingress-nginx answers them (its docs and test/e2e/annotations/*.go), one
// `ingress-rx local` with a host per scenario, real NGINX and real requests. docs/fidelity.md
// names the test of each annotation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';

const NS = 'fid';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let authServer: Server;
let authPort = 0;
const authCalls: Array<{ url: string; host: string }> = [];
const echo: Record<string, EchoServer> = {};
const certDir = mkdtempSync(join(tmpdir(), 'irx-fidelity-'));

const headers = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string>, svc = 'main', path = '/', pathType = 'Prefix') =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path, pathType, service: svc }] });

test.before(async () => {
  for (const [i, name] of ['main', 'canary', 'fallback', 'pool-a', 'pool-b'].entries()) {
    echo[name] = await startEchoServer({ address: `127.0.2.${10 + i}`, name });
  }
  authServer = createServer((req, res) => {
    authCalls.push({ url: req.url ?? '', host: req.headers.host ?? '' });
    const ok = /(^|;\s*)_oauth2_proxy=ok/.test(req.headers.cookie ?? '');
    res.writeHead(ok ? 202 : 401);
    res.end();
  });
  await new Promise<void>((r) => authServer.listen(0, '127.0.0.1', r));
  authPort = (authServer.address() as AddressInfo).port;
  const broken = await generateCertificate(certDir, 'tls-broken.test');

  ctl = await startLocal({
    files: {
      'services.json': [
        ...['main', 'canary', 'fallback'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo[n]!])]),
        // A backend's policies (affinity) come from its oldest Ingress: one Service per policy.
        ...['pool', 'pool-wild'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo['pool-a']!, echo['pool-b']!])]),
        service(NS, 'no-endpoints'),
      ],
      'headers.json': [on('plain', 'plain.test', {})],
      'redirects.json': [on('www', 'www-redirect.test', { 'from-to-www-redirect': 'true' })],
      'tls.json': [
        // A Secret that does not exist, and one whose key does not match its certificate.
        ingress(NS, 'tls-missing', { host: 'tls-missing.test', tls: [{ hosts: ['tls-missing.test'], secretName: 'nope' }], paths: [{ path: '/', service: 'main' }] }),
        tlsSecret(NS, 'broken', readFileSync(broken.certPath, 'utf8'), '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'),
        ingress(NS, 'tls-broken', { host: 'tls-broken.test', tls: [{ hosts: ['tls-broken.test'], secretName: 'broken' }], paths: [{ path: '/', service: 'main' }] }),
      ],
      'auth.json': [
        // The oauth2-proxy pattern, on the default server (no host), so that $host is the
        // address the test sends and needs no DNS.
        ingress(NS, 'oauth', {
          annotations: a({
            'auth-url': `http://$host:${authPort}/oauth2/auth`,
            'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri',
          }),
          paths: [{ path: '/protected', service: 'main' }],
        }),
      ],
      'default-backend.json': [
        on('db-empty', 'db-empty.test', { 'default-backend': 'fallback' }, 'no-endpoints'),
        on('db-missing', 'db-missing.test', { 'default-backend': 'fallback' }, 'not-a-service'),
        on('db-healthy', 'db-healthy.test', { 'default-backend': 'fallback' }, 'main'),
      ],
      'cors.json': [
        on('cors', 'cors.test', { 'enable-cors': 'true' }),
        on('cors-list', 'cors-list.test', {
          'enable-cors': 'true', 'cors-allow-origin': 'https://app.example.com, tauri://localhost:3000',
          'cors-allow-credentials': 'false', 'cors-expose-headers': 'X-Total', 'cors-max-age': '60', 'cors-allow-methods': 'GET, POST',
        }),
      ],
      'affinity.json': [
        on('sticky', 'sticky.test', {
          affinity: 'cookie', 'session-cookie-name': 'route', 'session-cookie-secure': 'true',
          'session-cookie-max-age': '3600', 'session-cookie-expires': '7200',
        }, 'pool', '/something'),
        on('sticky-wild', '*.sticky-wild.test', { affinity: 'cookie' }, 'pool-wild'),
      ],
      'canary.json': [
        on('canary-main', 'canary-bad.test', {}, 'main', '/info'),
        on('canary-bad', 'canary-bad.test', {
          canary: 'true', 'canary-by-header': 'CanaryByHeader', 'canary-by-header-pattern': '[][**da?$&*', 'canary-by-cookie': 'CanaryByCookie',
        }, 'canary', '/info'),
      ],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
  authServer?.close();
  rmSync(certDir, { recursive: true, force: true });
});

test('client forwarded headers are not trusted by default, and passed on as X-Original-Forwarded-*', async () => {
  const r = await ctl.request('plain.test', '/p', { headers: { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Host': 'evil.example' } });
  assert.is(r.status, 200);
  const h = headers(r);
  assert.is(h['x-forwarded-for'], '127.0.0.1');
  assert.is(h['x-real-ip'], '127.0.0.1');
  assert.is(h['x-forwarded-host'], 'plain.test');
  assert.is(h['x-original-forwarded-for'], '203.0.113.7');
  assert.is(h['x-original-forwarded-host'], 'evil.example');
  // proxy-add-original-uri-header is false by default.
  assert.is(h['x-original-uri'], undefined);
  const none = headers(await ctl.request('plain.test', '/p'));
  assert.is(none['x-original-forwarded-for'], undefined, 'an empty value is not sent');
});

test('from-to-www-redirect: the Location keeps the port and drops one trailing slash', async () => {
  const r = await ctl.request('www.www-redirect.test', '/foo/?q=1');
  assert.is(r.status, 308);
  assert.is(r.headers.location, `http://www-redirect.test:${ctl.ports.http}/foo/?q=1`);
  const slash = await ctl.request('www.www-redirect.test', '/foo/');
  assert.is(slash.headers.location, `http://www-redirect.test:${ctl.ports.http}/foo`);
  // The host itself is served.
  assert.is((await ctl.request('www-redirect.test', '/foo')).backend, 'main');
});

test('a TLS host whose Secret is missing or broken is served over HTTPS with the default certificate and redirected', async () => {
  for (const host of ['tls-missing.test', 'tls-broken.test']) {
    const http = await ctl.request(host, '/x');
    assert.is(http.status, 308, host);
    assert.is(http.headers.location, `https://${host}:${ctl.ports.https}/x`, host);
    const https = await ctl.request(host, '/x', { https: true });
    assert.is(https.status, 200, host);
    assert.is(https.backend, 'main', host);
    assert.match(String(https.headers['strict-transport-security']), /max-age=31536000/, host);
  }
  assert.match(ctl.output(), /Secret fid\/nope: not found; host tls-missing.test uses the default certificate/);
});

test('auth-url and auth-signin with $host: the auth service is asked per request at the request host', async () => {
  const host = `127.0.0.1:${ctl.ports.http}`;
  authCalls.length = 0;
  const out = await ctl.request(host, '/protected?x=1');
  assert.is(out.status, 302);
  assert.is(out.headers.location, 'https://127.0.0.1/oauth2/start?rd=%2Fprotected%3Fx%3D1');
  assert.equal(authCalls.map((c) => c.url), ['/oauth2/auth']);
  assert.is(authCalls[0]!.host, '127.0.0.1', 'Host of the subrequest is $host');
  const ok = await ctl.request(host, '/protected', { headers: { Cookie: '_oauth2_proxy=ok' } });
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'main');
});

test('auth-url with $host: a Host that would make the URL http://unix:<port>/… never reaches a socket', async () => {
  authCalls.length = 0;
  const r = await ctl.request('unix', '/protected');
  assert.is(r.status, 500);
  assert.equal(authCalls, []);
  const log = readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8');
  assert.not.match(log, /unix:/, 'NGINX never tried a unix socket');
});

test('default-backend: while the Service has no endpoint (or does not exist), its requests go to the default backend with the custom-error headers', async () => {
  for (const host of ['db-empty.test', 'db-missing.test']) {
    const r = await ctl.request(host, '/alma/armud?x=1', { headers: { 'X-Request-ID': 'something-unique', Accept: 'text/html' } });
    assert.is(r.status, 200, host);
    assert.is(r.backend, 'fallback', host);
    assert.is(r.json?.path, '/alma/armud?x=1', 'the request URI is kept');
    const h = headers(r);
    assert.is(h['x-code'], '503');
    assert.is(h['x-format'], 'text/html');
    assert.is(h['x-original-uri'], '/alma/armud?x=1');
    assert.is(h['x-namespace'], NS);
    assert.is(h['x-ingress-name'], host === 'db-empty.test' ? 'db-empty' : 'db-missing');
    assert.is(h['x-service-name'], host === 'db-empty.test' ? 'no-endpoints' : 'not-a-service');
    assert.is(h['x-service-port'], '80');
    assert.is(h['x-request-id'], 'something-unique');
  }
  const healthy = await ctl.request('db-healthy.test', '/');
  assert.is(healthy.backend, 'main');
  assert.is(headers(healthy)['x-code'], undefined);
});

test('enable-cors: every request with an allowed origin gets the whole Access-Control set; preflights are answered 204', async () => {
  const simple = await ctl.request('cors.test', '/', { headers: { Origin: 'https://any.example' } });
  assert.is(simple.status, 200);
  assert.is(simple.backend, 'main');
  assert.is(simple.headers['access-control-allow-origin'], '*');
  assert.is(simple.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
  assert.is(simple.headers['access-control-allow-headers'], 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization');
  assert.is(simple.headers['access-control-allow-credentials'], 'true');
  assert.is(simple.headers['access-control-max-age'], '1728000');
  const pre = await ctl.request('cors.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://any.example', 'Access-Control-Request-Method': 'PUT' } });
  assert.is(pre.status, 204);
  assert.is(pre.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
  assert.is(pre.headers['content-length'], '0');
});

test('cors-allow-origin list: matching origins (any scheme) are echoed with the configured set; others get no CORS header', async () => {
  for (const origin of ['https://app.example.com', 'tauri://localhost:3000']) {
    const r = await ctl.request('cors-list.test', '/', { headers: { Origin: origin } });
    assert.is(r.headers['access-control-allow-origin'], origin);
    assert.is(r.headers['access-control-allow-methods'], 'GET, POST');
    assert.is(r.headers['access-control-expose-headers'], 'X-Total');
    assert.is(r.headers['access-control-max-age'], '60');
    assert.is(r.headers['access-control-allow-credentials'], undefined);
  }
  const other = await ctl.request('cors-list.test', '/', { headers: { Origin: 'https://evil.example' } });
  assert.is(other.status, 200);
  for (const h of Object.keys(other.headers)) assert.not.ok(h.startsWith('access-control-'), h);
  // A preflight of another origin is the backend's business.
  const otherPre = await ctl.request('cors-list.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
  assert.is(otherPre.status, 200);
  assert.is(otherPre.backend, 'main');
});

test('affinity cookie on a non-root path: Path is the Ingress path, Max-Age, Expires, Secure over HTTP, HttpOnly', async () => {
  for (const path of ['/something', '/something/deeper']) {
    const r = await ctl.request('sticky.test', path);
    assert.is(r.status, 200, path);
    const cookie = String(r.headers['set-cookie'] ?? '');
    assert.match(cookie, /^route=[0-9a-f]{32}; /, path);
    assert.match(cookie, /; Path=\/something(;|$)/, path);
    assert.match(cookie, /; Max-Age=3600(;|$)/, path);
    const expires = /; Expires=([^;]+)/.exec(cookie)?.[1]
    assert.ok(expires && Math.abs(Date.parse(expires) - Date.now() - 7200_000) < 60_000, `${path}: Expires ${expires}`);
    assert.match(cookie, /; Secure(;|$)/, path);
    assert.match(cookie, /; HttpOnly(;|$)/, path);
  }
});

test('affinity on a wildcard host sets the cookie for the names it serves', async () => {
  const r = await ctl.request('a.sticky-wild.test', '/');
  assert.is(r.status, 200);
  assert.match(String(r.headers['set-cookie'] ?? ''), /^INGRESSCOOKIE=[0-9a-f]{32}; Path=\//);
});

test('canary-by-header-pattern that is not a valid pattern: a request with the header stays on the mainline, the cookie is not consulted', async () => {
  for (let i = 0; i < 5; i++) {
    const r = await ctl.request('canary-bad.test', '/info', { headers: { CanaryByHeader: 'DoCanary', Cookie: 'CanaryByCookie=always' } });
    assert.is(r.backend, 'main');
  }
  // Without the header the cookie still decides.
  assert.is((await ctl.request('canary-bad.test', '/info', { headers: { Cookie: 'CanaryByCookie=always' } })).backend, 'canary');
});

test.run();
