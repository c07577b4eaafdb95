// Certificates served by ssl_certificate_by_lua (exact, wildcard, trailing dot, default,
// fallback, rotation without reload), the SSL redirect and HSTS, against real NGINX.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { connect as tlsConnect } from 'node:tls';
import { http2Request } from '../support/protocols.js';
import { startLuaNginx, backend, generateCertificate, answersFromEveryWorker, type LuaNginx, type GeneratedCertificate, type RequestOptions } from '../support/lua-nginx.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';

const test = suite('lua certificates, ssl redirect, hsts');
let nginx: LuaNginx;
let forwarded: LuaNginx; // use_forwarded_headers, https_port 443, redirect code 301
let echo: EchoServer;
const certs: Record<string, GeneratedCertificate> = {};

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.50' });
  nginx = await startLuaNginx({
    workers: 2,
    locations: [
      { path: '/', backend: 'web' },
      { path: '/keep/', backend: 'web', rewrite: { preserve_trailing_slash: true } },
      { path: '/force/', backend: 'web', rewrite: { force_ssl_redirect: true } },
      { path: '/noredirect/', backend: 'web', rewrite: { ssl_redirect: false } },
    ],
  });
  forwarded = await startLuaNginx({
    workers: 1, luaIngressConfig: { use_forwarded_headers: true, https_port: 443, http_redirect_code: 301 },
    // The seconds left before a stored certificate expires (0: never), for the test of forgetting.
    extraLocations: 'location = /certificate-ttl { content_by_lua_block { ngx.say(ngx.shared.certificate_data:ttl(ngx.var.arg_uid) or "absent") } }',
  });
  const dir = join(nginx.prefix, 'test-certs');
  certs.a = await generateCertificate(dir, 'a.test');
  certs.a2 = await generateCertificate(dir, 'a-rotated.test', ['a.test']);
  certs.wild = await generateCertificate(dir, '*.wild.test');
  certs.def = await generateCertificate(dir, 'default.test');
  for (const n of [nginx, forwarded]) {
    await n.configure('/configuration/backends', [backend('web', [echo.endpoint]), backend('default-echo-80', [echo.endpoint])]);
    await n.configure('/configuration/servers', {
      certificates: { 'uid-a': certs.a.pem, 'uid-wild': certs.wild.pem },
      servers: { 'a.test': 'uid-a', '*.wild.test': 'uid-wild' },
    });
  }
  await waitFor(async () => (await nginx.request({ path: '/noredirect/', host: 'a.test' })).status === 200, { what: 'backends synced' });
  await waitFor(async () => (await forwarded.request({ path: '/', host: 'plain.test' })).status === 200, { what: 'backends synced' });
});
test.after(async () => {
  await nginx?.stop();
  await forwarded?.stop();
  await echo?.close();
});

test('SNI picks the exact host certificate, case-insensitively and without a trailing dot', async () => {
  assert.is(await nginx.servedCertificateCN('a.test'), 'a.test');
  assert.is(await nginx.servedCertificateCN('A.Test'), 'a.test');
  assert.is(await nginx.servedCertificateCN('a.test.'), 'a.test');
});

test('a wildcard certificate serves one label below its domain only', async () => {
  assert.is(await nginx.servedCertificateCN('x.wild.test'), '*.wild.test');
  assert.is(await nginx.servedCertificateCN('wild.test'), 'fallback.invalid');
  assert.is(await nginx.servedCertificateCN('a.b.wild.test'), 'fallback.invalid');
});

test('a wildcard certificate over openssl s_client and HTTP/2: one label below its domain verifies, two labels or the domain itself get the fallback', async () => {
  const ca = readFileSync(certs.wild!.certPath, 'utf8');
  for (const [name, expected] of [['x.wild.test', '*.wild.test'], ['a.b.wild.test', 'fallback.invalid'], ['wild.test', 'fallback.invalid']] as const) {
    const stdout = execFileSync('openssl', ['s_client', '-connect', `127.0.0.1:${nginx.httpsPort}`, '-servername', name, '-alpn', 'h2'], { input: '', stdio: ['pipe', 'pipe', 'ignore'], timeout: 10_000 }).toString();
    assert.match(String(stdout), /ALPN protocol: h2/, `${name}: h2 negotiated`);
    assert.is(/subject=.*CN ?= ?([^,\n]+)/.exec(String(stdout))?.[1]?.trim(), expected, `${name}: openssl sees ${expected}`);
    // A client that trusts only the wildcard certificate verifies it for one label only (ALPN h2).
    const verdict = await new Promise<string>((resolveVerdict, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: nginx.httpsPort, servername: name, ca, ALPNProtocols: ['h2'], rejectUnauthorized: false }, () => {
        resolveVerdict(`${socket.alpnProtocol} ${socket.authorized ? 'verified' : String(socket.authorizationError)}`);
        socket.end();
      });
      socket.on('error', reject);
    });
    if (expected === '*.wild.test') {
      assert.is(verdict, 'h2 verified', name);
      assert.is((await http2Request(nginx.httpsPort, name, '/noredirect/', { ca })).status, 200, `${name} over HTTP/2, verified`);
    } else assert.match(verdict, /^h2 (?!verified)\S+/, `${name}: not verified (${verdict})`);
  }
});

test('without a match the fallback certificate stays; the default certificate ("_") replaces it once posted', async () => {
  assert.is(await nginx.servedCertificateCN('unknown.test'), 'fallback.invalid');
  assert.is(await nginx.servedCertificateCN(null), 'fallback.invalid');
  await nginx.configure('/configuration/servers', { certificates: { 'uid-def': certs.def.pem }, servers: { _: 'uid-def' } });
  assert.is(await nginx.servedCertificateCN('unknown.test'), 'default.test');
  assert.is(await nginx.servedCertificateCN(null), 'default.test');
  assert.is(await nginx.servedCertificateCN('a.test'), 'a.test', 'a host certificate still wins');
  await nginx.configure('/configuration/servers', { servers: { _: '-1' } });
  assert.is(await nginx.servedCertificateCN('unknown.test'), 'fallback.invalid');
});

test('a rotated certificate is served at once by every worker, without a reload', async () => {
  const pids = await nginx.workerPids();
  for (let i = 0; i < 6; i++) assert.is(await nginx.servedCertificateCN('a.test'), 'a.test');
  await nginx.configure('/configuration/servers', { certificates: { 'uid-a2': certs.a2.pem }, servers: { 'a.test': 'uid-a2' } });
  for (let i = 0; i < 20; i++) assert.is(await nginx.servedCertificateCN('a.test'), 'a-rotated.test');
  assert.equal(await nginx.workerPids(), pids);
  // Same uid, new PEM: the per-worker parse cache is invalidated too.
  await nginx.configure('/configuration/servers', { certificates: { 'uid-a2': certs.a.pem } });
  for (let i = 0; i < 20; i++) assert.is(await nginx.servedCertificateCN('a.test'), 'a.test');
  await nginx.configure('/configuration/servers', { servers: { 'a.test': 'uid-a' } });
});

test('ssl-redirect sends hosts with a certificate to https with 308, the https port, no trailing slash', async () => {
  const r = await nginx.request({ path: '/some/path/?q=1', host: 'a.test' });
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://a.test:${nginx.httpsPort}/some/path/?q=1`);
  const slash = await nginx.request({ path: '/some/path/', host: 'a.test' });
  assert.is(slash.headers.location, `https://a.test:${nginx.httpsPort}/some/path`);
  const wild = await nginx.request({ path: '/x', host: 'x.wild.test' });
  assert.is(wild.status, 308);
  assert.is(wild.headers.location, `https://x.wild.test:${nginx.httpsPort}/x`);
});

test('preserve-trailing-slash keeps it; hosts without a certificate are not redirected; force-ssl-redirect always is', async () => {
  const keep = await nginx.request({ path: '/keep/', host: 'a.test' });
  assert.is(keep.headers.location, `https://a.test:${nginx.httpsPort}/keep/`);
  assert.is((await nginx.request({ path: '/', host: 'plain.test' })).status, 200);
  assert.is((await nginx.request({ path: '/noredirect/', host: 'a.test' })).status, 200);
  const forced = await nginx.request({ path: '/force/', host: 'plain.test' });
  assert.is(forced.status, 308);
  assert.is(forced.headers.location, `https://plain.test:${nginx.httpsPort}/force`);
});

test('https requests are proxied, not redirected; HSTS only for hosts with a certificate', async () => {
  const r = await nginx.request({ path: '/', host: 'a.test', https: true });
  assert.is(r.status, 200);
  assert.is(r.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
  const plain = await nginx.request({ path: '/', host: 'plain.test', https: true });
  assert.is(plain.status, 200);
  assert.is(plain.headers['strict-transport-security'], undefined);
  assert.is((await nginx.request({ path: '/noredirect/', host: 'a.test' })).headers['strict-transport-security'], undefined, 'never over http');
});

test('a certificate posted for a host turns on its redirect and HSTS for the next request in every worker, and off again when removed', async () => {
  const host = 'late.test';
  const statuses = async (opts: RequestOptions) => (await answersFromEveryWorker(nginx, opts)).map((r) => r.status);
  const hsts = async () => (await answersFromEveryWorker(nginx, { path: '/', host, https: true })).map((r) => r.headers['strict-transport-security'] ?? 'none');
  assert.equal([...new Set(await statuses({ path: '/x', host }))], [200], 'no certificate yet');
  // No waiting after the POST: the first request each worker serves after it takes the change up
  // (lua/freshness.lua), so every answer below is the new state.
  await nginx.configure('/configuration/servers', { certificates: { 'uid-a': certs.a.pem }, servers: { [host]: 'uid-a' } });
  assert.equal([...new Set(await statuses({ path: '/x', host }))], [308], 'every worker redirects');
  assert.equal([...new Set(await hsts())], ['max-age=31536000; includeSubDomains'], 'HSTS from every worker');

  await nginx.configure('/configuration/servers', { servers: { [host]: '-1' } });
  assert.equal([...new Set(await statuses({ path: '/x', host }))], [200], 'no worker redirects');
  assert.equal([...new Set(await hsts())], ['none'], 'no HSTS from any worker');
});

test('use-forwarded-headers: X-Forwarded-Proto https is not redirected; redirect code and port 443 from the config', async () => {
  const r = await forwarded.request({ path: '/a/', host: 'a.test' });
  assert.is(r.status, 301);
  assert.is(r.headers.location, 'https://a.test/a');
  const viaProxy = await forwarded.request({ path: '/a/', host: 'a.test', headers: { 'x-forwarded-proto': 'https' } });
  assert.is(viaProxy.status, 200);
  // HSTS needs the connection's own TLS: ingress-nginx's header() reads $scheme.
  assert.is(viaProxy.headers['strict-transport-security'], undefined);
});

test('a complete map forgets the hosts it does not name; certificates no host names expire after a grace period, unless named again', async () => {
  const ttl = async (uid: string) => (await forwarded.request({ path: `/certificate-ttl?uid=${uid}`, host: 'ttl.test' })).body.trim();
  await forwarded.configure('/configuration/servers', {
    certificates: { 'c-a': certs.a.pem, 'c-wild': certs.wild.pem }, servers: { 'a.test': 'c-a', 'x.gone.test': 'c-wild' }, complete: true,
  });
  assert.is(await forwarded.servedCertificateCN('x.gone.test'), '*.wild.test');
  assert.equal([await ttl('c-a'), await ttl('c-wild')], ['0', '0']);
  // Before, hosts removed from the cluster kept their certificate, and every rotation (a new PEM
  // hash) kept the old one: the dictionary filled until certificate POSTs were refused.
  await forwarded.configure('/configuration/servers', { certificates: { 'c-rotated': certs.a2.pem }, servers: { 'a.test': 'c-rotated' }, complete: true });
  assert.is(await forwarded.servedCertificateCN('x.gone.test'), 'fallback.invalid', 'a host the complete map leaves out is forgotten');
  assert.is(await forwarded.servedCertificateCN('a.test'), 'a-rotated.test');
  for (const uid of ['c-a', 'c-wild', 'uid-a', 'uid-wild']) {
    const left = Number(await ttl(uid));
    assert.ok(left > 0 && left <= 10, `${uid} expires within the grace period (ttl ${left})`);
  }
  assert.is(await ttl('c-rotated'), '0');
  // Named again by uid alone within its grace period: kept for good; the one it replaced expires.
  await forwarded.configure('/configuration/servers', { servers: { 'a.test': 'c-a' } });
  assert.is(await forwarded.servedCertificateCN('a.test'), 'a.test');
  assert.is(await ttl('c-a'), '0');
  assert.ok(Number(await ttl('c-rotated')) > 0);
  // Without `complete` a POST only adds and changes, as before.
  await forwarded.configure('/configuration/servers', { certificates: { 'c-wild': certs.wild.pem }, servers: { 'y.wild.test': 'c-wild' } });
  assert.is(await forwarded.servedCertificateCN('a.test'), 'a.test');
  assert.is(await forwarded.servedCertificateCN('y.wild.test'), '*.wild.test');
});

test.run();
