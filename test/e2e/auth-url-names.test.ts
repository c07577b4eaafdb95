// A tenant's auth-url whose host is a name, without auth-keepalive, through real NGINX over
// HTTP/1.1 and HTTP/2: in the rewrite phase of auth_request's subrequest Lua resolves the name
// (with the nameservers NGINX's `resolver` asks, here a fake DNS) and the address policy judges
// every answer before the subrequest is dialled; an allowed address gets auth_request's answers
// (response headers, 401 with WWW-Authenticate, auth-signin, the auth cache, auth-method), a
// refused one is never dialled.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { createReloadActor } from '../../src/actors/reload.js';
import { createNginxHarness, harnessTarget, type NginxHarness } from '../support/nginx-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { parse } from '../support/annotation-parse.js';
import { backend, configuration, location, server } from '../support/config-builder.js';
import { startFakeDns, type FakeDns } from '../support/fake-dns.js';
import { waitFor } from '../support/wait.js';

interface Recorder { server: Server; port: number; seen: IncomingMessage[] }

async function listen(answer: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<Recorder> {
  const seen: IncomingMessage[] = [];
  const srv = createServer((req, res) => { seen.push(req); answer(req, res); });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { server: srv, port: (srv.address() as AddressInfo).port, seen };
}

let h: NginxHarness;
const over = protocolMatrix(test, () => harnessTarget(h));
let dns: FakeDns;
let auth: Recorder;
let nodeLocal: Recorder;
let app: Recorder;

const externalAuth = (annotations: Record<string, string>) => {
  const parsed = parse(annotations);
  assert.is(parsed.value.denied, null, JSON.stringify(annotations));
  return parsed.value.externalAuth!;
};

test.before(async () => {
  // The auth service: 200 with X-User for `Bearer ok`, else 401 with a challenge; a cookie on each answer but cached ones.
  auth = await listen((req, res) => {
    const ok = req.headers.authorization === 'Bearer ok';
    res.writeHead(ok ? 200 : 401, {
      ...(req.url?.includes('cached') ? {} : { 'Set-Cookie': 'session=s; Path=/' }),
      ...(ok ? { 'X-User': 'alice' } : { 'WWW-Authenticate': 'Bearer realm="x"' }),
    }).end(ok ? 'allowed' : 'denied');
  });
  // A service on the node the address policy refuses (its port stands for the node's loopback services).
  nodeLocal = await listen((_req, res) => { res.writeHead(200, { 'X-User': 'root' }).end('node-local'); });
  app = await listen((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, headers: req.headers })); });
  dns = await startFakeDns(new Map([
    ['auth.sso.test', ['127.0.0.1']],
    ['metadata.evil.test', ['169.254.169.254']],
    ['node.evil.test', ['127.0.0.1']],
    // Every answer is judged: the allowed one is taken, whatever order the resolver gives.
    ['mixed.sso.test', ['169.254.169.254', '127.0.0.1']],
    // Hosts of the default server whose auth-url is `http://$host:<port>/…` (the oauth2-proxy pattern).
    ['sso-self.test', ['127.0.0.1']],
  ]));
  h = await createNginxHarness({
    runtime: {
      resolvers: [`127.0.0.1:${dns.port}`],
      upstreamAddresses: { allow: ['loopback'], ownPorts: [nodeLocal.port] },
    },
  });
  const authAt = (host: string, port: number, path: string) => `http://${host}:${port}${path}`;
  const hosts = configuration([
    server('names.test', {
      locations: [
        location({ path: '/ok', pathType: 'Prefix', externalAuth: externalAuth({
          'auth-url': authAt('auth.sso.test', auth.port, '/check'), 'auth-response-headers': 'X-User',
          'auth-signin': 'https://login.example/start', 'auth-method': 'POST',
        }) }),
        location({ path: '/cached', pathType: 'Prefix', externalAuth: externalAuth({
          'auth-url': authAt('auth.sso.test', auth.port, '/cached'), 'auth-cache-key': '$http_authorization$http_x_run', 'auth-cache-duration': '200 401 5m',
        }) }),
        location({ path: '/mixed', pathType: 'Prefix', externalAuth: externalAuth({ 'auth-url': authAt('mixed.sso.test', auth.port, '/mixed') }) }),
        location({ path: '/metadata', pathType: 'Prefix', externalAuth: externalAuth({ 'auth-url': authAt('metadata.evil.test', 80, '/latest/meta-data/'), 'auth-response-headers': 'X-User' }) }),
        location({ path: '/node', pathType: 'Prefix', externalAuth: externalAuth({ 'auth-url': authAt('node.evil.test', nodeLocal.port, '/admin'), 'auth-response-headers': 'X-User' }) }),
        location({ path: '/nxdomain', pathType: 'Prefix', externalAuth: externalAuth({ 'auth-url': authAt('gone.sso.test', auth.port, '/check') }) }),
        location({ path: '/', pathType: 'Prefix' }),
      ],
    }),
  ]);
  // A rule without a host, in the default server: the client's Host header decides what `$host` is.
  const self = location({ path: '/self', pathType: 'Prefix', externalAuth: externalAuth({ 'auth-url': `http://$host:${auth.port}/self`, 'auth-response-headers': 'X-User' }) });
  const cfg = { ...hosts, servers: hosts.servers.map((s) => (s.hostname === '_' ? { ...s, locations: [self, ...s.locations] } : s)) };
  const actor = createReloadActor({ renderer: h.renderer, nginx: h.nginx, runtime: h.runtime, logger: h.logger });
  const r = await firstValueFrom(actor(cfg));
  assert.ok(r.ok, JSON.stringify(r));
  assert.is(await h.postBackends([backend('default-web-80', [{ address: '127.0.0.1', port: String(app.port) }])]), 201);
  await waitFor(async () => (await h.http(h.runtime.httpPort, '/', { host: 'names.test' })).status === 200, { what: 'backends synced' });
});

test.after(async () => {
  await h?.close();
  dns?.close();
  for (const s of [auth, nodeLocal, app]) s?.server.closeAllConnections();
  await Promise.all([auth, nodeLocal, app].map((s) => s && new Promise((r) => s.server.close(r))));
});

const errorLog = () => readFileSync(h.runtime.errorLogPath, 'utf8');
const calls = (path: string) => auth.seen.filter((r) => r.url === path);

over.both('an auth-url name is resolved by Lua in auth_request\'s subrequest and dialled under the policy; answers as auth_request gives them', async (p) => {
  const conf = readFileSync(h.runtime.confPath, 'utf8');
  assert.ok(/auth_request "\/_external-auth /.test(conf), 'the tenant auth-url is auth_request\'s');
  assert.ok(/rewrite_by_lua_block \{\s*require\("external_auth"\)\.choose_peer\(/.test(conf), 'the auth location chooses its peer in Lua');
  assert.ok(/upstream auth_keepalive_[0-9a-f]{12} \{[^}]*balancer_by_lua_block \{[^}]*\}\s*\}/.test(conf), 'an upstream that keeps no connection');

  const ok = await p.request('names.test', '/ok/a', { headers: { authorization: 'Bearer ok' } });
  assert.is(ok.status, 200);
  assert.is(JSON.parse(ok.body).headers['x-user'], 'alice', 'auth-response-headers reach the backend');
  assert.is(ok.headers['set-cookie']?.[0], 'session=s; Path=/', 'the auth cookie reaches the client');
  const check = calls('/check').at(-1)!;
  assert.equal([check.method, check.headers.host, check.headers['x-original-uri'], check.headers.connection], ['POST', 'auth.sso.test', '/ok/a', 'close']);
  assert.ok(dns.queries.includes('auth.sso.test'), 'the fake DNS was asked');

  const refused = await p.request('names.test', '/ok/b');
  assert.equal([refused.status, refused.headers.location], [302, `https://login.example/start?rd=${p.scheme}://names.test${encodeURIComponent('/ok/b')}`]);

  // Every subrequest on a new connection, as auth_request made them.
  const sockets = new Set(calls('/check').map((r) => r.socket));
  assert.is(sockets.size, calls('/check').length);
});

over.both('auth-cache answers a repeated request without asking the service again', async (p) => {
  for (let i = 0; i < 3; i += 1) assert.is((await p.request('names.test', `/cached/${i}`, { headers: { authorization: 'Bearer ok', 'x-run': p.tag } })).status, 200);
  assert.is(calls('/cached').filter((r) => r.headers['x-run'] === p.tag).length, 1);
  const denied = await p.request('names.test', '/cached/x');
  assert.equal([denied.status, denied.headers['www-authenticate']], [401, 'Bearer realm="x"']);
});

over.both('a name resolving to a link-local or a refused node address is never dialled: 500, the backend is not reached, the log names it', async (p) => {
  const before = app.seen.length;
  for (const path of ['/metadata/x', '/node/x']) {
    const r = await p.request('names.test', path, { headers: { authorization: 'Bearer ok' } });
    assert.is(r.status, 500, path);
  }
  assert.is(nodeLocal.seen.length, 0, 'the node-local service was never asked');
  assert.is(app.seen.length, before, 'no request reached the backend');
  await waitFor(() => /metadata\.evil\.test resolves to 169\.254\.169\.254, which is a metadata address/.test(errorLog()), { what: 'the metadata refusal in the error log' });
  await waitFor(() => /node\.evil\.test resolves to 127\.0\.0\.1, which is one of the controller's own ports/.test(errorLog()), { what: 'the node refusal in the error log' });
  // A name that does not resolve is an error too, not an open door.
  assert.is((await p.request('names.test', '/nxdomain/x', { headers: { authorization: 'Bearer ok' } })).status, 500);
  // Of a name's answers, the allowed one is dialled.
  const mixed = calls('/mixed').length;
  assert.is((await p.request('names.test', '/mixed/x', { headers: { authorization: 'Bearer ok' } })).status, 200);
  assert.is(calls('/mixed').length, mixed + 1);
});

over.both("an auth-url of `http://$host:…` dials the request's host under the policy: a client's Host of the metadata address or a name leading there is never dialled", async (p) => {
  const self = (host: string) => p.request(host, '/self/x', { headers: { authorization: 'Bearer ok' } });
  const ok = await self('sso-self.test');
  assert.is(ok.status, 200);
  assert.is(JSON.parse(ok.body).headers['x-user'], 'alice');
  assert.is(calls('/self').at(-1)!.headers.host, 'sso-self.test', 'the auth service is asked with the Host the client sent');
  const before = calls('/self').length;
  for (const host of ['169.254.169.254', 'metadata.evil.test', '[::ffff:169.254.169.254]', '[fe80::1]']) {
    assert.is((await self(host)).status, 500, host);
  }
  assert.is(calls('/self').length, before, 'no refused Host reached any service');
  await waitFor(() => /169\.254\.169\.254 is a metadata address/.test(errorLog()), { what: 'the refused Host in the error log' });
});

test.run();
