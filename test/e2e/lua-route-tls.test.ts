// The router's BackendTLSPolicy TLS locations (lua/router.lua) in a real NGINX: a route whose
// entry names a TLS location this nginx.conf has is moved there; one naming a location NGINX has
// not loaded (a table posted while the reload that adds it is under way) answers 503 and is moved
// nowhere else; an id that is not 16 hex digits is refused with the table. The locations
// themselves, end to end, are test/e2e/gateway-conformance/ext-backend-tls.test.ts. Requests over
// HTTP/1.1 and HTTP/2 (the harness's TLS listener).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, type LuaNginx } from '../support/lua-nginx.js';

const test = suite('lua route tls');
let nginx: LuaNginx;
const LOADED = '0123456789abcdef';

// `/` answers the location find() moves the request to; in the plain one, serve() answers a denied route's status.
const PROBES = `
    location / {
      content_by_lua_block {
        local uri = router.find()
        if uri == "" then return ngx.say("none") end
        if uri ~= "/.ingress-rx/dynamic-route" then return ngx.say(uri) end
        -- A denied route exits here with its status.
        router.serve()
      }
    }`;

test.before(async () => {
  nginx = await startLuaNginx({
    workers: 1, locations: [], extraLocations: PROBES,
    extraInitLua: `router = require("router")\n        router.configure({ backend_tls = { ["${LOADED}"] = true } })`,
  });
});
test.after(async () => { await nginx?.stop(); });

const route = (backend: string, over: Record<string, unknown> = {}) => ({
  match: 'prefix', pattern: '/', caseless: false, denied: false, namespace: 'app', ingress: 'x', service: backend, port: '443',
  path: '/', backend, fallback: '', redirect: '', ...over,
});
const post = (body: Record<string, unknown>) => nginx.status('POST', '/configuration/routes', JSON.stringify(body));

test('a loaded TLS location is where the route goes; an unloaded one answers 503, moved nowhere else', async () => {
  const r = await post({ id: 't1', hosts: { 'loaded.test': [route('a', { tls: LOADED })], 'unloaded.test': [route('b', { tls: 'fedcba9876543210' })], 'plain.test': [route('c')] } });
  assert.is(r.status, 201, r.body);
  for (const http2 of [false, true]) {
    const loaded = await nginx.request({ host: 'loaded.test', path: '/x', http2 });
    assert.is(loaded.body.trim(), `/.ingress-rx/dynamic-route-tls-${LOADED}`);
    const unloaded = await nginx.request({ host: 'unloaded.test', path: '/x', http2 });
    assert.is(unloaded.status, 503, unloaded.body);
    assert.is(unloaded.body.includes('dynamic-route-tls'), false);
    const plain = await nginx.request({ host: 'plain.test', path: '/x', http2 });
    assert.is.not(plain.status, 503, `a route without TLS is not denied (${http2 ? 'HTTP/2' : 'HTTP/1.1'})`);
  }
});

test('attacker: a tls value that is not 16 hex digits refuses the table, and the one held stays', async () => {
  for (const tls of ['../../etc', `${LOADED} `, LOADED.toUpperCase(), 7]) {
    const r = await post({ id: `bad-${String(tls)}`, hosts: { 'loaded.test': [route('evil', { tls })] } });
    assert.is(r.status, 400, `${JSON.stringify(tls)}: ${r.body}`);
    assert.match(r.body, 'tls must be 16 hex digits');
  }
  for (const http2 of [false, true]) {
    assert.is((await nginx.request({ host: 'loaded.test', path: '/', http2 })).body.trim(), `/.ingress-rx/dynamic-route-tls-${LOADED}`);
  }
});

test.run();
