// The router's memo of path matches (lua/route_memo.lua) in a real NGINX worker: what it keeps,
// that a new route table empties it, and its bounds against a client sending endless distinct
// URIs; and its compiled patterns kept from one route table to the next (lua/pcre2.lua). The
// router's answers with them in use are tested end to end in dynamic-routes.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, type LuaNginx } from '../support/lua-nginx.js';

const test = suite('lua route memo');
let nginx: LuaNginx;

// Each probe runs the posted Lua chunk with a fresh memo bounded to 3 entries and 8-byte URIs,
// and answers what the chunk returns, JSON-encoded.
test.before(async () => {
  nginx = await startLuaNginx({
    workers: 1,
    extraLocations: `
    location = /memo {
      content_by_lua_block {
        ngx.req.read_body()
        local memo = require("route_memo").new(3, 8)
        local chunk = assert(loadstring(ngx.req.get_body_data()))
        setfenv(chunk, { memo = memo, A = {}, B = {}, tostring = tostring })
        ngx.say(require("cjson").encode(chunk()))
      }
    }
    location = /pcre2 {
      content_by_lua_block {
        ngx.req.read_body()
        local chunk = assert(loadstring(ngx.req.get_body_data()))
        setfenv(chunk, { pcre2 = require("pcre2"), rawequal = rawequal })
        ngx.say(require("cjson").encode(chunk()))
      }
    }`,
  });
});
test.after(async () => { await nginx?.stop(); });

async function probe(lua: string, path = '/memo'): Promise<unknown> {
  const r = await nginx.request({ path, method: 'POST', body: lua });
  assert.is(r.status, 200, r.body);
  return JSON.parse(r.body);
}

test('keeps a route, and a miss (false), per host and URI of one table', async () => {
  const got = await probe(`
    local before = memo:get(A, "a.test", "/x")
    local route = { backend = "b" }
    memo:put("a.test", "/x", route)
    memo:put("a.test", "/none", false)
    return {
      before = tostring(before), hit = memo:get(A, "a.test", "/x") == route, miss = memo:get(A, "a.test", "/none"),
      other_host = tostring(memo:get(A, "b.test", "/x")), other_uri = tostring(memo:get(A, "a.test", "/y")), size = memo:size(),
    }`);
  assert.equal(got, { before: 'nil', hit: true, miss: false, other_host: 'nil', other_uri: 'nil', size: 2 });
});

test('another route table empties it', async () => {
  const got = await probe(`
    memo:get(A, "a.test", "/x")
    memo:put("a.test", "/x", { backend = "b" })
    local stale = tostring(memo:get(B, "a.test", "/x"))
    return { stale = stale, size = memo:size(), back = tostring(memo:get(A, "a.test", "/x")) }`);
  assert.equal(got, { stale: 'nil', size: 0, back: 'nil' }, 'nothing matched under one table is answered under another');
});

test('a client sending endless distinct URIs empties it at its bound; long URIs are not kept', async () => {
  const got = await probe(`
    memo:get(A, "a.test", "/")
    for i = 1, 3 do memo:put("a.test", "/" .. i, { n = i }) end
    memo:put("a.test", "/1", { n = 1 })
    local full = memo:size()
    memo:put("b.test", "/4", { n = 4 })
    local after = memo:size()
    memo:put("a.test", "/123456789", { n = 9 })
    return {
      full = full, after = after, first_gone = tostring(memo:get(A, "a.test", "/1")), newest = memo:get(A, "b.test", "/4").n,
      long = tostring(memo:get(A, "a.test", "/123456789")), size = memo:size(),
    }`);
  assert.equal(got, { full: 3, after: 1, first_gone: 'nil', newest: 4, long: 'nil', size: 1 });
});

test('a compiled pattern is reused while this table or the last one uses it, per caseless flag; errors are not kept', async () => {
  const got = await probe(`
    local a = pcre2.compile("^/a(b)?", false)
    local same = rawequal(a, pcre2.compile("^/a(b)?", false))
    local caseless = rawequal(a, pcre2.compile("^/a(b)?", true))
    pcre2.next_generation()
    local kept = rawequal(a, pcre2.compile("^/a(b)?", false))
    pcre2.next_generation()
    pcre2.next_generation()
    local fresh = pcre2.compile("^/a(b)?", false)
    local bad, err = pcre2.compile("(", false)
    return { same, caseless, kept, rawequal(a, fresh), bad == nil, err, pcre2.find(fresh, "/AB"), pcre2.find(fresh, "/ab") }
  `, '/pcre2');
  assert.equal(got, [true, false, true, false, true, 'missing closing parenthesis at offset 1', false, true]);
});

test.run();
