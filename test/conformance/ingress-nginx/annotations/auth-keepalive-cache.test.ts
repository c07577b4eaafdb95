// ingress-nginx test/e2e/annotations/auth.go, ported (auth-keepalive and the auth cache; the other
// Its of the file are in auth.test.ts): each It a host of its own on one controller, the objects
// written at once in `before`. The e2e test reads nginx.conf for the kept-alive upstream; the port
// asks the auth service on which connections its subrequests came (a kept-alive connection repeats
// its client port). Its auth answers have no body: NGINX closes an auth_request connection whose
// answer has one (docs/differences.md, "auth-keepalive"). The auth cache Its stop the auth
// service (the e2e test deletes its Deployment): one per It and protocol, so each starts fresh.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { startHttpBun, type HttpBun } from '../httpbun.js';
import { ported } from '../port.js';
import { untilRunning } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let bun: HttpBun;
/** The auth services of the cache Its, by `<It>-<tag>`: stopped by their It. */
const cacheBuns = new Map<string, HttpBun>();
const its = ported(test, () => fx.ctl);

const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
const h = (it: string) => `${it}.auth-keepalive.test`;
/** An auth service answering 200 without a body; its query names the It. */
const statusUrl = (it: string) => `http://${bun.authority}/status/200?${it}`;
const signin = { 'auth-signin': 'http://$host/auth/start' };
const cacheAnnotations = (b: HttpBun) => ({
  'auth-url': `http://${b.authority}/basic-auth/user/password`, ...signin,
  'auth-cache-key': 'fixed', 'auth-cache-duration': '200 201 401 30m',
});
const thisHost = (key: string) => `${key}-this.auth-cache.test`;
const thatHost = (key: string) => `${key}-that.auth-cache.test`;
const CACHE_ITS = ['780', '800', '828'];
const TAGS = ['h1', 'h2'] as const;

test.before(async () => { try {
  // One worker: one pool of kept-alive connections to the auth service, so reuse is certain.
  fx = await startFixture('auth-keepalive-cache', { configmap: { 'worker-processes': '1' } });
  bun = await startHttpBun('127.0.9.41');
  let next = 42;
  for (const it of CACHE_ITS) for (const tag of TAGS) cacheBuns.set(`${it}-${tag}`, await startHttpBun(`127.0.9.${next++}`));
  const on = (it: string, a: Record<string, string>) => fx.single(it, h(it), a);
  /** Two hosts, each with an Ingress for /foo and one for /bar, all with the cache annotations. */
  const cached = (key: string, b: HttpBun) => [thisHost(key), thatHost(key)].flatMap((host) => [
    fx.single(`foo-${host}`, host, cacheAnnotations(b), { path: '/foo' }),
    fx.single(`bar-${host}`, host, cacheAnnotations(b), { path: '/bar' }),
  ]);
  fx.apply('ingresses.json', [
    on('548', { 'auth-url': statusUrl('548') }),
    on('566', { 'auth-url': 'http://$host/path', 'auth-keepalive': '123' }),
    on('586', { 'auth-url': statusUrl('586'), 'auth-keepalive': '-1' }),
    on('605', { 'auth-url': `http://${bun.authority}/basic-auth/user/password?605`, ...signin, 'auth-keepalive': '123', 'auth-keepalive-requests': '456', 'auth-keepalive-timeout': '789' }),
    on('619', { 'auth-url': statusUrl('619'), 'auth-keepalive': '123', 'auth-keepalive-requests': '456', 'auth-keepalive-timeout': '789' }),
    on('660', { 'auth-url': statusUrl('660'), 'auth-keepalive': '10', 'auth-keepalive-share-vars': 'true' }),
    ...[...cacheBuns].flatMap(([key, b]) => cached(key, b)),
    ...cached('857', bun),
  ]);
  await Promise.all([
    ...['548', '586', '619', '660'].map((it) => fx.ctl.until(h(it), '/', (r) => r.status === 200, { what: `${h(it)} applied` })),
    fx.ctl.until(h('605'), '/', (r) => r.status === 302, { what: `${h('605')} applied` }),
  ]);
  // A probe of a cache host would fill the cache the It reads: wait for the running configuration instead.
  for (const key of [...cacheBuns.keys(), '857']) await untilRunning(fx.ctl, thatHost(key));
  } catch (e) { console.error(e); throw e; }
});
test.after(async () => { await fx?.stop(); await bun?.close(); await Promise.all([...cacheBuns.values()].map((b) => b.close().catch(() => undefined))); });

/** The client ports of the connections the auth service saw the subrequests of `it` on, after sending `n` requests. */
async function authConnections(p: ProtocolClient, it: string, n = 4): Promise<number[]> {
  const before = bun.requests.length;
  for (let i = 0; i < n; i++) assert.is((await p.request(h(it), '/')).status, 200);
  const seen = bun.requests.slice(before).filter((r) => r.url === `/status/200?${it}`);
  assert.is(seen.length, n, 'one auth subrequest per request');
  return seen.map((r) => r.peerPort);
}
const distinct = (ports: number[]) => new Set(ports).size;

its.both('annotations/auth.go:548', async (p) => {
  // No auth-keepalive: a new connection per subrequest.
  assert.is(distinct(await authConnections(p, '548')), 4);
});

its.noClient('annotations/auth.go:566', 'a variable host is resolved per request (a DNS name the test cannot serve here); the controller turns keepalive off with a warning and renders no pool', async () => {
  await fx.warned((w) => w.includes('566') && w.includes('auth-keepalive') && w.includes('variable in its host'), 'auth-keepalive turned off for 566');
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.ok(conf.includes('host_from_request = true'), 'the auth location dials the request\'s host');
  // 605's and 619's pools; none for 566.
  assert.is(conf.match(/keepalive 123;/g)?.length, 2);
});

its.both('annotations/auth.go:586', async (p) => {
  assert.is(distinct(await authConnections(p, '586')), 4);
  await fx.warned((w) => w.includes('586') && w.includes('auth-keepalive') && w.includes('negative'), 'the negative auth-keepalive of 586');
});

its.both('annotations/auth.go:605', async (p) => {
  // ingress-nginx turns keepalive off while use-http2 is on: its kept-alive subrequest (Lua's
  // ngx.location.capture) fails inside an HTTP/2 request. ingress-rx's auth_request serves both
  // (docs/differences.md, "External auth over HTTP/2"): the auth works over either protocol.
  assert.is((await p.request(h('605'), '/', { headers: basic('user', 'password') })).status, 200);
  assert.is((await p.request(h('605'), '/')).status, 302);
});

its.both('annotations/auth.go:619', async (p) => {
  // Kept alive: the one worker's subrequests all go over one connection.
  assert.is(distinct(await authConnections(p, '619')), 1);
  // keepalive_requests and keepalive_timeout limit a connection's life: no request can show 456 or
  // 789 s in a test's time, so they are read from the running configuration.
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.match(conf, /keepalive 123;\s+keepalive_requests 456;\s+keepalive_timeout 789s;/);
});

its.both('annotations/auth.go:660', async (p) => {
  // Shared variables: the auth service and the upstream see the same request id.
  const before = bun.requests.length;
  const r = await p.request(h('660'), '/');
  assert.is(r.status, 200);
  const auth = bun.requests.slice(before).find((q) => q.url === '/status/200?660');
  assert.ok(auth?.headers['x-request-id']);
  assert.is(upstreamHeaders(r)['x-request-id'], auth!.headers['x-request-id']);
});

const signedIn = (p: ProtocolClient, host: string, path: string) => p.request(host, path, { headers: basic('user', 'password') });
/** Signs in on `this` host's /foo, then stops the auth service (the e2e test deletes its Deployment). */
async function signInThenStop(p: ProtocolClient, it: string): Promise<string> {
  const key = `${it}-${p.tag}`;
  assert.is((await signedIn(p, thisHost(key), '/foo')).status, 200);
  await cacheBuns.get(key)!.close();
  assert.is((await signedIn(p, thisHost(key), '/foo')).status, 200, 'the cached answer signs in');
  return key;
}

its.both('annotations/auth.go:780', async (p) => {
  await signInThenStop(p, '780');
});

its.both('annotations/auth.go:800', async (p) => {
  const key = await signInThenStop(p, '800');
  assert.is((await signedIn(p, thisHost(key), '/bar')).status, 500, 'another location has no cached answer');
});

its.both('annotations/auth.go:828', async (p) => {
  const key = await signInThenStop(p, '828');
  assert.is((await signedIn(p, thatHost(key), '/foo')).status, 500, 'another server has no cached answer');
});

its.both('annotations/auth.go:857', async (p) => {
  // The host's root (no Ingress path) is protected by its Ingresses' auth, as ingress-nginx's default location.
  const host = thisHost('857');
  const r = await p.request(host, '/?a=b&c=d');
  assert.is(r.status, 302);
  assert.is(r.headers.location, `http://${host}/auth/start?rd=${p.protocol === 'HTTP/2' ? 'https' : 'http'}://${host}${encodeURIComponent('/?a=b&c=d')}`);
});

test.run();
