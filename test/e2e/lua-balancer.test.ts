// The Lua balancers against real NGINX and echo upstreams: exact round robin, EWMA preferring
// the fast endpoint, consistent hashing (stability, subsets), 503 without endpoints, retries on
// refused endpoints, and endpoint changes served by every worker from the next request on,
// without a reload.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, backend, answersFromEveryWorker, type LuaNginx, type RequestOptions } from '../support/lua-nginx.js';
import { startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';
import { freePort } from '../support/ports.js';
import { createHash } from 'node:crypto';

const test = suite('lua balancer');
let single: LuaNginx; // one worker: per-worker behaviour is exact
let multi: LuaNginx; // two workers: cross-worker sync
let echo: EchoServer[];

test.before(async () => {
  echo = await startEchoServers(7, { firstOctet: 10 });
  single = await startLuaNginx({
    workers: 1,
    locations: ['rr', 'ewma', 'hash', 'subset', 'zero', 'self', 'switch', 'retry', 'retry-ewma', 'health', 'health-hash', 'health-dead'].map((b) => ({ path: `/${b}/`, backend: b })),
    extraLocations: `    location = /location-variable-readers {
      content_by_lua_block { ngx.print(balancer.reads_location_variables(ngx.var.arg_b) and "yes" or "no") }
    }`,
  });
  multi = await startLuaNginx({ workers: 2, locations: [{ path: '/', backend: 'dyn' }] });
});
test.after(async () => {
  await single?.stop();
  await multi?.stop();
  await closeAll(echo ?? []);
});

async function servedBy(nginx: LuaNginx, opts: RequestOptions): Promise<{ status: number; name: string; pid: string }> {
  const r = await nginx.request(opts);
  const name = r.status === 200 ? (JSON.parse(r.body) as { name: string }).name : '';
  return { status: r.status, name, pid: String(r.headers['x-worker-pid'] ?? '') };
}

async function countHits(nginx: LuaNginx, path: string, total: number, concurrency = 8): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let sent = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (sent < total) {
      sent += 1;
      const { status, name } = await servedBy(nginx, { path });
      assert.is(status, 200);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }));
  return counts;
}

test('round robin splits 600 requests over 3 endpoints exactly 200 each', async () => {
  const eps = echo.slice(0, 3);
  await single.configure('/configuration/backends', [backend('rr', eps.map((e) => e.endpoint))]);
  await waitFor(async () => (await servedBy(single, { path: '/rr/' })).status === 200, { what: 'rr backend' });
  const counts = await countHits(single, '/rr/', 600);
  assert.equal([...counts.keys()].sort(), eps.map((e) => e.name).sort());
  for (const e of eps) assert.is(counts.get(e.name), 200, e.name);
});

test('EWMA prefers the faster endpoint', async () => {
  const [fast, slow] = [echo[3], echo[4]];
  slow.setDelay(120);
  try {
    await single.configure('/configuration/backends', [backend('ewma', [fast.endpoint, slow.endpoint], { 'load-balance': 'ewma' })]);
    await waitFor(async () => (await servedBy(single, { path: '/ewma/' })).status === 200, { what: 'ewma backend' });
    const counts = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const { name } = await servedBy(single, { path: '/ewma/' });
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    assert.ok((counts.get(fast.name) ?? 0) >= 37, `fast endpoint got ${counts.get(fast.name)} of 40`);
  } finally {
    slow.setDelay(0);
  }
});

/** Endpoints that refuse connections: a released port on an address nothing else binds. */
async function refusedEndpoints(n: number): Promise<{ address: string; port: string }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const address = `127.0.0.${201 + i}`;
    out.push({ address, port: String(await freePort(address)) });
  }
  return out;
}

test('a refused endpoint is retried on the next one, up to min(endpoints, 3) tries per request', async () => {
  const live = echo[5];
  const refused = await refusedEndpoints(3);
  // Round robin, one worker: a request that starts on a refused endpoint walks on to the next.
  await single.configure('/configuration/backends', [
    backend('retry', [refused[0]!, refused[1]!, live.endpoint]),
    backend('retry-ewma', [refused[2]!, live.endpoint], { 'load-balance': 'ewma' }),
  ]);
  await waitFor(async () => (await servedBy(single, { path: '/retry/' })).status === 200, { what: 'retry backend' });
  for (let i = 0; i < 12; i++) {
    const r = await servedBy(single, { path: '/retry/' });
    assert.equal([r.status, r.name], [200, live.name], `request ${i}`);
  }
  // EWMA scores the never-measured refused endpoint lowest, so it is always tried first: only
  // remembering the tried endpoint sends the retry elsewhere.
  await waitFor(async () => (await servedBy(single, { path: '/retry-ewma/' })).status === 200, { what: 'retry-ewma backend' });
  for (let i = 0; i < 12; i++) {
    const r = await servedBy(single, { path: '/retry-ewma/' });
    assert.equal([r.status, r.name], [200, live.name], `ewma request ${i}`);
  }
});

/** Connections NGINX's error log says were refused, by peer. */
async function refusedConnects(nginx: LuaNginx): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const m of (await nginx.errorLog()).matchAll(/connect\(\) failed \(111: Connection refused\) while connecting to upstream.*upstream: "http:\/\/([\d.]+:\d+)/g)) {
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  }
  return counts;
}

test('passive health: a peer whose try failed is skipped for a while, by round robin and hashing; when all failed, they are still tried', async () => {
  const live = echo.slice(0, 2);
  const [a, b, c, d, e, f] = (await refusedEndpoints(7)).slice(1);
  await single.configure('/configuration/backends', [
    backend('health', [a!, b!, c!, live[0]!.endpoint]),
    backend('health-hash', [d!, live[1]!.endpoint], { upstreamHashByConfig: { 'upstream-hash-by': '$arg_user' } }),
    backend('health-dead', [e!, f!]),
  ]);
  // Three refused peers before the live one use up a request's three tries at most once: a peer
  // is marked when the next try is chosen, so each is tried once, or twice if its first failure
  // was a request's last try (without the marks, round robin tries each in every fourth request).
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push((await single.request({ path: '/health/' })).status);
  assert.ok(statuses.filter((st) => st !== 200).length <= 1, statuses.join(' '));
  assert.ok(statuses.slice(3).every((st) => st === 200), statuses.join(' '));
  let refused = await refusedConnects(single);
  const tries = [a!, b!, c!].map((peer) => refused.get(`${peer.address}:${peer.port}`) ?? 0);
  assert.ok(tries.every((t) => t <= 2) && tries.reduce((x, y) => x + y) <= 4, `tries of the refused peers: ${tries.join(', ')}`);

  // Hashing: the users whose peer refuses go to the next live one, after one failed try in all.
  // Enough users that some hash to the refusing peer whatever ports the two peers got (twelve
  // once all went to the live one).
  const users = Array.from({ length: 40 }, (_, i) => `u${i}`);
  for (let round = 0; round < 3; round++) {
    for (const u of users) {
      const r = await servedBy(single, { path: `/health-hash/?user=${u}` });
      assert.equal([r.status, r.name], [200, live[1]!.name], u);
    }
  }
  refused = await refusedConnects(single);
  assert.is(refused.get(`${d!.address}:${d!.port}`), 1, 'the refusing peer was tried once');

  // Nothing live: every request still tries (502, the refusal), rather than having no peer.
  for (let i = 0; i < 3; i++) assert.is((await single.request({ path: '/health-dead/' })).status, 502);
  refused = await refusedConnects(single);
  assert.ok((refused.get(`${e!.address}:${e!.port}`) ?? 0) + (refused.get(`${f!.address}:${f!.port}`) ?? 0) >= 6, 'two tries per request');
});

test('consistent hashing by $arg_user: stable per key, and adding an endpoint moves only ~1/N keys, all to it', async () => {
  const three = echo.slice(0, 3);
  const hashBy = { 'upstream-hash-by': '$arg_user' };
  await single.configure('/configuration/backends', [backend('hash', three.map((e) => e.endpoint), { upstreamHashByConfig: hashBy })]);
  await waitFor(async () => (await servedBy(single, { path: '/hash/?user=u0' })).status === 200, { what: 'hash backend' });
  // Keys spread over the hash space: crc32 (the ring's hash) of `user-0`…`user-299` clusters, so
  // how many of them one member owns varied from 0.14 to over 0.45 with the endpoints' random ports.
  const users = Array.from({ length: 300 }, (_, i) => `user-${createHash('sha1').update(String(i)).digest('hex').slice(0, 12)}`);
  const before = new Map<string, string>();
  for (const u of users) before.set(u, (await servedBy(single, { path: `/hash/?user=${u}` })).name);
  for (let i = 0; i < 5; i++) assert.is((await servedBy(single, { path: `/hash/?user=${users[7]}` })).name, before.get(users[7]!));
  // The ring depends on the endpoints' random ports: a fair share is 1/3.
  for (const e of three) {
    const share = users.filter((u) => before.get(u) === e.name).length / users.length;
    assert.ok(share > 0.08, `${e.name} owns ${share} of the keys`);
  }

  const added = echo[5];
  await single.configure('/configuration/backends', [backend('hash', [...three, added].map((e) => e.endpoint), { upstreamHashByConfig: hashBy })]);
  await waitFor(async () => {
    for (const u of users.slice(0, 40)) if ((await servedBy(single, { path: `/hash/?user=${u}` })).name === added.name) return true;
    return false;
  }, { what: 'the added endpoint to own keys' });
  let moved = 0;
  for (const u of users) {
    const now = (await servedBy(single, { path: `/hash/?user=${u}` })).name;
    if (now !== before.get(u)) {
      moved += 1;
      assert.is(now, added.name, `${u} moved between old endpoints`);
    }
  }
  const fraction = moved / users.length;
  assert.ok(fraction > 0.1 && fraction < 0.45, `moved fraction ${fraction}`);
});

test('hash subsets: one key is served by at most subset-size endpoints', async () => {
  const six = echo.slice(0, 6);
  await single.configure('/configuration/backends', [backend('subset', six.map((e) => e.endpoint), {
    upstreamHashByConfig: { 'upstream-hash-by': '$arg_user', 'upstream-hash-by-subset': true, 'upstream-hash-by-subset-size': 3 },
  })]);
  await waitFor(async () => (await servedBy(single, { path: '/subset/?user=a' })).status === 200, { what: 'subset backend' });
  const all = new Set<string>();
  const perKey: string[] = [];
  let sawFullSubset = false;
  for (let u = 0; u < 16; u++) {
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add((await servedBy(single, { path: `/subset/?user=k${u}` })).name);
    assert.ok(seen.size <= 3, `key k${u} reached ${seen.size} endpoints`);
    if (seen.size === 3) sawFullSubset = true;
    for (const s of seen) all.add(s);
    perKey.push([...seen].sort().join(','));
  }
  assert.ok(sawFullSubset, 'a key spreads over its whole subset');
  assert.ok(all.size > 3, `different keys use different subsets: ${perKey.join(' | ')}`);
});

test('no endpoints, an unknown backend, or only NGINX\'s own port → 503 from the rewrite phase', async () => {
  await single.configure('/configuration/backends', [
    backend('zero', []),
    backend('self', [{ address: '127.0.0.1', port: String(single.httpPort) }]),
  ]);
  await waitFor(async () => (await single.request({ path: '/zero/' })).status === 503, { what: 'zero backend' });
  assert.is((await single.request({ path: '/self/' })).status, 503);
  assert.is((await single.request({ path: '/rr/' })).status, 503, 'rr is gone from the posted backends');
});

test('changing the algorithm of a backend rebuilds its balancer', async () => {
  const eps = echo.slice(0, 2);
  await single.configure('/configuration/backends', [backend('switch', eps.map((e) => e.endpoint), { upstreamHashByConfig: { 'upstream-hash-by': '$arg_k' } })]);
  await waitFor(async () => (await servedBy(single, { path: '/switch/?k=1' })).status === 200, { what: 'switch backend' });
  const pinned = new Set<string>();
  for (let i = 0; i < 6; i++) pinned.add((await servedBy(single, { path: '/switch/?k=1' })).name);
  assert.is(pinned.size, 1, 'chash pins one key');
  await single.configure('/configuration/backends', [backend('switch', eps.map((e) => e.endpoint))]);
  await waitFor(async () => {
    const names = new Set<string>();
    for (let i = 0; i < 4; i++) names.add((await servedBy(single, { path: '/switch/?k=1' })).name);
    return names.size === 2;
  }, { what: 'round robin after the switch' });
});

test('a posted endpoint change is served by the next request in every worker, with no reload', async () => {
  const [a, b] = [echo[0], echo[6]];
  const pidsBefore = await multi.workerPids();
  assert.is(pidsBefore.length, 2);
  const names = async () => (await answersFromEveryWorker(multi, { path: '/' })).map((r) => `${r.status} ${r.status === 200 ? (JSON.parse(r.body) as { name: string }).name : ''}`);
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  assert.equal([...new Set(await names())], [`200 ${a.name}`]);
  // No waiting after each POST: a worker takes a post up before the first request it serves
  // after it (lua/freshness.lua), so no answer below comes from the state before.
  await multi.configure('/configuration/backends', [backend('dyn', [b.endpoint])]);
  assert.equal([...new Set(await names())], [`200 ${b.name}`], 'switched');
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint, b.endpoint])]);
  assert.equal([...new Set(await names())].sort(), [`200 ${a.name}`, `200 ${b.name}`].sort(), 'added');
  await multi.configure('/configuration/backends', [backend('dyn', [])]);
  assert.equal([...new Set(await names())], ['503 '], 'scaled to zero');
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  assert.equal([...new Set(await names())], [`200 ${a.name}`], 'scaled back');
  assert.equal(await multi.workerPids(), pidsBefore, 'the same worker processes (no reload)');
});

test('a backend a worker does not know yet is looked up at once: no 503 between the POST and the next timer tick', async () => {
  const a = echo[3];
  await multi.configure('/configuration/backends', []);
  const without = new Set<string>();
  await waitFor(async () => {
    const r = await servedBy(multi, { path: '/' });
    if (r.status === 503) without.add(r.pid);
    return without.size === 2;
  }, { intervalMs: 1, timeoutMs: 10_000, what: 'both workers without the backend' });
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  const answers = await Promise.all(Array.from({ length: 40 }, () => servedBy(multi, { path: '/' })));
  assert.equal(answers.filter((r) => r.status !== 200 || r.name !== a.name).map((r) => `worker ${r.pid}: ${r.status}`), []);
});

test('scale to zero answers 503 within 250 ms; scaling back serves again; same workers', async () => {
  const pidsBefore = await multi.workerPids();
  const a = echo[1];
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  await waitFor(async () => (await servedBy(multi, { path: '/' })).name === a.name, { what: 'one endpoint' });
  await multi.configure('/configuration/backends', [backend('dyn', [])]);
  const posted = Date.now();
  await waitFor(async () => (await multi.request({ path: '/' })).status === 503, { intervalMs: 1, what: '503' });
  assert.ok(Date.now() - posted < 250, `503 after ${Date.now() - posted} ms`);
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  await waitFor(async () => (await servedBy(multi, { path: '/' })).name === a.name, { what: 'serving again' });
  assert.equal(await multi.workerPids(), pidsBefore);
  const log = await multi.errorLog();
  assert.not.match(log, /\[(error|crit|alert|emerg)\]/, 'no errors in the NGINX log');
});

test('after a reload the new workers serve the posted backends from the shared dict, with no new POST', async () => {
  const a = echo[2];
  await multi.configure('/configuration/backends', [backend('dyn', [a.endpoint])]);
  await waitFor(async () => (await servedBy(multi, { path: '/' })).name === a.name, { what: 'posted backend' });
  const fresh = await multi.reload();
  const seen = new Set<string>();
  const wrong: string[] = [];
  await waitFor(async () => {
    const r = await servedBy(multi, { path: '/' });
    if (r.name !== a.name) wrong.push(`${r.pid}: ${r.status} ${r.name}`);
    seen.add(r.pid);
    return fresh.every((p) => seen.has(String(p)));
  }, { intervalMs: 1, what: 'answers from every new worker' });
  assert.equal(wrong, []);
});

test('which backends\' balancing reads a location variable (the router writes them for their routes only then)', async () => {
  const eps = echo.slice(0, 1).map((e) => e.endpoint);
  const cookie = { sessionAffinityConfig: { name: 'cookie', mode: 'balanced', cookieSessionAffinity: { name: 'route', path: '' } } };
  await single.configure('/configuration/backends', [
    backend('plain', eps),
    backend('sticky', eps, cookie),
    backend('hash-uri', eps, { upstreamHashByConfig: { 'upstream-hash-by': '$request_uri' } }),
    backend('hash-service', eps, { upstreamHashByConfig: { 'upstream-hash-by': 'x${service_name}y' } }),
    backend('hash-prefix', eps, { upstreamHashByConfig: { 'upstream-hash-by': '$namespace_id' } }),
    backend('with-sticky-canary', eps, { alternativeBackends: ['sticky'] }),
    backend('with-plain-canary', eps, { alternativeBackends: ['plain'] }),
  ]);
  const expected: Record<string, string> = {
    plain: 'no', sticky: 'yes', 'hash-uri': 'no', 'hash-service': 'yes', 'hash-prefix': 'no', 'with-sticky-canary': 'yes', 'with-plain-canary': 'no', unknown: 'no',
  };
  const read = async () => Object.fromEntries(await Promise.all(Object.keys(expected).map(async (b) => [b, (await single.request({ path: `/location-variable-readers?b=${b}` })).body])));
  await waitFor(async () => (await read()).sticky === 'yes', { what: 'the backends synced' });
  assert.equal(await read(), expected);
});

test.run();
