// More annotations observed over real HTTP through a reloaded NGINX: external auth (with
// response headers and sign-in redirect), custom-http-errors to a default backend, rate
// limits, HTTPS with the fallback certificate, and add-headers / proxy-set-headers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { createReloadActor } from '../../src/actors/reload.js';
import { createNginxHarness, harnessTarget, type NginxHarness } from '../support/nginx-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { backend, configuration, location, server } from '../support/config-builder.js';
import { waitFor } from '../support/wait.js';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const srv = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { server: srv, port: (srv.address() as AddressInfo).port };
}

let h: NginxHarness;
let auth: { server: Server; port: number };
let app: { server: Server; port: number };
let errors: { server: Server; port: number };
const over = protocolMatrix(test, () => harnessTarget(h));

test.before(async () => {
  h = await createNginxHarness();
  auth = await listen((req, res) => {
    if (req.headers.authorization === 'Bearer ok') res.writeHead(200, { 'x-user': 'alice' }).end();
    else res.writeHead(401).end();
  });
  app = await listen((req, res) => {
    if (req.url?.startsWith('/err/missing')) res.writeHead(404, { 'content-type': 'text/plain' }).end('app 404');
    else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, headers: req.headers }));
  });
  errors = await listen((req, res) => {
    res.writeHead(Number(req.headers['x-code'] ?? 500), { 'content-type': 'text/plain' }).end(`custom page for ${req.headers['x-code']} ${req.headers['x-original-uri']}`);
  });
  const ep = (port: number) => [{ address: '127.0.0.1', port: String(port) }];
  const cfg = configuration([
    server('x.example.com', {
      locations: [
        location({ path: '/private', pathType: 'Prefix', externalAuth: { url: `http://127.0.0.1:${auth.port}/check`, host: '', method: 'GET', signin: 'https://login.example.com/start', signinRedirectParam: 'rd', responseHeaders: ['X-User'], cacheKey: '', cacheDuration: [], requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {}, keepalive: null } }),
        location({ path: '/err', pathType: 'Prefix', customHttpErrors: [404], defaultBackend: 'default-errors-80' }),
        location({ path: '/limited', pathType: 'Prefix', rateLimit: { rps: 1, rpm: 0, connections: 0, burstMultiplier: 1, limitRate: 0, limitRateAfter: 0, allowlist: [] } }),
        location({ path: '/', pathType: 'Prefix' }),
      ],
    }),
  ], {}, { addHeaders: { 'X-Frame-Options': 'DENY' }, proxySetHeaders: { 'X-From-Proxy': 'yes $host' } });
  const actor = createReloadActor({ renderer: h.renderer, nginx: h.nginx, runtime: h.runtime, logger: h.logger });
  const r = await firstValueFrom(actor(cfg));
  assert.ok(r.ok, JSON.stringify(r));
  assert.is(await h.postBackends([
    backend('default-web-80', ep(app.port)),
    backend('default-errors-80', ep(errors.port)),
    backend('upstream-default-backend', ep(h.runtime.defaultServerPort)),
  ]), 201);
  await waitFor(async () => (await h.http(h.runtime.httpPort, '/', { host: 'x.example.com' })).status === 200, { what: 'backends synced' });
});

test.after(async () => {
  await h?.close();
  for (const s of [auth, app, errors]) s?.server.close();
});

over.both('external auth, custom errors, rate limits, HTTPS and global headers on the wire', async (p) => {
  const get = (path: string, headers: Record<string, string> = {}) => p.request('x.example.com', path, { headers });
  const plain = await get('/');
  assert.is(plain.headers['x-frame-options'], 'DENY', 'add-headers');
  assert.is(JSON.parse(plain.body).headers['x-from-proxy'], 'yes x.example.com', 'proxy-set-headers with a variable');

  const noAuth = await get('/private/a');
  assert.is(noAuth.status, 302, 'auth-signin redirects');
  assert.is(noAuth.headers.location, `https://login.example.com/start?rd=${p.scheme}://x.example.com%2Fprivate%2Fa`);
  const ok = await get('/private/a', { authorization: 'Bearer ok' });
  assert.is(ok.status, 200);
  assert.is(JSON.parse(ok.body).headers['x-user'], 'alice', 'auth-response-headers reach the backend');

  const custom = await get('/err/missing');
  assert.is(custom.status, 404);
  assert.is(custom.body, 'custom page for 404 /err/missing');
  assert.is((await get('/err/fine')).status, 200);

  // From a limit that has let the last request through (the other protocol's run came just before).
  await p.until('x.example.com', '/limited/x', (x) => x.status === 200, { what: 'the rate limit clear' });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await get('/limited/x')).status);
  assert.ok(statuses.includes(503), `rate limit: ${statuses}`);

  assert.is((await p.request('x.example.com', '/', { https: true })).status, 200);
  const subject = await new Promise<string>((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: h.runtime.httpsPort, servername: 'x.example.com', rejectUnauthorized: false }, () => {
      resolve(String(socket.getPeerCertificate().subject?.CN));
      socket.end();
    });
    socket.on('error', reject);
  });
  assert.is(subject, 'Kubernetes Ingress Controller Fake Certificate');
});

test.run();
