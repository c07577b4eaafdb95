// ingress-nginx test/e2e/annotations/affinity.go, ported: each It a host of its own on one
// controller with a two-endpoint echo Service. What the e2e tests read from Set-Cookie is read
// here from the same header, over HTTP/1.1 and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotations, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret, type Reply } from '../../../support/local-harness.js';
import { generateCertificate } from '../../../support/lua-nginx.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
let certDir: string;
const its = ported(test, () => fx.ctl);

const cookie = (name = 'SERVERID', more: Record<string, string> = {}) => ({ affinity: 'cookie', 'session-cookie-name': name, ...more });

/** Single-rule Ingresses: host → [path, annotations]. */
const SINGLE: Record<string, [string, Record<string, string>]> = {
  'sticky.foo.com': ['/', cookie()],
  'path.foo.com': ['/something', cookie()],
  'cookieexpires.foo.com': ['/', cookie('ExpiresCookie', { 'session-cookie-expires': '172800', 'session-cookie-max-age': '259200' })],
  'cookiedomain.foo.com': ['/', cookie('DomainCookie', { 'session-cookie-domain': 'foo.bar' })],
  'cookienodomain.foo.com': ['/', cookie('NoDomainCookie')],
  'useregex.foo.com': ['/foo/.*', cookie('SERVERID', { 'use-regex': 'true', 'session-cookie-path': '/foo/bar' })],
  'useregexwarn.foo.com': ['/foo/.*', cookie('SERVERID', { 'use-regex': 'true' })],
  'alias.foo.com': ['/bar', cookie('SERVERID', { 'server-alias': 'a1.foo.com,a2.foo.com' })],
  'secure.foo.com': ['/bar', cookie('SERVERID', { 'session-cookie-secure': 'true' })],
  'insecure.foo.com': ['/bar', cookie('SERVERID', { 'session-cookie-secure': 'false' })],
};

const OLDER = '2024-01-01T00:00:00Z';
const NEWER = '2024-01-02T00:00:00Z';

test.before(async () => {
  fx = await startFixture('affinity');
  certDir = mkdtempSync(join(tmpdir(), 'irx-affinity-'));
  const tls = await generateCertificate(certDir, 'tls.foo.com');
  const ns = fx.ns;
  const objects = [
    // A Service per It, as each It of ingress-nginx has its namespace: the Ingresses using one
    // Service share its affinity.
    ...Object.entries(SINGLE).flatMap(([host, [path, a]]) => {
      const name = host.split('.')[0]!;
      return [...fx.echoService(name), fx.single(name, host, a, { path, svc: name, pathType: path.includes('*') ? 'ImplementationSpecific' : 'Prefix' })];
    }),
    ...['morethanonerule', 'separate', 'reversed', 'static', 'nohost', 'tls'].flatMap((name) => fx.echoService(name)),
    ingress(ns, 'morethanonerule', {
      host: 'morethanonerule.foo.com', annotations: annotations(cookie()),
      paths: [{ path: '/something', service: 'morethanonerule' }, { path: '/somewhereelse', service: 'morethanonerule' }],
    }),
    // 329: the Ingress with affinity and one without share the echo Service; the older one sets
    // affinity here, the newer one on the second host (both orders keep the cookie on the
    // affinity Ingress's path), and on a third host whose server block is static.
    ingress(ns, 'separate-1', { host: 'separate.foo.com', created: OLDER, annotations: annotations({ affinity: 'cookie' }), paths: [{ path: '/foo/bar', service: 'separate' }] }),
    ingress(ns, 'separate-2', { host: 'separate.foo.com', created: NEWER, paths: [{ path: '/foo', service: 'separate' }] }),
    ingress(ns, 'reversed-1', { host: 'reversed.foo.com', created: NEWER, annotations: annotations({ affinity: 'cookie' }), paths: [{ path: '/foo/bar', service: 'reversed' }] }),
    ingress(ns, 'reversed-2', { host: 'reversed.foo.com', created: OLDER, paths: [{ path: '/foo', service: 'reversed' }] }),
    ingress(ns, 'static-1', {
      host: 'static.foo.com', created: NEWER, annotations: annotations({ affinity: 'cookie', 'enable-access-log': 'false' }),
      paths: [{ path: '/foo/bar', service: 'static' }],
    }),
    ingress(ns, 'static-2', { host: 'static.foo.com', created: OLDER, paths: [{ path: '/foo', service: 'static' }] }),
    ingress(ns, 'default-no-host', { annotations: annotations(cookie()), paths: [{ path: '/', service: 'nohost' }] }),
    ingress(ns, 'tls', { host: 'tls.foo.com', annotations: annotations(cookie('SERVERID', { 'session-cookie-secure': 'false' })), paths: [{ path: '/', service: 'tls' }], tls: [{ hosts: ['tls.foo.com'], secretName: 'tls' }] }),
    tlsSecret(ns, 'tls', readFileSync(tls.certPath, 'utf8'), readFileSync(tls.keyPath, 'utf8')),
  ];
  fx.apply('ingresses.json', objects);
  const served: Array<[string, string]> = [
    ...Object.entries(SINGLE).map(([h, [p]]) => [h, p.replace('.*', 'bar')] as [string, string]),
    ['morethanonerule.foo.com', '/something'], ['separate.foo.com', '/foo/bar'], ['reversed.foo.com', '/foo/bar'],
    ['static.foo.com', '/foo/bar'], ['tls.foo.com', '/'], ['unknown.foo.com', '/'],
  ];
  await Promise.all(served.map(([h, p]) => fx.ctl.until(h, p, (r) => r.backend !== undefined, { what: `${h}${p} served`, https: h.startsWith('tls.') })));
});
test.after(async () => {
  await fx.stop();
  rmSync(certDir, { recursive: true, force: true });
});

/** Every Set-Cookie header of a reply, one per line. */
const setCookie = (r: Reply): string => ([] as string[]).concat(r.headers['set-cookie'] ?? []).join('\n');

async function sticky(r: Promise<Reply>, what: string): Promise<string> {
  const reply = await r;
  assert.is(reply.status, 200, what);
  return setCookie(reply);
}

its.both('annotations/affinity.go:50', async (p) => {
  assert.match(await sticky(p.request('sticky.foo.com', '/'), 'sticky'), /^SERVERID=/m);
});

its.both('annotations/affinity.go:72', async (p) => {
  // The It changes its Ingress: a host of its own per protocol, so the two legs do not race.
  const host = `change-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}.foo.com`;
  const name = host.split('.')[0]!;
  const ing = (cookieName: string) => [...fx.echoService(name), fx.single(name, host, cookie(cookieName), { svc: name })];
  await fx.applyAndWait(`change-${host}.json`, ing('SERVERID'), host, '/', (r) => /^SERVERID=/m.test(setCookie(r)));
  assert.match(await sticky(p.request(host, '/'), 'before the change'), /^SERVERID=/m);
  fx.apply(`change-${host}.json`, ing('OTHERCOOKIENAME'));
  const changed = await p.until(host, '/', (r) => /^OTHERCOOKIENAME=/m.test(setCookie(r)), { what: `${host} sets OTHERCOOKIENAME` });
  assert.is(changed.status, 200);
  assert.not.match(setCookie(changed), /SERVERID=/);
});

its.both('annotations/affinity.go:107', async (p) => {
  assert.match(await sticky(p.request('path.foo.com', '/something'), 'path'), /; Path=\/something(;|$)/m);
});

its.both('annotations/affinity.go:129', async (p) => {
  assert.match(await sticky(p.request('morethanonerule.foo.com', '/something'), '/something'), /; Path=\/something(;|$)/m);
  assert.match(await sticky(p.request('morethanonerule.foo.com', '/somewhereelse'), '/somewhereelse'), /; Path=\/somewhereelse(;|$)/m);
});

its.both('annotations/affinity.go:202', async (p) => {
  const before = Date.now();
  const value = await sticky(p.request('cookieexpires.foo.com', '/'), 'expires');
  assert.match(value, /^ExpiresCookie=/m);
  assert.match(value, /; Max-Age=259200(;|$)/m);
  // Expires is 48 hours (session-cookie-expires 172800 s) from the request, in the cookie date format.
  const expires = /; Expires=(\w{3}, \d{2}-\w{3}-\d{2} \d{2}:\d{2}:\d{2} GMT)/.exec(value)?.[1];
  assert.ok(expires, `an Expires attribute in ${value}`);
  const at = Date.parse(expires!.replace(/-/g, ' '));
  const want = before + 172_800_000;
  assert.ok(Math.abs(at - want) < 60_000, `Expires ${expires} is 48 h from now`);
});

its.both('annotations/affinity.go:234', async (p) => {
  assert.match(await sticky(p.request('cookiedomain.foo.com', '/'), 'domain'), /; Domain=foo\.bar(;|$)/m);
});

its.both('annotations/affinity.go:257', async (p) => {
  const value = await sticky(p.request('cookienodomain.foo.com', '/'), 'no domain');
  assert.match(value, /^NoDomainCookie=/m);
  assert.not.match(value, /; Domain/);
});

its.both('annotations/affinity.go:279', async (p) => {
  const value = await sticky(p.request('useregex.foo.com', '/foo/bar'), 'regex path');
  assert.match(value, /^SERVERID=/m);
  assert.match(value, /; Path=\/foo\/bar(;|$)/m);
});

its.both('annotations/affinity.go:303', async (p) => {
  const r = await p.request('useregexwarn.foo.com', '/foo/bar');
  assert.is(r.status, 200);
  // ingress-nginx logs it; so does ingress-rx, naming the Ingress and the annotation.
  await waitFor(() => fx.ctl.output().split('\n').some((l) => l.includes('session-cookie-path should be set when use-regex is true') && l.includes('affinity/useregexwarn')),
    { what: 'the warning about session-cookie-path in the controller log' });
});

its.both('annotations/affinity.go:329', async (p) => {
  for (const host of ['separate.foo.com', 'reversed.foo.com', 'static.foo.com']) {
    const plain = await p.request(host, '/foo');
    assert.is(plain.status, 200, `${host}/foo`);
    assert.is(setCookie(plain), '', `${host}/foo (the Ingress without affinity) sets no cookie`);
    assert.match(await sticky(p.request(host, '/foo/bar'), `${host}/foo/bar`), /^INGRESSCOOKIE=.*; Path=\/foo\/bar(;|$)/m, `${host}/foo/bar`);
  }
});

its.both('annotations/affinity.go:361', async (p) => {
  // No host: the default server's `/`, whatever name the request gives.
  assert.match(await sticky(p.request('unknown.foo.com', '/'), 'no host'), /^SERVERID=/m);
});

its.both('annotations/affinity.go:381', async (p) => {
  for (const host of ['alias.foo.com', 'a1.foo.com', 'a2.foo.com']) {
    assert.match(await sticky(p.request(host, '/bar'), host), /^SERVERID=/m, host);
  }
});

its.both('annotations/affinity.go:421', async (p) => {
  assert.match(await sticky(p.request('secure.foo.com', '/bar'), 'secure'), /; Secure(;|$)/m);
});

its.http1Only('annotations/affinity.go:444', 'the cookie of a plain-HTTP request; over HTTP/2 (TLS) it is Secure, as annotations/affinity.go:467 checks', async (p) => {
  const value = await sticky(p.request('insecure.foo.com', '/bar'), 'insecure');
  assert.match(value, /^SERVERID=/m);
  assert.not.match(value, /; Secure/);
});

its.both('annotations/affinity.go:467', async (p) => {
  assert.match(await sticky(p.request('tls.foo.com', '/', { https: true }), 'https'), /; Secure(;|$)/m);
});

test.run();
