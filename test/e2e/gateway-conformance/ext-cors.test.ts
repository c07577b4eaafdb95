// Gateway API conformance: the HTTPRoute CORS filter (HTTPRouteCORS), ported to local mode with
// real NGINX. The Lua router serves it as it serves enable-cors (lua/route_cors.lua): an allowed
// Origin gets the Access-Control-* headers on every answer and its preflight is answered 204;
// another origin gets none. `*.` in an origin covers any number of labels; a `*` origin, method or
// header list is answered with the request's own when credentials are allowed. Also: filters the
// spec forbids or NGINX could not carry are named and their rule set aside, and a changed filter
// is served without a reload.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../../support/echo-server.js';
import { prefixRoute, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import type { LocalController } from '../../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');

/** A route to v1 with a CORS filter on each rule that has `cors`. */
const route = (name: string, host: string, rules: Array<{ path: string; cors?: unknown }>) =>
  prefixRoute(name, host, rules.map(({ path, cors }) => ({ path, to: 'v1', filters: cors !== undefined ? [{ type: 'CORS', cors }] : undefined })));
const LISTED = { allowOrigins: ['https://www.shop.test', 'https://*.partner.test'], allowMethods: ['GET', 'OPTIONS'], allowHeaders: ['x-a', 'x-b'], exposeHeaders: ['x-c', 'x-d'], allowCredentials: true, maxAge: 3600 };
const CORS = route('cors', 'cors.test', [
  { path: '/listed', cors: LISTED },
  { path: '/any-method', cors: { allowOrigins: ['https://www.shop.test'], allowMethods: ['*'] } },
  { path: '/any-origin', cors: { allowOrigins: ['*'], allowMethods: ['PUT'], allowCredentials: false } },
  { path: '/any-credentialed', cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: true } },
  { path: '/any-anonymous', cors: { allowOrigins: ['*'], allowMethods: ['*'], allowHeaders: ['*'], allowCredentials: false } },
]);
const many = Array.from({ length: 64 }, (_, i) => `https://${'a'.repeat(60)}-${i}.example.test`);

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['v1'], {
    'cors.json': [CORS],
    'bad.json': [route('bad-cors', 'bad-cors.test', [
      { path: '/crlf', cors: { allowOrigins: ['https://a.test\r\nX-Injected: 1'] } },
      { path: '/star-and-more', cors: { allowOrigins: ['*', 'https://a.test'] } },
      { path: '/expose-all-credentialed', cors: { allowOrigins: ['https://a.test'], exposeHeaders: ['*'], allowCredentials: true } },
      { path: '/huge', cors: { allowOrigins: many } },
      { path: '/bad-method', cors: { allowOrigins: ['https://a.test'], allowMethods: ['GET;'] } },
      { path: '/' },
    ])],
  }));
  await ctl.until('cors.test', '/listed', (r) => r.backend === 'v1', { what: 'the routes served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

const list = (v: unknown) => String(v ?? '').split(',').map((s) => s.trim()).sort().join(',');
const preflight = (p: ProtocolClient, path: string, origin: string, method: string, headers?: string) =>
  p.request('cors.test', path, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, ...(headers ? { 'Access-Control-Request-Headers': headers } : {}) } });

over.both('HTTPRouteCORS › a preflight from a listed origin, exact or under a wildcard of any depth, gets the whole set; another origin gets none', async (p) => {
  await p.until('cors.test', '/listed', (r) => r.backend === 'v1', { what: 'cors.test over this protocol' });
  for (const origin of ['https://www.shop.test', 'https://www.partner.test', 'https://deep.www.partner.test']) {
    const r = await preflight(p, '/listed', origin, 'GET', 'x-a, x-b');
    assert.is(r.status, 204, origin);
    assert.is(r.headers['access-control-allow-origin'], origin);
    assert.is(list(r.headers['access-control-allow-methods']), 'GET,OPTIONS');
    assert.is(list(r.headers['access-control-allow-headers']), 'x-a,x-b');
    assert.is(list(r.headers['access-control-expose-headers']), 'x-c,x-d');
    assert.is(r.headers['access-control-max-age'], '3600');
    assert.is(r.headers['access-control-allow-credentials'], 'true');
  }
  for (const origin of ['https://partner.test', 'https://www.shop.test.evil.test', 'http://www.shop.test', 'https://x.partner.test:8443']) {
    const r = await preflight(p, '/listed', origin, 'GET');
    assert.ok([200, 204, 403].includes(r.status), origin);
    assert.is(r.headers['access-control-allow-origin'], undefined, origin);
  }
});

over.both('HTTPRouteCORS › a simple request from a listed origin gets its origin allowed; another origin does not', async (p) => {
  for (const origin of ['https://www.shop.test', 'https://www.partner.test']) {
    const r = await p.request('cors.test', '/listed', { headers: { Origin: origin } });
    assert.is(r.status, 200);
    assert.is(r.backend, 'v1');
    assert.is(r.headers['access-control-allow-origin'], origin);
  }
  const other = await p.request('cors.test', '/listed', { headers: { Origin: 'https://elsewhere.test' } });
  assert.is(other.status, 200);
  assert.is(other.headers['access-control-allow-origin'], undefined);
});

over.both('HTTPRouteCORS › a * method list allows the asked method; no Allow-Credentials without allowCredentials', async (p) => {
  const r = await preflight(p, '/any-method', 'https://www.shop.test', 'POST');
  assert.is(r.status, 204);
  assert.is(r.headers['access-control-allow-origin'], 'https://www.shop.test');
  assert.ok(['POST', '*'].includes(String(r.headers['access-control-allow-methods'])));
  assert.is(r.headers['access-control-allow-credentials'], undefined);
  assert.is(r.headers['access-control-max-age'], '5', 'the spec default');
});

over.both('HTTPRouteCORS › a * origin without credentials allows any origin, with a port too, on preflights and requests', async (p) => {
  for (const origin of ['https://elsewhere.test', 'https://elsewhere.test:12345']) {
    const r = await preflight(p, '/any-origin', origin, 'PUT');
    assert.is(r.status, 204);
    assert.ok([origin, '*'].includes(String(r.headers['access-control-allow-origin'])));
    assert.is(r.headers['access-control-allow-methods'], 'PUT');
    assert.is(r.headers['access-control-allow-credentials'], undefined);
    const put = await p.request('cors.test', '/any-origin', { method: 'PUT', headers: { Origin: origin } });
    assert.is(put.status, 200);
    assert.ok([origin, '*'].includes(String(put.headers['access-control-allow-origin'])));
    assert.is(put.headers['access-control-allow-credentials'], undefined);
  }
});

over.both('HTTPRouteCORS › with credentials, * origin, methods and headers are answered with what the request asks, never *', async (p) => {
  const r = await preflight(p, '/any-credentialed', 'https://other.shop.test', 'PUT', 'x-a, x-b');
  assert.is(r.status, 204);
  assert.is(r.headers['access-control-allow-origin'], 'https://other.shop.test');
  assert.is(r.headers['access-control-allow-methods'], 'PUT');
  assert.is(list(r.headers['access-control-allow-headers']), 'x-a,x-b');
  assert.is(r.headers['access-control-allow-credentials'], 'true');
  const get = await p.request('cors.test', '/any-credentialed', { headers: { Origin: 'https://other.shop.test' } });
  assert.is(get.status, 200);
  assert.is(get.headers['access-control-allow-origin'], 'https://other.shop.test');
  assert.is(get.headers['access-control-allow-credentials'], 'true');
  const anonymous = await preflight(p, '/any-anonymous', 'https://other.shop.test', 'PUT', 'x-a, x-b');
  assert.is(anonymous.status, 204);
  assert.ok(['https://other.shop.test', '*'].includes(String(anonymous.headers['access-control-allow-origin'])));
  assert.ok(['PUT', '*'].includes(String(anonymous.headers['access-control-allow-methods'])));
  assert.ok(['x-a,x-b', '*'].includes(list(anonymous.headers['access-control-allow-headers'])));
  assert.is(anonymous.headers['access-control-allow-credentials'], undefined);
});

over.both('HTTPRouteCORS › an injected origin, * beside others, * exposed with credentials, a huge list and a bad method are named and their rule set aside', async (p) => {
  const fields = ['allowOrigins\\[0\\]', 'allowOrigins', 'exposeHeaders', '', 'allowMethods\\[0\\]'];
  for (const [i, field] of fields.entries()) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/bad-cors.*spec\\.rules\\[${i}\\]\\.filters\\[0\\]\\.cors${field ? `\\.${field}` : ''}.*rule set aside`), `the warning on rule ${i}`);
  }
  await p.until('bad-cors.test', '/', (r) => r.backend === 'v1', { what: 'bad-cors.test over this protocol' });
  for (const path of ['/crlf', '/star-and-more', '/expose-all-credentialed', '/huge', '/bad-method']) {
    const r = await p.request('bad-cors.test', path, { method: 'OPTIONS', headers: { Origin: 'https://a.test', 'Access-Control-Request-Method': 'GET' } });
    assert.is(r.backend, 'v1', `${path}: served by the rule without CORS`);
    assert.is(r.json?.path, path);
    assert.is(r.headers['access-control-allow-origin'], undefined, path);
  }
  assert.is((await preflight(p, '/listed', 'https://www.shop.test', 'GET')).status, 204, 'the other route still served');
});

over.both('HTTPRouteCORS › a changed filter is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('cors.json', [route('cors', 'cors.test', [{ path: '/listed', cors: { ...LISTED, allowOrigins: ['https://new.shop.test'] } }])]);
  await p.until('cors.test', '/listed', (r) => r.headers['access-control-allow-origin'] === 'https://new.shop.test', { what: 'the new origin allowed', headers: { Origin: 'https://new.shop.test' } });
  assert.is((await p.request('cors.test', '/listed', { headers: { Origin: 'https://www.shop.test' } })).headers['access-control-allow-origin'], undefined, 'the old origin no longer');
  assert.is(await reloads(), before, 'no reload');
  ctl.write('cors.json', [CORS]);
  await p.until('cors.test', '/any-origin', (r) => r.backend === 'v1', { what: 'the routes as they were' });
});

test.run();
