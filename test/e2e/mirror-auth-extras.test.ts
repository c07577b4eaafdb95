// Request mirroring and the external-auth extras (keepalive, headers from a ConfigMap, the
// request redirect, always-set-cookie, auth-snippet, the ConfigMap's global auth) through one
// `ingress-rx local`, real NGINX, a real auth service and real mirrors, a host per scenario.
// docs/fidelity.md names these tests.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const NS = 'mx';
const P = 'nginx.ingress.kubernetes.io';
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string>) =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path: '/', pathType: 'Prefix', service: 'main' }] });
const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 12);

interface Seen { url: string; method: string; headers: IncomingMessage['headers']; body: string; socket: number }

/** A small HTTP server that records what it receives; `answer` decides (or holds) the answer. */
async function recorder(answer: (req: Seen, res: ServerResponse) => void, tls?: { cert: string; key: string }): Promise<{ server: Server; port: number; seen: Seen[]; connections: () => number }> {
  const seen: Seen[] = [];
  const ids = new WeakMap<Socket, number>();
  let connections = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => { body += d; });
    req.on('end', () => {
      const s: Seen = { url: req.url ?? '', method: req.method ?? '', headers: req.headers, body, socket: ids.get(req.socket) ?? -1 };
      seen.push(s);
      answer(s, res);
    });
  };
  const server: Server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  server.on(tls ? 'secureConnection' : 'connection', (sock: Socket) => { connections += 1; ids.set(sock, connections); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, seen, connections: () => connections };
}

let ctl: LocalController;
let echo: EchoServer;
let auth: Awaited<ReturnType<typeof recorder>>;
let mirror: Awaited<ReturnType<typeof recorder>>;
let slow: Awaited<ReturnType<typeof recorder>>;
let tlsMirror: Awaited<ReturnType<typeof recorder>>;
let loopBackend: Awaited<ReturnType<typeof recorder>>;
let forwarder: TcpServer;
const certDir = mkdtempSync(join(tmpdir(), 'irx-mirror-'));
const held: ServerResponse[] = [];
let cookieSerial = 0;

const SNIPPETS = { 'configuration-snippet': 'set $tenant_tag red;', 'auth-snippet': 'proxy_set_header X-Tag $tenant_tag;' };

const authAt = (path: string) => `http://127.0.0.1:${auth.port}${path}`;
const mainConfig = () => configMap('nginx-config', {
  'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical',
  // One worker: one pool of kept-alive auth connections to count.
  'worker-processes': '1',
  'global-auth-url': authAt('/global'), 'global-auth-method': 'POST',
  'global-auth-signin': 'http://login.example/start', 'global-auth-signin-redirect-param': 'orig',
  'global-auth-response-headers': 'X-Global-User', 'global-auth-request-redirect': 'https://global.example$request_uri',
  'global-auth-snippet': 'proxy_set_header X-Global-Snippet yes;',
  'global-auth-cache-key': '$http_x_allow$http_x_cache', 'global-auth-cache-duration': '200 30m',
  'global-auth-always-set-cookie': 'true',
});

test.before(async () => {
  echo = await startEchoServer({ name: 'main' });
  // The auth service: 200 when X-Allow is yes, else 401; a new cookie on every answer but those
  // meant to be cached (NGINX, like ingress-nginx, never caches an answer that sets a cookie). Its
  // answers have a body, except for the kept-alive host's: auth_request keeps a connection only
  // when the answer has none (nginx ticket 1579), as oauth2-proxy's 202 has none.
  auth = await recorder((req, res) => {
    cookieSerial += 1;
    const ok = req.headers['x-allow'] === 'yes';
    const body = req.url?.endsWith('?ka') ? '' : ok ? 'allowed' : 'denied';
    res.writeHead(ok ? 200 : 401, {
      ...(String(req.headers['x-cache']).startsWith('c-') ? {} : { 'Set-Cookie': `session=s${cookieSerial}; Path=/` }), 'Content-Type': 'text/plain',
      'Content-Length': Buffer.byteLength(body),
      ...(ok ? { 'X-Auth-User': 'alice', 'X-Global-User': 'gail' } : { 'WWW-Authenticate': 'Bearer realm="x"' }),
    });
    res.end(body);
  });
  mirror = await recorder((_req, res) => { res.writeHead(200); res.end('mirror answer'); });
  // A mirror that takes the copy and never answers while the test runs.
  slow = await recorder((_req, res) => { held.push(res); });
  const dead = await freePort();
  loopBackend = await recorder((_req, res) => { res.writeHead(200); res.end('loop backend'); });
  // A TCP forwarder to NGINX's HTTP port: a mirror target that leads back to this controller, as
  // an Ingress's own public name would (the port itself is refused by the address policy).
  forwarder = createTcpServer((sock) => {
    const up = connect(ctl.ports.http, '127.0.0.1');
    sock.pipe(up).pipe(sock);
    for (const s of [sock, up]) s.on('error', () => { sock.destroy(); up.destroy(); });
  });
  await new Promise<void>((r) => forwarder.listen(0, '127.0.0.1', r));
  const forwarderPort = (forwarder.address() as AddressInfo).port;
  const cert = await generateCertificate(certDir, 'mirror.internal');
  tlsMirror = await recorder((_req, res) => { res.writeHead(204); res.end(); }, { cert: readFileSync(cert.certPath, 'utf8'), key: readFileSync(cert.keyPath, 'utf8') });
  
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'configmap.json': [
        mainConfig(),
        configMap('auth-headers', { 'X-Team': 'blue', 'X-Client-Addr': '$remote_addr' }),
      ],
      'services.json': [
        service(NS, 'main'), ...slices(NS, 'main', [echo]),
        service(NS, 'loop'), ...slices(NS, 'loop', [{ address: '127.0.0.1', port: loopBackend.port }]),
      ],
      'auth.json': [
        on('keepalive', 'keepalive.test', {
          'auth-url': authAt('/check?ka'), 'auth-keepalive': '4', 'auth-keepalive-requests': '100', 'auth-keepalive-timeout': '60',
          'auth-response-headers': 'X-Auth-User', 'auth-proxy-set-headers': 'auth-headers', 'auth-request-redirect': '/landing', ...SNIPPETS,
        }),
        on('share', 'share.test', { 'auth-url': authAt('/check?share'), 'auth-keepalive': '4', 'auth-keepalive-share-vars': 'true', 'auth-signin': 'http://login.example/ka', ...SNIPPETS }),
        on('no-keepalive', 'no-keepalive.test', { 'auth-url': authAt('/check?nka'), 'auth-proxy-set-headers': 'auth-headers', 'auth-request-redirect': '/landing', ...SNIPPETS }),
        on('cookie-always', 'cookie-always.test', { 'auth-url': authAt('/check?always'), 'auth-always-set-cookie': 'true' }),
        on('cookie-default', 'cookie-default.test', { 'auth-url': authAt('/check?default') }),
        // Another tenant squatting on the auth location's name (as spelled without the space).
        ingress('squat', 'squat-auth', { host: 'cookie-default.test', paths: [{ path: `/_external-auth-${sha1('cookie-default.test\u0000/\u0000Prefix')}`, pathType: 'Exact', service: 'main' }] }),
        // Hostile: another namespace's ConfigMap, and one whose value would end the directive.
        configMap('evil-headers', { 'X-A': 'b; proxy_pass http://169.254.169.254' }),
        on('foreign-headers', 'foreign-headers.test', { 'auth-url': authAt('/check?foreign'), 'auth-proxy-set-headers': 'kube-system/auth-headers' }),
        on('evil-headers', 'evil-headers.test', { 'auth-url': authAt('/check?evil'), 'auth-proxy-set-headers': 'evil-headers' }),
      ],
      'global.json': [
        // no-auth-locations (default: the ACME challenge path) is a location of its own.
        ingress(NS, 'global', { host: 'global.test', paths: [{ path: '/', service: 'main' }, { path: '/.well-known/acme-challenge', pathType: 'ImplementationSpecific', service: 'main' }] }),
        on('global-off', 'global-off.test', { 'enable-global-auth': 'false' }),
        on('own-auth', 'own-auth.test', { 'auth-url': authAt('/check?own') }),
      ],
      'mirror.json': [
        on('mirror', 'mirror.test', { 'mirror-target': `http://127.0.0.1:${mirror.port}/copy$request_uri`, 'mirror-host': 'shadow.test', 'enable-global-auth': 'false' }),
        // Another tenant's Ingress on the same host squatting on the mirror location's name (as
        // it would be spelled without the space no path may hold): both are served.
        ingress('squat', 'squat', { host: 'mirror.test', paths: [{ path: `/_mirror-${sha1(`mirror\u0000${NS}\u0000mirror`)}`, pathType: 'Exact', service: 'main' }] }),
        // mirror-host with variables, as ingress-nginx accepts: the request's Host, or a template of a request header.
        on('mirror-vhost', 'mirror-vhost.test', { 'mirror-target': `http://127.0.0.1:${mirror.port}/vhost$request_uri`, 'mirror-host': '$host', 'enable-global-auth': 'false' }),
        on('mirror-tpl', 'mirror-tpl.test', { 'mirror-target': `http://127.0.0.1:${mirror.port}/tpl$request_uri`, 'mirror-host': 'shadow-${http_x_tenant}.test', 'enable-global-auth': 'false' }),
        on('mirror-nobody', 'mirror-nobody.test', { 'mirror-target': `http://127.0.0.1:${mirror.port}`, 'mirror-request-body': 'off', 'enable-global-auth': 'false' }),
        on('mirror-slow', 'mirror-slow.test', { 'mirror-target': `http://127.0.0.1:${slow.port}/slow`, 'enable-global-auth': 'false' }),
        on('mirror-tls', 'mirror-tls.test', { 'mirror-target': `https://127.0.0.1:${tlsMirror.port}/tls$request_uri`, 'enable-global-auth': 'false' }),
        ingress(NS, 'mirror-loop', {
          host: 'mirror-loop.test', paths: [{ path: '/', service: 'loop' }],
          annotations: a({ 'mirror-target': `http://127.0.0.1:${forwarderPort}/again$request_uri`, 'mirror-host': 'mirror-loop.test', 'enable-global-auth': 'false' }),
        }),
        on('mirror-dead', 'mirror-dead.test', { 'mirror-target': `http://127.0.0.1:${dead}/dead`, 'enable-global-auth': 'false' }),
        // The copy goes to whatever the client's Host names: the address policy judges it per request.
        ingress(NS, 'mirror-any-host', { annotations: a({ 'mirror-target': `http://$host:${mirror.port}/any$request_uri`, 'enable-global-auth': 'false' }), paths: [{ path: '/', service: 'main' }] }),
      ],
    },
  });
  await ctl.until('mirror.test', '/', (r) => r.status === 200, { what: 'the mirror host served' });
  await ctl.until('keepalive.test', '/', (r) => r.status === 401, { what: 'the keepalive auth host served' });
});

test.after(async () => {
  for (const res of held) res.destroy();
  await ctl?.stop();
  await echo?.close();
  for (const s of [auth, mirror, slow, tlsMirror, loopBackend]) s?.server.closeAllConnections();
  await Promise.all([auth, mirror, slow, tlsMirror, loopBackend].map((s) => s && new Promise((r) => s.server.close(r))));
  await new Promise((r) => forwarder?.close(r));
  rmSync(certDir, { recursive: true, force: true });
});

const authCalls = (query: string) => auth.seen.filter((s) => s.url.endsWith(`?${query}`));
const over = protocolMatrix(test, () => ctl);

over.both('mirror-target, mirror-host and mirror-request-body: the mirror gets a copy (with or without the body); the client gets the primary\'s answer', async (p) => {
  const r = await p.request('mirror.test', `/orders-${p.tag}?id=7`, { method: 'POST', body: 'order-body', headers: { 'Content-Type': 'text/plain', 'X-Trace': 't1' } });
  assert.is(r.status, 200);
  assert.is(r.backend, 'main');
  assert.is(r.json?.path, `/orders-${p.tag}?id=7`);
  const copy = await waitFor(() => mirror.seen.find((s) => s.url === `/copy/orders-${p.tag}?id=7`), { what: 'the copy at the mirror' });
  assert.not.match(ctl.output(), /duplicate location|"quarantined":[1-9]/);
  assert.equal([copy.method, copy.headers.host, copy.body, copy.headers['x-trace']], ['POST', 'shadow.test', 'order-body', 't1']);

  await p.request('mirror-nobody.test', `/nobody-${p.tag}`, { method: 'POST', body: 'secret-body', headers: { 'Content-Type': 'text/plain' } });
  const bare = await waitFor(() => mirror.seen.find((s) => s.url === `/nobody-${p.tag}`), { what: 'the body-less copy' });
  assert.equal([bare.method, bare.body, bare.headers.host], ['POST', '', `127.0.0.1`]);

  // mirror-host variables are the request's: its Host, a header of it; a value no Host line can hold drops the copy.
  await ctl.request('mirror-vhost.test', '/v');
  const vhost = await waitFor(() => mirror.seen.find((s) => s.url === '/vhost/v'), { what: 'the copy with the request\'s Host' });
  assert.is(vhost.headers.host, 'mirror-vhost.test');
  await ctl.request('mirror-tpl.test', '/t', { headers: { 'X-Tenant': 'blue' } });
  const tpl = await waitFor(() => mirror.seen.find((s) => s.url === '/tpl/t'), { what: 'the copy with the templated Host' });
  assert.is(tpl.headers.host, 'shadow-blue.test');
  assert.is((await ctl.request('mirror-tpl.test', '/spaced', { headers: { 'X-Tenant': 'a b' } })).status, 200, 'the client is served');
  await waitFor(() => /mirror-host evaluates to no valid Host header; copy dropped/.test(readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8')), { what: 'the dropped copy logged' });
  assert.not.ok(mirror.seen.some((s) => s.url === '/tpl/spaced'));

  // An https target: the copy goes over TLS (the mirror's certificate is not verified, as proxy_ssl_verify off).
  await p.request('mirror-tls.test', `/secure-${p.tag}`, { method: 'PUT', body: 'tls-body' });
  const overTls = await waitFor(() => tlsMirror.seen.find((s) => s.url === `/tls/secure-${p.tag}`), { what: 'the copy over TLS' });
  assert.equal([overTls.method, overTls.body], ['PUT', 'tls-body']);
});

over.both('a slow or dead mirror neither slows nor fails the client', async (p) => {
  const before = slow.seen.length;
  const r = await p.request('mirror-slow.test', '/x', { method: 'POST', body: 'b' });
  assert.is(r.status, 200);
  assert.is(r.backend, 'main');
  // The mirror has the copy and has not answered: the client's answer did not wait for it.
  await waitFor(() => slow.seen.length === before + 1, { what: 'the copy at the slow mirror' });
  assert.is(held.length, before + 1);
  assert.ok(held.every((res) => !res.headersSent));
  for (let i = 0; i < 3; i += 1) {
    const d = await p.request('mirror-dead.test', `/d${i}`);
    assert.is(d.status, 200);
    assert.is(d.backend, 'main');
  }
});

over.both('a hung mirror holds at most 32 copies in flight; further copies are dropped and other Ingresses\' copies still go', async (p) => {
  // Copies are already held by the hung mirror (the test above); 40 more requests.
  for (let batch = 0; batch < 5; batch += 1) {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => p.request('mirror-slow.test', `/flood${batch * 8 + i}`)));
    assert.ok(replies.every((r) => r.status === 200 && r.backend === 'main'));
  }
  await waitFor(() => slow.seen.length === 32, { what: '32 copies held by the hung mirror' });
  await waitFor(() => /mirror \/_mirror [0-9a-f]+: 32 copies of this location and \d+ in all in flight in this worker; copy dropped/.test(readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8')), { what: 'the drop in the error log' });
  await p.request('mirror.test', `/after-flood-${p.tag}`);
  await waitFor(() => mirror.seen.some((s) => s.url === `/copy/after-flood-${p.tag}`), { what: "another Ingress's copy" });
  assert.is(slow.seen.length, 32);
});

over.both('a mirror-target leading back to the controller makes one copy, not an endless chain of copies of copies', async (p) => {
  for (const path of [`/first-${p.tag}`, `/second-${p.tag}`]) {
    const r = await p.request('mirror-loop.test', path);
    assert.is(r.status, 200);
    await waitFor(() => loopBackend.seen.some((s) => s.url === `/again${path}`), { what: `the copy of ${path}` });
  }
  // The copy of /first arrived before /second was sent: a copy of that copy would have had time to follow.
  assert.equal(loopBackend.seen.map((s) => s.url).filter((u) => u.startsWith('/again/again')), []);
  assert.is(loopBackend.seen.find((s) => s.url === `/again/first-${p.tag}`)?.headers['x-ingress-rx-mirrored'], '1');
});

over.both('mirror-target with $host: the address policy judges the client\'s Host per request (no copy to link-local addresses)', async (p) => {
  const ok = await p.request('127.0.0.1', `/fine-${p.tag}`, { headers: { 'X-Case': 'loopback' } });
  assert.is(ok.status, 200);
  await waitFor(() => mirror.seen.find((s) => s.url === `/any/fine-${p.tag}`), { what: 'the copy at the Host the client named' });
  const metadata = await p.request('169.254.169.254', '/latest/meta-data/');
  assert.is(metadata.status, 200);
  assert.is(metadata.backend, 'main');
  await waitFor(() => /copy not sent: 169\.254\.169\.254 is a metadata address/.test(readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8')), { what: 'the refusal in the error log' });
  assert.not.ok(mirror.seen.some((s) => s.url.includes('meta-data')));
});

over.both('mirror-target naming the controller\'s own port is refused with a warning; the Ingress is still served', async (p) => {
  ctl.write('mirror-own.json', [on('mirror-own', 'mirror-own.test', { 'mirror-target': `http://127.0.0.1:${ctl.ports.http}/loop`, 'enable-global-auth': 'false' })]);
  const r = await p.until('mirror-own.test', '/', (x) => x.status === 200, { what: 'the Ingress served' });
  assert.is(r.backend, 'main');
  await waitFor(() => /mirror-own[^\n]*mirror-target[^\n]*own listeners/.test(ctl.output()), { what: 'the warning' });
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.not.ok(conf.includes(`${ctl.ports.http}/loop`));
});

over.both('auth-keepalive: the auth service sees one connection for many requests (and one per request without it)', async (p) => {
  const earlier = authCalls('ka').length;
  for (let i = 0; i < 5; i += 1) {
    const r = await p.request('keepalive.test', `/k${i}`, { headers: { 'X-Allow': 'yes' } });
    assert.is(r.status, 200);
    assert.is((r.json?.headers as Record<string, string>)['x-auth-user'], 'alice');
  }
  const denied = await p.request('keepalive.test', '/k-denied');
  assert.is(denied.status, 401);
  assert.is(denied.headers['www-authenticate'], 'Bearer realm="x"');
  const ka = authCalls('ka').slice(earlier);
  assert.is(ka.length, 6);
  assert.is(new Set(ka.map((s) => s.socket)).size, 1, `sockets ${ka.map((s) => s.socket)}`);
  const unpooled = authCalls('nka').length;
  for (let i = 0; i < 3; i += 1) await p.request('no-keepalive.test', `/n${i}`, { headers: { 'X-Allow': 'yes' } });
  assert.is(new Set(authCalls('nka').slice(unpooled).map((s) => s.socket)).size, 3);
});

over.both('auth-proxy-set-headers, auth-request-redirect, auth-snippet and auth-keepalive-share-vars reach the auth service', async (p) => {
  for (const q of ['ka', 'nka']) {
    const h = authCalls(q)[0]!.headers;
    assert.equal([h['x-team'], h['x-client-addr'], h['x-auth-request-redirect']], ['blue', '127.0.0.1', '/landing'], q);
  }
  // The subrequest is auth_request's: it shares the request's variables (auth-keepalive-share-vars
  // "true" or not), so the auth service and the backend see one request id.
  const seen = await p.request('keepalive.test', `/ids-${p.tag}`, { headers: { 'X-Allow': 'yes' } });
  const call = authCalls('ka').at(-1)!;
  assert.equal([call.headers['x-original-uri'], call.headers['x-tag']], [`/ids-${p.tag}`, 'red']);
  assert.is(call.headers['x-request-id'], (seen.json?.headers as Record<string, string>)['x-request-id']);
  await p.request('share.test', '/s', { headers: { 'X-Allow': 'yes' } });
  assert.is(authCalls('share').at(-1)!.headers['x-tag'], 'red');
  // A request with a body passes the kept-alive auth check with its body intact.
  const post = await p.request('share.test', '/post', { method: 'POST', body: 'x'.repeat(20_000), headers: { 'X-Allow': 'yes', 'Content-Type': 'text/plain' } });
  assert.equal([post.status, post.json?.method, (post.json?.headers as Record<string, string>)['content-length']], [200, 'POST', '20000']);
  assert.is(authCalls('share').at(-1)!.body, '');
  // A refusal over the kept-alive path still sends the client to auth-signin.
  const refused = await p.request('share.test', '/s2');
  assert.equal([refused.status, refused.headers.location], [302, `http://login.example/ka?rd=${p.scheme}://share.test${encodeURIComponent('/s2')}`]);
});

over.both('auth-proxy-set-headers naming another namespace or holding an injection denies the location (503); the auth service is never asked', async (p) => {
  for (const host of ['foreign-headers.test', 'evil-headers.test']) {
    const r = await p.request(host, '/', { headers: { 'X-Allow': 'yes' } });
    assert.is(r.status, 503, host);
  }
  assert.equal([authCalls('foreign').length, authCalls('evil').length], [0, 0]);
  await ctl.logged(/another namespace and allow-cross-namespace-resources is false/);
});

over.both('a changed auth-proxy-set-headers ConfigMap reaches the auth service (the ConfigMap is watched for the Ingresses naming it)', async (p) => {
  const team = `green-${p.tag}`;
  ctl.write('configmap.json', [mainConfig(), configMap('auth-headers', { 'X-Team': team, 'X-Client-Addr': '$remote_addr' })]);
  await p.until('no-keepalive.test', '/changed', () => authCalls('nka').at(-1)?.headers['x-team'] === team, { headers: { 'X-Allow': 'yes' }, what: 'the new header value' });
});

over.both('auth-always-set-cookie: the auth cookie reaches the client on an upstream error too', async (p) => {
  const always = await p.request('cookie-always.test', '/__status/500', { headers: { 'X-Allow': 'yes' } });
  assert.is(always.status, 500);
  assert.match(String(always.headers['set-cookie']), /session=s\d+/);
  const plain = await p.request('cookie-default.test', '/__status/500', { headers: { 'X-Allow': 'yes' } });
  assert.is(plain.status, 500);
  assert.is(plain.headers['set-cookie'], undefined);
  const ok = await p.request('cookie-default.test', '/', { headers: { 'X-Allow': 'yes' } });
  assert.is(ok.status, 200);
  assert.match(String(ok.headers['set-cookie']), /session=s\d+/);
});

over.both('global-auth-*: every location without auth-url is protected, except enable-global-auth "false" and no-auth-locations', async (p) => {
  const before = authCalls('global').length;
  const refused = await p.request('global.test', '/page?x=1');
  assert.is(refused.status, 302);
  assert.is(refused.headers.location, `http://login.example/start?orig=${p.scheme}://global.test${encodeURIComponent('/page?x=1')}`);
  const call = auth.seen.filter((s) => s.url === '/global').at(-1)!;
  assert.equal([call.method, call.headers['x-auth-request-redirect'], call.headers['x-global-snippet']], ['POST', 'https://global.example/page?x=1', 'yes']);
  const allowed = await p.request('global.test', '/page', { headers: { 'X-Allow': 'yes' } });
  assert.is(allowed.status, 200);
  assert.is((allowed.json?.headers as Record<string, string>)['x-global-user'], 'gail');
  // global-auth-always-set-cookie: the cookie on an upstream error too.
  const error = await p.request('global.test', '/__status/502', { headers: { 'X-Allow': 'yes', 'X-Cache': 'err' } });
  assert.is(error.status, 502);
  assert.match(String(error.headers['set-cookie']), /session=s\d+/);
  const calls = auth.seen.filter((s) => s.url === '/global').length;
  assert.ok(calls > before);

  const off = await p.request('global-off.test', '/');
  assert.is(off.status, 200, 'enable-global-auth false');
  const acme = await p.request('global.test', '/.well-known/acme-challenge/token');
  assert.is(acme.status, 200, 'no-auth-locations');
  assert.is(acme.backend, 'main');
  const ownBefore = authCalls('own').length;
  const own = await p.request('own-auth.test', '/', { headers: { 'X-Allow': 'yes' } });
  assert.is(own.status, 200);
  assert.is(authCalls('own').length, ownBefore + 1);
  assert.is(auth.seen.filter((s) => s.url === '/global').length, calls, 'the global auth was asked for a location it does not protect');
});

over.both('global-auth-cache-key and global-auth-cache-duration: a cached answer is not asked again', async (p) => {
  const count = () => auth.seen.filter((s) => s.url === '/global' && s.headers['x-cache'] === `c-${p.tag}`).length;
  for (let i = 0; i < 3; i += 1) {
    const r = await p.request('global.test', `/cached${i}`, { headers: { 'X-Allow': 'yes', 'X-Cache': `c-${p.tag}` } });
    assert.is(r.status, 200);
  }
  assert.is(count(), 1);
});

test.run();
