// The route table framed per host (lua/configuration.lua, lua/router.lua) in a real NGINX with two
// workers: a whole table, then changes against it (hosts added, changed, deleted; a path moving
// between two hosts; wildcard hosts), each served by every worker from its next request; a change
// against a table NGINX does not hold (a restart, a table posted by someone else) refused with 409
// and nothing changed; a change with one bad host refused whole; a host too large for the shared
// dict refused without evicting anyone; and the reads of a worker one version behind. Hosts are
// asked for over HTTP/1.1 and HTTP/2 (Host or :authority). The
// controller's side (what it posts when) is test/unit/actors/dynamic-config.test.ts; the routing
// itself, end to end, dynamic-routes.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { answersFromEveryWorker, startLuaNginx, type LuaNginx } from '../support/lua-nginx.js';

const test = suite('lua route delta');
let nginx: LuaNginx;

// `/` answers what the router chose for the request's host and URI: "none" (not a dynamic host),
// "404" (no route) or the route's backend. `/stored` answers a host's stored text at a version, `/version` the routes version.
const PROBES = `
    location / {
      content_by_lua_block {
        ngx.header["X-Worker-Pid"] = ngx.worker.pid()
        local uri = router.find()
        if uri == "" then return ngx.say("none") end
        local backend = router.proxy_host(true)
        ngx.say(backend == "" and "404" or backend)
      }
    }
    location = /version {
      content_by_lua_block { ngx.say(configuration.get_routes_version()) }
    }
    location = /stored {
      content_by_lua_block {
        ngx.say(tostring(configuration.get_route_host(ngx.var.arg_host, tonumber(ngx.var.arg_version))))
      }
    }`;

const start = () => startLuaNginx({ workers: 2, locations: [], extraInitLua: 'router = require("router")', extraLocations: PROBES });

test.before(async () => { nginx = await start(); });
test.after(async () => { await nginx?.stop(); });

const route = (pattern: string, backend: string, over: Record<string, unknown> = {}) => ({
  match: 'prefix', pattern, caseless: false, denied: false, namespace: 'app', ingress: 'x', service: backend, port: '80',
  path: pattern, backend, fallback: '', redirect: '', ...over,
});

type Hosts = Record<string, unknown[]>;
const post = (body: Record<string, unknown>, to = nginx) => to.status('POST', '/configuration/routes', JSON.stringify(body));
const whole = async (id: string, hosts: Hosts) => assert.is((await post({ id, hosts })).status, 201);
const change = async (base: string, id: string, hosts: Hosts, deleted: string[] = []) => {
  const r = await post({ base, id, hosts, deleted });
  assert.is(r.status, 201, r.body);
};

/** What every worker answers for host and path over HTTP/1.1 and over HTTP/2 (all of them, so a lagging worker shows). */
async function everyWorker(host: string, path: string): Promise<string[]> {
  const answers = [...await answersFromEveryWorker(nginx, { host, path }), ...await answersFromEveryWorker(nginx, { host, path, http2: true })];
  return [...new Set(answers.map((a) => a.body.trim()))];
}

async function served(expected: Record<string, string>): Promise<void> {
  for (const [at, answer] of Object.entries(expected)) {
    const [host, path] = at.split(/(?=\/)/) as [string, string];
    assert.equal(await everyWorker(host, path), [answer], at);
  }
}

test('a whole table, then changes: hosts added, changed and deleted, every worker serving each from its next request', async () => {
  await whole('t1', { 'a.test': [route('/', 'a1')], 'b.test': [route('/', 'b1')], 'c.test': [route('/', 'c1')] });
  await served({ 'a.test/': 'a1', 'b.test/x': 'b1', 'c.test/': 'c1', 'd.test/': 'none' });
  await change('t1', 't2', { 'b.test': [route('/', 'b2'), route('/api', 'api', { match: 'exact' })], 'd.test': [route('/', 'd1')] }, ['c.test']);
  await served({ 'a.test/': 'a1', 'b.test/x': 'b2', 'b.test/api': 'api', 'c.test/': 'none', 'd.test/': 'd1' });
  // GET gives the whole table, as posted.
  const table = JSON.parse((await nginx.status('GET', '/configuration/routes')).body) as { hosts: Hosts };
  assert.equal(Object.keys(table.hosts).sort(), ['a.test', 'b.test', 'd.test']);
  assert.equal(table.hosts['b.test'], [route('/', 'b2'), route('/api', 'api', { match: 'exact' })]);
  // A whole table again: hosts not in it go.
  await whole('t3', { 'a.test': [route('/', 'a1')], 'e.test': [route('/', 'e1')] });
  await served({ 'a.test/': 'a1', 'b.test/': 'none', 'd.test/': 'none', 'e.test/': 'e1' });
});

test('a path moving between two hosts in one change: both hosts change together', async () => {
  await whole('m1', { 'from.test': [route('/', 'root'), route('/p', 'p-from')], 'to.test': [route('/', 'root')] });
  await served({ 'from.test/p': 'p-from', 'to.test/p': 'root' });
  await change('m1', 'm2', { 'from.test': [route('/', 'root')], 'to.test': [route('/', 'root'), route('/p', 'p-to')] });
  await served({ 'from.test/p': 'root', 'to.test/p': 'p-to' });
});

test('a host added in one change and deleted in the next; a deleted host added again', async () => {
  await whole('h1', { 'keep.test': [route('/', 'keep')] });
  await served({ 'brief.test/': 'none' });
  await change('h1', 'h2', { 'brief.test': [route('/', 'brief')] });
  await served({ 'brief.test/': 'brief' });
  await change('h2', 'h3', {}, ['brief.test']);
  await served({ 'brief.test/': 'none', 'keep.test/': 'keep' });
  await change('h3', 'h4', { 'brief.test': [route('/', 'back')] });
  await served({ 'brief.test/': 'back' });
});

test('wildcard hosts: a change reaches every host matched through it, and an exact host added takes its name over', async () => {
  await whole('w1', { '*.w.test': [route('/', 'wild1')] });
  await served({ 'x.w.test/': 'wild1', 'y.w.test/p': 'wild1' });
  await change('w1', 'w2', { '*.w.test': [route('/', 'wild2')] });
  await served({ 'x.w.test/': 'wild2', 'y.w.test/p': 'wild2' });
  await change('w2', 'w3', { 'x.w.test': [route('/', 'exact')] });
  await served({ 'x.w.test/': 'exact', 'y.w.test/p': 'wild2' });
  await change('w3', 'w4', {}, ['x.w.test', '*.w.test']);
  await served({ 'x.w.test/': 'none', 'y.w.test/p': 'none' });
});

test('a change against a table NGINX does not hold is refused (409) and changes nothing', async () => {
  await whole('c1', { 'held.test': [route('/', 'held')] });
  const r = await post({ base: 'other', id: 'c2', hosts: { 'new.test': [route('/', 'new')] }, deleted: ['held.test'] });
  assert.equal([r.status, r.body.trim()], [409, 'routes: a change to table other, but NGINX holds table c1: post the whole table']);
  await served({ 'held.test/': 'held', 'new.test/': 'none' });
  // A table posted without a name (by hand): no change can be based on it.
  assert.is((await post({ hosts: { 'held.test': [route('/', 'by-hand')] } })).status, 201);
  assert.is((await post({ base: 'c1', id: 'c3', hosts: {} })).status, 409);
  await served({ 'held.test/': 'by-hand' });
  // A restarted NGINX holds nothing: the change is refused until the whole table comes.
  const fresh = await start();
  try {
    const refused = await post({ base: 'c1', id: 'c4', hosts: { 'new.test': [route('/', 'new')] } }, fresh);
    assert.equal([refused.status, refused.body.trim()], [409, 'routes: a change to table c1, but NGINX holds no table of that controller: post the whole table']);
    assert.is((await fresh.status('GET', '/configuration/routes')).status, 404);
    assert.is((await post({ id: 'c4', hosts: { 'new.test': [route('/', 'new')] } }, fresh)).status, 201);
    assert.is((await post({ base: 'c4', id: 'c5', hosts: { 'new.test': [route('/', 'newer')] } }, fresh)).status, 201);
  } finally {
    await fresh.stop();
  }
});

test('a change with one bad host is refused whole with the reason; the envelope is checked too', async () => {
  await whole('v1', { 'ok.test': [route('/', 'ok')] });
  const bad = await post({ base: 'v1', id: 'v2', hosts: { 'good.test': [route('/', 'good')], 'bad.test': [route('(', 'bad', { match: 'regex' })] }, deleted: ['ok.test'] });
  assert.is(bad.status, 400);
  assert.match(bad.body, /^routes: host bad\.test: regex \(: /);
  await served({ 'ok.test/': 'ok', 'good.test/': 'none', 'bad.test/': 'none' });
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ base: 'v1', id: 'v2', hosts: {}, deleted: 'ok.test' }, /deleted must be a JSON array of host names/],
    [{ base: 'v1', id: 'v2', hosts: {}, deleted: ['OK.test'] }, /deleted host OK\.test is not a lower-case host name/],
    // A Gateway listener port's host is `host:port`, port 1 to 65535, nothing else after the colon.
    [{ base: 'v1', id: 'v2', hosts: { 'a.test:0': [route('/', 'x')] } }, /host a\.test:0 is not a lower-case host name/],
    [{ base: 'v1', id: 'v2', hosts: { 'a.test:65536': [route('/', 'x')] } }, /host a\.test:65536 is not a lower-case host name/],
    [{ base: 'v1', id: 'v2', hosts: { 'a.test:80\r\nx': [route('/', 'x')] } }, /is not a lower-case host name/],
    [{ base: 'v1', id: 'v2', hosts: { ':8080': [route('/', 'x')] } }, /host :8080 is not a lower-case host name/],
    [{ base: 'v1', id: 'v2', hosts: { 'a.test:8080:8080': [route('/', 'x')] } }, /is not a lower-case host name/],
    [{ base: 'v1', id: 'v2', hosts: { 'ok.test': [route('/', 'x')] }, deleted: ['ok.test'] }, /host ok\.test is both changed and deleted/],
    [{ id: 'v2', hosts: {}, deleted: ['ok.test'] }, /deleted needs base/],
    [{ base: 7, id: 'v2', hosts: {} }, /base must be a string of 1 to 128 bytes/],
    [{ base: 'v1', id: 'x'.repeat(129), hosts: {} }, /id must be a string of 1 to 128 bytes/],
  ];
  for (const [body, reason] of refused) {
    const r = await post(body);
    assert.is(r.status, 400, JSON.stringify(body));
    assert.match(r.body, reason);
  }
  await change('v1', 'v2', { 'good.test': [route('/', 'good')], 'good.test:8080': [route('/', 'port')] });
  // The port's host is stored under its own name; port 80's good.test is not it.
  await served({ 'ok.test/': 'ok', 'good.test/': 'good' });
});

test('a worker one version behind reads its own version: the value before the last change, or absent', async () => {
  await whole('s1', { 'seen.test': [route('/', 'one')] });
  const read = async (host: string, v: number) => (await nginx.request({ path: `/stored?host=${host}&version=${v}` })).body.trim();
  const now = Number((await nginx.request({ path: '/version' })).body);
  await change('s1', 's2', { 'seen.test': [route('/', 'two')], 'later.test': [route('/', 'later')] });
  assert.match(await read('seen.test', now), /"backend":"one"/, 'the version before the change');
  assert.match(await read('seen.test', now + 1), /"backend":"two"/);
  assert.is(await read('later.test', now), 'nil', 'absent before it was added');
  await change('s2', 's3', { 'seen.test': [route('/', 'three')] }, ['later.test']);
  assert.is(await read('seen.test', now), 'false', 'two changes since: the worker must move on');
  assert.match(await read('seen.test', now + 1), /"backend":"two"/);
  assert.match(await read('later.test', now + 1), /"backend":"later"/);
  assert.is(await read('later.test', now + 2), '', 'deleted');
});

test('a host too large for the shared dict is refused (413); nothing changes and no other host is evicted', async () => {
  // About 4 MB of entries per host; configuration_data holds 20 MB.
  const big = (backend: string) => Array.from({ length: 1000 }, (_, i) => route(`/${i}`, backend, { namespace: 'n'.repeat(4000) }));
  await whole('b1', { 'small.test': [route('/', 'small')], 'big1.test': big('big1'), 'big2.test': big('big2') });
  const r = await post({ base: 'b1', id: 'b2', hosts: { 'big3.test': big('big3'), 'big4.test': big('big4'), 'big5.test': big('big5'), 'small.test': [route('/', 'changed')] } });
  assert.is(r.status, 413, r.body.slice(0, 200));
  assert.match(r.body, /do not fit in lua_shared_dict configuration_data \(nothing was changed\)/);
  await served({ 'small.test/': 'small', 'big1.test/1': 'big1', 'big2.test/2': 'big2', 'big3.test/3': 'none', 'big4.test/3': 'none' });
  // The table is still b1's: a change against it is taken.
  await change('b1', 'b2', {}, ['big1.test', 'big2.test']);
  await served({ 'small.test/': 'small', 'big1.test/1': 'none' });
});

test.run();
