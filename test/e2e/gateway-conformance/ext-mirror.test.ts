// Gateway API conformance: RequestMirror (HTTPRouteRequestMirror, HTTPRouteRequestMultipleMirrors,
// HTTPRouteRequestPercentageMirror), ported to local mode with real NGINX. The Lua router hands a
// copy of the request to lua/mirror.lua, which sends it from a timer to an endpoint of each mirror
// Service (the client never waits for it); the mirrors here are recording HTTP servers. Also: a
// mirror in another namespace without a ReferenceGrant gets nothing, a bad share is named, a
// changed mirror is served without a reload.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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

interface Copy { method: string; url: string; headers: IncomingHttpHeaders; body: string }
interface Recorder { server: Server; address: string; port: number; seen: Copy[] }
async function recorder(address: string): Promise<Recorder> {
  const seen: Copy[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
    req.on('end', () => { seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }); res.end('mirror'); });
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { server, address, port: (server.address() as AddressInfo).port, seen };
}
let mirrors: Record<'a' | 'b' | 'secret', Recorder>;
const copiesOf = (r: Recorder, path: string) => r.seen.filter((c) => c.url.split('?')[0] === path);

const mirrorTo = (name: string, extra: object = {}) => ({ type: 'RequestMirror', requestMirror: { backendRef: { name, port: 80 }, ...extra } });
const HEADER_EDITS = { type: 'RequestHeaderModifier', requestHeaderModifier: {
  set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }], add: [{ name: 'X-Header-Add', value: 'header-val-1' }], remove: ['X-Header-Remove'],
} };
function route(name: string, host: string, rules: Array<{ path: string; filters: unknown[] }>, ns = 'team-a') {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host],
      rules: rules.map((r) => ({ matches: [{ path: { type: 'PathPrefix', value: r.path } }], filters: r.filters, backendRefs: [{ name: 'v1', port: 80, namespace: 'team-a' }] })),
    },
  };
}
const MIRROR = route('request-mirror', 'mirror.test', [
  { path: '/mirror', filters: [mirrorTo('mirror-a')] },
  { path: '/mirror-and-modify-request-headers', filters: [HEADER_EDITS, mirrorTo('mirror-a')] },
]);

test.before(async () => {
  mirrors = { a: await recorder('127.0.0.20'), b: await recorder('127.0.0.21'), secret: await recorder('127.0.0.22') };
  ({ ctl, echo } = await startGatewayLocal(['v1'], {
    'recorders.json': [
      service('team-a', 'mirror-a'), ...slices('team-a', 'mirror-a', [mirrors.a]),
      service('team-a', 'mirror-b'), ...slices('team-a', 'mirror-b', [mirrors.b]),
      service('team-b', 'secret'), ...slices('team-b', 'secret', [mirrors.secret]),
    ],
    'mirror.json': [MIRROR],
    'multi.json': [route('request-multiple-mirrors', 'multi-mirror.test', [
      { path: '/multi-mirror', filters: [mirrorTo('mirror-a'), mirrorTo('mirror-b')] },
      { path: '/multi-mirror-and-modify-request-headers', filters: [HEADER_EDITS, mirrorTo('mirror-a'), mirrorTo('mirror-b')] },
    ])],
    'percent.json': [route('request-percentage-mirror', 'percent-mirror.test', [
      { path: '/percent-mirror', filters: [mirrorTo('mirror-a', { percent: 20 })] },
      { path: '/percent-mirror-fraction', filters: [mirrorTo('mirror-b', { fraction: { numerator: 25, denominator: 50 } })] },
      { path: '/never', filters: [mirrorTo('mirror-b', { percent: 0 })] },
    ])],
    'hostile.json': [route('hostile', 'hostile-mirror.test', [
      { path: '/steal', filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'secret', namespace: 'team-b', port: 80 } } }] },
      { path: '/too-much', filters: [mirrorTo('mirror-a', { percent: 101 })] },
      { path: '/both', filters: [mirrorTo('mirror-a', { percent: 5, fraction: { numerator: 1 } })] },
      { path: '/zero-denominator', filters: [mirrorTo('mirror-a', { fraction: { numerator: 0, denominator: 0 } })] },
    ])],
  }));
  await ctl.until('mirror.test', '/mirror', (r) => r.backend === 'v1', { what: 'the routes served' });
});

test.after(async () => {
  await stopGatewayLocal(ctl, echo);
  for (const r of Object.values(mirrors ?? {})) r.server.close();
});

async function expectCopy(r: Recorder, path: string, what: string): Promise<Copy> {
  return waitFor(() => copiesOf(r, path).at(-1), { what });
}

over.both('HTTPRouteRequestMirror › the backend answers, the mirror gets a copy (method, path, query, body, headers as the filters left them)', async (p) => {
  await p.until('mirror.test', '/mirror', (r) => r.backend === 'v1', { what: 'mirror.test over this protocol' });
  const path = `/mirror/${p.tag}`;
  const r = await p.request('mirror.test', `${path}?q=1`, { method: 'POST', body: 'payload', headers: { 'X-Client': 'c' } });
  assert.is(r.status, 200);
  assert.is(r.backend, 'v1');
  const copy = await expectCopy(mirrors.a, path, 'the copy at mirror-a');
  assert.is(copy.method, 'POST');
  assert.is(copy.url, `${path}?q=1`);
  assert.is(copy.body, 'payload');
  assert.is(copy.headers['x-client'], 'c');
  assert.is(copy.headers.host, 'mirror.test');
  const edited = `/mirror-and-modify-request-headers/${p.tag}`;
  const e = await p.request('mirror.test', edited, { headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Set': 'set-val' } });
  assert.is((e.json?.headers as Record<string, string>)['x-header-set'], 'set-overwrites-values');
  const c = await expectCopy(mirrors.a, edited, 'the edited copy');
  assert.is(c.headers['x-header-set'], 'set-overwrites-values');
  assert.is(c.headers['x-header-add'], 'header-val-1');
  assert.is(c.headers['x-header-remove'], undefined);
});

over.both('HTTPRouteRequestMultipleMirrors › each mirror of the rule gets a copy', async (p) => {
  for (const base of ['/multi-mirror', '/multi-mirror-and-modify-request-headers']) {
    const path = `${base}/${p.tag}`;
    const r = await p.request('multi-mirror.test', path, { headers: { 'X-Header-Remove': 'remove-val' } });
    assert.is(r.backend, 'v1');
    for (const m of [mirrors.a, mirrors.b]) {
      const copy = await expectCopy(m, path, `${path} at ${m.address}`);
      if (base.endsWith('headers')) assert.is(copy.headers['x-header-set'], 'set-overwrites-values');
    }
  }
});

/** Copies of `n` requests to host/path (10 at a time) that reached `m`, once all have arrived or stopped arriving. */
async function mirrored(p: ProtocolClient, host: string, path: string, m: Recorder, n: number): Promise<number> {
  let sent = 0;
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (sent < n) {
      sent++;
      assert.is((await p.request(host, path)).backend, 'v1');
    }
  }));
  let last = -1;
  // The copies go from timers: settled when two looks 200 ms apart agree.
  await waitFor(async () => {
    const now = copiesOf(m, path).length;
    if (now === last) return true;
    last = now;
    await new Promise((r) => setTimeout(r, 200));
    return false;
  }, { what: 'the copies settled' });
  return copiesOf(m, path).length;
}

over.both('HTTPRouteRequestPercentageMirror › percent 20 and fraction 25/50 copy that share (within 3 standard deviations); 0 copies nothing', async (p) => {
  const n = 300;
  for (const [path, m, share] of [[`/percent-mirror/${p.tag}`, mirrors.a, 0.2], [`/percent-mirror-fraction/${p.tag}`, mirrors.b, 0.5]] as const) {
    const got = await mirrored(p, 'percent-mirror.test', path, m, n);
    const band = 3 * Math.sqrt(n * share * (1 - share));
    assert.ok(Math.abs(got - n * share) <= band, `${path}: ${got} copies of ${n}, want ${n * share} ± ${band.toFixed(1)}`);
  }
  assert.is(await mirrored(p, 'percent-mirror.test', `/never/${p.tag}`, mirrors.b, 20), 0);
});

over.both('HTTPRouteRequestMirror › attacker: a mirror to another namespace\'s Service without a grant gets no copy, the request is served; bad shares named', async (p) => {
  await ctl.logged(/HTTPRoute team-a\/hostile.*spec\.rules\[0\]\.filters\[0\]\.requestMirror\.backendRef.*no copy is sent/, 'the refused mirror named');
  for (const [i, field] of ['percent', '', 'fraction\\.denominator'].entries()) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/hostile.*spec\\.rules\\[${i + 1}\\]\\.filters\\[0\\]\\.requestMirror${field ? `\\.${field}` : ''}: .*rule set aside`), `rule ${i + 1} named`);
  }
  const r = await p.request('hostile-mirror.test', `/steal/${p.tag}`);
  assert.is(r.backend, 'v1');
  // A copy that went would arrive while the next, permitted one does: wait for that one.
  await p.request('mirror.test', `/mirror/after-steal-${p.tag}`);
  await expectCopy(mirrors.a, `/mirror/after-steal-${p.tag}`, 'a later copy');
  assert.is(mirrors.secret.seen.length, 0, 'team-b\'s Service got nothing');
  assert.is((await p.request('hostile-mirror.test', '/too-much')).status, 404, 'the set-aside rule serves nothing');
});

/** Waits until a request's copy reaches `m` (each look a request of its own path). */
async function copiesReach(p: ProtocolClient, m: Recorder, label: string, what: string) {
  await waitFor(async () => {
    const path = `/mirror/${label}-${p.tag}-${Date.now()}`;
    await p.request('mirror.test', path);
    await new Promise((r) => setTimeout(r, 100));
    return copiesOf(m, path).length > 0;
  }, { what });
}

over.both('HTTPRouteRequestMirror › a changed mirror is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('mirror.json', [route('request-mirror', 'mirror.test', [{ path: '/mirror', filters: [mirrorTo('mirror-b')] }])]);
  await copiesReach(p, mirrors.b, 'changed', 'copies go to mirror-b');
  assert.is(await reloads(), before, 'no reload');
  ctl.write('mirror.json', [MIRROR]);
  await copiesReach(p, mirrors.a, 'back', 'copies go to mirror-a again');
});

test.run();
