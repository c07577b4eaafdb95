// The URI and redirect settings as the Lua router applies them (lua/route_redirect.lua,
// route_rewrite.lua, route_upstream_headers.lua): permanent/temporal-redirect with variables,
// relative-redirects and use-port-in-redirects, app-root, rewrite-target with use-regex captures
// and query strings, x-forwarded-prefix, upstream-vhost, connection-proxy-header. Every answer
// is asserted exactly; dynamic-uri.static.test.ts runs this file again with every host a server
// block, so the router's answers are NGINX's own. Hostile values in the route table are refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDbg } from '../../src/cli/dbg.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';
import { DYNAMIC_ROUTES_ARGS, ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

const NS = 'uri';
const P = 'nginx.ingress.kubernetes.io';
const dynamic = DYNAMIC_ROUTES_ARGS.length === 0;
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;

const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string>, path = '/', pathType = 'Prefix') =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path, pathType, service: 'main' }] });
const upstream = (r: Reply) => {
  assert.is(r.backend, 'main', `${r.status} ${r.body.slice(0, 200)}`);
  return r.json?.path as string;
};
const headers = (r: Reply) => ({ ...(r.json?.headers ?? {}) }) as Record<string, string>;

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.3.10', name: 'main' });
  ctl = await startLocal({
    files: {
      'services.json': [service(NS, 'main'), ...slices(NS, 'main', [echo])],
      // One file each: a test changes them.
      'path.json': [on('path', 'path.test', { 'permanent-redirect': '/moved$uri' })],
      'captures.json': [on('captures', 'captures.test', { 'rewrite-target': '/$2?from=$1', 'use-regex': 'true' }, '/api(/|$)(.*)', 'ImplementationSpecific')],
      'redirects.json': [
        on('vars', 'vars.test', {
          'permanent-redirect': 'https://example.org$request_uri&h=$host&x=$http_x_thing&s=$server_name&n=$nope&a=$arg_a$is_args',
          'permanent-redirect-code': '308',
        }),
        on('path-port', 'path-port.test', { 'permanent-redirect': '/moved$uri', 'use-port-in-redirects': 'true' }),
        on('path-rel', 'path-rel.test', { 'temporal-redirect': 'http://$host/t', 'permanent-redirect': '/moved', 'relative-redirects': 'true' }),
        on('rel', 'rel.test', { 'permanent-redirect': '/moved$uri', 'relative-redirects': 'true' }),
        on('see-other', 'see-other.test', { 'temporal-redirect': 'https://example.org/tmp', 'temporal-redirect-code': '303' }),
        // `return 300 URL` answers with the URL as the body: the router does not, so the host stays static.
        on('multiple', 'multiple.test', { 'permanent-redirect': 'https://example.org/m', 'permanent-redirect-code': '300' }),
        // The location's return comes before the Lua SSL redirect.
        ingress(NS, 'tls', {
          host: 'tls.test', annotations: a({ 'permanent-redirect': 'https://example.org/tls' }),
          tls: [{ hosts: ['tls.test'], secretName: 'nope' }], paths: [{ path: '/', service: 'main' }],
        }),
        on('approot', 'approot.test', { 'app-root': '/app' }),
        // The location's return and app-root come before its CORS blocks; its rewrite after them.
        on('cors-redirect', 'cors-redirect.test', { 'permanent-redirect': 'https://example.org/c', 'enable-cors': 'true' }),
        on('cors-approot', 'cors-approot.test', { 'app-root': '/app', 'enable-cors': 'true' }),
        on('cors-rewrite', 'cors-rewrite.test', { 'rewrite-target': '/new', 'enable-cors': 'true' }, '/old'),
      ],
      'rewrites.json': [
        on('args', 'args.test', { 'rewrite-target': '/search?q=$2', 'use-regex': 'true' }, '/s(/|$)(.*)', 'ImplementationSpecific'),
        on('drop', 'drop.test', { 'rewrite-target': '/only?' }, '/d'),
        on('plain', 'plain-rewrite.test', { 'rewrite-target': '/new' }, '/old'),
        // rewrite_log has no counterpart in the router: the host keeps its server block, and logs.
        on('rwlog', 'rwlog.test', { 'rewrite-target': '/logged', 'enable-rewrite-log': 'true' }, '/old'),
        on('xfp', 'xfp.test', { 'x-forwarded-prefix': '/pre', 'rewrite-target': '/' }, '/p'),
        // A capture of the location's regex in x-forwarded-prefix (ingress-nginx expands it): NGINX's rewrite only.
        on('xfp-cap', 'xfp-cap.test', { 'x-forwarded-prefix': '/$1/app', 'rewrite-target': '/$3', 'use-regex': 'true' }, '/(tenant-[a-z]+)/app(/|$)(.*)', 'ImplementationSpecific'),
        on('none', 'none.test', {}),
        // The Lua SSL redirect runs after the location's rewrite, on the request URI.
        on('rw-ssl', 'rw-ssl.test', { 'rewrite-target': '/new', 'force-ssl-redirect': 'true' }, '/old'),
      ],
      'headers.json': [
        on('vhost', 'vhost.test', { 'upstream-vhost': 'internal.example:8080', 'connection-proxy-header': 'keep-alive' }),
        on('vhost-var', 'vhost-var.test', { 'upstream-vhost': '$host' }),
        // Linkerd's documented setup: the location's variables, as the route's values on a dynamic host.
        on('vhost-tpl', 'vhost-tpl.test', { 'upstream-vhost': '$service_name.$namespace.svc.cluster.local:8084' }),
        on('vhost-hdr', 'vhost-hdr.test', { 'upstream-vhost': '${http_x_tenant}.internal' }),
      ],
    },
  });
  await ctl.until('vhost.test', '/', (r) => r.backend === 'main', { what: 'vhost.test served' });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

over.noRequest('the rule: these settings are dynamic; a redirect code that answers with a body keeps its host static', 'the nginx.conf written', async () => {
  let text = '';
  assert.is(await runDbg(['routes'], { workdir: ctl.workdir }, (s) => { text += s; }), 0);
  if (!dynamic) {
    assert.ok(text.includes('every host static'), text);
    return;
  }
  for (const host of ['vars', 'path', 'path-port', 'path-rel', 'rel', 'see-other', 'tls', 'approot', 'cors-redirect', 'cors-approot', 'cors-rewrite', 'captures', 'args', 'drop', 'plain-rewrite', 'rw-ssl', 'xfp', 'vhost', 'vhost-var', 'vhost-tpl', 'vhost-hdr']) {
    assert.ok(text.includes(`routes: ${host}.test: dynamic\n`), `${host}: ${text}`);
  }
  assert.ok(text.includes('routes: multiple.test: static: Ingress uri/multiple: redirect code 300 answers with the URL as the body'), text);
  assert.ok(text.includes('routes: rwlog.test: static: Ingress uri/rwlog: enable-rewrite-log needs rewrite_log in a location'), text);
  assert.ok(text.includes('routes: xfp-cap.test: static: Ingress uri/xfp-cap: an x-forwarded-prefix with captures or variables needs the location\'s proxy_set_header'), text);
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  assert.not.ok(conf.includes('vars.test'), 'no server block');
  // dynamic-uri.hook.test.ts: the default server asks the router in its server rewrite phase.
  assert.is(conf.includes('return router.find()'), process.env.IRX_TEST_ROUTER_HOOK === '1', 'the server-level hook');
});

over.both('permanent-redirect: variables are evaluated per request; unknown ones stay literal; the code is kept', async (p) => {
  const r = await p.request('vars.test', '/a/b?a=1', { headers: { 'X-Thing': 'v' } });
  assert.is(r.status, 308);
  assert.is(r.headers.location, 'https://example.org/a/b?a=1&h=vars.test&x=v&s=vars.test&n=$nope&a=1?');
  assert.match(r.body, /308 Permanent Redirect/);
  const bare = await p.request('vars.test', '/');
  assert.is(bare.headers.location, 'https://example.org/&h=vars.test&x=&s=vars.test&n=$nope&a=', 'missing values are empty');
  const other = await p.request('see-other.test', '/x');
  assert.is(other.status, 303);
  assert.is(other.headers.location, 'https://example.org/tmp');
  const multiple = await p.request('multiple.test', '/x');
  assert.is(multiple.status, 300);
  assert.is(multiple.headers.location, undefined);
  assert.is(multiple.body, 'https://example.org/m');
});

over.both('a redirect to a path: absolute with the request host, the port only with use-port-in-redirects, relative with relative-redirects', async (p) => {
  let r = await p.request('path.test', '/x?y=1');
  assert.is(r.status, 301);
  assert.is(r.headers.location, `${p.scheme}://path.test/moved/x`);
  r = await p.request('PATH.test.:1234', '/x');
  assert.is(r.headers.location, `${p.scheme}://path.test/moved/x`, 'the host as NGINX keeps it (lower case, no dot, no port)');
  r = await p.request('path-port.test', '/x');
  assert.is(r.headers.location, `${p.scheme}://path-port.test:${p.port}/moved/x`);
  r = await p.request('path-port.test', '/x', { https: true });
  assert.is(r.headers.location, `https://path-port.test:${ctl.ports.https}/moved/x`);
  r = await p.request('rel.test', '/x');
  assert.is(r.headers.location, '/moved/x');
  r = await p.request('path-rel.test', '/x');
  assert.is(r.status, 302, 'temporal-redirect wins');
  assert.is(r.headers.location, 'http://path-rel.test/t');
});

over.both('the location\'s redirect comes before the SSL redirect; app-root redirects / only', async (p) => {
  const r = await p.request('tls.test', '/x');
  assert.is(r.status, 301);
  assert.is(r.headers.location, 'https://example.org/tls');
  // Connection is HTTP/1.1's framing (HTTP/2 has none).
  const { date, connection, ...overHttps } = (await p.request('tls.test', '/x', { https: true })).headers;
  assert.ok(date);
  assert.is(connection, p.protocol === 'HTTP/1.1' ? 'close' : undefined);
  assert.equal(overHttps, {
    'content-type': 'text/html', 'content-length': '162', location: 'https://example.org/tls',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
  }, 'the same response headers, HSTS included');
  const root = await p.request('approot.test:8123', '/?q=1');
  assert.is(root.status, 302);
  assert.is(root.headers.location, `${p.scheme}://approot.test:8123/app`);
  assert.is((await p.request('approot.test', '/', { https: true })).headers.location, 'https://approot.test/app');
  assert.is(upstream(await p.request('approot.test', '/other?q=1')), '/other?q=1');
  assert.is(upstream(await p.request('approot.test', '/app')), '/app');
});

over.both('with CORS: the redirect and app-root answer first (no Access-Control header), a preflight comes before the rewrite', async (p) => {
  const origin = { Origin: 'https://app.example' };
  for (const method of ['GET', 'OPTIONS']) {
    const r = await p.request('cors-redirect.test', '/x', { method, headers: origin });
    assert.is(r.status, 301, method);
    assert.is(r.headers['access-control-allow-origin'], undefined, method);
    const root = await p.request('cors-approot.test', '/', { method, headers: origin });
    assert.is(root.status, 302, method);
    assert.is(root.headers['access-control-allow-origin'], undefined, method);
  }
  const preflight = await p.request('cors-approot.test', '/x', { method: 'OPTIONS', headers: origin });
  assert.is(preflight.status, 204);
  assert.is(preflight.headers['access-control-allow-origin'], '*');
  const rewritten = await p.request('cors-rewrite.test', '/old/x?q=1', { headers: origin });
  assert.is(upstream(rewritten), '/new?q=1');
  assert.is(rewritten.headers['access-control-allow-origin'], '*');
  const before = await p.request('cors-rewrite.test', '/old/x', { method: 'OPTIONS', headers: origin });
  assert.is(before.status, 204);
  assert.is(before.headers['access-control-allow-origin'], '*');
});

over.both('rewrite-target with use-regex: captures, the request arguments appended, the new URI escaped as NGINX escapes it', async (p) => {
  const cases: Array<[string, string]> = [
    ['/api/x?y=1', '/x?from=/&y=1'],
    ['/API/x', '/x?from=/'],
    ['/api', '/?from='],
    ['/api/a%20b', '/a%20b?from=/'],
    ['/api/a+b%3Fc', '/a+b%3Fc?from=/'],
    ['/api/%C3%A9/%22q%22', '/%C3%A9/%22q%22?from=/'],
    ['/api//x/../y', '/y?from=/'],
    ['/api/a%01b', '/a%01b?from=/'],
  ];
  for (const [path, want] of cases) assert.is(upstream(await p.request('captures.test', path)), want, path);
});

over.both('a capture in the arguments is escaped only when the request URI was quoted (%) or had a +', async (p) => {
  const cases: Array<[string, string]> = [
    ['/s/a&b', '/search?q=a&b'],
    ['/s/a%26b', '/search?q=a%26b'],
    ['/s/a+b', '/search?q=a%2Bb'],
    ['/s/a b'.replace(' ', '%20'), '/search?q=a%20b'],
    ['/s/x?z=1', '/search?q=x&z=1'],
    ['/s/./a', '/search?q=a'],
  ];
  for (const [path, want] of cases) assert.is(upstream(await p.request('args.test', path)), want, path);
});

over.both('rewrite-target: a last ? drops the arguments; without use-regex the whole URI is replaced', async (p) => {
  assert.is(upstream(await p.request('drop.test', '/d/x?y=1')), '/only');
  assert.is(upstream(await p.request('plain-rewrite.test', '/old/x?y=1')), '/new?y=1');
  assert.is(upstream(await p.request('plain-rewrite.test', '/OLD')), '/new');
  // The SSL redirect answers plain HTTP, HTTP/1.1 whatever the run.
  const ssl = await ctl.request('rw-ssl.test', '/old/x?y=1');
  assert.is(ssl.status, 308);
  assert.is(ssl.headers.location, `https://rw-ssl.test:${ctl.ports.https}/old/x?y=1`);
  assert.is(upstream(await p.request('rw-ssl.test', '/old/x?y=1', { https: true })), '/new?y=1');
  assert.is(upstream(await p.request('none.test', '/a%2Fb/../c?x')), '/a%2Fb/../c?x', 'no rewrite: the request URI unchanged');
  assert.is(upstream(await p.request('none.test', '/a%01b%7F')), '/a%01b%7F', 'a URI that decodes to control bytes is served');
});

over.both('upstream headers: X-Forwarded-Prefix replaces the client\'s, Host and Connection as set, the standard set otherwise', async (p) => {
  const cap = await p.request('xfp-cap.test', '/tenant-blue/app/x?y=1');
  assert.is(upstream(cap), '/x?y=1');
  assert.is(headers(cap)['x-forwarded-prefix'], '/tenant-blue/app', 'the capture is expanded');
  const r = await p.request('xfp.test', '/p/x', { headers: { 'X-Forwarded-Prefix': '/evil' } });
  assert.is(upstream(r), '/');
  assert.is(headers(r)['x-forwarded-prefix'], '/pre');
  assert.is(headers(await p.request('none.test', '/', { headers: { 'X-Forwarded-Prefix': '/client' } }))['x-forwarded-prefix'], '/client');

  const v = headers(await p.request('vhost.test', '/', { headers: { 'X-Forwarded-For': '10.0.0.1' } }));
  assert.ok(v['x-request-id']);
  delete v['x-request-id'];
  assert.equal(v, {
    host: 'internal.example:8080',
    connection: 'keep-alive',
    'x-real-ip': '127.0.0.1',
    'x-forwarded-for': '127.0.0.1',
    'x-forwarded-host': 'vhost.test',
    // HTTPS on a port of its own is announced as 443, as ingress-nginx's $pass_port.
    'x-forwarded-port': p.scheme === 'https' ? '443' : String(p.port),
    'x-forwarded-proto': p.scheme,
    'x-forwarded-scheme': p.scheme,
    'x-scheme': p.scheme,
    'x-original-forwarded-for': '10.0.0.1',
  });
  assert.is(headers(await p.request('vhost-var.test', '/')).host, 'vhost-var.test', 'a variable is the request\'s value');
  assert.is(headers(await p.request('vhost-tpl.test', '/')).host, 'main.uri.svc.cluster.local:8084', 'the location\'s variables');
  assert.is(headers(await p.request('vhost-hdr.test', '/', { headers: { 'X-Tenant': 'blue' } })).host, 'blue.internal', 'a request header, per request');
  // An upgrade is HTTP/1.1's (HTTP/2 forbids the header): over HTTP/2 the request goes upstream without one.
  const plain = headers(await p.request('none.test', '/', { headers: { Upgrade: 'websocket' } }));
  assert.is(plain.host, 'none.test');
  assert.equal([plain.connection, plain.upgrade], p.protocol === 'HTTP/1.1' ? ['upgrade', 'websocket'] : [undefined, undefined]);
});

over.both('enable-rewrite-log: the rewrite is logged at notice level, whatever serves the other hosts', async (p) => {
  const logged = () => readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8').split('rewritten data: "/logged"').length - 1;
  const before = logged();
  assert.is(upstream(await p.request('rwlog.test', '/old/x?y=1')), '/logged?y=1');
  await waitFor(() => logged() > before, { what: 'the rewrite in the error log' });
});

if (dynamic) over.both('changing a rewrite-target or a redirect of a dynamic host is a POST, not a reload', async (p) => {
  const reloads = () => ctl.metric('nginx_ingress_controller_success');
  const before = await reloads();
  ctl.write('captures.json', [on('captures', 'captures.test', { 'rewrite-target': '/v2/$2', 'use-regex': 'true' }, '/api(/|$)(.*)', 'ImplementationSpecific')]);
  ctl.write('path.json', [on('path', 'path.test', { 'temporal-redirect': 'https://example.org$uri', 'temporal-redirect-code': '307' })]);
  await p.until('captures.test', '/api/x?y=1', (r) => r.json?.path === '/v2/x?y=1', { what: 'the new target' });
  await p.until('path.test', '/x', (r) => r.status === 307 && r.headers.location === 'https://example.org/x', { what: 'the new redirect' });
  assert.is(await reloads(), before, 'no reload');
});

if (dynamic) over.both('hostile URI settings in a route table are refused whole; the table in use stays', async (p) => {
  const post = (body: string) => ctl.control('/configuration/routes', { method: 'POST', body });
  const route = (over: Record<string, unknown>) => JSON.stringify({
    hosts: {
      'h.test': [{
        match: 'prefix', pattern: '/', caseless: false, denied: false, namespace: 'uri', ingress: 'x', service: 'main', port: '80',
        path: '/', backend: 'uri-main-80', fallback: '', redirect: '', ...over,
      }],
    },
  });
  const ret = (over: Record<string, unknown>) => ({ return: { code: 301, parts: ['https://x/'], absolute: true, port: false, ...over } });
  const refused: Array<[string, Record<string, unknown>]> = [
    ['a redirect code that is not a redirect', ret({ code: 200 })],
    ['a CR LF in a redirect', ret({ parts: ['https://x/\r\nSet-Cookie: a=b'] })],
    ['a variable a redirect may not use', ret({ parts: ['https://x/', 'dynamic_upstream_uri', ''] })],
    ['an even number of parts', ret({ parts: ['https://x/', 'host'] })],
    ['too many parts', ret({ parts: Array.from({ length: 65 }, (_, i) => (i % 2 ? 'host' : 'x')) })],
    ['absolute not a boolean', ret({ absolute: 'yes' })],
    ['an app-root with a quote', { appRoot: '/a"b' }],
    ['an app-root not a path', { appRoot: 'http://evil' }],
    ['a rewrite regex that does not compile', { rewrite: { regex: '(', target: '/' } }],
    ['a rewrite target with a variable', { rewrite: { regex: '^/', target: '/$host' } }],
    ['a rewrite target with $0', { rewrite: { regex: '^/', target: '/$0' } }],
    ['a rewrite target with white space', { rewrite: { regex: '^/', target: '/a b' } }],
    ['a huge rewrite regex', { rewrite: { regex: 'a'.repeat(5000), target: '/' } }],
    ['a Host with CR LF', { upstreamVhost: ['a\r\nX: y'] }],
    ['a Host with a variable it may not use', { upstreamVhost: ['', 'dynamic_upstream_uri', ''] }],
    ['a Host as a string', { upstreamVhost: 'a' }],
    ['a Connection not a string', { connection: 7 }],
    ['an X-Forwarded-Prefix with a NUL', { xForwardedPrefix: '/a\u0000' }],
  ];
  for (const [what, over] of refused) {
    const r = await post(route(over));
    assert.is(r.status, 400, `${what}: ${r.status} ${r.body}`);
  }
  assert.is((await p.request('h.test', '/')).status, 404, 'no table with h.test was taken');
  assert.is(upstream(await p.request('captures.test', '/api/x')), '/v2/x', 'the table in use is kept');

  // A catastrophic rewrite regex: its match gives up at the bound; that request fails, the worker lives.
  assert.is((await post(route({ rewrite: { regex: '^/(a+)+$', target: '/$1' } }))).status, 201);
  const started = Date.now();
  assert.is((await p.request('h.test', `/${'a'.repeat(40)}!`)).status, 500);
  assert.ok(Date.now() - started < 5000, `bounded (${Date.now() - started} ms)`);
  assert.is(upstream(await p.request('h.test', '/aaa')), '/aaa', 'the same worker serves the next request');
  // A change of the controller's own makes it POST its table again, for the next protocol's run.
  ctl.write(`restore-${p.tag}.json`, [on(`restore-${p.tag}`, `restore-${p.tag}.test`, {})]);
  await p.until('h.test', '/', (r) => r.status === 404, { what: 'the controller\'s route table again' });
});

test.run();
