// ingress-nginx test/e2e/annotations/auth.go, ported (basic auth and auth-url): each It a host of
// its own on one controller, the objects written at once in `before`. The httpbun Service and the
// e2e test's small NGINX that sets a cookie are a loopback stand-in (../httpbun.ts). Where the e2e
// test reads nginx.conf (auth-snippet, auth-proxy-set-headers, the auth cache), the port asks the
// auth service what it received, and how often. Password hashes are apr1 (the e2e test's bcrypt
// at cost 14 costs about a second of CPU per request; the hash scheme is not what is checked).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { configMap, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { startHttpBun, type HttpBun } from '../httpbun.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let bun: HttpBun;
const its = ported(test, () => fx.ctl);

const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
const secret = (name: string, data: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: fx.ns }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });
const realm = (name: string) => ({ 'auth-type': 'basic', 'auth-secret': name, 'auth-realm': 'test auth' });
/** A host per It (and per protocol where the It changes objects). */
const h = (it: string) => `${it}.auth.test`;
const scheme = (p: ProtocolClient) => (p.protocol === 'HTTP/2' ? 'https' : 'http'); // HTTP/2 clients speak TLS here
const bunUrl = (path: string) => `http://${bun.authority}${path}`;
const external = () => ({ 'auth-url': bunUrl('/basic-auth/user/password'), 'auth-signin': 'http://$host/auth/start' });
const cookieAuth = () => ({ 'auth-url': bunUrl('/cookies/set/alma/armud'), 'auth-signin': 'http://$host/auth/start' });

test.before(async () => { try {
  // As AllowSnippetConfiguration: auth-snippet needs it.
  fx = await startFixture('auth', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  bun = await startHttpBun('127.0.9.31');
  const hash = execFileSync('openssl', ['passwd', '-apr1', 'bar']).toString().trim();
  const on = (it: string, a: Record<string, string>, o: { path?: string; svc?: string } = {}) => fx.single(it, h(it), a, o);
  const cookies = (it: string, a: Record<string, string>) => [
    fx.single(it, h(it), a, { svc: 'cookie-nginx' }),
    fx.single(`${it}-error`, h(it), a, { svc: 'cookie-nginx', path: '/error' }),
  ];
  fx.apply('ingresses.json', [
    secret('test', { auth: `foo:${hash}\n` }),
    secret('test-map', { foo: hash }),
    secret('test-invalid', { auth: 'foo:' }),
    configMap(fx.ns, 'auth-headers', { 'My-Custom-Header': '42' }),
    service(fx.ns, 'cookie-nginx'), ...slices(fx.ns, 'cookie-nginx', [bun]),
    on('none', {}),
    on('invalid-secret', { 'auth-type': 'basic', 'auth-secret': 'something', 'auth-realm': 'test auth' }),
    on('basic', realm('test')),
    on('basic-cors', { ...realm('test'), 'enable-cors': 'true' }),
    on('basic-map', { ...realm('test-map'), 'auth-secret-type': 'auth-map' }),
    on('basic-invalid', realm('test-invalid')),
    on('snippet', { 'auth-url': bunUrl('/basic-auth/user/password?snippet'), 'auth-snippet': '\n        proxy_set_header My-Custom-Header 42;' }),
    on('snippet-alone', { 'auth-snippet': '\n        proxy_set_header My-Custom-Header 42;' }),
    on('headers', { 'auth-url': bunUrl('/basic-auth/user/password?headers'), 'auth-proxy-set-headers': `${fx.ns}/auth-headers` }),
    on('cache', { 'auth-url': bunUrl('/basic-auth/user/password?cache'), 'auth-cache-key': 'foo', 'auth-cache-duration': '200 202 401 30m' }),
    ...cookies('cookie', cookieAuth()),
    ...cookies('cookie-always', { ...cookieAuth(), 'auth-always-set-cookie': 'true' }),
    on('external', external()),
    on('misconfigured', { ...external(), ...realm('something') }),
    on('param', { ...external(), 'auth-signin-redirect-param': 'orig' }),
    on('param-misconfigured', { ...external(), 'auth-signin-redirect-param': 'orig', ...realm('something') }),
    on('overwrite', { ...external(), 'auth-response-headers': 'Foo' }),
    on('invalid-url', { 'auth-url': 'https://invalid..auth.url' }, { path: '/denied-auth' }),
  ]);
  const ready: Array<[string, string, (r: { status: number }) => boolean]> = [
    ['none', '/', (r) => r.status === 200], ['invalid-secret', '/', (r) => r.status === 503], ['basic', '/', (r) => r.status === 401],
    ['basic-cors', '/', (r) => r.status === 401], ['basic-map', '/', (r) => r.status === 401], ['basic-invalid', '/', (r) => r.status === 401],
    ['snippet', '/', (r) => r.status === 401], ['snippet-alone', '/', (r) => r.status === 200], ['headers', '/', (r) => r.status === 401],
    ['cache', '/', (r) => r.status === 200], ['cookie', '/', (r) => r.status === 200], ['cookie-always', '/error', (r) => r.status === 503],
    ['external', '/', (r) => r.status === 302], ['misconfigured', '/', (r) => r.status === 503],
    ['param', '/', (r) => r.status === 302], ['param-misconfigured', '/', (r) => r.status === 503], ['overwrite', '/', (r) => r.status === 302],
    ['invalid-url', '/denied-auth', (r) => r.status === 503],
  ];
  // The cache host is asked with credentials: its key is a constant, so the first answer is everyone's for 30m.
  await Promise.all(ready.map(([it, path, check]) => fx.ctl.until(h(it), path, check, { what: `${h(it)}${path} applied`, ...(it === 'cache' ? { headers: basic('user', 'password') } : {}) })));
  } catch (e) { console.error(e); throw e; }
});
test.after(async () => { await fx?.stop(); await bun?.close(); });

its.both('annotations/auth.go:52', async (p) => {
  const r = await p.request(h('none'), '/');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).host, h('none'));
});

its.both('annotations/auth.go:71', async (p) => {
  const r = await p.request(h('invalid-secret'), '/');
  assert.is(r.status, 503);
  assert.match(r.body, '503 Service Temporarily Unavailable');
});

its.both('annotations/auth.go:95', async (p) => {
  const r = await p.request(h('basic'), '/');
  assert.is(r.status, 401);
  assert.match(r.body, '401 Authorization Required');
  assert.is(r.headers['www-authenticate'], 'Basic realm="test auth"');
});

its.both('annotations/auth.go:122', async (p) => {
  const r = await p.request(h('basic'), '/', { headers: basic('user', 'pass') });
  assert.is(r.status, 401);
  assert.match(r.body, '401 Authorization Required');
});

its.both('annotations/auth.go:150', async (p) => {
  const r = await p.request(h('basic-cors'), '/');
  assert.is(r.status, 401);
  assert.is(r.headers['access-control-allow-origin'], '*');
});

its.both('annotations/auth.go:178', async (p) => {
  const r = await p.request(h('basic'), '/', { headers: basic('foo', 'bar') });
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).authorization, undefined, 'the credentials stay with NGINX');
});

its.both('annotations/auth.go:205', async (p) => {
  assert.is((await p.request(h('basic-map'), '/', { headers: basic('foo', 'bar') })).status, 200);
  assert.is((await p.request(h('basic-map'), '/', { headers: basic('foo', 'baz') })).status, 401);
});

its.both('annotations/auth.go:233', async (p) => {
  // `foo:` has no hash: no password matches it. (ingress-rx warns about the line too.)
  assert.is((await p.request(h('basic-invalid'), '/', { headers: basic('foo', 'bar') })).status, 401);
});

/** The requests the auth service received at `path` (its query names the It). */
const asked = (query: string) => bun.requests.filter((r) => r.url === `/basic-auth/user/password?${query}`);

its.both('annotations/auth.go:272', async (p) => {
  const before = asked('snippet').length;
  assert.is((await p.request(h('snippet'), '/', { headers: basic('user', 'password') })).status, 200);
  const seen = asked('snippet').slice(before);
  assert.is(seen.length, 1);
  assert.is(seen[0]!.headers['my-custom-header'], '42', 'the auth-snippet is in the auth request');
});

its.both('annotations/auth.go:292', async (p) => {
  // Without auth-url there is no auth request: the snippet is used nowhere, the upstream gets no such header.
  const r = await p.request(h('snippet-alone'), '/');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r)['my-custom-header'], undefined);
});

its.both('annotations/auth.go:311', async (p) => {
  const before = asked('headers').length;
  assert.is((await p.request(h('headers'), '/', { headers: basic('user', 'password') })).status, 200);
  assert.is(asked('headers').slice(before)[0]?.headers['my-custom-header'], '42');
});

its.both('annotations/auth.go:332', async (p) => {
  // The answer is cached under the key for 30m: the auth service is not asked again, and since the
  // key is a constant, the cached 200 answers a client without credentials too.
  const before = asked('cache').length;
  assert.ok(before >= 1, 'asked once, in before');
  assert.is((await p.request(h('cache'), '/', { headers: basic('user', 'password') })).status, 200);
  assert.is((await p.request(h('cache'), '/')).status, 200);
  assert.is(asked('cache').length, before, 'no request reached the auth service');
});

its.both('annotations/auth.go:420', async (p) => {
  const r = await p.request(h('cookie'), '/?a=b&c=d');
  assert.is(r.status, 200);
  assert.match(String(r.headers['set-cookie']), 'alma=armud');
});

its.both('annotations/auth.go:431', async (p) => {
  const r = await p.request(h('cookie'), '/error?a=b&c=d');
  assert.is(r.status, 503);
  assert.is(r.headers['set-cookie'], undefined);
});

its.both('annotations/auth.go:442', async (p) => {
  const r = await p.request(h('cookie-always'), '/error?a=b&c=d');
  assert.is(r.status, 503);
  assert.match(String(r.headers['set-cookie']), 'alma=armud');
});

its.both('annotations/auth.go:481', async (p) => {
  assert.is((await p.request(h('external'), '/', { headers: basic('user', 'password') })).status, 200);
});

its.both('annotations/auth.go:490', async (p) => {
  const r = await p.request(h('external'), '/?a=b&c=d');
  assert.is(r.status, 302);
  assert.is(r.headers.location, `http://${h('external')}/auth/start?rd=${scheme(p)}://${h('external')}${encodeURIComponent('/?a=b&c=d')}`);
});

/** An Ingress whose basic auth names a missing Secret is denied (503) while a new Ingress is applied. */
async function newIngressBeside(p: ProtocolClient, misconfigured: string, name: string): Promise<void> {
  assert.is((await p.request(h(misconfigured), '/')).status, 503);
  const host = `${name}-${p.tag}.auth.test`;
  const r = await fx.applyAndWait(`${name}-${p.tag}.json`, [fx.single(`${name}-${p.tag}`, host)], host);
  assert.is(r.status, 200);
}

its.both('annotations/auth.go:501', (p) => newIngressBeside(p, 'misconfigured', 'different'));

its.both('annotations/auth.go:525', async (p) => {
  // The auth service answers no Foo: the client's Foo does not reach the upstream.
  const r = await p.request(h('overwrite'), '/', { headers: { ...basic('user', 'password'), Foo: 'bar' } });
  assert.is(r.status, 200);
  assert.not.ok(JSON.stringify(upstreamHeaders(r)).toLowerCase().includes('"foo":"bar"'));
});

its.both('annotations/auth.go:701', async (p) => {
  assert.is((await p.request(h('param'), '/', { headers: basic('user', 'password') })).status, 200);
});

its.both('annotations/auth.go:710', async (p) => {
  const r = await p.request(h('param'), '/?a=b&c=d');
  assert.is(r.status, 302);
  assert.is(r.headers.location, `http://${h('param')}/auth/start?orig=${scheme(p)}://${h('param')}${encodeURIComponent('/?a=b&c=d')}`);
});

its.both('annotations/auth.go:721', (p) => newIngressBeside(p, 'param-misconfigured', 'other'));

its.both('annotations/auth.go:887', async (p) => {
  assert.is((await p.request(h('invalid-url'), '/denied-auth')).status, 503);
});

its.noClient('annotations/auth.go:895', 'ingress-nginx writes the error into nginx.conf; ingress-rx warns naming the Ingress and the annotation', async () => {
  const warned = fx.ctl.output().split('\n').filter((l) => l.includes('invalid-url') && l.includes('auth-url'));
  assert.ok(warned.length > 0, fx.ctl.output().slice(-2000));
});

test.run();
