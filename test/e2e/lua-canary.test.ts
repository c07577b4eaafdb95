// Canary traffic shaping per request, as ingress-nginx orders it: affinity, then header
// (value, else pattern, else always/never), then cookie (always/never), then weight.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { startLuaNginx, backend, type LuaNginx } from '../support/lua-nginx.js';
import { startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';

const test = suite('lua canary');
let nginx: LuaNginx;
let primary: EchoServer;
let canary: EchoServer;

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

interface Policy { weight?: number; weightTotal?: number; header?: string; headerValue?: string; headerPattern?: string; cookie?: string }

const CASES: Record<string, Policy> = {
  h: { header: 'X-Canary', cookie: 'canary_h' },
  hv: { header: 'X-Canary', headerValue: 'blue' },
  hp: { header: 'X-Canary', headerPattern: '^gr(e|a)y$' },
  hvp: { header: 'X-Canary', headerValue: 'blue', headerPattern: '.*' },
  bad: { header: 'X-Canary', headerPattern: '([', cookie: 'canary_bad' },
  c: { cookie: 'canary_c', weight: 100 },
  w0: { weight: 0 },
  w100: { weight: 100 },
  w30: { weight: 30 },
  wt: { weight: 500, weightTotal: 1000 },
  aff: {},
  legacy: {},
  primaryaff: { weight: 100 },
};

function stickyCfg() {
  return {
    sessionAffinityConfig: {
      name: 'cookie', mode: 'persistent',
      cookieSessionAffinity: { name: 'pin', expires: '', maxage: '', locations: {}, secure: false, path: '', domain: '', samesite: '', conditional_samesite_none: false, changeonfailure: false },
    },
  };
}

test.before(async () => {
  [primary, canary] = await startEchoServers(2, { firstOctet: 40 });
  nginx = await startLuaNginx({ workers: 2, locations: Object.keys(CASES).map((k) => ({ path: `/${k}/`, backend: `prod-${k}` })) });
  const backends = Object.entries(CASES).flatMap(([k, policy]) => [
    backend(`prod-${k}`, [primary.endpoint], { alternativeBackends: [`canary-${k}`], ...(['primaryaff', 'aff', 'legacy'].includes(k) ? stickyCfg() : {}) }),
    backend(`canary-${k}`, [canary.endpoint], {
      noServer: true,
      trafficShapingPolicy: { weight: 0, weightTotal: 0, header: '', headerValue: '', headerPattern: '', cookie: '', ...policy },
      // affinity-canary-behavior: the controller gives a 'sticky' canary the primary's affinity, a 'legacy' one none.
      ...(k === 'aff' ? stickyCfg() : {}),
    }),
  ]);
  await nginx.configure('/configuration/backends', backends);
  await waitFor(async () => {
    for (let i = 0; i < 8; i++) if ((await nginx.request({ path: '/w100/' })).headers['x-alternative-upstream-name'] !== 'canary-w100') return false;
    return true;
  }, { what: 'backends synced in both workers' });
});
test.after(async () => {
  await nginx?.stop();
  await closeAll([primary, canary].filter(Boolean));
});

/** Which backend served: 'canary' or 'primary' (checked against the echo body and the variable). */
async function route(path: string, headers: Record<string, string> = {}): Promise<'canary' | 'primary'> {
  const r = await nginx.request({ path, headers });
  assert.is(r.status, 200);
  const name = (JSON.parse(r.body) as { name: string }).name;
  const alternative = r.headers['x-alternative-upstream-name'] ?? '';
  if (name === canary.name) {
    assert.is(alternative, `canary-${path.split('/')[1]}`, '$proxy_alternative_upstream_name names the canary');
    return 'canary';
  }
  assert.is(name, primary.name);
  assert.is(alternative, '');
  return 'primary';
}

test('canary-by-header: always / never / other values fall through', async () => {
  assert.is(await route('/h/', { 'x-canary': 'always' }), 'canary');
  assert.is(await route('/h/', { 'x-canary': 'never', cookie: 'canary_h=always' }), 'primary', 'header beats cookie');
  assert.is(await route('/h/', { 'x-canary': 'maybe', cookie: 'canary_h=always' }), 'canary', 'other value → cookie decides');
  assert.is(await route('/h/', { 'x-canary': 'maybe' }), 'primary');
  assert.is(await route('/h/'), 'primary');
});

test('canary-by-header-value matches exactly; "always" no longer applies', async () => {
  assert.is(await route('/hv/', { 'x-canary': 'blue' }), 'canary');
  assert.is(await route('/hv/', { 'x-canary': 'Blue' }), 'primary');
  assert.is(await route('/hv/', { 'x-canary': 'always' }), 'primary');
});

test('canary-by-header-pattern matches a regex', async () => {
  assert.is(await route('/hp/', { 'x-canary': 'grey' }), 'canary');
  assert.is(await route('/hp/', { 'x-canary': 'gray' }), 'canary');
  assert.is(await route('/hp/', { 'x-canary': 'green' }), 'primary');
});

test('header-value wins over header-pattern', async () => {
  assert.is(await route('/hvp/', { 'x-canary': 'blue' }), 'canary');
  assert.is(await route('/hvp/', { 'x-canary': 'red' }), 'primary', 'the catch-all pattern is ignored');
});

test('an invalid header pattern sends the request to the primary (and is logged)', async () => {
  assert.is(await route('/bad/', { 'x-canary': 'anything', cookie: 'canary_bad=always' }), 'primary');
  assert.is(await route('/bad/', { cookie: 'canary_bad=always' }), 'canary', 'without the header the cookie still applies');
  assert.match(await nginx.errorLog(), /invalid canary-by-header-pattern/);
});

test('canary-by-cookie: always / never, else the weight', async () => {
  assert.is(await route('/c/', { cookie: 'other=1; canary_c=always' }), 'canary');
  assert.is(await route('/c/', { cookie: 'canary_c=never' }), 'primary', 'never beats weight 100');
  assert.is(await route('/c/', { cookie: 'canary_c=sometimes' }), 'canary', 'weight 100 decides');
});

test('canary-weight: 0 never, 100 always, 30 about 30%, weightTotal 1000', async () => {
  for (let i = 0; i < 30; i++) assert.is(await route('/w0/'), 'primary');
  for (let i = 0; i < 30; i++) assert.is(await route('/w100/'), 'canary');
  let n30 = 0;
  let nt = 0;
  for (let i = 0; i < 400; i++) {
    if ((await route('/w30/')) === 'canary') n30 += 1;
    if ((await route('/wt/')) === 'canary') nt += 1;
  }
  assert.ok(n30 > 80 && n30 < 160, `weight 30 → ${n30}/400`);
  assert.ok(nt > 140 && nt < 260, `weight 500 of 1000 → ${nt}/400`);
});

test('affinity: a request pinned to the canary by its cookie stays there; a legacy (affinity-less) canary does not pin', async () => {
  const pinned = `pin=${md5(canary.hostPort)}`;
  for (let i = 0; i < 10; i++) assert.is(await route('/aff/', { cookie: pinned }), 'canary', 'pinned despite weight 0');
  assert.is(await route('/aff/'), 'primary', 'no cookie → weight 0');
  assert.is(await route('/aff/', { cookie: 'pin=unknown' }), 'primary');
  for (let i = 0; i < 5; i++) assert.is(await route('/legacy/', { cookie: pinned }), 'primary', 'legacy: the canary has no affinity of its own');
});

test('affinity: a request pinned to the primary stays there despite weight 100', async () => {
  const pinned = `pin=${md5(primary.hostPort)}`;
  for (let i = 0; i < 10; i++) assert.is(await route('/primaryaff/', { cookie: pinned }), 'primary');
  assert.is(await route('/primaryaff/'), 'canary');
});

test.run();
