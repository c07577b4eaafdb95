// Gateway API conformance: HTTPRoute rule timeouts (HTTPRouteTimeoutRequest,
// HTTPRouteTimeoutBackendRequest), ported to local mode with real NGINX. The Lua router sets the route's
// upstream timeouts per request (docs/gateway-api.md: each wait on the backend is bounded, NGINX
// having no whole-request deadline); a backend slower than the bound gives 504, "0s" leaves the
// http level's. Also: durations NGINX could not take are named and their rule set aside, and a
// changed timeout is served without a reload.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../../support/echo-server.js';
import { prefixRoute, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import type { LocalController } from '../../support/local-harness.js';
import { protocolMatrix } from '../../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');

const route = (name: string, host: string, rules: Array<{ path?: string; timeouts?: unknown }>) =>
  prefixRoute(name, host, rules.map((r) => ({ ...r, to: 'v1' })));
const REQUEST = route('request-timeout', 'timeout-request.test', [
  { path: '/request-timeout', timeouts: { request: '500ms' } },
  { path: '/disable-request-timeout', timeouts: { request: '0s' } },
]);

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['v1'], {
    'request.json': [REQUEST],
    'backend.json': [route('backend-request-timeout', 'timeout-backend.test', [
      { path: '/backend-timeout', timeouts: { backendRequest: '500ms' } },
      { path: '/disable-backend-timeout', timeouts: { backendRequest: '0s' } },
      { path: '/both', timeouts: { request: '10s', backendRequest: '500ms' } },
    ])],
    'bad.json': [route('bad-timeouts', 'bad-timeouts.test', [
      { path: '/fraction', timeouts: { request: '0.5s' } },
      { path: '/negative', timeouts: { request: '-1s' } },
      { path: '/inverted', timeouts: { request: '1s', backendRequest: '2s' } },
      { path: '/injected', timeouts: { backendRequest: '1s;\nreturn 200' } },
      { path: '/huge', timeouts: { request: '99999h' } },
      {},
    ])],
  }));
  await ctl.until('timeout-backend.test', '/backend-timeout', (r) => r.backend === 'v1', { what: 'the routes served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

over.both('HTTPRouteTimeoutRequest › a backend slower than timeouts.request gives 504; a fast one 200; 0s turns the timeout off', async (p) => {
  await p.until('timeout-request.test', '/request-timeout', (r) => r.backend === 'v1', { what: 'timeout-request.test over this protocol' });
  assert.is((await p.request('timeout-request.test', '/request-timeout')).status, 200);
  assert.is((await p.request('timeout-request.test', '/request-timeout/__delay/1000')).status, 504);
  const off = await p.request('timeout-request.test', '/disable-request-timeout/__delay/1000');
  assert.is(off.status, 200);
  assert.is(off.backend, 'v1');
});

over.both('HTTPRouteTimeoutBackendRequest › a backend slower than timeouts.backendRequest gives 504; a fast one 200; 0s turns it off; the shorter of the two applies', async (p) => {
  assert.is((await p.request('timeout-backend.test', '/backend-timeout')).status, 200);
  assert.is((await p.request('timeout-backend.test', '/backend-timeout/__delay/1000')).status, 504);
  assert.is((await p.request('timeout-backend.test', '/disable-backend-timeout/__delay/1000')).status, 200);
  assert.is((await p.request('timeout-backend.test', '/both/__delay/1000')).status, 504);
});

over.both('HTTPRouteTimeoutRequest › bad durations (a fraction, negative, inverted, injected) are named and their rule set aside; a huge one is capped', async (p) => {
  for (const [i, field] of ['timeouts.request', 'timeouts.request', 'timeouts.backendRequest', 'timeouts.backendRequest'].entries()) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/bad-timeouts.*spec\\.rules\\[${i}\\]\\.${field.replace('.', '\\.')}.*rule set aside`), `the warning on rule ${i}`);
  }
  await ctl.logged(/HTTPRoute team-a\/bad-timeouts.*spec\.rules\[4\]\.timeouts.*86400 s applies/, 'the cap named');
  for (const path of ['/fraction', '/negative', '/inverted', '/injected']) {
    const r = await p.request('bad-timeouts.test', `${path}/__delay/700`);
    assert.is(r.status, 200, path);
    assert.is(r.json?.path, `${path}/__delay/700`, `${path}: served by the rule without timeouts`);
  }
  assert.is((await p.request('bad-timeouts.test', '/huge/__delay/700')).status, 200);
});

over.both('HTTPRouteTimeoutRequest › a changed timeout is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('request.json', [route('request-timeout', 'timeout-request.test', [{ path: '/request-timeout', timeouts: { request: '3s' } }])]);
  await p.until('timeout-request.test', '/request-timeout/__delay/1000', (r) => r.status === 200, { what: 'the longer timeout served' });
  assert.is(await reloads(), before, 'no reload');
  ctl.write('request.json', [REQUEST]);
  await p.until('timeout-request.test', '/request-timeout/__delay/1000', (r) => r.status === 504, { what: 'the timeout as it was' });
});

test.run();
