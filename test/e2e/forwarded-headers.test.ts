// What ingress-nginx's per-request Lua (lua_ingress.lua's rewrite() and header()) derives, from
// what, under which settings, as the upstream and the client see it: with use-forwarded-headers
// the Host and X-Forwarded-Host sent upstream are the first X-Forwarded-Host (never the list),
// X-Original-Forwarded-Host is forwarded-host-header's, the SSL redirect names the forwarded host,
// X-Forwarded-Proto decides the redirect but HSTS needs a TLS connection; with use-proxy-protocol
// the PROXY header's destination port is X-Forwarded-Port and 443 means https. Every request is
// checked on a dynamic host (the Lua router) and, in forwarded-headers.static.test.ts, on a host
// with a server block, with the same answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as tcpConnect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

const NS = 'fwd';
let forwarded: LocalController;
let proxied: LocalController;
let echo: EchoServer;
let cert: GeneratedCertificate;
const certDir = mkdtempSync(join(tmpdir(), 'irx-fwd-'));

const overForwarded = protocolMatrix(test, () => forwarded);
const overProxied = protocolMatrix(test, () => proxied);
const upstream = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;

function files(config: Record<string, string>) {
  return {
    'app.json': [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: NS }, data: config },
      service(NS, 'app'), ...slices(NS, 'app', [echo]),
      tlsSecret(NS, 'tls', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
      ingress(NS, 'app', { host: 'app.test', tls: [{ hosts: ['app.test'], secretName: 'tls' }], paths: [{ path: '/', service: 'app' }] }),
    ],
  };
}

/** One HTTP/1.1 request on a raw connection (with a PROXY header first); the response as text. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { out += d; });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('raw request timed out')));
  });
}

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.4.20', name: 'app' });
  cert = await generateCertificate(certDir, 'app.test');
  forwarded = await startLocal({ files: files({ 'use-forwarded-headers': 'true', 'forwarded-host-header': 'X-Original-Host' }), args: ['--configmap', `${NS}/cfg`] });
  proxied = await startLocal({ files: files({ 'use-proxy-protocol': 'true' }), args: ['--configmap', `${NS}/cfg`] });
  await forwarded.until('app.test', '/', (r) => r.status === 200, { what: 'app.test', https: true, ca: readFileSync(cert.certPath, 'utf8') });
});

test.after(async () => {
  await Promise.all([forwarded?.stop(), proxied?.stop()]);
  await echo?.close();
  rmSync(certDir, { recursive: true, force: true });
});

overForwarded.both('use-forwarded-headers: the first X-Forwarded-Host is the Host upstream; forwarded-host-header gives X-Original-Forwarded-Host', async (p) => {
  const r = await p.request('app.test', '/x', {
    https: true, ca: readFileSync(cert.certPath, 'utf8'),
    headers: { 'X-Forwarded-Host': 'public.example:8443, lb.internal', 'X-Original-Host': 'original.example', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Port': '8443' },
  });
  assert.is(r.status, 200);
  const h = upstream(r);
  assert.equal([h.host, h['x-forwarded-host'], h['x-original-forwarded-host'], h['x-forwarded-port'], h['x-forwarded-proto']],
    ['public.example:8443', 'public.example:8443', 'original.example', '8443', 'https']);
  const plain = upstream(await p.request('app.test', '/x', { https: true, ca: readFileSync(cert.certPath, 'utf8') }));
  assert.equal([plain.host, plain['x-forwarded-host']], ['app.test', 'app.test'], 'without the header, the request\'s own');
});

overForwarded.http1Only('use-forwarded-headers: the SSL redirect names the forwarded host; X-Forwarded-Proto https is not redirected, and gets no HSTS without TLS', 'the SSL redirect answers plain HTTP', async (p) => {
  const r = await p.request('app.test', '/path?q=1', { headers: { 'X-Forwarded-Host': 'public.example:8080, lb.internal' } });
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://public.example:${forwarded.ports.https}/path?q=1`);
  const behindTls = await p.request('app.test', '/', { headers: { 'X-Forwarded-Proto': 'https' } });
  assert.is(behindTls.status, 200, 'the client used https at the proxy');
  assert.is(behindTls.headers['strict-transport-security'], undefined, 'HSTS on a TLS connection only, as ingress-nginx ($scheme)');
  const overTls = await p.request('app.test', '/', { https: true, ca: readFileSync(cert.certPath, 'utf8') });
  assert.match(String(overTls.headers['strict-transport-security']), /^max-age=31536000; includeSubDomains$/);
});

overProxied.http1Only('use-proxy-protocol: the PROXY header\'s destination port is X-Forwarded-Port, 443 means https (no redirect)', 'a PROXY header before plain HTTP', async () => {
  const via = (port: number) => raw(proxied.ports.http, `PROXY TCP4 203.0.113.9 198.51.100.1 5555 ${port}\r\nGET /p HTTP/1.1\r\nHost: app.test\r\nConnection: close\r\n\r\n`);
  const tls443 = await via(443);
  assert.match(tls443, /^HTTP\/1\.1 200 /);
  const body = JSON.parse(tls443.slice(tls443.indexOf('\r\n\r\n') + 4)) as { headers: Record<string, string> };
  assert.equal([body.headers['x-forwarded-proto'], body.headers['x-forwarded-port'], body.headers['x-real-ip']], ['https', '443', '203.0.113.9']);
  const http80 = await via(80);
  assert.match(http80, /^HTTP\/1\.1 308 /, 'port 80 at the load balancer: plain HTTP, redirected');
  assert.match(http80, new RegExp(`\\r\\nLocation: https://app\\.test:${proxied.ports.https}/p\\r\\n`));
});

test.run();
