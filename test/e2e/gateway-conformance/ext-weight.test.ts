// Gateway API conformance: weighted backendRefs (HTTPRouteWeight), ported to local mode with real
// NGINX. The Lua router draws one backend per request from a rule's weighted backendRefs (any
// number, docs/gateway-api.md); the share is checked as the conformance suite checks it (500
// requests, ±5 points, a few attempts). Also: a weight change is served without a reload, huge
// weights, and a weighted ref to another namespace's Service without a grant; and the
// HTTPRouteBackendRequestHeaderModifier scenarios (a backendRef's own RequestHeaderModifier).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../../support/echo-server.js';
import { GATEWAY_V1 as V1, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import { service, slices, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';
import { waitFor } from '../../support/wait.js';
import { expectRequestHeaderModifier } from '../../support/gateway-scenarios.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');

type Ref = { name: string; weight: number; namespace?: string };
function route(name: string, host: string, refs: Ref[]) {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: refs.map((r) => ({ ...r, port: 80 })) }] },
  };
}
const SEVENTY_THIRTY = route('weighted-backends', 'weight.test', [{ name: 'v1', weight: 70 }, { name: 'v2', weight: 30 }, { name: 'v3', weight: 0 }]);

/** The conformance route's five rules: each filter on the rule's one backendRef, none on the rule. */
const modifier = (m: Record<string, unknown>) => [{ name: 'v1', port: 80, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: m }] }];
const BACKEND_MODIFIER = {
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name: 'request-header-modifier', namespace: 'team-a' },
  spec: {
    parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['backend-modifier.test'],
    rules: [
      { matches: [{ path: { type: 'PathPrefix', value: '/set' } }], backendRefs: modifier({ set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] }) },
      { matches: [{ path: { type: 'PathPrefix', value: '/add' } }], backendRefs: modifier({ add: [{ name: 'X-Header-Add', value: 'add-appends-values' }] }) },
      { matches: [{ path: { type: 'PathPrefix', value: '/remove' } }], backendRefs: modifier({ remove: ['X-Header-Remove'] }) },
      { matches: [{ path: { type: 'PathPrefix', value: '/multiple' } }], backendRefs: modifier({
        set: [{ name: 'X-Header-Set-1', value: 'header-set-1' }, { name: 'X-Header-Set-2', value: 'header-set-2' }],
        add: [{ name: 'X-Header-Add-1', value: 'header-add-1' }, { name: 'X-Header-Add-2', value: 'header-add-2' }, { name: 'X-Header-Add-3', value: 'header-add-3' }],
        remove: ['X-Header-Remove-1', 'X-Header-Remove-2'],
      }) },
      { matches: [{ path: { type: 'PathPrefix', value: '/case-insensitivity' } }], backendRefs: modifier({
        set: [{ name: 'X-Header-Set', value: 'header-set' }], add: [{ name: 'X-Header-Add', value: 'header-add' }], remove: ['X-Header-Remove'],
      }) },
    ],
  },
};

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['v1', 'v2', 'v3', 'v4'], {
    'weight.json': [SEVENTY_THIRTY],
    'huge.json': [route('huge', 'huge.test', [{ name: 'v1', weight: 1_000_000 }, { name: 'v2', weight: 1 }])],
    // No ReferenceGrant lets team-a use team-b's Service (written below, once v4's address is known).
    'backend-filters.json': [{
      apiVersion: V1, kind: 'HTTPRoute', metadata: { name: 'request-header-modifier-backend-weights', namespace: 'team-a' },
      spec: {
        parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['backend-filters.test'],
        rules: [
          { backendRefs: ['v1', 'v2'].map((name) => ({ name, port: 80, weight: 10, filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Backend', value: name }] } },
            { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'X-Echo-Name', value: `via-${name}` }] } },
          ] })) },
          { matches: [{ path: { type: 'PathPrefix', value: '/set' } }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Rule', value: 'rule' }] } }],
            backendRefs: [{ name: 'v3', port: 80, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }], add: [{ name: 'X-Header-Add', value: 'add-appends-values' }], remove: ['X-Header-Remove'] } }] }] },
          { matches: [{ path: { type: 'PathPrefix', value: '/injected' } }], backendRefs: [{ name: 'v3', port: 80, filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: 'v\r\nX-Injected: 1' }] } }] }] },
          { matches: [{ path: { type: 'PathPrefix', value: '/redirect' } }], backendRefs: [{ name: 'v3', port: 80, filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'evil.test' } }] }] },
        ],
      },
    }],
    'steal.json': [route('steal', 'steal.test', [{ name: 'v1', weight: 1 }, { name: 'v4', namespace: 'team-b', weight: 1 }])],
    'backend-modifier.json': [BACKEND_MODIFIER],
  }));
  ctl.write('team-b.json', [service('team-b', 'v4'), ...slices('team-b', 'v4', [echo.v4!])]);
  await ctl.until('weight.test', '/', (r) => r.backend === 'v1' || r.backend === 'v2', { what: 'weight.test served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

/** How many of `n` requests (10 at a time) each backend answered. */
async function spread(p: ProtocolClient, host: string, n: number): Promise<Record<string, number>> {
  const seen: Record<string, number> = {};
  let sent = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (sent < n) {
      sent++;
      const r = await p.request(host, '/');
      const key = r.status === 200 ? r.backend ?? '?' : String(r.status);
      seen[key] = (seen[key] ?? 0) + 1;
    }
  }));
  return seen;
}

/** Shares within ±5 points of `want` on 500 requests; up to 3 attempts, as the suite retries. */
async function expectShares(p: ProtocolClient, host: string, want: Record<string, number>) {
  const n = 500;
  let last: Record<string, number> = {};
  for (let attempt = 0; attempt < 3; attempt++) {
    last = await spread(p, host, n);
    const keys = new Set([...Object.keys(last), ...Object.keys(want)]);
    if ([...keys].every((k) => Math.abs((last[k] ?? 0) / n - (want[k] ?? 0)) <= 0.05)) return;
  }
  assert.unreachable(`${host}: shares ${JSON.stringify(last)} of ${n} not within 5 points of ${JSON.stringify(want)}`);
}

over.both('HTTPRouteWeight › 70/30/0 across three backendRefs: the shares within 5 points, weight 0 gets nothing', async (p) => {
  await p.until('weight.test', '/', (r) => r.status === 200, { what: 'weight.test over this protocol' });
  const before = echo.v3!.hits();
  await expectShares(p, 'weight.test', { v1: 0.7, v2: 0.3 });
  assert.is(echo.v3!.hits(), before, 'the weight-0 backend got no request');
});

over.both('HTTPRouteWeight › the CRD\'s largest weight against 1: the first takes (almost) everything', async (p) => {
  const seen = await spread(p, 'huge.test', 100);
  assert.ok((seen.v1 ?? 0) >= 99, JSON.stringify(seen));
});

over.both('HTTPRouteWeight › attacker: a weighted ref to another namespace\'s Service without a grant: the rule answers 500, that Service gets nothing', async (p) => {
  await ctl.logged(/HTTPRoute team-a\/steal.*spec\.rules\[0\]\.backendRefs\[1\].*the rule answers 500/, 'the refused ref named');
  const before = echo.v4!.hits();
  const seen = await spread(p, 'steal.test', 20);
  assert.equal(seen, { 500: 20 });
  assert.is(echo.v4!.hits(), before);
});

over.both('HTTPRouteRequestHeaderModifierBackendWeights › each weighted backendRef\'s own header filters go with it (request and response)', async (p) => {
  await p.until('backend-filters.test', '/', (r) => r.status === 200, { what: 'backend-filters.test over this protocol' });
  const seen = new Set<string>();
  for (let i = 0; i < 40; i++) {
    const r = await p.request('backend-filters.test', '/');
    assert.is((r.json?.headers as Record<string, string>).backend, r.backend, 'the Backend header names the backend that got the request');
    assert.is(r.headers['x-echo-name'], `${r.backend},via-${r.backend}`);
    seen.add(r.backend!);
  }
  assert.equal([...seen].sort(), ['v1', 'v2'], 'both drawn');
});

over.both('HTTPRouteRequestHeaderModifierBackendWeights › one backendRef\'s filters after the rule\'s; a hostile or unsupported backendRef filter is named and its rule answers 500', async (p) => {
  const r = await p.request('backend-filters.test', '/set', { headers: { 'X-Header-Add': 'client', 'X-Header-Remove': 'gone', 'X-Header-Set': 'client' } });
  assert.is(r.backend, 'v3');
  const h = r.json?.headers as Record<string, string>;
  assert.is(h['x-rule'], 'rule');
  assert.is(h['x-header-set'], 'set-overwrites-values');
  assert.is(h['x-header-add'], 'client,add-appends-values');
  assert.is(h['x-header-remove'], undefined);
  await ctl.logged(/HTTPRoute team-a\/request-header-modifier-backend-weights.*spec\.rules\[2\]\.backendRefs\[0\]\.filters\[0\]\.requestHeaderModifier\.set\[0\]: value has a control character.*the rule answers 500/, 'the CR/LF named');
  await ctl.logged(/HTTPRoute team-a\/request-header-modifier-backend-weights.*spec\.rules\[3\]\.backendRefs\[0\]\.filters\[0\]: filter .{1,2}RequestRedirect.{1,2} is not supported on backendRefs.*the rule answers 500/, 'the redirect named');
  const before = echo.v3!.hits();
  for (const path of ['/injected', '/redirect']) {
    const bad = await p.request('backend-filters.test', path);
    assert.is(bad.status, 500, path);
    assert.is(bad.headers['x-injected'], undefined);
  }
  assert.is(echo.v3!.hits(), before);
});

over.both('HTTPRouteBackendRequestHeaderModifier › a backendRef\'s set, add and remove reach the backend; header names compare caseless', async (p) => {
  await p.until('backend-modifier.test', '/set', (r) => r.backend === 'v1', { what: 'backend-modifier.test over this protocol' });
  await expectRequestHeaderModifier(p, 'backend-modifier.test', 'v1');
  const r = await p.request('backend-modifier.test', '/case-insensitivity', { headers: { 'x-header-set': 'original-val-set', 'x-header-add': 'original-val-add', 'x-header-remove': 'original-val-remove', 'Another-Header': 'another-header-val' } });
  const h = (r.json as { headers: Record<string, string> }).headers;
  assert.equal([h['x-header-set'], h['x-header-add'], h['another-header']], ['header-set', 'original-val-add,header-add', 'another-header-val']);
  assert.not.ok('x-header-remove' in h);
});

over.both('HTTPRouteWeight › a changed weight is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('weight.json', [route('weighted-backends', 'weight.test', [{ name: 'v1', weight: 0 }, { name: 'v2', weight: 1 }, { name: 'v3', weight: 3 }])]);
  await waitFor(async () => {
    const seen = await spread(p, 'weight.test', 40);
    return seen.v1 === undefined && (seen.v3 ?? 0) > (seen.v2 ?? 0);
  }, { what: 'v1 weighted out, v3 in' });
  assert.is(await reloads(), before, 'no reload');
  ctl.write('weight.json', [SEVENTY_THIRTY]);
  await waitFor(async () => (await spread(p, 'weight.test', 40)).v3 === undefined, { what: 'weight.test as it was' });
});

test.run();
