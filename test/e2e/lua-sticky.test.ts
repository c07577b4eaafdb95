// Cookie affinity (sticky_balanced, sticky_persistent) against real NGINX with two workers:
// the cookie names the endpoint (md5 of address:port), carries the configured attributes,
// pins later requests, is re-picked when its endpoint is gone, and change-on-failure.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { startLuaNginx, backend, type LuaNginx, type HttpReply } from '../support/lua-nginx.js';
import { startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';

const test = suite('lua sticky sessions');
let nginx: LuaNginx;
let echo: EchoServer[];
let deadEndpoint: { address: string; port: string };

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

function affinity(mode: 'balanced' | 'persistent', cookie: Record<string, unknown> = {}) {
  return {
    sessionAffinityConfig: {
      name: 'cookie', mode,
      cookieSessionAffinity: {
        name: 'route', expires: '', maxage: '', locations: {}, secure: false, path: '', domain: '',
        samesite: '', conditional_samesite_none: false, changeonfailure: false, ...cookie,
      },
    },
  };
}

const setCookie = (r: HttpReply): string[] => r.headers['set-cookie'] ?? [];
const nameOf = (r: HttpReply): string => (JSON.parse(r.body) as { name: string }).name;

test.before(async () => {
  echo = await startEchoServers(3, { firstOctet: 30 });
  deadEndpoint = { address: '127.0.0.39', port: String(await freePort('127.0.0.39')) };
  nginx = await startLuaNginx({
    workers: 2,
    locations: ['balanced', 'persistent', 'attrs', 'samesite', 'cof', 'nocof'].map((b) => ({ path: `/${b}/`, backend: b })),
  });
  await nginx.configure('/configuration/backends', [
    backend('balanced', echo.map((e) => e.endpoint), affinity('balanced', { expires: '3600', maxage: '7200', samesite: 'Lax' })),
    backend('persistent', echo.map((e) => e.endpoint), affinity('persistent')),
    backend('attrs', echo.map((e) => e.endpoint), affinity('balanced', { name: 'SESSION', path: '/attrs', domain: 'shop.test', secure: true })),
    backend('samesite', echo.map((e) => e.endpoint), affinity('balanced', { samesite: 'None', conditional_samesite_none: true })),
    backend('cof', [deadEndpoint, echo[0].endpoint], affinity('persistent', { changeonfailure: true })),
    backend('nocof', [deadEndpoint, echo[0].endpoint], affinity('persistent', { changeonfailure: false })),
  ]);
  await waitFor(async () => (await nginx.request({ path: '/balanced/' })).status === 200, { what: 'backends synced' });
  // Both workers have synced once the last backend answers from either of them.
  await waitFor(async () => {
    const pids = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const r = await nginx.request({ path: '/persistent/' });
      if (r.status !== 200) return false;
      pids.add(String(r.headers['x-worker-pid']));
    }
    return pids.size === 2;
  }, { what: 'both workers synced' });
});
test.after(async () => {
  await nginx?.stop();
  await closeAll(echo ?? []);
});

test('a new session gets a cookie naming its endpoint, with Path, Expires, Max-Age, HttpOnly, SameSite', async () => {
  const r = await nginx.request({ path: '/balanced/' });
  assert.is(r.status, 200);
  const cookies = setCookie(r);
  assert.is(cookies.length, 1);
  const [pair, ...attrs] = cookies[0].split('; ');
  assert.is(pair, `route=${md5(nameOf(r))}`);
  assert.ok(attrs.includes('Path=/'), cookies[0]);
  assert.ok(attrs.includes('Max-Age=7200'), cookies[0]);
  assert.ok(attrs.includes('HttpOnly'), cookies[0]);
  assert.ok(attrs.includes('SameSite=Lax'), cookies[0]);
  assert.not.ok(attrs.includes('Secure'), 'not secure over plain HTTP');
  const expires = attrs.find((a) => a.startsWith('Expires='));
  assert.ok(expires, cookies[0]);
  const delta = Date.parse(expires!.slice('Expires='.length)) - Date.now();
  assert.ok(delta > 3500_000 && delta < 3700_000, `expires in ${delta} ms`);
});

test('requests carrying the cookie stay on their endpoint (across both workers) and get no new cookie', async () => {
  for (const mode of ['balanced', 'persistent']) {
    const first = await nginx.request({ path: `/${mode}/` });
    const cookie = setCookie(first)[0].split(';')[0];
    const pids = new Set<string>();
    const strays: string[] = []; // collected, since waitFor retries on a throw
    await waitFor(async () => {
      const r = await nginx.request({ path: `/${mode}/`, headers: { cookie } });
      if (nameOf(r) !== nameOf(first) || setCookie(r).length !== 0) strays.push(`${r.headers['x-worker-pid']}: ${nameOf(r)} ${setCookie(r)}`);
      pids.add(String(r.headers['x-worker-pid']));
      return pids.size === 2;
    }, { intervalMs: 1, what: 'answers from both workers' });
    assert.equal(strays, [], mode);
  }
});

test('new sessions are spread over the endpoints', async () => {
  const names = new Set<string>();
  for (let i = 0; i < 12; i++) names.add(nameOf(await nginx.request({ path: '/persistent/' })));
  assert.is(names.size, 3);
});

test('Domain, custom Path, custom name and Secure are honoured', async () => {
  const r = await nginx.request({ path: '/attrs/' });
  const attrs = setCookie(r)[0].split('; ');
  assert.is(attrs[0], `SESSION=${md5(nameOf(r))}`);
  for (const a of ['Path=/attrs', 'Domain=shop.test', 'Secure', 'HttpOnly']) assert.ok(attrs.includes(a), `${a} in ${attrs.join('; ')}`);
});

test('conditional SameSite=None is left off for browsers that mishandle it', async () => {
  const modern = await nginx.request({ path: '/samesite/', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36' } });
  assert.ok(setCookie(modern)[0].includes('SameSite=None'), setCookie(modern)[0]);
  const old = await nginx.request({ path: '/samesite/', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/60.0.3112.113 Safari/537.36' } });
  assert.not.ok(setCookie(old)[0].includes('SameSite'), setCookie(old)[0]);
});

test('an unknown cookie value, or one naming a removed endpoint, is re-picked and re-set', async () => {
  const unknown = await nginx.request({ path: '/persistent/', headers: { cookie: 'route=0123456789abcdef' } });
  assert.is(unknown.status, 200);
  assert.is(setCookie(unknown)[0].split(';')[0], `route=${md5(nameOf(unknown))}`);

  const gone = echo[2];
  await nginx.configure('/configuration/backends', [
    backend('persistent', echo.slice(0, 2).map((e) => e.endpoint), affinity('persistent')),
  ]);
  const cookie = `route=${md5(gone.hostPort)}`;
  await waitFor(async () => {
    for (let i = 0; i < 6; i++) {
      const r = await nginx.request({ path: '/persistent/', headers: { cookie } });
      if (r.status !== 200 || nameOf(r) === gone.name) return false;
    }
    return true;
  }, { what: 'sessions of the removed endpoint to move' });
  for (let i = 0; i < 6; i++) {
    const r = await nginx.request({ path: '/persistent/', headers: { cookie } });
    assert.is.not(nameOf(r), gone.name);
    assert.is(setCookie(r)[0].split(';')[0], `route=${md5(nameOf(r))}`);
  }
});

test('change-on-failure moves a session off a failing endpoint and re-sets the cookie; without it the request fails', async () => {
  // Restore the backends the other tests replaced.
  await nginx.configure('/configuration/backends', [
    backend('cof', [deadEndpoint, echo[0].endpoint], affinity('persistent', { changeonfailure: true })),
    backend('nocof', [deadEndpoint, echo[0].endpoint], affinity('persistent', { changeonfailure: false })),
  ]);
  const cookie = `route=${md5(`${deadEndpoint.address}:${deadEndpoint.port}`)}`;
  await waitFor(async () => (await nginx.request({ path: '/cof/', headers: { cookie } })).status === 200, { what: 'cof synced' });
  for (let i = 0; i < 6; i++) {
    const r = await nginx.request({ path: '/cof/', headers: { cookie } });
    assert.is(r.status, 200);
    assert.is(nameOf(r), echo[0].name);
    assert.is(setCookie(r)[0].split(';')[0], `route=${md5(echo[0].hostPort)}`);
  }
  for (let i = 0; i < 4; i++) {
    assert.is((await nginx.request({ path: '/nocof/', headers: { cookie } })).status, 502);
  }
  // A new session that happens to land on the dead endpoint is retried elsewhere either way.
  for (let i = 0; i < 4; i++) assert.is((await nginx.request({ path: '/nocof/' })).status, 200);
});

test.run();
