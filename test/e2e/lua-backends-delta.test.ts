// The backends posted as changes (lua/configuration.lua, src/model/core/payload.ts
// createBackendsSerialiser) against real NGINX with two workers and echo upstreams: a change
// adds, changes and removes backends and every worker serves it over HTTP/1.1 and HTTP/2; a
// worker catches up by the names each change logged, and one further behind than the kept logs
// or a reload's new workers read every backend; a change to another list, to a backend NGINX
// does not hold, or of a bad shape or size is refused with the reason and changes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, backend, answersFromEveryWorker, type LuaNginx, type RequestOptions } from '../support/lua-nginx.js';
import { startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';

const test = suite('lua backends delta');
let nginx: LuaNginx;
let echo: EchoServer[];

test.before(async () => {
  echo = await startEchoServers(4, { firstOctet: 10 });
  nginx = await startLuaNginx({
    workers: 2,
    locations: ['da', 'db', 'dc', 'dd'].map((b) => ({ path: `/${b}/`, backend: b })),
    // What a worker synced `behind` versions ago reads to catch up: the names changed, or all.
    extraLocations: `    location = /changed {
      content_by_lua_block {
        local configuration = require("configuration")
        local to = configuration.get_backends_version()
        local changed = configuration.get_backends_changed(to - tonumber(ngx.var.arg_behind), to)
        if not changed then return ngx.print("all") end
        local names = {}
        for name in pairs(changed) do names[#names + 1] = name end
        table.sort(names)
        ngx.print(table.concat(names, ","))
      }
    }`,
  });
});
test.after(async () => {
  await nginx?.stop();
  await closeAll(echo ?? []);
});

const be = (name: string, i: number) => backend(name, [echo[i]!.endpoint]);
const post = (body: unknown) => nginx.status('POST', '/configuration/backends', typeof body === 'string' ? body : JSON.stringify(body));
const names = async () => (JSON.parse((await nginx.status('GET', '/configuration/backends')).body) as Array<{ name: string; endpoints: Array<{ address: string }> }>)
  .map((b) => `${b.name}=${b.endpoints.map((e) => e.address).join(',')}`);

/** What every worker answers on `path` over HTTP/1.1 and HTTP/2: the echo server's name, or the status. */
async function servedEverywhere(path: string): Promise<string[]> {
  const seen = new Set<string>();
  for (const opts of [{ path }, { path, http2: true, host: 'localhost' }] as RequestOptions[]) {
    for (const r of await answersFromEveryWorker(nginx, opts)) seen.add(r.status === 200 ? (JSON.parse(r.body) as { name: string }).name : String(r.status));
  }
  return [...seen];
}

test('a whole list, then a change that adds, changes and removes backends: every worker serves it over HTTP/1.1 and HTTP/2', async () => {
  assert.is((await post({ id: 'L1', backends: [be('da', 0), be('db', 1)] })).status, 201);
  assert.equal(await servedEverywhere('/da/'), [echo[0]!.name]);
  assert.equal(await servedEverywhere('/db/'), [echo[1]!.name]);
  const r = await post({ base: 'L1', id: 'L2', backends: [be('da', 2), be('dc', 3)], deleted: ['db'] });
  assert.is(r.status, 201, r.body);
  assert.equal(await servedEverywhere('/da/'), [echo[2]!.name], 'changed');
  assert.equal(await servedEverywhere('/dc/'), [echo[3]!.name], 'added');
  assert.equal(await servedEverywhere('/db/'), ['503'], 'removed');
  assert.equal(await names(), [`da=${echo[2]!.endpoint.address}`, `dc=${echo[3]!.endpoint.address}`]);
});

test('refused changes are named and change nothing: another list, a backend NGINX does not hold, bad shapes', async () => {
  const before = await names();
  const stale = await post({ base: 'L1', id: 'L3', backends: [be('dd', 0)] });
  assert.is(stale.status, 409);
  assert.match(stale.body, /^backends: a change to list L1, but NGINX holds list L2: post the whole list/);
  const unknown = await post({ base: 'L2', id: 'L3', backends: [be('dd', 0)], deleted: ['nope'] });
  assert.is(unknown.status, 409);
  assert.match(unknown.body, /deleted names backend nope, which NGINX does not hold/);
  const bad: Array<[string, RegExp]> = [
    ['{"base":"L2","id":"L3","backends":[{"name":"dd"}', /invalid JSON/],
    ['{"base":5,"id":"L3","backends":[]}', /base must be a non-empty string/],
    [`{"base":"L2","id":"${'x'.repeat(200)}","backends":[]}`, /id must be a non-empty string of at most 128 bytes/],
    ['{"base":"L2","id":"L3"}', /backends must be a JSON array/],
    ['{"base":"L2","id":"L3","backends":[],"deleted":"da"}', /deleted must be a JSON array/],
    ['{"base":"L2","id":"L3","backends":[],"deleted":[5]}', /deleted\[0\] must be a non-empty string/],
    ['{"id":"L3","backends":[],"deleted":["da"]}', /deleted needs base/],
    [JSON.stringify({ base: 'L2', id: 'L3', backends: [be('da', 0)], deleted: ['da'] }), /backend da is both changed and deleted/],
    [JSON.stringify({ base: 'L2', id: 'L3', backends: [{ name: 'dd', endpoints: [{ address: '10.0.0.1', port: '0' }] }] }), /port must be a port number/],
    // The same key twice: cjson keeps the last, the stored bytes would be the first's.
    [`{"base":"L2","id":"L3","backends":[${JSON.stringify(be('dd', 0))}],"backends":[{"name":"dd","endpoints":"x"},{"name":"de"}]}`, /cannot be told apart/],
  ];
  for (const [body, message] of bad) {
    const r = await post(body);
    assert.is(r.status, 400, `${body}: ${r.body}`);
    assert.match(r.body, /^backends: /);
    assert.match(r.body, message, `${body}: ${r.body}`);
  }
  assert.equal(await names(), before, 'every refused POST kept the list');
  assert.equal(await servedEverywhere('/da/'), [echo[2]!.name]);
  assert.equal(await servedEverywhere('/dd/'), ['503']);
  // The refusals did not move the list's id: a change to it still applies.
  assert.is((await post({ base: 'L2', id: 'L4', backends: [be('dd', 1)] })).status, 201);
  assert.equal(await servedEverywhere('/dd/'), [echo[1]!.name]);
});

test('a change too large for the shared dict is refused with 413 and how much was missing; nothing of it is stored', async () => {
  const before = await names();
  const huge = { name: 'huge', endpoints: [], filler: 'x'.repeat(20.5 * 1024 * 1024) };
  const r = await post({ base: 'L4', id: 'L5', backends: [be('da', 3), huge] });
  assert.is(r.status, 413, r.body);
  const m = /^backends: backend huge: (\d+) bytes of (\d+) do not fit in lua_shared_dict configuration_data, (\d+) bytes short \(nothing was changed\)/.exec(r.body);
  assert.ok(m, r.body);
  const [size, need, short] = m!.slice(1).map(Number) as [number, number, number];
  assert.ok(need > size && short > 0 && short <= need, r.body);
  assert.equal(await names(), before, 'da kept its endpoint: the change was rolled back whole');
  assert.equal(await servedEverywhere('/da/'), [echo[2]!.name]);
  assert.is((await post({ base: 'L4', id: 'L5', backends: [be('da', 3)] })).status, 201, 'the list id survived the refusal');
  assert.equal(await servedEverywhere('/da/'), [echo[3]!.name]);
});

test('a worker catches up by the names each change logged; one further behind than the kept logs, and a reload\'s new workers, read every backend', async () => {
  let base = 'L5';
  for (let i = 0; i < 260; i++) {
    const id = `M${i}`;
    const change = i === 0 ? { base, id, backends: [be('db', 0)] }
      : i === 259 ? { base, id, backends: [be('da', 1)], deleted: ['db'] }
        : { base, id, backends: [be('dc', i % 4)] };
    const r = await post(change);
    assert.is(r.status, 201, r.body);
    base = id;
  }
  assert.is((await nginx.request({ path: '/changed?behind=1' })).body, 'da,db', 'the last change: two names');
  assert.is((await nginx.request({ path: '/changed?behind=3' })).body, 'da,db,dc');
  assert.is((await nginx.request({ path: '/changed?behind=256' })).body, 'da,db,dc', 'as far back as the logs are kept');
  assert.is((await nginx.request({ path: '/changed?behind=257' })).body, 'all', 'further back: every backend is read');
  assert.equal(await servedEverywhere('/da/'), [echo[1]!.name]);
  assert.equal(await servedEverywhere('/db/'), ['503']);
  assert.equal(await servedEverywhere('/dc/'), [echo[258 % 4]!.name]);
  await nginx.reload();
  assert.equal(await servedEverywhere('/da/'), [echo[1]!.name], 'new workers read every backend');
  assert.equal(await servedEverywhere('/dd/'), [echo[1]!.name]);
  assert.equal(await servedEverywhere('/db/'), ['503']);
  assert.is((await post({ base, id: 'N1', backends: [be('da', 2)] })).status, 201, 'the list survives a reload: changes still apply');
  assert.equal(await servedEverywhere('/da/'), [echo[2]!.name]);
});

test('ingress-nginx\'s whole array still replaces the list, and a change to it is refused (it has no id)', async () => {
  assert.is((await post([be('da', 0)])).status, 201);
  assert.equal(await servedEverywhere('/da/'), [echo[0]!.name]);
  assert.equal(await servedEverywhere('/dd/'), ['503'], 'what the whole list does not name is gone');
  const r = await post({ base: 'N1', id: 'N2', backends: [be('da', 1)] });
  assert.is(r.status, 409);
  assert.match(r.body, /NGINX holds no list of that controller/);
});

test.run();
