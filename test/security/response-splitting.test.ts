// No response splitting, no request splitting: every header value a tenant can shape with a
// variable a client fills — a redirect's Location (permanent/temporal-redirect with $uri,
// $remote_user, a header, a cookie, an argument; auth-signin; regex captures are refused there), the Host sent upstream
// (upstream-vhost), the auth request's line and headers (auth-url, auth-request-redirect,
// auth-proxy-set-headers) and CORS's echoed Origin — is sent CR, LF and NUL, URL-encoded and raw
// wherever the protocol carries them, over HTTP/1.1 and HTTP/2, on a dynamic host (the Lua router)
// and on a static one (its server block; a harmless server-alias makes the twin static). No
// answer may carry an extra header or a second body, no upstream an extra header or a split
// request line: a value is escaped (%0D%0A), or NGINX refuses the request (400, or a reset stream).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { http2Request } from '../support/protocols.js';
import { rawHttp1, rawHttp2, startRecordingUpstream, type RawReply, type RecordingUpstream } from '../support/raw-http.js';

const P = 'nginx.ingress.kubernetes.io';
const NS = 'team-h';
let ctl: LocalController;
let web: RecordingUpstream;
let auth: RecordingUpstream;
let deny: RecordingUpstream;

const a = (o: Record<string, string>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [`${P}/${k}`, v]));

// name → [annotations, path, pathType]: each Ingress is on `<name>.test` (dynamic where it can be)
// and `<name>-static.test` (the same, plus a server-alias: a server block of its own).
const TARGETS: Record<string, { annotations: Record<string, string> }> = {
  'redirect-uri': { annotations: { 'permanent-redirect': 'https://x.test$uri' } },
  'redirect-vars': { annotations: { 'temporal-redirect': 'https://x.test/u/$remote_user/h/$http_x_a/c/$cookie_c/q/$arg_q' } },
  // upstream-vhost takes a host name or one variable.
  'vhost': { annotations: { 'upstream-vhost': '$uri' } },
  'cors': { annotations: { 'enable-cors': 'true', 'cors-allow-origin': 'https://*.origin.test' } },
};

test.before(async () => {
  web = await startRecordingUpstream('127.0.0.2', 'web');
  auth = await startRecordingUpstream('127.0.0.3', 'auth');
  deny = await startRecordingUpstream('127.0.0.4', 'deny', 401);
  const objects: object[] = [
    service(NS, 'web', { port: web.port }), ...slices(NS, 'web', [{ address: web.address, port: web.port }]),
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'auth-headers', namespace: NS }, data: { 'X-From-User': '$remote_user', 'X-From-Header': '$http_x_a' } },
    // auth-url always needs a server block. The auth request is a subrequest: its $uri is its own,
    // the main request's headers and user are the client's.
    ingress(NS, 'auth', {
      host: 'auth.test', paths: [{ path: '/', service: 'web', port: web.port }],
      annotations: a({
        'auth-url': `http://${auth.address}:${auth.port}/check?h=$http_x_a&u=$remote_user`,
        'auth-request-redirect': '$remote_user',
        'auth-proxy-set-headers': `${NS}/auth-headers`,
      }),
    }),
    // A 401 sends the client to auth-signin.
    ingress(NS, 'signin', {
      host: 'signin.test', paths: [{ path: '/', service: 'web', port: web.port }],
      annotations: a({ 'auth-url': `http://${deny.address}:${deny.port}/check`, 'auth-signin': 'https://login.test/start?from=$uri' }),
    }),
  ];
  for (const [name, t] of Object.entries(TARGETS)) {
    const paths = [{ path: '/', service: 'web', port: web.port }];
    objects.push(ingress(NS, name, { host: `${name}.test`, paths, annotations: a(t.annotations) }));
    objects.push(ingress(NS, `${name}-static`, { host: `${name}-static.test`, paths, annotations: a({ ...t.annotations, 'server-alias': `alias-${name}.test` }) }));
  }
  ctl = await startLocal({ files: { 'tenant.json': objects } });
  await ctl.until('vhost.test', '/ok', (r) => r.backend === 'web', { what: 'the dynamic vhost host' });
  await ctl.until('auth.test', '/ok', (r) => r.backend === 'web', { what: 'the auth host' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
  await auth?.close();
  await deny?.close();
});

const HOSTS = [...Object.keys(TARGETS).flatMap((name) => [`${name}.test`, `${name}-static.test`]), 'auth.test', 'signin.test'];

test('each target host is served the way its name says: dynamic by the router, static by its server block', () => {
  const routes = readFileSync(join(ctl.workdir, 'dynamic-routes.txt'), 'utf8');
  for (const host of HOSTS) {
    const kind = host.endsWith('-static.test') || /^(auth|signin)\.test$/.test(host) ? 'static' : 'dynamic';
    assert.match(routes, new RegExp(`routes: ${host.replace(/\./g, '\\.')}: ${kind}`), `${host} is ${kind}`);
  }
});

const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** No header beyond the ones NGINX meant, no control byte in any header, one body. */
function assertOneAnswer(r: RawReply, what: string): void {
  for (const [name, value] of r.headers) {
    assert.not.ok(/^(x-injected|set-cookie)$/i.test(name), `${what}: an injected header ${name}: ${value}`);
    assert.not.ok(CONTROL.test(value), `${what}: a control byte in ${name}: ${JSON.stringify(value)}`);
  }
  const length = Number(r.headers.find(([n]) => n.toLowerCase() === 'content-length')?.[1] ?? NaN);
  if (Number.isFinite(length)) assert.is(Buffer.byteLength(r.body, 'latin1'), length, `${what}: one body of Content-Length bytes`);
  assert.not.match(r.body, /HTTP\/1\.[01] \d{3}/, `${what}: no second answer in the body`);
}

/** Headers a tenant's values fill (a client's own headers go upstream as the client sent them). */
const TENANT_SHAPED = /^(host|x-auth-request-redirect|x-from-user|x-from-header)\s*:/i;

/** No request NGINX sent upstream carries an injected header, a split request line or a control byte in a tenant-shaped header. */
function assertCleanUpstream(requests: string[], what: string): void {
  for (const req of requests) {
    const [line = '', ...rest] = req.slice(0, req.indexOf('\r\n\r\n')).split('\r\n');
    assert.match(line, /^[A-Z]+ [^\s\u0000-\u001f\u007f]+ HTTP\/1\.[01]$/, `${what}: request line ${JSON.stringify(line)}`);
    for (const h of rest) {
      assert.not.ok(/^(x-injected|set-cookie)\s*:/i.test(h), `${what}: upstream got an injected header ${JSON.stringify(h)}`);
      if (TENANT_SHAPED.test(h)) assert.not.ok(CONTROL.test(h), `${what}: a control byte in ${JSON.stringify(h)}`);
    }
  }
}

const INJECT = 'X-Injected:%20yes';
/** URL-encoded control bytes in the path: decoded into $uri and captures. */
const ENCODED_PATHS = [`/%0d%0a${INJECT}`, `/%0a${INJECT}`, `/%0d${INJECT}`, `/a%0d%0a%0d%0aHTTP/1.1%20200%20OK`, '/%01%7f%1b', '/a%00b'];

function get(path: string, host: string, extra = ''): string {
  return `GET ${path} HTTP/1.1\r\nHost: ${host}\r\n${extra}Connection: close\r\n\r\n`;
}

test('URL-encoded CR, LF and NUL in the path, over HTTP/1.1: escaped or refused, never a header', async () => {
  for (const host of HOSTS) {
    for (const p of ENCODED_PATHS) {
      const path = p;
      const r = await rawHttp1(ctl.ports.http, get(path, host, 'Origin: https://a.origin.test\r\n'));
      assertOneAnswer(r, `${host} ${path}`);
      if (p === '/a%00b') assert.is(r.status, 400, `${host}: NGINX refuses a NUL in the URI`);
      if (p.startsWith('/%0d%0a') && /^(redirect-uri|signin)/.test(host)) {
        const location = r.headers.find(([n]) => n === 'Location')?.[1] ?? '';
        assert.match(location, /%0D%0AX-Injected: yes($|&)/, `${host}: the Location carries the bytes escaped: ${location}`);
      }
    }
  }
  assertCleanUpstream(web.requests, 'web');
  assertCleanUpstream(auth.requests, 'auth');
  for (const host of ['vhost.test', 'vhost-static.test']) {
    assert.ok(web.requests.some((r) => r.includes('\r\nHost: /%0D%0AX-Injected: yes\r\n') && r.includes(`X-Forwarded-Host: ${host}`)),
      `${host}: upstream-vhost carries the bytes escaped: ${web.requests.filter((r) => r.includes(`X-Forwarded-Host: ${host}`)).map((r) => JSON.stringify(r.slice(0, 200))).join('\n')}`);
  }
});

test('raw control bytes in the request line and in headers, over HTTP/1.1: refused (400), or escaped where NGINX takes them', async () => {
  for (const host of HOSTS) {
    // NGINX refuses a request line with a control byte and a header with CR or NUL.
    for (const req of [`GET /a\u0000b HTTP/1.1\r\nHost: ${host}\r\n\r\n`, `GET /a\u0001b HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
      get('/', host, 'X-A: a\rX-Injected: yes\r\n'), get('/', host, 'X-A: a\u0000b\r\n')]) {
      const r = await rawHttp1(ctl.ports.http, req);
      assert.is(r.status, 400, `${host}: ${JSON.stringify(req.slice(0, 40))}`);
      assertOneAnswer(r, host);
    }
    // What NGINX takes: other control bytes in a header and a cookie, and any byte in a Basic user name.
    // A Basic user name ends at the first `:`.
    const user = Buffer.from('a\r\nX-Injected=yes\r\n\r\nbody\u0000:pw', 'latin1').toString('base64');
    const r = await rawHttp1(ctl.ports.http, get('/', host,
      `X-A: a\u0001b\u001bc\u007f\r\nCookie: c=d\u0001e\r\nAuthorization: Basic ${user}\r\nOrigin: https://a\u0001.origin.test\r\n`));
    assertOneAnswer(r, `${host} (header-borne bytes)`);
    if (host.startsWith('redirect-vars')) {
      const location = r.headers.find(([n]) => n === 'Location')?.[1] ?? '';
      assert.is(location, 'https://x.test/u/a%0D%0AX-Injected=yes%0D%0A%0D%0Abody%00/h/a%01b%1Bc%7F/c/d%01e/q/', `${host}: every variable's bytes escaped alike`);
    }
  }
  assertCleanUpstream(web.requests, 'web');
  assertCleanUpstream(auth.requests, 'auth');
  // The auth request: its line escaped as a URL (space too), its headers as headers.
  const user = 'a%0D%0AX-Injected=yes%0D%0A%0D%0Abody%00';
  const asked = auth.requests.find((r) => r.startsWith('GET /check?h=a%01b%1Bc%7F&u='));
  assert.ok(asked, `the auth service was asked with the values escaped: ${auth.requests.map((r) => r.split('\r\n')[0]).join(' | ')}`);
  assert.ok(asked!.startsWith(`GET /check?h=a%01b%1Bc%7F&u=${user} HTTP/1.`), asked!.split('\r\n')[0]);
  for (const h of [`X-Auth-Request-Redirect: ${user}`, `X-From-User: ${user}`, 'X-From-Header: a%01b%1Bc%7F']) assert.ok(asked!.includes(`\r\n${h}\r\n`), h);
});

function assertCleanH2(r: Reply, what: string): void {
  for (const [name, value] of Object.entries(r.headers)) {
    assert.not.ok(/^(x-injected|set-cookie)$/i.test(name), `${what}: an injected header ${name}`);
    assert.not.ok(CONTROL.test(String(value)), `${what}: a control byte in ${name}: ${JSON.stringify(value)}`);
  }
}

test('over HTTP/2: URL-encoded bytes escaped, raw CR, LF and NUL in :path or a header refused', async () => {
  for (const host of HOSTS) {
    for (const p of ENCODED_PATHS.filter((x) => x !== '/a%00b')) {
      const r = await http2Request(ctl.ports.https, host, p, { headers: { origin: 'https://a.origin.test' } });
      assertCleanH2(r, `${host} ${p} [HTTP/2]`);
      if (p.startsWith('/%0d%0a') && host.startsWith('redirect-uri')) assert.match(String(r.headers.location), /%0D%0AX-Injected: yes$/, `${host} [HTTP/2]: ${String(r.headers.location)}`);
    }
    for (const [path, headers] of [['/a\r\nX-Injected: yes', []], ['/a\u0000b', []], ['/', [['x-a', 'a\r\nx-injected: yes']]], ['/', [['x-a', 'a\u0000b']]]] as Array<[string, Array<[string, string]>]>) {
      const r = await rawHttp2(ctl.ports.https, host, path, headers);
      assert.ok(r.reset || r.status === 400, `${host} ${JSON.stringify(path)} ${JSON.stringify(headers)} [HTTP/2]: refused (${JSON.stringify(r)})`);
    }
  }
  assertCleanUpstream(web.requests, 'web');
  assertCleanUpstream(auth.requests, 'auth');
});

test.run();
