// ingress-nginx test/e2e/annotations/cors.go, ported: each It a host of its own on one controller.
// Where the e2e test reads nginx.conf, the port asks NGINX: a request with an Origin and a
// preflight, and the Access-Control headers the browser would read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import type { Reply } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

const HOSTS: Record<string, Record<string, string>> = {
  'enable.cors.test': { 'enable-cors': 'true' },
  'methods.cors.test': { 'enable-cors': 'true', 'cors-allow-methods': 'POST, GET' },
  'max-age.cors.test': { 'enable-cors': 'true', 'cors-max-age': '200' },
  'no-credentials.cors.test': { 'enable-cors': 'true', 'cors-allow-credentials': 'false' },
  'origin.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'https://origin.cors.com:8080' },
  'headers.cors.test': { 'enable-cors': 'true', 'cors-allow-headers': 'DNT, User-Agent' },
  'expose.cors.test': { 'enable-cors': 'true', 'cors-expose-headers': 'X-CustomResponseHeader, X-CustomSecondHeader' },
  'multi.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'https://origin.cors.com:8080, https://origin2.cors.com' },
  'multi-miss.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'http://origin2.cors.com, https://origin.com' },
  'multi-bad.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'origin.cors.com:8080, https://origin2.cors.com, https://origin.com' },
  'star.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': '*' },
  'star-extra.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': '*, foo.bar.com' },
  'nomatch.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'https://foo.bar.com' },
  'port.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'http://origin.cors.com:8080, http://origin.com:8080' },
  'port-miss.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'https://origin2.cors.com, http://origin.com' },
  'wild.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'http://*.origin.cors.com, http://*.origin.com:8080' },
  'wild-port.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'http://origin.cors.com:8080, http://*.origin.com:8080' },
  'blank.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': '      ' },
  'trailing.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'https://origin-123.cors.com:8080,   ,https://origin-321.cors.com:8080,' },
  'schemes.cors.test': { 'enable-cors': 'true', 'cors-allow-origin': 'test://localhost, tauri://localhost:3000' },
};

test.before(async () => {
  fx = await startFixture('cors');
  const objects = Object.entries(HOSTS).map(([host, a]) => fx.single(host.split('.')[0]!, host, a));
  fx.apply('ingresses.json', objects);
  await Promise.all(Object.keys(HOSTS).map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

const preflight = (p: ProtocolClient, host: string, origin = 'https://origin.example') =>
  p.request(host, '/', { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
const allowOrigin = (r: Reply) => r.headers['access-control-allow-origin'];

/** A simple request with `origin` is served, and the answer allows exactly `expected` (or no origin at all). */
async function originAnswer(p: ProtocolClient, host: string, origin: string, expected: string | undefined): Promise<void> {
  const r = await p.request(host, '/', { headers: { Origin: origin } });
  assert.is(r.status, 200, `${host} with Origin ${origin}`);
  assert.is(r.backend?.startsWith('echo-'), true);
  assert.is(allowOrigin(r), expected, `${host}: Access-Control-Allow-Origin for ${origin}`);
}

its.both('annotations/cors.go:40', async (p) => {
  const r = await preflight(p, 'enable.cors.test');
  assert.is(r.status, 204);
  assert.is(r.headers['access-control-allow-methods'], 'GET, PUT, POST, DELETE, PATCH, OPTIONS');
  assert.is(r.headers['access-control-allow-headers'], 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization');
  assert.is(r.headers['access-control-max-age'], '1728000');
  assert.is(r.headers['access-control-allow-credentials'], 'true');
  // The default origin list is `*`, answered as such whatever the request's Origin.
  assert.is(allowOrigin(r), '*');
  const get = await p.request('enable.cors.test', '/');
  assert.is(get.status, 200);
});

its.both('annotations/cors.go:67', async (p) => {
  assert.is((await preflight(p, 'methods.cors.test')).headers['access-control-allow-methods'], 'POST, GET');
});

its.both('annotations/cors.go:83', async (p) => {
  assert.is((await preflight(p, 'max-age.cors.test')).headers['access-control-max-age'], '200');
});

its.both('annotations/cors.go:99', async (p) => {
  const r = await preflight(p, 'no-credentials.cors.test');
  assert.is(r.status, 204);
  assert.is(r.headers['access-control-allow-credentials'], undefined);
});

its.both('annotations/cors.go:115', async (p) => {
  await originAnswer(p, 'origin.cors.test', 'https://origin.cors.com:8080', 'https://origin.cors.com:8080');
});

its.both('annotations/cors.go:142', async (p) => {
  assert.is((await preflight(p, 'headers.cors.test')).headers['access-control-allow-headers'], 'DNT, User-Agent');
});

its.both('annotations/cors.go:158', async (p) => {
  const r = await p.request('expose.cors.test', '/', { headers: { Origin: 'https://origin.example' } });
  assert.is(r.headers['access-control-expose-headers'], 'X-CustomResponseHeader, X-CustomSecondHeader');
});

its.both('annotations/cors.go:174', async (p) => {
  await originAnswer(p, 'multi.cors.test', 'https://origin2.cors.com', 'https://origin2.cors.com');
  await originAnswer(p, 'multi.cors.test', 'https://origin.cors.com:8080', 'https://origin.cors.com:8080');
});

its.both('annotations/cors.go:201', async (p) => {
  await originAnswer(p, 'multi-miss.cors.test', 'http://no.origin.com', undefined);
});

its.both('annotations/cors.go:221', async (p) => {
  // An entry without a scheme is not an origin: that Origin is not allowed, the others are.
  await originAnswer(p, 'multi-bad.cors.test', 'origin.cors.com:8080', undefined);
  await originAnswer(p, 'multi-bad.cors.test', 'https://origin2.cors.com', 'https://origin2.cors.com');
  await originAnswer(p, 'multi-bad.cors.test', 'https://origin.com', 'https://origin.com');
});

its.both('annotations/cors.go:272', async (p) => {
  const r = await p.request('star.cors.test', '/');
  assert.is(r.status, 200);
  assert.is(allowOrigin(r), '*');
});

its.both('annotations/cors.go:296', async (p) => {
  const r = await p.request('enable.cors.test', '/');
  assert.is(r.status, 200);
  assert.is(allowOrigin(r), '*');
});

its.both('annotations/cors.go:319', async (p) => {
  const r = await p.request('star-extra.cors.test', '/');
  assert.is(r.status, 200);
  assert.is(allowOrigin(r), '*');
});

its.both('annotations/cors.go:343', async (p) => {
  await originAnswer(p, 'nomatch.cors.test', 'https://fooxbar.com', undefined);
});

its.both('annotations/cors.go:363', async (p) => {
  await originAnswer(p, 'port.cors.test', 'http://origin.com:8080', 'http://origin.com:8080');
});

its.both('annotations/cors.go:391', async (p) => {
  await originAnswer(p, 'port-miss.cors.test', 'http://origin.com:8080', undefined);
});

its.both('annotations/cors.go:410', async (p) => {
  await originAnswer(p, 'port.cors.test', 'http://origin.com', undefined);
});

its.both('annotations/cors.go:430', async (p) => {
  await originAnswer(p, 'wild.cors.test', 'http://foo.origin.cors.com', 'http://foo.origin.cors.com');
  await originAnswer(p, 'wild.cors.test', 'http://bar-foo.origin.cors.com', 'http://bar-foo.origin.cors.com');
});

its.both('annotations/cors.go:473', async (p) => {
  // A wildcard stands for one label: two labels below it do not match.
  await originAnswer(p, 'wild.cors.test', 'http://bar.foo.origin.cors.com', undefined);
});

its.both('annotations/cors.go:493', async (p) => {
  await originAnswer(p, 'wild-port.cors.test', 'http://abc.origin.com:8080', 'http://abc.origin.com:8080');
});

its.both('annotations/cors.go:520', async (p) => {
  await originAnswer(p, 'wild-port.cors.test', 'http://abc.origin.com', undefined);
});

its.both('annotations/cors.go:540', async (p) => {
  // The wildcard needs a subdomain: the bare domain is not matched by it.
  await originAnswer(p, 'wild-port.cors.test', 'http://origin.com:8080', undefined);
  await originAnswer(p, 'wild-port.cors.test', 'http://bar.origin.com:8080', 'http://bar.origin.com:8080');
});

its.both('annotations/cors.go:576', async (p) => {
  // A blank origin list allows every origin, answered with '*' (an Origin without a scheme too).
  for (const origin of ['http://origin.com', 'http://book.origin.com', 'test.origin.com']) await originAnswer(p, 'blank.cors.test', origin, '*');
});

its.both('annotations/cors.go:636', async (p) => {
  for (const origin of ['https://origin-123.cors.com:8080', 'https://origin-321.cors.com:8080']) await originAnswer(p, 'trailing.cors.test', origin, origin);
  await originAnswer(p, 'trailing.cors.test', 'https://unknown.cors.com:8080', undefined);
});

its.both('annotations/cors.go:673', async (p) => {
  await originAnswer(p, 'schemes.cors.test', 'test://localhost', 'test://localhost');
  await originAnswer(p, 'schemes.cors.test', 'tauri://localhost:3000', 'tauri://localhost:3000');
});

test.run();
