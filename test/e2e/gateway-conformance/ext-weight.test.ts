// Gateway API conformance: weighted backendRefs (HTTPRouteWeight), ported to local mode with real
// NGINX. The Lua router draws one backend per request from a rule's weighted backendRefs (any
// number, docs/gateway-api.md); the share is checked as the conformance suite checks it (500
// requests, ±5 points, a few attempts). Also: a weight change is served without a reload, huge
// weights, and a weighted ref to another namespace's Service without a grant.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../../support/echo-server.js';
import { GATEWAY_V1 as V1, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import { service, slices, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';
import { waitFor } from '../../support/wait.js';

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

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['v1', 'v2', 'v3', 'v4'], {
    'weight.json': [SEVENTY_THIRTY],
    'four.json': [route('four', 'four.test', [{ name: 'v1', weight: 1 }, { name: 'v2', weight: 1 }, { name: 'v3', weight: 1 }, { name: 'v4', weight: 1 }])],
    'huge.json': [route('huge', 'huge.test', [{ name: 'v1', weight: 1_000_000 }, { name: 'v2', weight: 1 }])],
    // No ReferenceGrant lets team-a use team-b's Service (written below, once v4's address is known).
    'steal.json': [route('steal', 'steal.test', [{ name: 'v1', weight: 1 }, { name: 'v4', namespace: 'team-b', weight: 1 }])],
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
async function expectShares(p: ProtocolClient, host: string, want: Record<string, number>, n = 500) {
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

over.both('HTTPRouteWeight › four equal backendRefs each get a quarter', async (p) => {
  await expectShares(p, 'four.test', { v1: 0.25, v2: 0.25, v3: 0.25, v4: 0.25 }, 400);
});

over.both('HTTPRouteWeight › the CRD\'s largest weight against 1: the first takes (almost) everything', async (p) => {
  const seen = await spread(p, 'huge.test', 200);
  assert.ok((seen.v1 ?? 0) >= 199, JSON.stringify(seen));
});

over.both('HTTPRouteWeight › attacker: a weighted ref to another namespace\'s Service without a grant: the rule answers 503, that Service gets nothing', async (p) => {
  await ctl.logged(/HTTPRoute team-a\/steal.*spec\.rules\[0\]\.backendRefs\[1\].*the rule answers 503/, 'the refused ref named');
  const before = echo.v4!.hits();
  const seen = await spread(p, 'steal.test', 20);
  assert.equal(seen, { 503: 20 });
  assert.is(echo.v4!.hits(), before);
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
