// ingress-nginx test/e2e/settings/global_external_auth.go, ported: global-auth-url puts every
// location of every Ingress behind an external auth service, less the no-auth-locations and the
// Ingresses with enable-global-auth "false"; the global-auth-* keys shape the auth request (its
// method, X-Auth-Request-Redirect, a snippet's header), what a denial becomes (a redirect to
// global-auth-signin), which auth answer headers reach the upstream, how long an answer is
// cached, and whether the auth service's cookie reaches the client on an error. The auth service
// (httpbun's /status/<code> and /cookies/set/<key>/<value>) is a server of the test on
// 127.0.9.30; it records what it receives. The Its that share a ConfigMap state run together.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'global-external-auth.test';
const ANNOTATED = 'annotated.global-external-auth.test';
const COOKIES = 'global-external-auth-check-cookies.test';

interface AuthService { server: Server; url: (path: string) => string; seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> }

async function startAuthService(address: string): Promise<AuthService> {
  const seen: AuthService['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const cookie = /^\/cookies\/set\/([^/]+)\/([^/?]+)/.exec(req.url ?? '');
    if (cookie) return void res.writeHead(200, { 'Set-Cookie': `${cookie[1]}=${cookie[2]}` }).end('OK');
    const status = Number(/^\/status\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 404);
    res.writeHead(status, status === 200 ? { Foo: 'foo-from-auth', Bar: 'bar-from-auth' } : {}).end();
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, seen, url: (path) => `http://${address}:${port}${path}` };
}

let auth: AuthService;
let cacheAuth: AuthService;

const foo = (host: string) => fx.single(`${host}-foo`, host, {}, { path: '/foo' });
const bar = (host: string, a: Record<string, string> = {}) => fx.single(`${host}-bar`, host, a, { path: '/bar' });

test.before(async () => {
  [auth, cacheAuth] = await Promise.all([startAuthService('127.0.9.30'), startAuthService('127.0.9.31')]);
  fx = await startFixture('global-external-auth', { configmap: {} });
  fx.apply('ingress.json', [
    foo(HOST), bar(HOST),
    fx.single('cookies', COOKIES), fx.single('cookies-error', COOKIES, {}, { path: '/error' }),
  ]);
  for (const [host, path] of [[HOST, '/foo'], [HOST, '/bar'], [COOKIES, '/'], [COOKIES, '/error']] as const) {
    await fx.ctl.until(host, path, (r) => r.backend !== undefined);
  }
});
test.after(async () => {
  await fx.stop();
  for (const a of [auth, cacheAuth]) { a.server.closeAllConnections(); await new Promise((resolve) => a.server.close(resolve)); }
});

const DENY = () => ({ 'global-auth-url': auth.url('/status/401') });

its.both('settings/global_external_auth.go:91', async (p) => {
  await fx.configure(DENY());
  assert.is((await p.request(HOST, '/foo')).status, 401);
  assert.is((await p.request(HOST, '/bar')).status, 401);
});

its.both('settings/global_external_auth.go:130', async (p) => {
  await fx.configure(DENY());
  await fx.applyAndWait('annotated.json', [foo(ANNOTATED), bar(ANNOTATED, { 'enable-global-auth': 'false' })], ANNOTATED, '/bar');
  assert.is((await p.request(ANNOTATED, '/foo')).status, 401);
  const r = await p.request(ANNOTATED, '/bar');
  assert.is(r.status, 200);
  assert.ok(r.backend, 'the Ingress with enable-global-auth "false" is served without the auth request');
});

its.both('settings/global_external_auth.go:107', async (p) => {
  await fx.configure({ ...DENY(), 'no-auth-locations': '/bar' });
  assert.is((await p.request(HOST, '/foo')).status, 401);
  const r = await p.request(HOST, '/bar');
  assert.is(r.status, 200);
  assert.ok(r.backend);
});

// global-auth-method, -signin, -request-redirect and -snippet are independent keys: one state.
const SHAPED = () => ({
  ...DENY(),
  'global-auth-method': 'GET',
  'global-auth-signin': 'http://foo.com/global-error-page',
  'global-auth-request-redirect': 'Foo-Redirect',
  'global-auth-snippet': 'proxy_set_header My-Custom-Header 42;',
});

/** The auth request a client request to `path` of HOST made (the auth service's last one). */
async function authRequestOf(p: Parameters<Parameters<typeof its.both>[1]>[0], path: string, method = 'GET') {
  const before = auth.seen.length;
  const r = await p.request(HOST, path, { method, ...(method === 'POST' ? { body: 'x=1' } : {}) });
  assert.ok(auth.seen.length > before, 'the auth service was asked');
  return { reply: r, sent: auth.seen[auth.seen.length - 1]! };
}

its.both('settings/global_external_auth.go:199', async (p) => {
  await fx.configure(SHAPED());
  const { sent } = await authRequestOf(p, '/foo', 'POST');
  assert.is(sent.method, 'GET', 'a POST is checked with a GET');
});

its.both('settings/global_external_auth.go:211', async (p) => {
  await fx.configure(SHAPED());
  const { reply } = await authRequestOf(p, '/foo?a=b');
  assert.is(reply.status, 302, 'a denial becomes a redirect to global-auth-signin');
  assert.match(String(reply.headers.location), /^http:\/\/foo\.com\/global-error-page\?rd=/);
});

its.both('settings/global_external_auth.go:236', async (p) => {
  await fx.configure(SHAPED());
  const { sent } = await authRequestOf(p, '/foo');
  assert.is(sent.headers['x-auth-request-redirect'], 'Foo-Redirect');
});

its.both('settings/global_external_auth.go:248', async (p) => {
  await fx.configure(SHAPED());
  const { sent } = await authRequestOf(p, '/foo');
  assert.is(sent.headers['my-custom-header'], '42', 'the snippet\'s proxy_set_header is in the auth request');
});

its.both('settings/global_external_auth.go:223', async (p) => {
  await fx.configure({ 'global-auth-url': auth.url('/status/200'), 'global-auth-response-headers': 'Foo, Bar' });
  const r = await p.request(HOST, '/foo');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).foo, 'foo-from-auth');
  assert.is(upstreamHeaders(r).bar, 'bar-from-auth');
});

its.both('settings/global_external_auth.go:158', async (p) => {
  await fx.configure({ 'global-auth-url': cacheAuth.url('/status/200'), 'global-auth-cache-key': 'foo', 'global-auth-cache-duration': '200 201 401 30m' });
  const basic = { Authorization: `Basic ${Buffer.from('user:password').toString('base64')}` };
  assert.is((await p.request(HOST, '/bar', { headers: basic })).status, 200);
  // The auth service goes away (the first leg's close; the second finds it gone): the answer is cached.
  cacheAuth.server.closeAllConnections();
  await new Promise((resolve) => cacheAuth.server.close(resolve));
  const asked = cacheAuth.seen.length;
  const r = await p.request(HOST, '/bar', { headers: basic });
  assert.is(r.status, 200, 'the cached answer lets the request through');
  assert.is(cacheAuth.seen.length, asked);
});

const COOKIE_AUTH = () => ({ 'global-auth-url': auth.url('/cookies/set/alma/armud') });

its.both('settings/global_external_auth.go:322', async (p) => {
  await fx.configure(COOKIE_AUTH());
  const r = await p.request(COOKIES, '/?a=b&c=d');
  assert.is(r.status, 200);
  assert.match(String(r.headers['set-cookie']), 'alma=armud');
});

its.both('settings/global_external_auth.go:333', async (p) => {
  await fx.configure(COOKIE_AUTH());
  const r = await p.request(COOKIES, '/error/__status/503?a=b&c=d');
  assert.is(r.status, 503);
  assert.is(r.headers['set-cookie'], undefined, 'no cookie of the auth service on an error');
});

its.both('settings/global_external_auth.go:344', async (p) => {
  await fx.configure({ ...COOKIE_AUTH(), 'global-auth-always-set-cookie': 'true' });
  const r = await p.request(COOKIES, '/error/__status/503?a=b&c=d');
  assert.is(r.status, 503);
  assert.match(String(r.headers['set-cookie']), 'alma=armud');
});

test.run();
