// ingress-nginx test/e2e/annotations/proxy.go, ported: each It a host of its own on one
// controller. The e2e tests grep nginx.conf for the proxy_* directives; the port provokes what
// each directive does: the Location and Set-Cookie headers of the answer as rewritten, a body
// over the default limit, a response header over the default buffer, a request body streamed
// or buffered, a failing endpoint retried, the HTTP version the upstream sees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { service, slices, untilRunning } from '../../../support/local-harness.js';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
let failing: EchoServer;
let healthy: EchoServer;
const its = ported(test, () => fx.ctl);

const HOSTS: Record<string, Record<string, string>> = {
  'redirect-off.proxy.foo.com': { 'proxy-redirect-from': 'off', 'proxy-redirect-to': 'goodbye.com' },
  'redirect-default.proxy.foo.com': { 'proxy-redirect-from': 'default', 'proxy-redirect-to': 'goodbye.com' },
  'redirect-hello.proxy.foo.com': { 'proxy-redirect-from': 'hello.com', 'proxy-redirect-to': 'goodbye.com' },
  'body-8m.proxy.foo.com': { 'proxy-body-size': '8m' },
  'body-15r.proxy.foo.com': { 'proxy-body-size': '15r' },
  // The e2e test's read timeout is 20 s; 1 s here, so the port can wait for it to pass.
  'timeouts.proxy.foo.com': { 'proxy-connect-timeout': '50', 'proxy-send-timeout': '20', 'proxy-read-timeout': '1' },
  'bad-timeouts.proxy.foo.com': { 'proxy-connect-timeout': '50k', 'proxy-send-timeout': '20k', 'proxy-read-timeout': '20k' },
  'buffering.proxy.foo.com': { 'proxy-buffering': 'on', 'proxy-buffers-number': '8', 'proxy-buffer-size': '8k', 'proxy-busy-buffers-size': '16k' },
  'request-buffering.proxy.foo.com': { 'proxy-request-buffering': 'off' },
  'cookies.proxy.foo.com': { 'proxy-cookie-domain': 'localhost example.org', 'proxy-cookie-path': '/one/ /' },
  'http10.proxy.foo.com': { 'proxy-http-version': '1.0' },
};

const NEXT_UPSTREAM = { 'proxy-next-upstream': 'error timeout http_502', 'proxy-next-upstream-timeout': '999999', 'proxy-next-upstream-tries': '888888' };
/**
 * The next-upstream It's host and Service for one protocol's leg: an endpoint answering every
 * request with 502 beside a healthy one. Each worker skips a peer for 10 s once a try of it failed
 * (NGINX's max_fails), per backend: each leg has a backend of its own, and no request reaches it
 * before its leg.
 */
const nextUpstreamHost = (tag: string) => `${tag}.next-upstream.proxy.foo.com`;

test.before(async () => {
  failing = await startEchoServer({ address: '127.0.9.20', name: 'failing', status: 502 });
  healthy = await startEchoServer({ address: '127.0.9.21', name: 'healthy' });
  fx = await startFixture('proxy');
  const objects = Object.entries(HOSTS).map(([host, a]) => fx.single(host.split('.')[0]!, host, a));
  for (const tag of ['h1', 'h2']) {
    objects.push(service('proxy', `flaky-${tag}`), ...slices('proxy', `flaky-${tag}`, [failing, healthy]), fx.single(`next-upstream-${tag}`, nextUpstreamHost(tag), NEXT_UPSTREAM, { svc: `flaky-${tag}` }));
  }
  fx.apply('ingresses.json', objects);
  await Promise.all(Object.keys(HOSTS).map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
  // Applied with the others in one sync; awaited without a request (a server block of its own: its tries exceed the ConfigMap's).
  await Promise.all(['h1', 'h2'].map((tag) => untilRunning(fx.ctl, `server_name ${nextUpstreamHost(tag)}`)));
});
test.after(async () => {
  await fx.stop();
  await failing.close();
  await healthy.close();
});

/** A path whose answer carries the response header `name: value`. */
const withHeader = (name: string, value: string, status = 200) => `/__status/${status}/__header/${name}/${encodeURIComponent(value)}`;

its.both('annotations/proxy.go:38', async (p) => {
  // proxy_redirect off: the backend's Location reaches the client as it wrote it.
  const r = await p.request('redirect-off.proxy.foo.com', withHeader('Location', 'http://upstream_balancer/next', 302));
  assert.is(r.status, 302);
  assert.is(r.headers.location, 'http://upstream_balancer/next');
});

its.both('annotations/proxy.go:54', async (p) => {
  // proxy_redirect default: the upstream's own URL becomes the location's path, which NGINX
  // makes absolute again with the request's scheme and host (absolute_redirect is on).
  const r = await p.request('redirect-default.proxy.foo.com', withHeader('Location', 'http://upstream_balancer/next', 302));
  assert.is(r.status, 302);
  assert.is(r.headers.location, `${p.scheme}://redirect-default.proxy.foo.com/next`);
});

its.both('annotations/proxy.go:70', async (p) => {
  const r = await p.request('redirect-hello.proxy.foo.com', withHeader('Location', 'hello.com/next', 302));
  assert.is(r.status, 302);
  assert.is(r.headers.location, 'goodbye.com/next');
  // Text that does not start with proxy-redirect-from is left alone.
  assert.is((await p.request('redirect-hello.proxy.foo.com', withHeader('Location', 'http://other.com/hello.com', 302))).headers.location, 'http://other.com/hello.com');
});

const TWO_MB = 'x'.repeat(2 * 1024 * 1024);

its.both('annotations/proxy.go:87', async (p) => {
  // 2 MB is over the default 1m and under 8m: the upstream receives all of it.
  const r = await p.request('body-8m.proxy.foo.com', '/', { method: 'POST', body: TWO_MB });
  assert.is(r.status, 200);
  assert.is(r.json?.bodyBytes, TWO_MB.length);
});

its.both('annotations/proxy.go:102', async (p) => {
  // `15r` is no size: the host keeps the default limit (1m), so 2 MB is refused.
  const r = await p.request('body-15r.proxy.foo.com', '/', { method: 'POST', body: TWO_MB });
  assert.is(r.status, 413);
  await fx.warned((w) => w.includes('proxy-body-size') && w.includes('15r'), 'the refused value named');
});

its.both('annotations/proxy.go:117', async (p) => {
  assert.is((await p.request('timeouts.proxy.foo.com', '/__delay/200')).status, 200);
  // An answer later than proxy-read-timeout is cut off with 504.
  assert.is((await p.request('timeouts.proxy.foo.com', '/__delay/1600')).status, 504);
});

its.both('annotations/proxy.go:138', async (p) => {
  for (const key of ['proxy-connect-timeout', 'proxy-send-timeout', 'proxy-read-timeout']) {
    await fx.warned((w) => w.includes(key) && /20k|50k/.test(w), `${key}: the refused value named`);
  }
  // The defaults (60 s) stay: a 1.6 s answer is served.
  assert.is((await p.request('bad-timeouts.proxy.foo.com', '/__delay/1600')).status, 200);
});

its.both('annotations/proxy.go:159', async (p) => {
  // proxy_buffer_size 8k holds a 6 KB response header; the default 4k does not (502).
  const big = 'b'.repeat(6000);
  const r = await p.request('buffering.proxy.foo.com', withHeader('X-Big', big));
  assert.is(r.status, 200);
  assert.is(r.headers['x-big'], big);
  assert.is((await p.request('http10.proxy.foo.com', withHeader('X-Big', big))).status, 502);
  // proxy_request_buffering on: a body sent without a length reaches the upstream whole, with its length.
  const body = 'y'.repeat(5000);
  const sent = await p.request('buffering.proxy.foo.com', '/', { method: 'POST', body, headers: p.protocol === 'HTTP/1.1' ? { 'Transfer-Encoding': 'chunked' } : {} });
  assert.is(sent.json?.bodyBytes, body.length);
  assert.is(upstreamHeaders(sent)['content-length'], String(body.length));
  assert.is(upstreamHeaders(sent)['transfer-encoding'], undefined);
});

its.both('annotations/proxy.go:184', async (p) => {
  // proxy_request_buffering off: a body sent without a length is streamed to the upstream,
  // chunked (larger than client_body_buffer_size, so NGINX cannot have read it all at once).
  const body = 'y'.repeat(100_000);
  const r = await p.request('request-buffering.proxy.foo.com', '/', { method: 'POST', body, headers: p.protocol === 'HTTP/1.1' ? { 'Transfer-Encoding': 'chunked' } : {} });
  assert.is(r.status, 200);
  assert.is(r.json?.bodyBytes, body.length);
  assert.is(upstreamHeaders(r)['transfer-encoding'], 'chunked');
});

its.both('annotations/proxy.go:199', async (p) => {
  // http_502 is a reason to try the next endpoint: the endpoint answering 502 is tried and
  // passed over, and every answer comes from the healthy one.
  // (Each NGINX worker balances on its own: a few requests may pass before one is sent to the
  // failing endpoint first.)
  const before = failing.hits();
  for (let i = 0; i < 20 && failing.hits() === before; i++) {
    const r = await p.request(nextUpstreamHost(p.tag), '/');
    assert.is(r.status, 200);
    assert.is(r.backend, 'healthy');
  }
  assert.ok(failing.hits() > before, 'the failing endpoint was tried');
});

its.both('annotations/proxy.go:220', async (p) => {
  const r = await p.request('cookies.proxy.foo.com', withHeader('Set-Cookie', 'session=1; Domain=localhost; Path=/one/'));
  assert.is(r.status, 200);
  assert.equal(r.headers['set-cookie'], ['session=1; Domain=example.org; Path=/']);
});

its.both('annotations/proxy.go:238', async (p) => {
  const r = await p.request('http10.proxy.foo.com', '/');
  assert.is(r.status, 200);
  assert.is(r.json?.proto, '1.0');
});

test.run();
