// ingress-nginx test/e2e/annotations/canary.go, ported: each It a host of its own on one
// controller, with a mainline Service over the two echo endpoints and a canary Service over an
// echo endpoint named "canary" (each It's own pair, as each It of ingress-nginx has its own
// namespace: a canary's traffic-shaping policy belongs to its backend). What the e2e tests read
// from httpbun's body (which Service answered) is read here from the echo's name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { annotations, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitForSteady } from '../../../support/wait.js';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { ingress, service, slices, type Reply } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let canaryEcho: EchoServer;
const its = ported(test, () => fx.ctl);

const OLDER = '2024-01-01T00:00:00Z';
const NEWER = '2024-01-02T00:00:00Z';

type Ann = Record<string, string>;
const byHeader = (more: Ann = {}): Ann => ({ canary: 'true', 'canary-by-header': 'CanaryByHeader', ...more });

/** An It's pair of Services: `m<id>` over the echo endpoints, `c<id>` over the canary endpoint. */
function services(id: string): object[] {
  return [...fx.echoService(`m${id}`), service(fx.ns, `c${id}`), ...slices(fx.ns, `c${id}`, [canaryEcho])];
}

/** Host `c<id>.foo.com`: a mainline Ingress (when `main` is given) and a canary Ingress, both on /info. */
function pair(id: string, canary: Ann, main: Ann | null = {}, o: { mainCreated?: string; canaryCreated?: string } = {}): object[] {
  const host = `c${id}.foo.com`;
  const ann = (a: Ann) => annotations(a);
  return [
    ...services(id),
    ...(main ? [ingress(fx.ns, `main-${id}`, { host, created: o.mainCreated ?? OLDER, annotations: ann(main), paths: [{ path: '/info', service: `m${id}` }] })] : []),
    ingress(fx.ns, `canary-${id}`, { host, created: o.canaryCreated ?? NEWER, annotations: ann(canary), paths: [{ path: '/info', service: `c${id}` }] }),
  ];
}

const AFFINITY: Ann = { affinity: 'cookie', 'session-cookie-name': 'aff' };
const FORCED: Ann = { canary: 'true', 'canary-by-header': 'ForceCanary', 'canary-by-header-value': 'yes' };

/** Every host's objects, each host's in a file of its own (an It that changes them rewrites it), written in `before`. */
const PAIRS: Record<string, () => object[]> = {
  45: () => pair('45', byHeader()),
  89: () => pair('89', byHeader(), null),
  174: () => pair('174', byHeader()),
  232: () => pair('232', byHeader(), {}, { canaryCreated: OLDER, mainCreated: NEWER }),
  289: () => pair('289', byHeader()),
  363: () => pair('363', byHeader()),
  445: () => pair('445', byHeader()),
  513: () => pair('513', byHeader({ 'canary-by-header-value': 'DoCanary' })),
  594: () => pair('594', byHeader({ 'canary-by-header-pattern': '^Do[A-Z][a-z]+y$' })),
  647: () => pair('647', byHeader({ 'canary-by-header-value': 'DoCanary', 'canary-by-header-pattern': '^Do[A-Z][a-z]+y$' })),
  692: () => pair('692', byHeader({ 'canary-by-header-pattern': '[][**da?$&*', 'canary-by-cookie': 'CanaryByCookie' })),
  741: () => pair('741', byHeader({ 'canary-by-header-value': 'DoCanary', 'canary-by-cookie': 'CanaryByCookie' })),
  790: () => pair('790', { canary: 'true', 'canary-by-cookie': 'Canary-By-Cookie' }),
  862: () => pair('862', { canary: 'true', 'canary-weight': '0' }),
  910: () => pair('910', { canary: 'true', 'canary-weight': '100' }),
  952: () => pair('952', { canary: 'true', 'canary-weight': '1000', 'canary-weight-total': '1000' }),
  995: () => pair('995', { canary: 'true', 'canary-weight': '50' }),
  1031: () => pair('1031', { canary: 'true', 'canary-weight': '100', 'canary-weight-total': '200' }),
  // 1104: a canary Ingress alone on its host, and a mainline on another host.
  1104: () => [
    ...pair('1104', byHeader(), null),
    ingress(fx.ns, 'main-1104', { host: 'bar1104.foo.com', paths: [{ path: '/info', service: 'm1104' }] }),
  ],
  // 1138: the canary's two paths name a Service that does not exist, and match no mainline path.
  1138: () => [
    ...services('1138'),
    ingress(fx.ns, 'main-1138', { host: 'c1138.foo.com', paths: [{ path: '/info', service: 'm1138' }] }),
    ingress(fx.ns, 'canary-1138', {
      host: 'c1138.foo.com', annotations: annotations(byHeader()),
      paths: [{ path: '/foo', service: 'httpy-svc-canary' }, { path: '/bar', service: 'httpy-svc-canary' }],
    }),
  ],
  1175: () => pair('1175', { ...FORCED, 'canary-weight': '1' }, AFFINITY),
  1242: () => pair('1242', { ...FORCED, 'canary-weight': '1', 'affinity-canary-behavior': 'sticky' }, AFFINITY),
  1310: () => pair('1310', { ...FORCED, 'canary-weight': '50', 'affinity-canary-behavior': 'legacy' }, AFFINITY),
};

const isMain = (r: Reply) => r.status === 200 && r.backend !== undefined && r.backend.startsWith('echo-');
const isCanary = (r: Reply) => r.status === 200 && r.backend === 'canary';
const who = (r: Reply) => `${r.status} from ${r.backend ?? 'no echo'}`;

/** `n` requests (sent 10 at a time) to `c<id>.foo.com/info` with `headers`. */
async function replies(p: ProtocolClient, id: string, n: number, headers: Record<string, string> = {}): Promise<Reply[]> {
  const out: Reply[] = [];
  for (let i = 0; i < n; i += 10) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => p.request(`c${id}.foo.com`, '/info', { headers })))));
  }
  return out;
}

async function expectMain(p: ProtocolClient, id: string, headers: Record<string, string> = {}, n = 1): Promise<void> {
  for (const r of await replies(p, id, n, headers)) assert.ok(isMain(r), `c${id} with ${JSON.stringify(headers)}: mainline expected, got ${who(r)}`);
}
async function expectCanary(p: ProtocolClient, id: string, headers: Record<string, string> = {}, n = 1): Promise<void> {
  for (const r of await replies(p, id, n, headers)) assert.ok(isCanary(r), `c${id} with ${JSON.stringify(headers)}: canary expected, got ${who(r)}`);
}

/**
 * Weight 50 of 100: both backends answer a share of 200 requests. ingress-nginx asks 40% of each;
 * 30% here, so a fair coin fails it once in ~10^8 runs instead of once in ~200.
 */
async function expectSplit(p: ProtocolClient, id: string): Promise<void> {
  const all = await replies(p, id, 200);
  const main = all.filter(isMain).length;
  const canary = all.filter(isCanary).length;
  assert.is(main + canary, 200, 'every request answered by mainline or canary');
  assert.ok(main >= 60 && canary >= 60, `split between mainline (${main}) and canary (${canary})`);
}

test.before(async () => {
  fx = await startFixture('canary');
  canaryEcho = await startEchoServer({ address: '127.0.9.20', name: 'canary' });
  for (const [id, objects] of Object.entries(PAIRS)) fx.apply(`pair-${id}.json`, objects());
  const served = ['45', '174', '232', '289', '363', '445', '513', '594', '647', '692', '741', '790', '862', '910', '952', '995', '1031', '1138', '1175', '1242', '1310'];
  await Promise.all([
    ...served.map((id) => fx.ctl.until(`c${id}.foo.com`, '/info', (r) => r.backend !== undefined, { what: `c${id} served` })),
    fx.ctl.until('c174.foo.com', '/info', isCanary, { headers: { CanaryByHeader: 'always' }, what: 'c174 canary served' }),
    fx.ctl.until('bar1104.foo.com', '/info', isMain, { what: 'bar1104 served' }),
  ]);
});
test.after(async () => {
  await fx.stop();
  await canaryEcho.close();
});

its.both('annotations/canary.go:45', async (p) => {
  await expectMain(p, '45');
});

its.both('annotations/canary.go:89', async (p) => {
  const r = await p.request('c89.foo.com', '/info', { headers: { CanaryByHeader: 'always' } });
  assert.is(r.status, 404, who(r));
});

its.both('annotations/canary.go:174', async (p) => {
  await expectMain(p, '174', { CanaryByHeader: 'never' });
  await expectCanary(p, '174', { CanaryByHeader: 'always' });
});

its.both('annotations/canary.go:232', async (p) => {
  await expectMain(p, '232', { CanaryByHeader: 'never' });
  await expectCanary(p, '232', { CanaryByHeader: 'always' });
});

its.both('annotations/canary.go:289', async (p) => {
  // ingress-nginx adds an annotation with no effect; here one whose effect shows the change is live.
  fx.apply('pair-289.json', pair('289', byHeader(), { 'x-forwarded-prefix': '/changed' }));
  await p.until('c289.foo.com', '/info', (r) => isMain(r) && (r.json?.headers as Ann | undefined)?.['x-forwarded-prefix'] === '/changed', {
    headers: { CanaryByHeader: 'never' }, what: 'the modified mainline Ingress served',
  });
  await expectMain(p, '289', { CanaryByHeader: 'never' });
  await expectCanary(p, '289', { CanaryByHeader: 'always' });
});

its.both('annotations/canary.go:363', async (p) => {
  fx.apply('pair-363.json', pair('363', byHeader({ 'canary-by-header': 'CanaryByHeader2' })));
  await p.until('c363.foo.com', '/info', isCanary, { headers: { CanaryByHeader2: 'always' }, what: 'the modified canary Ingress served' });
  // Each worker takes up the canary's new header on its own timer.
  await waitForSteady(async () => isMain(await p.request('c363.foo.com', '/info', { headers: { CanaryByHeader: 'always' } })), { what: 'the old header ignored by every worker' });
  await expectMain(p, '363', { CanaryByHeader2: 'never' });
  await expectCanary(p, '363', { CanaryByHeader2: 'always' });
  await expectMain(p, '363', { CanaryByHeader: 'always' });
});

its.both('annotations/canary.go:445', async (p) => {
  await expectCanary(p, '445', { CanaryByHeader: 'always' });
  await expectMain(p, '445', { CanaryByHeader: 'never' });
  await expectMain(p, '445', { CanaryByHeader: 'badheadervalue' });
});

its.both('annotations/canary.go:513', async (p) => {
  await expectCanary(p, '513', { CanaryByHeader: 'DoCanary' });
  await expectMain(p, '513', { CanaryByHeader: 'always' });
  await expectMain(p, '513', { CanaryByHeader: 'never' });
  await expectMain(p, '513', { CanaryByHeader: 'otherheadervalue' });
});

its.both('annotations/canary.go:594', async (p) => {
  await expectCanary(p, '594', { CanaryByHeader: 'DoCanary' });
  await expectMain(p, '594', { CanaryByHeader: 'Docanary' });
});

its.both('annotations/canary.go:647', async (p) => {
  // The value is given, so the pattern is not used: a near miss of the value is mainline.
  await expectMain(p, '647', { CanaryByHeader: 'DoCananry' });
  await expectCanary(p, '647', { CanaryByHeader: 'DoCanary' });
});

its.both('annotations/canary.go:692', async (p) => {
  // A pattern that does not compile sends the request to mainline, even with the cookie "always".
  await expectMain(p, '692', { CanaryByHeader: 'DoCanary', Cookie: 'CanaryByCookie=always' });
});

its.both('annotations/canary.go:741', async (p) => {
  await expectCanary(p, '741', { CanaryByHeader: 'otherheadervalue', Cookie: 'CanaryByCookie=always' });
});

its.both('annotations/canary.go:790', async (p) => {
  await expectCanary(p, '790', { Cookie: 'Canary-By-Cookie=always' }, 50);
  await expectMain(p, '790', { Cookie: 'Canary-By-Cookie=never' }, 50);
  await expectMain(p, '790', { Cookie: 'Canary-By-Cookie=badcookievalue' }, 50);
});

its.both('annotations/canary.go:862', async (p) => {
  await expectMain(p, '862', {}, 20);
});

its.both('annotations/canary.go:910', async (p) => {
  await expectCanary(p, '910', {}, 20);
});

its.both('annotations/canary.go:952', async (p) => {
  await expectCanary(p, '952', {}, 20);
});

its.both('annotations/canary.go:995', async (p) => {
  await expectSplit(p, '995');
});

its.both('annotations/canary.go:1031', async (p) => {
  await expectSplit(p, '1031');
});

its.both('annotations/canary.go:1070', async (p) => {
  // Two catch-all Ingresses (spec.defaultBackend, no rules), the canary one older: the default
  // server's backend is the mainline's, the canary only its alternative. Written here and removed
  // after, since they take the default server of the whole file.
  const objects = [
    ...services('1070'),
    ingress(fx.ns, 'canary-1070', { created: OLDER, annotations: annotations(byHeader()), defaultBackend: { service: 'c1070' } }),
    ingress(fx.ns, 'main-1070', { created: NEWER, defaultBackend: { service: 'm1070' } }),
  ];
  fx.apply('catch-all-1070.json', objects);
  try {
    await p.until('unknown1070.foo.com', '/', isMain, { what: 'the default server served by the mainline catch-all' });
    for (const r of await Promise.all(Array.from({ length: 10 }, () => p.request('unknown1070.foo.com', '/anything')))) assert.ok(isMain(r), who(r));
    assert.ok(isMain(await p.request('unknown1070.foo.com', '/', { headers: { CanaryByHeader: 'never' } })));
  } finally {
    fx.ctl.remove('catch-all-1070.json');
    await p.until('unknown1070.foo.com', '/', (r) => r.status === 404, { what: 'the catch-all removed' });
  }
});

its.both('annotations/canary.go:1104', async (p) => {
  assert.ok(isMain(await p.request('bar1104.foo.com', '/info')));
  // No server for the canary's host: the default server answers, never the canary.
  const r = await p.request('c1104.foo.com', '/info', { headers: { CanaryByHeader: 'always' } });
  assert.is(r.status, 404, who(r));
});

its.both('annotations/canary.go:1138', async (p) => {
  await expectMain(p, '1138', { CanaryByHeader: 'always' });
  await expectMain(p, '1138');
  for (const path of ['/foo', '/bar']) {
    const r = await p.request('c1138.foo.com', path, { headers: { CanaryByHeader: 'always' } });
    assert.is(r.status, 404, `${path}: ${who(r)}`);
  }
});

/** The value of cookie `name` in a reply's Set-Cookie headers. */
const cookieValue = (r: Reply, name: string): string | undefined =>
  ([] as string[]).concat(r.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1);

async function stickyCanary(p: ProtocolClient, id: string): Promise<void> {
  const forced = (await replies(p, id, 1, { ForceCanary: 'yes' }))[0]!;
  assert.ok(isCanary(forced), `forced: ${who(forced)}`);
  const aff = cookieValue(forced, 'aff');
  assert.ok(aff, `the canary's answer sets the affinity cookie: ${JSON.stringify(forced.headers['set-cookie'])}`);
  // Canary weight 1: without the cookie nearly every request would be mainline's.
  await expectCanary(p, id, { Cookie: `aff=${aff}` }, 50);
}

its.both('annotations/canary.go:1175', async (p) => {
  await stickyCanary(p, '1175');
});

its.both('annotations/canary.go:1242', async (p) => {
  await stickyCanary(p, '1242');
});

its.both('annotations/canary.go:1310', async (p) => {
  const forced = (await replies(p, '1310', 1, { ForceCanary: 'yes' }))[0]!;
  assert.ok(isCanary(forced), `forced: ${who(forced)}`);
  assert.is(cookieValue(forced, 'aff'), undefined, 'legacy: the canary sets no affinity cookie');
  await expectSplit(p, '1310');
});

test.run();
