// No redirect the controller builds names a host taken from the raw Host header. A client sends
// `Host: <host>:1@evil.test` (and `evil.test#.<host>`, which NGINX's own `*.` names and the
// default server take as they come) to every redirect the template and the Lua router build:
// app-root, auth-signin's default `rd=`, a temporal-redirect naming $http_host, force-ssl-redirect,
// from-to-www-redirect, a path's trailing slash (NGINX's own 301) and a custom error page, on a
// dynamic host and on its static twin (a harmless server-alias gives it a server block), over
// HTTP/1.1 and HTTP/2. Each Location names the server's own host (with the port the client used,
// when it is one); a host no server name bounds is answered 400.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { http2Request } from '../support/protocols.js';
import { rawHttp1, startRecordingUpstream, type RawReply, type RecordingUpstream } from '../support/raw-http.js';

const P = 'nginx.ingress.kubernetes.io';
const NS = 'team-r';
let ctl: LocalController;
let web: RecordingUpstream;
let deny: RecordingUpstream;

const a = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [`${P}/${k}`, v]));

// Each on `<name>.test` (dynamic) and `<name>-static.test` (with a server-alias: a server block).
const TWINS: Record<string, Record<string, string>> = {
  approot: { 'app-root': '/app' },
  moved: { 'temporal-redirect': 'https://$http_host/moved' },
  forced: { 'force-ssl-redirect': 'true' },
};

test.before(async () => {
  web = await startRecordingUpstream('127.0.0.2', 'web');
  deny = await startRecordingUpstream('127.0.0.4', 'deny', 401);
  const svc = (path = '/', pathType?: string) => [{ path, pathType, service: 'web', port: web.port }];
  const objects: object[] = [service(NS, 'web', { port: web.port }), ...slices(NS, 'web', [{ address: web.address, port: web.port }])];
  for (const [name, annotations] of Object.entries(TWINS)) {
    objects.push(ingress(NS, name, { host: `${name}.test`, paths: svc(), annotations: a(annotations) }));
    objects.push(ingress(NS, `${name}-static`, { host: `${name}-static.test`, paths: svc(), annotations: a({ ...annotations, 'server-alias': `alias-${name}.test` }) }));
  }
  objects.push(
    // auth-url needs a server block: its 401 sends the client to auth-signin with rd= the request's own URL.
    ingress(NS, 'signin', { host: 'signin.test', paths: svc(), annotations: a({ 'auth-url': `http://${deny.address}:${deny.port}/check`, 'auth-signin': 'https://login.test/start' }) }),
    ingress(NS, 'www', { host: 'www.w.test', paths: svc(), annotations: a({ 'from-to-www-redirect': 'true' }) }),
    // A path ending in a slash: NGINX's own 301 for the path without it names $host.
    ingress(NS, 'hostless', { paths: svc('/dir/', 'ImplementationSpecific') }),
    ingress(NS, 'wild-alias', { host: 'wa.test', paths: svc('/dir/', 'ImplementationSpecific'), annotations: a({ 'server-alias': '*.wa-alias.test' }) }),
    ingress(NS, 'errors', { host: 'errors.test', paths: svc(), annotations: a({ 'custom-http-errors': '404' }) }),
  );
  ctl = await startLocal({ files: { 'tenant.json': objects } });
  await ctl.until('approot.test', '/', (r) => r.status === 302, { what: 'the dynamic app-root' });
  await ctl.until('signin.test', '/', (r) => r.status === 302, { what: 'auth-signin' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
  await deny?.close();
});

test('the twins are served the way their names say: dynamic by the router, static by a server block', () => {
  const routes = readFileSync(join(ctl.workdir, 'dynamic-routes.txt'), 'utf8');
  for (const name of Object.keys(TWINS)) {
    assert.match(routes, `routes: ${name}.test: dynamic`);
    assert.match(routes, new RegExp(`routes: ${name}-static\\.test: static`));
  }
});

const location = (r: RawReply) => r.headers.find(([n]) => n.toLowerCase() === 'location')?.[1] ?? '';
const get = (host: string, path = '/') => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** The host a browser goes to for this Location (WHATWG URL parsing, as browsers do). */
function target(loc: string): string {
  return new URL(loc, 'http://base.invalid/').host;
}

test('a Location built by the controller names the server\'s own host, never one from a hostile Host header [HTTP/1.1]', async () => {
  const cases: Array<[host: string, path: string, expected: string]> = [];
  for (const name of Object.keys(TWINS)) {
    for (const h of [`${name}.test`, `${name}-static.test`]) {
      // force-ssl-redirect names the HTTPS port; the others keep the port the client used.
      const own = name === 'forced' ? `${h}:${ctl.ports.https}` : h;
      cases.push([`${h}:1@evil.test`, '/', own], [`${h}:8080`, '/', name === 'forced' ? own : `${h}:8080`], [h, '/', own]);
    }
  }
  // from-to-www names the server's port always, as ingress-nginx does.
  cases.push(['signin.test:1@evil.test', '/', 'login.test'], ['w.test:1@evil.test', '/', `www.w.test:${ctl.ports.http}`]);
  for (const [host, path, expected] of cases) {
    const r = await rawHttp1(ctl.ports.http, get(host, path));
    assert.ok(r.status >= 300 && r.status < 400, `${host}${path}: a redirect (${r.status})`);
    const loc = location(r);
    assert.is(target(loc), expected, `${host}${path}: Location ${loc}`);
    assert.not.ok(loc.includes('evil.test'), `${host}${path}: Location ${loc}`);
  }
  // auth-signin's rd= names the request's own host too.
  const signin = location(await rawHttp1(ctl.ports.http, get('signin.test:1@evil.test', '/private?x=1')));
  const rd = new URL(signin).searchParams.get('rd') ?? '';
  assert.is(target(rd), 'signin.test', `rd=${rd}`);
  assert.is(new URL(rd).pathname + new URL(rd).search, '/private?x=1');
});

test('a Host no server name bounds is answered 400 where NGINX would name it in a redirect; a plain one still redirects [HTTP/1.1]', async () => {
  for (const [host, path] of [['evil.test#.x', '/dir'], ['a@evil.test', '/dir'], ['evil.test\\a', '/dir'], ['evil.test#.wa-alias.test', '/dir'], ['evil.test?.wa-alias.test', '/dir']]) {
    const r = await rawHttp1(ctl.ports.http, get(host!, path));
    assert.is(r.status, 400, `${host}${path}: ${r.status} ${location(r)}`);
    assert.is(location(r), '', `${host}: no Location`);
  }
  // NGINX's own 301 names $host (port_in_redirect is off: use-port-in-redirects).
  for (const [host, expected] of [['anything.test', 'anything.test'], ['x.wa-alias.test', 'x.wa-alias.test'], ['wa.test:8080', 'wa.test']]) {
    const r = await rawHttp1(ctl.ports.http, get(host!, '/dir'));
    assert.is(r.status, 301, `${host}/dir`);
    assert.is(target(location(r)), expected, location(r));
  }
  // A custom error page answers where it is: no Location at all.
  const missing = await rawHttp1(ctl.ports.http, get('errors.test:1@evil.test', '/__status/404'));
  assert.is(location(missing), '');
});

test('over HTTP/2 too: :authority with a port and a userinfo tail names only the server\'s host', async () => {
  const h2 = (host: string, path = '/'): Promise<Reply> => http2Request(ctl.ports.https, host.split(':')[0]!, path, { headers: { host } });
  for (const name of ['approot', 'moved']) {
    for (const h of [`${name}.test`, `${name}-static.test`]) {
      const r = await h2(`${h}:1@evil.test`);
      const loc = String(r.headers.location ?? '');
      assert.ok(r.status >= 300 && r.status < 400, `${h} [HTTP/2]: ${r.status}`);
      assert.is(target(loc), h, `${h} [HTTP/2]: Location ${loc}`);
    }
  }
  const r = await h2('evil.test#.wa-alias.test', '/dir');
  assert.is(r.status, 400, `a Host no name bounds [HTTP/2]: ${r.status} ${String(r.headers.location ?? '')}`);
});

test.run();
