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
import { execFileSync } from 'node:child_process';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { DYNAMIC_ROUTES_ARGS, ingress, service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';
import { grpcClient, startFastCgiServer, startGrpcServer, type ProtocolServer } from '../support/protocol-servers.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix, type ProtocolClient } from '../support/protocols.js';

const NS = 'fid';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let authServer: Server;
let authPort = 0;
const authCalls: Array<{ url: string; host: string; method: string }> = [];
const echo: Record<string, EchoServer> = {};
const protocol: Record<string, ProtocolServer> = {};
const certDir = mkdtempSync(join(tmpdir(), 'irx-fidelity-'));
const over = protocolMatrix(test, () => ctl);

const headers = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string>, svc = 'main', path = '/', pathType = 'Prefix') =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path, pathType, service: svc }] });

test.before(async () => {
  for (const [i, name] of ['main', 'canary', 'fallback', 'pool-a', 'pool-b', 'pool-c', 'pool-d', 'slow', 'cluster-ip'].entries()) {
    echo[name] = await startEchoServer({ address: `127.0.2.${10 + i}`, name, delayMs: name === 'slow' ? 150 : 0 });
  }
  const tls = await generateCertificate(certDir, 'backend.internal');
  const tlsPem = { cert: readFileSync(tls.certPath, 'utf8'), key: readFileSync(tls.keyPath, 'utf8') };
  echo.https = await startEchoServer({ address: '127.0.2.40', name: 'https', tls: tlsPem });
  // A TLS endpoint of its own for AUTO_HTTP: NGINX keeps upstream connections by address alone.
  echo['auto-tls'] = await startEchoServer({ address: '127.0.2.45', name: 'auto-tls', tls: tlsPem });
  protocol.grpc = await startGrpcServer({ address: '127.0.2.41', name: 'grpc' });
  protocol.grpcs = await startGrpcServer({ address: '127.0.2.42', name: 'grpcs', tls: tlsPem });
  protocol.fcgi = await startFastCgiServer({ address: '127.0.2.43', name: 'fcgi' });
  // An endpoint nothing listens on (a port just freed), for proxy-next-upstream.
  const dead = { address: '127.0.2.44', port: await freePort('127.0.2.44') };
  authServer = createServer((req, res) => {
    authCalls.push({ url: req.url ?? '', host: req.headers.host ?? '', method: req.method ?? '' });
    if (req.url?.startsWith('/check')) {
      const ok = req.headers['x-allow'] === 'yes';
      res.writeHead(ok ? 200 : 401, ok ? { 'x-auth-user': 'alice', foo: 'from-auth' } : {});
      res.end();
      return;
    }
    const ok = /(^|;\s*)_oauth2_proxy=ok/.test(req.headers.cookie ?? '');
    res.writeHead(ok ? 202 : 401);
    res.end();
  });
  await new Promise<void>((r) => authServer.listen(0, '127.0.0.1', r));
  authPort = (authServer.address() as AddressInfo).port;
  const broken = await generateCertificate(certDir, 'tls-broken.test');
  const htpasswd = execFileSync('openssl', ['passwd', '-apr1', 's3cret']).toString().trim();
  const own = (name: string, servers: Array<{ address: string; port: number }>) => [service(NS, name), ...slices(NS, name, servers)];
  const pool = [echo['pool-a']!, echo['pool-b']!];
  const pool4 = [...pool, echo['pool-c']!, echo['pool-d']!];

  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [
        ...['main', 'canary', 'fallback'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo[n]!])]),
        // A backend's policies (affinity) come from its oldest Ingress: one Service per policy.
        ...['pool', 'pool-wild'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo['pool-a']!, echo['pool-b']!])]),
        service(NS, 'no-endpoints'),
        // A backend's policies come from its oldest Ingress: one Service per policy under test.
        ...own('https', [echo.https!]), ...own('auto-tls', [echo['auto-tls']!]), ...own('grpc', [protocol.grpc!]), ...own('grpcs', [protocol.grpcs!]), ...own('fcgi', [protocol.fcgi!]),
        ...own('with-dead', [echo.main!, dead]), ...own('with-dead-off', [echo.main!, dead]), ...own('with-dead-tries', [echo.main!, dead]),
        ...own('ewma', [echo.slow!, echo['pool-c']!]), ...own('hash', pool4), ...own('hash-subset', pool4),
        ...own('persistent', pool), ...own('cookie-opts', pool), ...own('change-on-failure', [echo['pool-d']!, dead]),
        ...own('canary-main-w', [echo.main!]), ...own('canary-w', [echo.canary!]),
        ...own('canary-main-v', [echo.main!]), ...own('canary-v', [echo.canary!]), ...own('canary-main-p', [echo.main!]), ...own('canary-p', [echo.canary!]),
        ...own('canary-main-s', pool), ...own('canary-s', [echo.canary!]), ...own('canary-main-l', pool), ...own('canary-l', [echo.canary!]),
        // service-upstream: the cluster IP (here an echo server's address) instead of the endpoints.
        { ...service(NS, 'svc-upstream', { port: echo['cluster-ip']!.port }), spec: { clusterIP: echo['cluster-ip']!.address, ports: [{ name: 'http', port: echo['cluster-ip']!.port, targetPort: 'http' }] } },
        ...slices(NS, 'svc-upstream', [echo.main!]),
      ],
      'rewrite.json': [
        on('rewrite', 'rewrite.test', { 'rewrite-target': '/$2', 'use-regex': 'true' }, 'main', '/something(/|$)(.*)', 'ImplementationSpecific'),
        on('regex', 'regex.test', { 'use-regex': 'true' }, 'main', '/foo/bar/[A-Z0-9]{3}', 'ImplementationSpecific'),
        on('approot', 'approot.test', { 'app-root': '/foo' }),
        ingress(NS, 'no-ssl-redirect', { host: 'no-ssl-redirect.test', annotations: a({ 'ssl-redirect': 'false' }), tls: [{ hosts: ['no-ssl-redirect.test'], secretName: 'nope' }], paths: [{ path: '/', service: 'main' }] }),
        on('force', 'force.test', { 'force-ssl-redirect': 'true' }),
        on('preserve', 'preserve.test', { 'force-ssl-redirect': 'true', 'preserve-trailing-slash': 'true' }),
        on('prefix-header', 'xfp.test', { 'x-forwarded-prefix': '/test/value', 'rewrite-target': '/foo' }),
        on('prefix-header-empty', 'xfp-empty.test', { 'x-forwarded-prefix': '', 'rewrite-target': '/foo' }),
      ],
      'more-redirects.json': [
        on('permanent', 'permanent.test', { 'permanent-redirect': 'https://example.org/moved' }),
        on('permanent-code', 'permanent-code.test', { 'permanent-redirect': 'https://example.org/moved', 'permanent-redirect-code': '308' }),
        on('temporal', 'temporal.test', { 'temporal-redirect': 'https://example.org/tmp', 'permanent-redirect': 'https://example.org/moved' }),
        on('temporal-code', 'temporal-code.test', { 'temporal-redirect': 'https://example.org/tmp', 'temporal-redirect-code': '307' }),
        on('alias', 'alias-main.test', { 'server-alias': 'alias-a.test, *.alias-wild.test' }),
      ],
      'auth-more.json': [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users-map', namespace: NS }, data: { bob: Buffer.from(htpasswd).toString('base64') } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users-file', namespace: NS }, data: { auth: Buffer.from(`bob:${htpasswd}\n`).toString('base64') } },
        on('basic-map', 'basic-map.test', { 'auth-type': 'basic', 'auth-secret': 'users-map', 'auth-secret-type': 'auth-map', 'auth-realm': 'Map realm' }),
        on('basic-missing', 'basic-missing.test', { 'auth-type': 'basic', 'auth-secret': 'no-such-secret' }),
        on('digest', 'digest.test', { 'auth-type': 'digest', 'auth-secret': 'users-file' }),
        on('basic-cors', 'basic-cors.test', { 'auth-type': 'basic', 'auth-secret': 'users-file', 'enable-cors': 'true' }),
        on('extauth', 'extauth.test', {
          'auth-url': `http://127.0.0.1:${authPort}/check`, 'auth-method': 'POST', 'auth-response-headers': 'X-Auth-User, Foo',
          'auth-signin': 'http://$host/auth/start', 'auth-signin-redirect-param': 'orig',
        }),
        on('extauth-cache', 'extauth-cache.test', {
          'auth-url': `http://127.0.0.1:${authPort}/check?cached`, 'auth-cache-key': '$http_x_allow$http_x_run', 'auth-cache-duration': '200 30m',
        }),
        // Another tenant's host with the same key: its own service must still be asked.
        on('extauth-cache-other', 'extauth-cache-other.test', {
          'auth-url': `http://127.0.0.1:${authPort}/check?other`, 'auth-cache-key': '$http_x_allow$http_x_run', 'auth-cache-duration': '200 30m',
        }),
        ingress(NS, 'old-allowlist', { host: 'whitelist.test', annotations: a({ 'whitelist-source-range': '10.0.0.0/8' }), paths: [{ path: '/', service: 'main' }] }),
      ],
      'source-ranges.json': [
        on('allow-local', 'allow-local.test', { 'allowlist-source-range': '10.0.0.0/8, 127.0.0.0/24' }),
        // Host bits set: NGINX ignores them (127.0.0.77/24 is 127.0.0.0/24).
        on('allow-bits', 'allow-bits.test', { 'allowlist-source-range': '127.0.0.77/24' }),
        on('deny-first', 'deny-first.test', { 'denylist-source-range': '127.0.0.1/32', 'allowlist-source-range': '127.0.0.0/8' }),
        on('deny-only', 'deny-only.test', { 'denylist-source-range': '2001:db8::/32, 127.0.8.0/24' }),
        on('allow-v6', 'allow-v6.test', { 'allowlist-source-range': '::1/128' }),
        on('allow-empty', 'allow-empty.test', { 'allowlist-source-range': '10.0.0.0/8' }, 'no-endpoints'),
        on('allow-force', 'allow-force.test', { 'allowlist-source-range': '10.0.0.0/8', 'force-ssl-redirect': 'true' }),
      ],
      'limits.json': [
        on('rps', 'rps.test', { 'limit-rps': '1', 'limit-burst-multiplier': '1' }),
        on('rpm', 'rpm.test', { 'limit-rpm': '1', 'limit-burst-multiplier': '1' }),
        on('conn', 'conn.test', { 'limit-connections': '1' }),
        on('rl-allow', 'rl-allow.test', { 'limit-rps': '1', 'limit-burst-multiplier': '1', 'limit-allowlist': '127.0.0.0/8' }),
        on('rl-white', 'rl-white.test', { 'limit-rps': '1', 'limit-burst-multiplier': '1', 'limit-whitelist': '127.0.0.0/8' }),
        // As ingress-nginx documents: limit-rate needs proxy-buffering on.
        on('rate', 'rate.test', { 'limit-rate': '1', 'limit-rate-after': '2', 'proxy-buffering': 'on' }),
      ],
      'proxy.json': [
        on('body', 'body.test', { 'proxy-body-size': '1k' }),
        on('timeout', 'timeout.test', { 'proxy-read-timeout': '1' }),
        on('timeouts', 'timeouts.test', { 'proxy-connect-timeout': '3', 'proxy-send-timeout': '4', 'proxy-read-timeout': '1' }),
        on('tries-more', 'tries-more.test', { 'proxy-next-upstream-tries': '5' }),
        on('httpver', 'httpver.test', { 'proxy-http-version': '1.0' }),
        on('nextup', 'nextup.test', {}, 'with-dead'),
        on('nextup-off', 'nextup-off.test', { 'proxy-next-upstream': 'off' }, 'with-dead-off'),
        on('nextup-tries', 'nextup-tries.test', { 'proxy-next-upstream-tries': '1' }, 'with-dead-tries'),
        on('directives', 'directives.test', {
          'proxy-connect-timeout': '7', 'proxy-send-timeout': '8', 'proxy-buffer-size': '16k', 'proxy-buffers-number': '8',
          'proxy-buffering': 'on', 'proxy-request-buffering': 'off', 'client-body-buffer-size': '64k', 'proxy-next-upstream-timeout': '9',
        }),
        on('vhost', 'vhost.test', { 'upstream-vhost': 'internal.example' }),
        on('connection', 'connection.test', { 'connection-proxy-header': 'keep-alive' }),
        on('https-backend', 'https-backend.test', { 'backend-protocol': 'HTTPS' }, 'https'),
        on('auto-backend', 'auto-backend.test', { 'backend-protocol': 'AUTO_HTTP' }),
        on('auto-backend-tls', 'auto-backend-tls.test', { 'backend-protocol': 'AUTO_HTTP' }, 'auto-tls'),
        on('grpc', 'grpc.test', { 'backend-protocol': 'GRPC' }, 'grpc'),
        on('grpcs', 'grpcs.test', { 'backend-protocol': 'GRPCS' }, 'grpcs'),
        on('fcgi', 'fcgi.test', { 'backend-protocol': 'FCGI' }, 'fcgi'),
        on('errors', 'errors.test', { 'custom-http-errors': '404,503', 'default-backend': 'fallback' }),
        on('errors-builtin', 'errors-builtin.test', { 'custom-http-errors': '418' }),
        on('nolog', 'nolog.test', { 'enable-access-log': 'false' }),
        ingress(NS, 'svc-upstream', { host: 'svc-upstream.test', annotations: a({ 'service-upstream': 'true' }), paths: [{ path: '/', service: 'svc-upstream', port: echo['cluster-ip']!.port }] }),
      ],
      'balancing.json': [
        on('ewma', 'ewma.test', { 'load-balance': 'ewma' }, 'ewma'),
        on('hash', 'hash.test', { 'upstream-hash-by': '$request_uri' }, 'hash'),
        on('hash-subset', 'hash-subset.test', { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true', 'upstream-hash-by-subset-size': '2' }, 'hash-subset'),
        on('persistent', 'persistent.test', { affinity: 'cookie', 'affinity-mode': 'persistent' }, 'persistent'),
        on('cookie-opts', 'cookie-opts.test', {
          affinity: 'cookie', 'session-cookie-name': 'sticky', 'session-cookie-path': '/custom', 'session-cookie-domain': 'cookie-opts.test',
          'session-cookie-samesite': 'None', 'session-cookie-conditional-samesite-none': 'true',
        }, 'cookie-opts'),
        on('change-on-failure', 'change-on-failure.test', { affinity: 'cookie', 'session-cookie-change-on-failure': 'true' }, 'change-on-failure'),
        on('canary-main-w', 'canary-weight.test', {}, 'canary-main-w'),
        on('canary-w', 'canary-weight.test', { canary: 'true', 'canary-weight': '200', 'canary-weight-total': '200' }, 'canary-w'),
        on('canary-main-v', 'canary-value.test', {}, 'canary-main-v'),
        on('canary-v', 'canary-value.test', { canary: 'true', 'canary-by-header': 'X-Version', 'canary-by-header-value': 'v2' }, 'canary-v'),
        on('canary-main-p', 'canary-pattern.test', {}, 'canary-main-p'),
        on('canary-p', 'canary-pattern.test', { canary: 'true', 'canary-by-header': 'X-Version', 'canary-by-header-pattern': '^v[23]$' }, 'canary-p'),
        on('canary-main-s', 'canary-sticky.test', { affinity: 'cookie' }, 'canary-main-s'),
        on('canary-s', 'canary-sticky.test', { canary: 'true', 'canary-by-header': 'X-Canary' }, 'canary-s'),
        on('canary-main-l', 'canary-legacy.test', { affinity: 'cookie' }, 'canary-main-l'),
        on('canary-l', 'canary-legacy.test', { canary: 'true', 'canary-by-header': 'X-Canary', 'affinity-canary-behavior': 'legacy' }, 'canary-l'),
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
      'response-headers.json': [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: NS }, data: { 'global-allowed-response-headers': 'X-Team,X-Frame-Options,X-Echo-Name' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'team-headers', namespace: NS }, data: { 'X-Team': 'blue $team', 'X-Frame-Options': 'DENY', 'X-Echo-Name': 'front' } },
        on('custom', 'custom.test', { 'custom-headers': 'team-headers' }),
        on('custom-redirect', 'custom-redirect.test', { 'custom-headers': 'team-headers', 'permanent-redirect': '/r$uri' }),
        on('custom-approot', 'custom-approot.test', { 'custom-headers': 'team-headers', 'app-root': '/app' }),
        on('custom-cors', 'custom-cors.test', { 'custom-headers': 'team-headers', 'enable-cors': 'true', 'cors-allow-origin': 'https://*.example.com' }),
        on('cors-allow', 'cors-allow.test', { 'enable-cors': 'true', 'allowlist-source-range': '10.0.0.0/8' }),
        on('cors-empty', 'cors-empty.test', { 'enable-cors': 'true', 'custom-headers': 'team-headers' }, 'no-endpoints'),
      ],
      'cors.json': [
        on('cors', 'cors.test', { 'enable-cors': 'true' }),
        on('cors-list', 'cors-list.test', {
          'enable-cors': 'true', 'cors-allow-origin': 'https://app.example.com, tauri://localhost:3000',
          'cors-allow-credentials': 'false', 'cors-expose-headers': 'X-Total', 'cors-max-age': '60', 'cors-allow-methods': 'GET, POST',
          'cors-allow-headers': 'X-Custom,Authorization',
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
  await Promise.all([...Object.values(echo), ...Object.values(protocol)].map((e) => e.close()));
  authServer?.close();
  rmSync(certDir, { recursive: true, force: true });
});

over.both('client forwarded headers are not trusted by default, and passed on as X-Original-Forwarded-*', async (p) => {
  const r = await p.request('plain.test', '/p', { headers: { 'X-Forwarded-For': '203.0.113.7', 'X-Forwarded-Host': 'evil.example' } });
  assert.is(r.status, 200);
  const h = headers(r);
  assert.is(h['x-forwarded-for'], '127.0.0.1');
  assert.is(h['x-real-ip'], '127.0.0.1');
  assert.is(h['x-forwarded-host'], 'plain.test');
  assert.is(h['x-original-forwarded-for'], '203.0.113.7');
  assert.is(h['x-original-forwarded-host'], 'evil.example');
  // proxy-add-original-uri-header is false by default.
  assert.is(h['x-original-uri'], undefined);
  const none = headers(await p.request('plain.test', '/p'));
  assert.is(none['x-original-forwarded-for'], undefined, 'an empty value is not sent');
});

over.both('from-to-www-redirect: the Location keeps the port and drops one trailing slash', async (p) => {
  const r = await p.request('www.www-redirect.test', '/foo/?q=1');
  assert.is(r.status, 308);
  assert.is(r.headers.location, `${p.scheme}://www-redirect.test:${p.port}/foo/?q=1`);
  const slash = await p.request('www.www-redirect.test', '/foo/');
  assert.is(slash.headers.location, `${p.scheme}://www-redirect.test:${p.port}/foo`);
  // The host itself is served.
  assert.is((await p.request('www-redirect.test', '/foo')).backend, 'main');
});

over.both('a TLS host whose Secret is missing or broken is served over HTTPS with the default certificate and redirected', async (p) => {
  for (const host of ['tls-missing.test', 'tls-broken.test']) {
    // The redirect answers plain HTTP, which is HTTP/1.1 whatever the leg.
    const http = await ctl.request(host, '/x');
    assert.is(http.status, 308, host);
    assert.is(http.headers.location, `https://${host}:${ctl.ports.https}/x`, host);
    const https = await p.request(host, '/x', { https: true });
    assert.is(https.status, 200, host);
    assert.is(https.backend, 'main', host);
    assert.match(String(https.headers['strict-transport-security']), /max-age=31536000/, host);
  }
  await ctl.logged(/Secret fid\/nope: not found; host tls-missing.test uses the default certificate/);
});

over.both('auth-url and auth-signin with $host: the auth service is asked per request at the request host', async (p) => {
  const host = `127.0.0.1:${p.port}`;
  authCalls.length = 0;
  const out = await p.request(host, '/protected?x=1');
  assert.is(out.status, 302);
  assert.is(out.headers.location, 'https://127.0.0.1/oauth2/start?rd=%2Fprotected%3Fx%3D1');
  assert.equal(authCalls.map((c) => c.url), ['/oauth2/auth']);
  assert.is(authCalls[0]!.host, '127.0.0.1', 'Host of the subrequest is $host');
  const ok = await p.request(host, '/protected', { headers: { Cookie: '_oauth2_proxy=ok' } });
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'main');
});

over.both('auth-url with $host: a Host that would make the URL http://unix:<port>/… never reaches a socket', async (p) => {
  authCalls.length = 0;
  const r = await p.request('unix', '/protected');
  assert.is(r.status, 500);
  assert.equal(authCalls, []);
  const log = readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8');
  // The request's host is a name to Lua, which looks it up (and finds nothing); no socket is dialled.
  assert.not.match(log, /connect\(\) to unix:|unix:\//, 'NGINX never tried a unix socket');
  assert.match(log, /cannot resolve unix/);
});

over.both('default-backend: while the Service has no endpoint (or does not exist), its requests go to the default backend with the custom-error headers', async (p) => {
  for (const host of ['db-empty.test', 'db-missing.test']) {
    const r = await p.request(host, '/alma/armud?x=1', { headers: { 'X-Request-ID': 'something-unique', Accept: 'text/html' } });
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
  const healthy = await p.request('db-healthy.test', '/');
  assert.is(healthy.backend, 'main');
  assert.is(headers(healthy)['x-code'], undefined);
});

over.both('enable-cors: every request with an allowed origin gets the whole Access-Control set; preflights are answered 204', async (p) => {
  const simple = await p.request('cors.test', '/', { headers: { Origin: 'https://any.example' } });
  assert.is(simple.status, 200);
  assert.is(simple.backend, 'main');
  assert.is(simple.headers['access-control-allow-origin'], '*');
  assert.is(simple.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
  assert.is(simple.headers['access-control-allow-headers'], 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization');
  assert.is(simple.headers['access-control-allow-credentials'], 'true');
  assert.is(simple.headers['access-control-max-age'], '1728000');
  const pre = await p.request('cors.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://any.example', 'Access-Control-Request-Method': 'PUT' } });
  assert.is(pre.status, 204);
  assert.is(pre.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
  // NGINX's HTTP/2 sends no Content-Length with a 204, as RFC 9110 asks.
  assert.is(pre.headers['content-length'], p.protocol === 'HTTP/1.1' ? '0' : undefined);
});

over.both('cors-allow-origin list: matching origins (any scheme) are echoed with the configured set; others get no CORS header', async (p) => {
  for (const origin of ['https://app.example.com', 'tauri://localhost:3000']) {
    const r = await p.request('cors-list.test', '/', { headers: { Origin: origin } });
    assert.is(r.headers['access-control-allow-origin'], origin);
    assert.is(r.headers['access-control-allow-methods'], 'GET, POST');
    assert.is(r.headers['access-control-allow-headers'], 'X-Custom,Authorization');
    assert.is(r.headers['access-control-expose-headers'], 'X-Total');
    assert.is(r.headers['access-control-max-age'], '60');
    assert.is(r.headers['access-control-allow-credentials'], undefined);
  }
  const other = await p.request('cors-list.test', '/', { headers: { Origin: 'https://evil.example' } });
  assert.is(other.status, 200);
  for (const h of Object.keys(other.headers)) assert.not.ok(h.startsWith('access-control-'), h);
  // A preflight of another origin is the backend's business.
  const otherPre = await p.request('cors-list.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
  assert.is(otherPre.status, 200);
  assert.is(otherPre.backend, 'main');
});

/** The answer's status and header lines in the order NGINX sent them (as received: HTTP/2 names are lower case), without Date. */
async function head(p: ProtocolClient, method: string, host: string, path: string, headers: Record<string, string> = {}): Promise<string[]> {
  const r = await p.request(host, path, { method, headers });
  const lines = r.rawHeaders.flatMap((v, i) => (i % 2 === 0 ? [`${v}: ${r.rawHeaders[i + 1]}`] : []));
  return [`status ${r.status}`, ...lines.filter((l) => !/^date:/i.test(l))];
}

/**
 * An expectation written as HTTP/1.1 sends it, as HTTP/2 sends it: lower-case names, no
 * connection headers, and no Content-Length on a 204 (NGINX's HTTP/2 drops it, as RFC 9110 asks).
 */
const asSent = (p: ProtocolClient, lines: string[]): string[] => (p.protocol === 'HTTP/1.1' ? lines : lines
  .filter((l) => !/^(Connection|Keep-Alive):/i.test(l) && !(lines[0] === 'status 204' && /^Content-Length:/i.test(l)))
  .map((l) => (l.startsWith('status ') ? l : `${l.slice(0, l.indexOf(':')).toLowerCase()}${l.slice(l.indexOf(':'))}`)));

over.both('custom-headers on permanent-redirect\'s and app-root\'s answers, as on any answer of the location', async (p) => {
  // Sorted: a Location NGINX makes absolute comes before Connection, one the router sets after it.
  const lines = async (host: string, path: string) => (await head(p, 'GET', host, path)).sort();
  const custom = ['X-Echo-Name: front', 'X-Frame-Options: DENY', 'X-Team: blue $team'];
  assert.equal(await lines('custom-redirect.test', '/x'), asSent(p, [
    'Connection: close', 'Content-Length: 162', 'Content-Type: text/html', 'status 301',
    `Location: ${p.scheme}://custom-redirect.test/r/x`, ...custom,
  ]).sort());
  assert.equal(await lines('custom-approot.test', '/'), asSent(p, [
    'Connection: close', 'Content-Length: 138', 'Content-Type: text/html', 'status 302',
    `Location: ${p.scheme}://custom-approot.test/app`, ...custom,
  ]).sort());
});

over.both('custom-headers and CORS together: the same header lines, in the same order, on answers, preflights and refusals', async (p) => {
  const get = await head(p, 'GET', 'custom-cors.test', '/', { Origin: 'https://App.example.com' });
  assert.equal(get.filter((l) => !/^(Content-Length|X-Echo-\w+(?<!Name)|Keep-Alive):/i.test(l)), asSent(p, [
    'status 200', 'Content-Type: application/json', 'Connection: close', 'x-echo-name: front',
    'X-Frame-Options: DENY', 'X-Team: blue $team',
    'Access-Control-Allow-Origin: https://App.example.com', 'Access-Control-Allow-Credentials: true',
    'Access-Control-Allow-Methods: GET, PUT, POST, DELETE, PATCH, OPTIONS',
    'Access-Control-Allow-Headers: DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
    'Access-Control-Max-Age: 1728000',
  ]));
  const pre = await head(p, 'OPTIONS', 'custom-cors.test', '/', { Origin: 'https://a.example.com' });
  assert.equal(pre, asSent(p, [
    'status 204', 'Connection: close', 'X-Echo-Name: front', 'X-Frame-Options: DENY', 'X-Team: blue $team',
    'Access-Control-Allow-Origin: https://a.example.com', 'Access-Control-Allow-Credentials: true',
    'Access-Control-Allow-Methods: GET, PUT, POST, DELETE, PATCH, OPTIONS',
    'Access-Control-Allow-Headers: DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
    'Access-Control-Max-Age: 1728000', 'Content-Length: 0',
  ]));
  // An origin two labels down, or another domain: no CORS header; its OPTIONS goes to the backend.
  for (const origin of ['https://a.b.example.com', 'https://example.com.evil.test']) {
    const other = await p.request('custom-cors.test', '/', { method: 'OPTIONS', headers: { Origin: origin } });
    assert.is(other.status, 200, origin);
    assert.is(other.headers['access-control-allow-origin'], undefined, origin);
    assert.is(other.headers['x-team'], 'blue $team', origin);
  }
  // custom-headers alone replaces the backend's own header.
  const custom = await p.request('custom.test', '/');
  assert.equal([custom.status, custom.headers['x-echo-name'], custom.headers['x-team'], custom.headers['access-control-allow-origin']], [200, 'front', 'blue $team', undefined]);
  // The preflight is answered before the source ranges are read; the refusal carries the CORS set.
  const allowPre = await p.request('cors-allow.test', '/', { method: 'OPTIONS', headers: { Origin: 'https://x.test' } });
  assert.equal([allowPre.status, allowPre.headers['access-control-allow-origin']], [204, '*']);
  const refused = await p.request('cors-allow.test', '/', { headers: { Origin: 'https://x.test' } });
  assert.equal([refused.status, refused.headers['access-control-allow-origin']], [403, '*']);
  const empty = await head(p, 'GET', 'cors-empty.test', '/', { Origin: 'https://x.test' });
  assert.equal(empty.filter((l) => !/^Server:/i.test(l)), asSent(p, [
    'status 503', 'Content-Type: text/html', 'Content-Length: 190', 'Connection: close',
    'X-Echo-Name: front', 'X-Frame-Options: DENY', 'X-Team: blue $team', 'Access-Control-Allow-Origin: *', 'Access-Control-Allow-Credentials: true',
    'Access-Control-Allow-Methods: GET, PUT, POST, DELETE, PATCH, OPTIONS',
    'Access-Control-Allow-Headers: DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
    'Access-Control-Max-Age: 1728000',
  ]));
});

over.both('affinity cookie on a non-root path: Path is the Ingress path, Max-Age, Expires, Secure over HTTP, HttpOnly', async (p) => {
  for (const path of ['/something', '/something/deeper']) {
    const r = await p.request('sticky.test', path);
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

over.both('affinity on a wildcard host sets the cookie for the names it serves', async (p) => {
  const r = await p.request('a.sticky-wild.test', '/');
  assert.is(r.status, 200);
  assert.match(String(r.headers['set-cookie'] ?? ''), /^INGRESSCOOKIE=[0-9a-f]{32}; Path=\//);
});

over.both('canary-by-header-pattern that is not a valid pattern: a request with the header stays on the mainline, the cookie is not consulted', async (p) => {
  for (let i = 0; i < 5; i++) {
    const r = await p.request('canary-bad.test', '/info', { headers: { CanaryByHeader: 'DoCanary', Cookie: 'CanaryByCookie=always' } });
    assert.is(r.backend, 'main');
  }
  // Without the header the cookie still decides.
  assert.is((await p.request('canary-bad.test', '/info', { headers: { Cookie: 'CanaryByCookie=always' } })).backend, 'canary');
});

// ---- rewrite

over.both('rewrite-target with use-regex: captures rewrite the path, matching is case-insensitive', async (p) => {
  for (const [path, want] of [['/something', '/'], ['/something/new', '/new'], ['/SOMETHING/x?y=1', '/x?y=1']] as const) {
    const r = await p.request('rewrite.test', path);
    assert.is(r.status, 200, path);
    assert.is(r.json?.path, want, path);
  }
  assert.is((await p.request('regex.test', '/foo/bar/AB9')).backend, 'main');
  assert.is((await p.request('regex.test', '/foo/bar/AB')).status, 404);
});

over.both('app-root redirects / (and only /) with 302 to the path on the same host', async (p) => {
  const r = await p.request('approot.test', '/');
  assert.is(r.status, 302);
  assert.is(r.headers.location, `${p.scheme}://approot.test/foo`);
  assert.is((await p.request('approot.test', '/bar')).backend, 'main');
});

over.http1Only('ssl-redirect false keeps HTTP on a TLS host; force-ssl-redirect redirects a host without TLS; preserve-trailing-slash', 'the SSL redirect answers plain HTTP', async (p) => {
  const plain = await p.request('no-ssl-redirect.test', '/');
  assert.is(plain.status, 200);
  const forced = await p.request('force.test', '/');
  assert.is(forced.status, 308);
  assert.is(forced.headers.location, `https://force.test:${ctl.ports.https}`);
  assert.is((await p.request('force.test', '/a/')).headers.location, `https://force.test:${ctl.ports.https}/a`);
  assert.is((await p.request('preserve.test', '/a/')).headers.location, `https://preserve.test:${ctl.ports.https}/a/`);
  // HTTPS itself is served.
  assert.is((await p.request('force.test', '/', { https: true })).backend, 'main');
});

over.both('x-forwarded-prefix: sent upstream when set, not when empty', async (p) => {
  const r = await p.request('xfp.test', '/');
  assert.is(r.json?.path, '/foo');
  assert.is(headers(r)['x-forwarded-prefix'], '/test/value');
  assert.is(headers(await p.request('xfp-empty.test', '/'))['x-forwarded-prefix'], undefined);
});

// ---- redirect, aliases

over.both('permanent-redirect (301, or its code) and temporal-redirect (302, or its code; it wins) answer with the URL as given', async (p) => {
  const cases: Array<[string, number, string]> = [
    ['permanent.test', 301, 'https://example.org/moved'], ['permanent-code.test', 308, 'https://example.org/moved'],
    ['temporal.test', 302, 'https://example.org/tmp'], ['temporal-code.test', 307, 'https://example.org/tmp'],
  ];
  for (const [host, status, location] of cases) {
    const r = await p.request(host, '/any/path?q=1');
    assert.is(r.status, status, host);
    assert.is(r.headers.location, location, host);
  }
});

over.both('server-alias: the aliases (a wildcard too) are served by the host, other names are not', async (p) => {
  for (const host of ['alias-main.test', 'alias-a.test', 'x.alias-wild.test']) assert.is((await p.request(host, '/')).backend, 'main', host);
  assert.is((await p.request('alias-b.test', '/')).status, 404);
});

// ---- authentication

const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

over.both('basic auth with auth-secret-type auth-map and auth-realm; a missing Secret denies (503), and so does auth-type digest', async (p) => {
  const denied = await p.request('basic-map.test', '/');
  assert.is(denied.status, 401);
  assert.is(denied.headers['www-authenticate'], 'Basic realm="Map realm"');
  assert.is((await p.request('basic-map.test', '/', { headers: basic('bob', 'wrong') })).status, 401);
  assert.is((await p.request('basic-map.test', '/', { headers: basic('bob', 's3cret') })).backend, 'main');
  assert.is((await p.request('basic-missing.test', '/', { headers: basic('bob', 's3cret') })).status, 503);
  // Debian's NGINX has no digest module: the location is denied rather than left open.
  assert.is((await p.request('digest.test', '/', { headers: basic('bob', 's3cret') })).status, 503);
});

over.both('basic auth with CORS: the 401 carries the CORS headers', async (p) => {
  const r = await p.request('basic-cors.test', '/', { headers: { Origin: 'https://app.example' } });
  assert.is(r.status, 401);
  assert.is(r.headers['access-control-allow-origin'], '*');
  assert.ok(r.headers['access-control-allow-methods']);
});

over.both('external auth: auth-method, auth-response-headers overwrite the request headers, auth-signin with auth-signin-redirect-param', async (p) => {
  authCalls.length = 0;
  const out = await p.request('extauth.test', '/?a=b&c=d');
  assert.is(out.status, 302);
  assert.is(out.headers.location, `http://extauth.test/auth/start?orig=${p.scheme}://extauth.test%2F%3Fa%3Db%26c%3Dd`);
  assert.is(authCalls[0]?.method, 'POST');
  const ok = await p.request('extauth.test', '/', { headers: { 'X-Allow': 'yes', Foo: 'from-client' } });
  assert.is(ok.status, 200);
  assert.is(headers(ok)['x-auth-user'], 'alice');
  assert.is(headers(ok).foo, 'from-auth');
});

over.both('auth-cache-key and auth-cache-duration: a cached answer is not asked again, and never opens another host', async (p) => {
  authCalls.length = 0;
  const ask = { 'X-Allow': 'yes', 'X-Run': p.tag };
  for (let i = 0; i < 3; i++) assert.is((await p.request('extauth-cache.test', `/${i}`, { headers: ask })).status, 200);
  assert.is(authCalls.filter((c) => c.url.includes('cached')).length, 1);
  assert.is((await p.request('extauth-cache-other.test', '/', { headers: ask })).status, 200);
  assert.is(authCalls.filter((c) => c.url.includes('other')).length, 1, 'the same key on another host is asked of its own service');
});

over.both('whitelist-source-range (the older name of allowlist-source-range) refuses other clients with 403', async (p) => {
  assert.is((await p.request('whitelist.test', '/')).status, 403);
});

over.both('allowlist- and denylist-source-range: the first matching network decides (the denylist first), as allow/deny in the location', async (p) => {
  const status = async (host: string, localAddress?: string, more: Record<string, string> = {}) => (await p.request(host, '/', { localAddress, headers: more })).status;
  assert.is(await status('allow-local.test'), 200);
  assert.is(await status('allow-local.test', '127.0.8.1'), 403, 'outside the allowlist');
  // A client's own X-Forwarded-For is not believed by default (use-forwarded-headers is off).
  assert.is(await status('allow-local.test', '127.0.8.1', { 'X-Forwarded-For': '10.1.2.3' }), 403, 'a forged X-Forwarded-For');
  assert.is(await status('allow-bits.test'), 200, 'host bits of a network are ignored');
  assert.is(await status('allow-bits.test', '127.0.8.1'), 403);
  assert.is(await status('deny-first.test'), 403, 'on both lists: denied');
  assert.is(await status('deny-first.test', '127.0.8.1'), 200);
  assert.is(await status('deny-only.test'), 200, 'a denylist alone lets the others in');
  assert.is(await status('deny-only.test', '127.0.8.1'), 403);
  assert.is(await status('allow-v6.test'), 403, 'an IPv4 client and an IPv6-only allowlist: deny all');
  // The location's rewrite phase (the backend, the SSL redirect) comes before its access phase.
  assert.is(await status('allow-empty.test'), 503, 'no endpoint: 503 before the lists are read');
  const redirected = await ctl.request('allow-force.test', '/');
  assert.is(redirected.status, 308, 'force-ssl-redirect (plain HTTP) before the lists are read');
  const refused = await p.request('allow-force.test', '/', { https: true });
  assert.is(refused.status, 403);
  assert.match(refused.body, /403 Forbidden/);
});

// ---- rate limits

const burst = (p: ProtocolClient, host: string, n: number, path = '/') => Promise.all(Array.from({ length: n }, () => p.request(host, path)));

over.both('limit-rps, limit-rpm and limit-burst-multiplier: requests above rate + burst get 503; limit-allowlist (limit-whitelist) is exempt', async (p) => {
  for (const host of ['rps.test', 'rpm.test']) {
    const codes = (await burst(p, host, 6)).map((r) => r.status);
    assert.ok(codes.filter((c) => c === 503).length >= 3, `${host}: ${codes}`);
    assert.ok(codes.every((c) => c === 200 || c === 503), `${host}: ${codes}`);
  }
  for (const host of ['rl-allow.test', 'rl-white.test']) assert.equal((await burst(p, host, 6)).map((r) => r.status), [200, 200, 200, 200, 200, 200], host);
});

over.both('limit-connections: concurrent requests above the limit get 503', async (p) => {
  const codes = (await burst(p, 'conn.test', 4, '/__delay/300')).map((r) => r.status).sort();
  assert.is(codes.filter((c) => c === 200).length, 1, String(codes));
  assert.is(codes.filter((c) => c === 503).length, 3, String(codes));
});

over.both('limit-rate and limit-rate-after: the response is slowed after the first KBs', async (p) => {
  const timed = async (bytes: number) => {
    const t0 = Date.now();
    const r = await p.request('rate.test', `/__bytes/${bytes}`);
    assert.is(r.body.length, bytes);
    return Date.now() - t0;
  };
  // NGINX sends limit-rate-after at once, then about 1 KB/s (how much of the first second's worth
  // goes at once differs between HTTP/1.1 and HTTP/2, whose frames count too).
  assert.ok(await timed(4_000) >= 700);
  assert.ok(await timed(2_000) < 500);
});

// ---- proxy

over.both('proxy-body-size: a larger request body is refused with 413', async (p) => {
  assert.is((await p.request('body.test', '/', { method: 'POST', body: 'x'.repeat(2000) })).status, 413);
  assert.is((await p.request('body.test', '/', { method: 'POST', body: 'x'.repeat(500) })).status, 200);
});

over.both('proxy-read-timeout: a slower backend gets 504', async (p) => {
  for (const host of ['timeout.test', 'timeouts.test']) {
    assert.is((await p.request(host, '/__delay/1500')).status, 504, host);
    assert.is((await p.request(host, '/__delay/50')).status, 200, host);
  }
});

over.noRequest('the router serves the hosts whose timeouts, tries, source ranges, CORS and custom headers it applies; more tries than the ConfigMap allows keep a server block', 'the nginx.conf written', () => {
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  const dynamic = DYNAMIC_ROUTES_ARGS.length === 0;
  for (const host of ['whitelist.test', 'allow-local.test', 'deny-first.test', 'deny-only.test', 'allow-force.test', 'timeout.test', 'timeouts.test', 'nextup-tries.test',
    'cors.test', 'cors-list.test', 'custom.test', 'custom-cors.test', 'cors-allow.test', 'cors-empty.test', 'custom-redirect.test', 'custom-approot.test']) {
    assert.is(conf.includes(`server_name ${host};`), !dynamic, host);
  }
  assert.ok(conf.includes('server_name tries-more.test;'), 'tries-more.test');
  // The oauth Ingress has a host-less path: the default server keeps its locations and asks the
  // router in its server rewrite phase (the other placement: dynamic-routes, dynamic-uri, local-*).
  assert.is(conf.includes('return router.find()'), dynamic, 'the server-level hook');
});

over.both('proxy-http-version 1.0 reaches the backend', async (p) => {
  assert.is((await p.request('httpver.test', '/')).json?.proto, '1.0');
  assert.is((await p.request('plain.test', '/')).json?.proto, '1.1');
});

over.both('proxy-next-upstream: by default a dead endpoint is retried on the next; off or one try answers 502', async (p) => {
  // One after another: a retry under round robin takes the next endpoint, which concurrent
  // requests may have moved back to the dead one (as with ingress-nginx's round robin).
  const codes = async (host: string) => {
    const out: number[] = [];
    for (let i = 0; i < 8; i++) out.push((await p.request(host, '/')).status);
    return out;
  };
  const c0 = await codes('nextup.test');
  assert.ok(c0.every((c) => c === 200), String(c0));
  for (const host of ['nextup-off.test', 'nextup-tries.test']) {
    const c = await codes(host);
    assert.ok(c.includes(502) && c.includes(200), `${host}: ${c}`);
  }
});

over.both('proxy directives without a visible effect are in the location NGINX runs', async (p) => {
  const conf = (await ctl.control('/nginx.conf')).body;
  const block = conf.slice(conf.indexOf('## start server directives.test'), conf.indexOf('## end server directives.test'));
  for (const d of [
    'proxy_connect_timeout 7s;', 'proxy_send_timeout 8s;', 'proxy_buffer_size 16k;', 'proxy_buffers 8 16k;', 'proxy_buffering on;',
    'proxy_request_buffering off;', 'client_body_buffer_size 64k;', 'proxy_next_upstream_timeout 9s;',
  ]) assert.ok(block.includes(d), d);
  assert.is((await p.request('directives.test', '/')).backend, 'main');
});

over.both('upstream-vhost and connection-proxy-header set the Host and Connection headers sent upstream', async (p) => {
  assert.is(headers(await p.request('vhost.test', '/')).host, 'internal.example');
  assert.is(headers(await p.request('connection.test', '/')).connection, 'keep-alive');
});

over.both('backend-protocol: HTTPS, AUTO_HTTP and FCGI reach backends speaking them', async (p) => {
  const https = await p.request('https-backend.test', '/x');
  assert.is(https.backend, 'https');
  assert.is(https.json?.path, '/x');
  // AUTO_HTTP asks the backend in the client's scheme: the plain one answers plain HTTP, the TLS one HTTPS.
  const [auto, autoTls] = [await p.request('auto-backend.test', '/'), await p.request('auto-backend-tls.test', '/')];
  assert.equal([auto.backend, autoTls.backend], p.scheme === 'http' ? ['main', undefined] : [undefined, 'auto-tls']);
  assert.is((p.scheme === 'http' ? autoTls : auto).status, 502);
  const fcgi = await p.request('fcgi.test', '/script.php?q=1');
  assert.is(fcgi.status, 200);
  assert.is(fcgi.json?.name, 'fcgi');
  assert.is((fcgi.json?.params as Record<string, string>).REQUEST_URI, '/script.php?q=1');
});

over.http2Only('backend-protocol GRPC and GRPCS: a gRPC client\'s unary and streaming calls, metadata and error status reach a gRPC server', 'gRPC is HTTP/2', async () => {
  for (const host of ['grpc.test', 'grpcs.test']) {
    const name = host.replace('.test', '');
    const client = grpcClient(ctl.ports.https, host);
    try {
      const said = await client.say({ text: 'hi' }, { 'x-meta': 'v' });
      assert.equal([said.name, said.path, said.request], [name, '/echo.Echo/Say', { text: 'hi' }], host);
      assert.is((said.metadata as Record<string, string>)['x-meta'], 'v', host);
      // Server streaming: every message arrives, in order; client streaming: the request body streams through.
      assert.equal((await client.count(5)).map((m) => m.i), [0, 1, 2, 3, 4], host);
      assert.equal(await client.sum(Array.from({ length: 100 }, (_, i) => i)), { name, total: 4950, messages: 100 }, host);
      // A status in the trailers (a trailers-only answer) reaches the client as the server sent it.
      const err = await client.fail('nope').then(() => null, (e: { code: number; details: string }) => e);
      assert.equal([err?.code, err?.details], [5, 'nope'], host);
    } finally {
      client.close();
    }
  }
});

over.both('custom-http-errors: those codes are answered by the default-backend (or the default server) with the error headers; others pass', async (p) => {
  const r = await p.request('errors.test', '/__status/404', { headers: { Accept: 'application/json' } });
  // `error_page 404 = @…`: the answer's status is the default backend's (ingress-nginx's image answers X-Code).
  assert.is(r.status, 200);
  assert.is(r.backend, 'fallback');
  const h = headers(r);
  assert.is(h['x-code'], '404');
  assert.is(h['x-format'], 'application/json');
  assert.is(h['x-original-uri'], '/__status/404');
  assert.is(h['x-service-name'], 'main');
  assert.is(r.json?.path, '/', 'the default backend is asked for /');
  const passed = await p.request('errors.test', '/__status/500');
  assert.is(passed.status, 500);
  assert.is(passed.backend, 'main');
  const builtin = await p.request('errors-builtin.test', '/__status/418');
  assert.is(builtin.status, 404, 'the built-in default backend answers 404');
  assert.is(builtin.backend, undefined);
});

over.both('enable-access-log false keeps the location out of the access log', async (p) => {
  const mark = `mark-${p.tag}-${Date.now()}`;
  await p.request('nolog.test', `/${mark}-off`);
  await p.request('plain.test', `/${mark}-on`);
  const log = () => readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8');
  await p.until('plain.test', '/', () => log().includes(`${mark}-on`), { what: 'the logged request' });
  assert.not.ok(log().includes(`${mark}-off`));
});

over.both('service-upstream: the Service cluster IP and port are the only endpoint', async (p) => {
  for (let i = 0; i < 3; i++) assert.is((await p.request('svc-upstream.test', '/')).backend, 'cluster-ip');
});

// ---- load balancing, affinity, canary

over.both('load-balance ewma prefers the faster endpoint', async (p) => {
  const seen: string[] = [];
  for (let i = 0; i < 20; i++) seen.push((await p.request('ewma.test', '/')).backend!);
  const fast = seen.filter((b) => b === 'pool-c').length;
  assert.ok(fast >= 14, `fast endpoint served ${fast} of 20: ${seen.join(',')}`);
});

over.both('upstream-hash-by: one key, one endpoint; with subsets one key stays within a subset of the given size', async (p) => {
  const spread = async (host: string, path: string) => new Set(await Promise.all(Array.from({ length: 8 }, async () => (await p.request(host, path)).backend)));
  for (const path of ['/a', '/b', '/c']) assert.is((await spread('hash.test', path)).size, 1, path);
  const keys = await Promise.all(Array.from({ length: 12 }, (_, i) => p.request('hash.test', `/k${i}`)));
  assert.ok(new Set(keys.map((r) => r.backend)).size >= 2, 'keys are spread over endpoints');
  for (const path of ['/a', '/b']) assert.ok((await spread('hash-subset.test', path)).size <= 2, path);
});

over.both('affinity-mode persistent keeps the session; session-cookie-path, -domain, -samesite with conditional-samesite-none', async (p) => {
  const first = await p.request('persistent.test', '/');
  const cookie = String(first.headers['set-cookie']).split(';')[0]!;
  for (let i = 0; i < 5; i++) assert.is((await p.request('persistent.test', '/', { headers: { Cookie: cookie } })).backend, first.backend);
  const opts = String((await p.request('cookie-opts.test', '/')).headers['set-cookie']);
  // Secure whenever the request came over HTTPS, as ingress-nginx's sticky balancer sets it.
  const secure = p.scheme === 'https' ? ' Secure;' : '';
  assert.match(opts, new RegExp(`^sticky=[0-9a-f]{32}; Path=/custom; Domain=cookie-opts.test;${secure} HttpOnly; SameSite=None$`));
  const oldChrome = String((await p.request('cookie-opts.test', '/', { headers: { 'User-Agent': 'Mozilla/5.0 Chrome/60.0.3112.113 Safari/537.36' } })).headers['set-cookie']);
  assert.not.match(oldChrome, /SameSite/);
});

over.both('session-cookie-change-on-failure: a session pinned to a dead endpoint moves, with a new cookie', async (p) => {
  const deadHash = (await import('node:crypto')).createHash('md5').update(`127.0.2.44:${(await ctl.control('/configuration/backends')).body.match(/"address":"127.0.2.44","port":"(\d+)"/)![1]}`).digest('hex');
  const r = await p.request('change-on-failure.test', '/', { headers: { Cookie: `INGRESSCOOKIE=${deadHash}` } });
  assert.is(r.status, 200);
  assert.is(r.backend, 'pool-d');
  assert.match(String(r.headers['set-cookie']), /^INGRESSCOOKIE=[0-9a-f]{32}/);
  assert.not.match(String(r.headers['set-cookie']), new RegExp(deadHash));
});

over.both('canary-by-header-value and canary-by-header-pattern: a matching header value goes to the canary, others stay', async (p) => {
  const to = async (host: string, value: string) => (await p.request(host, '/', { headers: { 'X-Version': value } })).backend;
  assert.is(await to('canary-value.test', 'v2'), 'canary');
  assert.is(await to('canary-value.test', 'v3'), 'main');
  assert.is(await to('canary-value.test', 'always'), 'main', 'with a value, always is just another value');
  assert.is(await to('canary-pattern.test', 'v3'), 'canary');
  assert.is(await to('canary-pattern.test', 'v4'), 'main');
});

over.both('canary-weight equal to canary-weight-total sends everything to the canary', async (p) => {
  for (let i = 0; i < 5; i++) assert.is((await p.request('canary-weight.test', '/')).backend, 'canary');
});

over.both('affinity-canary-behavior: sticky keeps a canary session on the canary, legacy lets it go back', async (p) => {
  for (const [host, stays] of [['canary-sticky.test', true], ['canary-legacy.test', false]] as const) {
    const first = await p.request(host, '/', { headers: { 'X-Canary': 'always' } });
    assert.is(first.backend, 'canary', host);
    const cookie = String(first.headers['set-cookie'] ?? '').split(';')[0];
    const next = await Promise.all(Array.from({ length: 4 }, () => p.request(host, '/', { headers: cookie ? { Cookie: cookie } : {} })));
    assert.is(next.every((r) => r.backend === 'canary'), stays, `${host}: ${next.map((r) => r.backend)}`);
  }
});

test.run();
