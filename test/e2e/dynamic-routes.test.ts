// Dynamic routes end to end (docs/dynamic-routes.md): `ingress-rx local` (dynamic routes are on by
// default) with real NGINX. Hosts whose Ingresses Lua can serve have no server block and are matched by
// lua/router.lua; adding, changing and removing them needs no reload; a host with an annotation
// that needs directives keeps its server block; a hostile route table POSTed to the control
// server is refused or bounded, and the workers keep serving.
// The default server routes in its own `/` unless it has locations of its own:
// dynamic-routes.hook.test.ts runs this file again with host-less Ingress paths in it, so that
// the router is asked in the server rewrite phase instead (src/render/dynamic-routes.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDbg } from '../../src/cli/dbg.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

const HOOK = process.env.IRX_TEST_ROUTER_HOOK === '1';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');
const ONE = ingress('app', 'one', {
  host: 'one.test',
  paths: [
    { path: '/', service: 'root' },
    { path: '/api', service: 'api' },
    { path: '/exact', pathType: 'Exact', service: 'exact' },
    { path: '/empty', service: 'empty' },
  ],
});

test.before(async () => {
  for (const [name, octet] of [['root', 2], ['api', 3], ['exact', 4], ['regex', 5], ['two', 6], ['static', 7]] as const) {
    echo[name] = await startEchoServer({ address: `127.0.0.${octet}`, name });
  }
  ctl = await startLocal({
    files: {
      'services.json': Object.keys(echo).flatMap((n) => [service('app', n), ...slices('app', n, [echo[n]!])]).concat([service('app', 'empty')]),
      'one.json': [ONE],
      'regex.json': [ingress('app', 'regex', {
        host: 'regex.test',
        annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true' },
        paths: [
          { path: '/v[0-9]+/items', pathType: 'ImplementationSpecific', service: 'regex' },
          { path: '/', service: 'root' },
        ],
      })],
      'wild.json': [ingress('app', 'wild', { host: '*.wild.test', paths: [{ path: '/', service: 'two' }] })],
      ...(HOOK ? { 'hostless.json': [ingress('app', 'hostless', { paths: [{ path: '/api', service: 'static' }] })] } : {}),
      'static.json': [ingress('app', 'static', {
        host: 'static.test',
        annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1k' },
        paths: [{ path: '/', service: 'static' }],
      })],
    },
  });
  await ctl.until('one.test', '/', (r) => r.backend === 'root', { what: 'one.test served' });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

over.noRequest('only hosts that need directives have a server block', 'the nginx.conf written', () => {
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  assert.ok(conf.includes('server_name static.test;'), 'static.test keeps its server block');
  assert.not.ok(conf.includes('one.test'), 'one.test has no server block');
  assert.not.ok(conf.includes('regex.test'), 'regex.test has no server block');
  const defaultServer = conf.slice(conf.indexOf('## start server _\n'), conf.indexOf('## end server _\n'));
  if (HOOK) {
    assert.ok(defaultServer.includes('set_by_lua_block $dynamic_route_uri {\n            return router.find()'), 'the default server asks the router before its locations');
    assert.not.ok(defaultServer.includes('router.route('));
  } else {
    assert.ok(defaultServer.includes('location "/" {'), defaultServer);
    assert.ok(defaultServer.includes('router.route("@ingress_rx_default_backend")'), 'the default server routes in its `/`');
    assert.not.ok(defaultServer.includes('router.find()'), 'no server-level hook');
  }
});

over.noRequest('dbg routes prints the rule: which hosts are dynamic, and why the others are static', 'dbg', async () => {
  let text = '';
  assert.is(await runDbg(['routes'], { workdir: ctl.workdir }, (s) => { text += s; }), 0);
  assert.ok(text.includes('routes: one.test: dynamic\n'), text);
  assert.ok(text.includes('routes: *.wild.test: dynamic\n'), text);
  assert.ok(text.includes('routes: static.test: static: Ingress app/static: proxy-body-size needs client_max_body_size in a location\n'), text);
});

over.both('paths are matched as NGINX matches locations: Exact, Prefix on element boundaries, regex', async (p) => {
  assert.is((await p.request('one.test', '/')).backend, 'root');
  assert.is((await p.request('one.test', '/api')).backend, 'api');
  assert.is((await p.request('one.test', '/api/x?y=1')).backend, 'api');
  assert.is((await p.request('one.test', '/apix')).backend, 'root');
  assert.is((await p.request('one.test', '/exact')).backend, 'exact');
  assert.is((await p.request('one.test', '/exact/more')).backend, 'root');
  assert.is((await p.request('ONE.test', '/api')).backend, 'api', 'host names are caseless');
  assert.is((await p.request('regex.test', '/v2/items/9')).backend, 'regex');
  assert.is((await p.request('regex.test', '/V2/ITEMS')).backend, 'regex', 'use-regex paths are caseless (~*)');
  assert.is((await p.request('regex.test', '/vx/items')).backend, 'root');
  assert.is((await p.request('a.wild.test', '/')).backend, 'two');
  assert.is((await p.request('a.b.wild.test', '/')).status, 404, 'a wildcard covers one label');
  assert.is((await p.request('nobody.test', '/')).status, 404);
  assert.is((await p.request('static.test', '/')).backend, 'static');
  assert.is((await p.request('one.test', '/empty')).status, 503, 'a backend without endpoints answers 503');
  assert.is((await p.request('one.test', '/.ingress-rx/dynamic-route')).backend, 'root', 'the router\'s own location is not reachable as a path');
  assert.is((await p.request('nobody.test', '/.ingress-rx/dynamic-route')).status, 404);
  if (HOOK) {
    assert.is((await p.request('nobody.test', '/api/x')).backend, 'static', 'the host-less path serves hosts without a server block or a route');
    assert.is((await p.request('one.test', '/api/x')).backend, 'api', 'a dynamic host\'s path wins over the default server\'s');
  }
});

over.both('the upstream gets the request as from a static location', async (p) => {
  const r = await p.request('one.test', '/api//a/../b%2Fc?x=1&y');
  assert.is(r.json?.path, '/api//a/../b%2Fc?x=1&y', 'the request URI is passed unchanged');
  const headers = r.json?.headers as Record<string, string>;
  assert.is(headers['x-forwarded-host'], 'one.test');
  assert.is(headers['x-real-ip'], '127.0.0.1');
  assert.ok(headers['x-request-id']);
  const https = await p.request('one.test', '/api', { https: true });
  assert.is(https.backend, 'api', 'HTTPS is routed too (the default certificate)');
  assert.is((https.json?.headers as Record<string, string>)['x-forwarded-proto'], 'https');
});

over.both('a new Ingress, a new path and a removed Ingress are served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('two.json', [ingress('app', 'two', { host: 'two.test', paths: [{ path: '/', service: 'two' }] })]);
  await p.until('two.test', '/', (r) => r.backend === 'two', { what: 'two.test served' });
  // Matched (and kept in each worker's memo) under the old table: the new one must answer anew.
  for (let i = 0; i < 4; i++) assert.is((await p.request('one.test', '/new/x')).backend, 'root');
  ctl.write('one.json', [ingress('app', 'one', {
    host: 'one.test',
    paths: [{ path: '/', service: 'root' }, { path: '/api', service: 'api' }, { path: '/new', service: 'two' }],
  })]);
  await p.until('one.test', '/new/x', (r) => r.backend === 'two', { what: 'the new path served' });
  assert.is((await p.request('one.test', '/exact')).backend, 'root', 'the removed Exact path is gone');
  ctl.remove('two.json');
  await p.until('two.test', '/', (r) => r.status === 404, { what: 'two.test gone' });
  assert.is(await reloads(), before, 'no reload');
  // one.test as it was, for the next protocol's run.
  ctl.write('one.json', [ONE]);
  await p.until('one.test', '/exact', (r) => r.backend === 'exact', { what: 'one.test as it was' });
});

over.both('an annotation that needs directives moves the host to a server block (a reload), and back', async (p) => {
  const before = await reloads();
  ctl.write('two.json', [ingress('app', 'two', {
    host: 'two.test', annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '1k' }, paths: [{ path: '/', service: 'two' }],
  })]);
  // Its client_max_body_size applies once the server block serves.
  await p.until('two.test', '/', (r) => r.status === 413, { what: 'static two.test served', method: 'POST', body: 'x'.repeat(4096) });
  assert.is((await p.request('two.test', '/')).backend, 'two');
  // The metric follows the sync's result, which may come just after the first answer.
  await waitFor(async () => (await reloads()) > before, { what: 'a reload' });
  assert.ok(readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8').includes('server_name two.test;'));

  ctl.write('two.json', [ingress('app', 'two', { host: 'two.test', paths: [{ path: '/', service: 'two' }] })]);
  await p.until('two.test', '/', (r) => r.status === 200, { what: 'dynamic two.test', method: 'POST', body: 'x'.repeat(4096) });
  assert.not.ok(readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8').includes('two.test'), 'the server block is gone');
});

over.both('a hostile route table is refused whole, or bounded per request; workers keep serving', async (p) => {
  const post = (body: string) => ctl.control('/configuration/routes', { method: 'POST', body });
  const route = (over: Record<string, unknown> = {}) => ({
    match: 'prefix', pattern: '/', caseless: false, denied: false, namespace: 'app', ingress: 'x', service: 'root', port: '80',
    path: '/', backend: 'app-root-80', fallback: '', redirect: '', ...over,
  });
  const refused: Array<[string, string]> = [
    ['not JSON', '{'],
    ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ['no hosts', '{}'],
    ['upper-case host', JSON.stringify({ hosts: { 'A.test': [route()] } })],
    ['a prefix without /', JSON.stringify({ hosts: { 'a.test': [route({ pattern: 'x' })] } })],
    ['a broken regex', JSON.stringify({ hosts: { 'a.test': [route({ match: 'regex', pattern: '(' })] } })],
    ['too many routes', JSON.stringify({ hosts: { 'a.test': Array.from({ length: 1001 }, (_, i) => route({ pattern: `/${i}` })) } })],
    ['too many regexes', JSON.stringify({ hosts: { 'a.test': Array.from({ length: 101 }, (_, i) => route({ match: 'regex', pattern: `^/${i}` })) } })],
    ['a huge string', JSON.stringify({ hosts: { 'a.test': [route({ namespace: 'n'.repeat(5000) })] } })],
    ['a number for a string', JSON.stringify({ hosts: { 'a.test': [route({ backend: 7 })] } })],
    ['two timeouts', JSON.stringify({ hosts: { 'a.test': [route({ timeouts: [1, 2] })] } })],
    ['a timeout under a millisecond', JSON.stringify({ hosts: { 'a.test': [route({ timeouts: [0, 0, 0.0005] })] } })],
    ['a timeout of days', JSON.stringify({ hosts: { 'a.test': [route({ timeouts: [0, 0, 86401] })] } })],
    ['a billion tries', JSON.stringify({ hosts: { 'a.test': [route({ tries: 1e9 })] } })],
    ['a header match value with CR/LF', JSON.stringify({ hosts: { 'a.test': [route({ when: { method: '', headers: [{ name: 'x', type: 'Exact', value: 'a\r\nb' }], query: [] } })] } })],
    ['a header match that does not compile', JSON.stringify({ hosts: { 'a.test': [route({ when: { method: '', headers: [{ name: 'x', type: 'RegularExpression', value: '(' }], query: [] } })] } })],
    ['an unknown method', JSON.stringify({ hosts: { 'a.test': [route({ when: { method: 'BREW', headers: [], query: [] } })] } })],
    ['a filter editing Content-Length', JSON.stringify({ hosts: { 'a.test': [route({ filters: { responseHeaders: { set: [{ name: 'Content-Length', value: '0' }], add: [], remove: [] } } })] } })],
    ['a filter header value with LF', JSON.stringify({ hosts: { 'a.test': [route({ filters: { requestHeaders: { set: [{ name: 'X-A', value: 'a\nb' }], add: [], remove: [] } } })] } })],
    ['a redirect to a hostname with a slash', JSON.stringify({ hosts: { 'a.test': [route({ filters: { redirect: { scheme: '', hostname: 'evil.test/x', port: 0, path: null, code: 302 } } })] } })],
    ['a redirect with code 200', JSON.stringify({ hosts: { 'a.test': [route({ filters: { redirect: { scheme: '', hostname: '', port: 0, path: null, code: 200 } } })] } })],
    ['a rewrite path with a space', JSON.stringify({ hosts: { 'a.test': [route({ filters: { rewrite: { hostname: '', path: { type: 'ReplaceFullPath', value: '/a b' } } } })] } })],
    ['a network with 33 bits', JSON.stringify({ hosts: { 'a.test': [route({ allow: ['10.0.0.0/33'] })] } })],
    ['a host name for a network', JSON.stringify({ hosts: { 'a.test': [route({ deny: ['example.com'] })] } })],
    ['a string for a list', JSON.stringify({ hosts: { 'a.test': [route({ deny: '10.0.0.0/8' })] } })],
    ['too many networks', JSON.stringify({ hosts: { 'a.test': [route({ allow: Array.from({ length: 5001 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`) })] } })],
    ['a header value with CR LF', JSON.stringify({ hosts: { 'a.test': [route({ headers: [['X-A', 'b\r\nSet-Cookie: stolen=1']] })] } })],
    ['a header name with a colon', JSON.stringify({ hosts: { 'a.test': [route({ headers: [['X-A: b', 'c']] })] } })],
    ['a header without a value', JSON.stringify({ hosts: { 'a.test': [route({ headers: [['X-A']] })] } })],
    ['101 headers', JSON.stringify({ hosts: { 'a.test': [route({ headers: Array.from({ length: 101 }, (_, i) => [`X-${i}`, 'v']) })] } })],
    ['a CORS origin that is not a regex', JSON.stringify({ hosts: { 'a.test': [route({ cors: { origin: '^(a', headers: [] } })] } })],
    ['a CORS header with a newline', JSON.stringify({ hosts: { 'a.test': [route({ cors: { origin: '', headers: [['Access-Control-Max-Age', '1\n2']] } })] } })],
    ['a CORS without its origin', JSON.stringify({ hosts: { 'a.test': [route({ cors: { headers: [] } })] } })],
    ['a denied status other than 500', JSON.stringify({ hosts: { 'a.test': [route({ denied: true, deniedStatus: 200 })] } })],
    ['a denied status as a string', JSON.stringify({ hosts: { 'a.test': [route({ denied: true, deniedStatus: '500' })] } })],
    ['a span name with a newline', JSON.stringify({ hosts: { 'a.test': [route({ trace: { trust: true, name: 'a\nb' } })] } })],
    ['a span trust as a string', JSON.stringify({ hosts: { 'a.test': [route({ trace: { trust: 'yes', name: '' } })] } })],
    ['several labels for an exact host', JSON.stringify({ hosts: { 'a.test': [route()] }, several: ['a.test'] })],
    ['several labels for an upper-case host', JSON.stringify({ hosts: { '*.a.test': [route()] }, several: ['*.A.test'] })],
    ['several labels as a string', JSON.stringify({ hosts: { '*.a.test': [route()] }, several: '*.a.test' })],
  ];
  for (const [what, body] of refused) {
    const r = await post(body);
    assert.is(r.status, 400, `${what}: ${r.status} ${r.body}`);
  }
  assert.is((await p.request('one.test', '/api')).backend, 'api', 'the table in use is kept');

  // A catastrophic regex: the match gives up at the bound; that request fails, the worker lives.
  const bomb = JSON.stringify({ hosts: { 'bomb.test': [route({ match: 'regex', pattern: '^/(a+)+$', caseless: true }), route()] } });
  assert.is((await post(bomb)).status, 201);
  const started = Date.now();
  const r = await p.request('bomb.test', `/${'a'.repeat(40)}!`);
  assert.is(r.status, 500);
  assert.ok(Date.now() - started < 5000, `bounded (${Date.now() - started} ms)`);
  assert.is((await p.request('bomb.test', '/aaa')).backend, 'root', 'the same worker serves the next request');

  // JSON null stands for an absent setting; a route's lists and timeouts apply to it alone.
  const lists = JSON.stringify({ hosts: {
    'open.test': [route({ timeouts: null, tries: null, allow: null, deny: null, headers: null, cors: null })],
    'closed.test': [route({ allow: ['10.0.0.0/8'], timeouts: [1, 1, 1], tries: 1 })],
  } });
  assert.is((await post(lists)).status, 201);
  const open = await p.request('open.test', '/', { headers: { Origin: 'https://x.test' } });
  assert.equal([open.backend, open.headers['access-control-allow-origin']], ['root', undefined]);
  assert.is((await p.request('closed.test', '/')).status, 403);
  // A change of the controller's own makes it POST its table again, for the next protocol's run.
  ctl.write(`restore-${p.tag}.json`, [ingress('app', `restore-${p.tag}`, { host: `restore-${p.tag}.test`, paths: [{ path: '/', service: 'root' }] })]);
  await p.until('one.test', '/api', (r) => r.backend === 'api', { what: 'the controller\'s route table again' });
});

test.run();
