// Tests for the authbasic and authexternal groups: users from Secrets, denial on any problem
// with the Secret or the auth URL, and validated external-auth fields.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AddressPolicy } from '../../../../src/model/checks/address-policy.js';
import { htpasswdLines } from '../../../../src/model/ingress/annotations/authbasic.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { ConfigMap, Secret } from '../../../../src/store/kube-types.js';
import { parse, secret, warnedKeys } from '../../../support/annotation-parse.js';

const HTPASSWD = 'alice:$apr1$abc$Qm2v6f8QW0/Gm7xZ5b1nM.\nbob:{SHA}fEqNCco3Yq9h5ZUglD3CZJT4lBs=\n';

test('basic auth from an htpasswd Secret', () => {
  const { value, warnings } = parse({ 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'Staff only' }, [secret('users', { auth: HTPASSWD })]);
  assert.equal(value.basicAuth, {
    type: 'basic', realm: 'Staff only', secret: 'shop/users', secretType: 'auth-file',
    users: ['alice:$apr1$abc$Qm2v6f8QW0/Gm7xZ5b1nM.', 'bob:{SHA}fEqNCco3Yq9h5ZUglD3CZJT4lBs='],
  });
  assert.is(value.denied, null);
  assert.equal(warnings, []);
});

test('digest auth and namespace/name secret in the same namespace', () => {
  const { value } = parse({ 'auth-type': 'digest', 'auth-secret': 'shop/users' }, [secret('users', { auth: 'alice:realm:0123abcd\n' })]);
  assert.is(value.basicAuth?.type, 'digest');
  assert.equal(value.basicAuth?.users, ['alice:realm:0123abcd']);
});

test('auth-map Secret: one key per user', () => {
  const { value } = parse({ 'auth-type': 'basic', 'auth-secret': 'map', 'auth-secret-type': 'auth-map' }, [secret('map', { bob: '$2y$05$xyz', alice: '{SHA}abc=' })]);
  assert.equal(value.basicAuth?.users, ['alice:{SHA}abc=', 'bob:$2y$05$xyz']);
  assert.is(value.basicAuth?.secretType, 'auth-map');
});

const denials: Array<{ name: string; ann: Record<string, string>; secrets: Secret[]; reason: RegExp; warn: string[] }> = [
  { name: 'missing Secret', ann: { 'auth-type': 'basic', 'auth-secret': 'nothere' }, secrets: [], reason: /not found/, warn: ['auth-secret'] },
  { name: 'no auth-secret', ann: { 'auth-type': 'basic' }, secrets: [], reason: /auth-secret: missing/, warn: ['auth-secret'] },
  { name: 'invalid auth-type', ann: { 'auth-type': 'ntlm', 'auth-secret': 'users' }, secrets: [secret('users', { auth: HTPASSWD })], reason: /auth-type/, warn: ['auth-type'] },
  { name: 'invalid auth-secret-type', ann: { 'auth-type': 'basic', 'auth-secret': 'users', 'auth-secret-type': 'file' }, secrets: [secret('users', { auth: HTPASSWD })], reason: /auth-secret-type/, warn: ['auth-secret-type'] },
  { name: 'invalid secret name', ann: { 'auth-type': 'basic', 'auth-secret': 'Users;' }, secrets: [], reason: /auth-secret/, warn: ['auth-secret'] },
  { name: 'cross-namespace Secret', ann: { 'auth-type': 'basic', 'auth-secret': 'other/users' }, secrets: [secret('users', { auth: HTPASSWD }, 'other')], reason: /namespace/, warn: ['auth-secret'] },
  { name: 'Secret without auth key', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { passwd: HTPASSWD })], reason: /no `auth` key/, warn: ['auth-secret'] },
];

// ingress-nginx writes such entries as they are and NGINX matches no password against them (401).
const unusable: Array<{ name: string; ann: Record<string, string>; secrets: Secret[]; users: string[]; says: RegExp }> = [
  { name: 'malformed htpasswd line', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { auth: 'alice:$apr1$x\nnot a line\n' })], users: ['alice:$apr1$x'], says: /line 2 of the htpasswd file is not user:hash/ },
  { name: 'a user without a hash (auth.go:233)', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { auth: 'foo:' })], users: [], says: /line 1 .*no password matches any user/ },
  { name: 'empty htpasswd', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { auth: '\n' })], users: [], says: /no users/ },
  { name: 'auth-map with invalid user', ann: { 'auth-type': 'basic', 'auth-secret': 'map', 'auth-secret-type': 'auth-map' }, secrets: [secret('map', { 'a b': 'hash', bob: 'x' })], users: ['bob:x'], says: /"a b" of the auth-map/ },
];

for (const u of unusable) {
  test(`basic auth keeps the location protected, warned: ${u.name}`, () => {
    const { value, warnings } = parse(u.ann, u.secrets);
    assert.is(value.denied, null);
    assert.equal(value.basicAuth?.users, u.users);
    assert.equal(warnedKeys(warnings), ['auth-secret']);
    assert.match(warnings[0]!.message, u.says);
  });
}

for (const d of denials) {
  test(`basic auth denies: ${d.name}`, () => {
    const { value, warnings } = parse(d.ann, d.secrets);
    assert.is(value.basicAuth, null);
    assert.match(value.denied ?? '', d.reason);
    assert.equal(warnedKeys(warnings), d.warn);
  });
}

test('a Secret in another namespace is used when allow-cross-namespace-resources is true', () => {
  const { value } = parse({ 'auth-type': 'basic', 'auth-secret': 'other/users' }, [secret('users', { auth: HTPASSWD }, 'other')], { allowCrossNamespaceResources: true });
  assert.is(value.basicAuth?.secret, 'other/users');
  assert.is(value.denied, null);
});

test('auth-secret without auth-type is ignored with a warning', () => {
  const { value, warnings } = parse({ 'auth-secret': 'users' }, [secret('users', { auth: HTPASSWD })]);
  assert.is(value.basicAuth, null);
  assert.is(value.denied, null);
  assert.equal(warnedKeys(warnings), ['auth-secret']);
});

test('an auth-realm with a quote is dropped, auth still works', () => {
  const { value, warnings } = parse({ 'auth-type': 'basic', 'auth-secret': 'users', 'auth-realm': 'a"b' }, [secret('users', { auth: HTPASSWD })]);
  assert.is(value.basicAuth?.realm, '');
  assert.equal(warnedKeys(warnings), ['auth-realm']);
});

test('htpasswd lines: comments and blank lines skipped', () => {
  assert.equal(htpasswdLines('# users\n\nalice:x\r\n'), { users: ['alice:x'], skipped: [] });
  assert.equal(htpasswdLines('alice:has space\n:nouser\nbob:y'), { users: ['bob:y'], skipped: [1, 2] });
});

test('external auth with every field', () => {
  const { value, warnings } = parse({
    'auth-url': 'https://auth.example.com/oauth2/auth',
    'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri',
    'auth-signin-redirect-param': 'return_to',
    'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email',
    'auth-method': 'post',
    'auth-cache-key': '$remote_user$http_authorization',
    'auth-cache-duration': '200 202 10m, 401 30s',
  });
  assert.equal(value.externalAuth, {
    url: 'https://auth.example.com/oauth2/auth',
    host: 'auth.example.com',
    method: 'POST',
    signin: 'https://$host/oauth2/start?rd=$escaped_request_uri',
    signinRedirectParam: 'return_to',
    responseHeaders: ['X-Auth-Request-User', 'X-Auth-Request-Email'],
    cacheKey: '$remote_user$http_authorization',
    cacheDuration: ['200 202 10m', '401 30s'],
    requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {},
    // Without auth-keepalive the name is still dialled from Lua, a new connection per subrequest.
    keepalive: { connections: 0, requests: 1000, timeout: 60, peerHost: 'auth.example.com', peerPort: 443 },
  });
  assert.equal(warnings, []);
  assert.is(value.denied, null);
});

test('external auth defaults', () => {
  const { value } = parse({ 'auth-url': 'http://auth.svc.cluster.local:8080/check' });
  assert.equal(value.externalAuth, {
    url: 'http://auth.svc.cluster.local:8080/check', host: 'auth.svc.cluster.local', method: '', signin: '',
    signinRedirectParam: '', responseHeaders: [], cacheKey: '', cacheDuration: ['200 202 401 5m'],
    requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {},
    keepalive: { connections: 0, requests: 1000, timeout: 60, peerHost: 'auth.svc.cluster.local', peerPort: 8080 },
  });
});

const extDenials: Array<{ name: string; ann: Record<string, string>; reason: RegExp }> = [
  { name: 'auth-url not http', ann: { 'auth-url': 'file:///etc/passwd' }, reason: /auth-url/ },
  { name: 'auth-url not a URL', ann: { 'auth-url': 'auth-service' }, reason: /auth-url/ },
  { name: 'auth-url with semicolon', ann: { 'auth-url': 'http://a.com/x;y' }, reason: /auth-url/ },
  { name: 'auth-url naming a unix socket', ann: { 'auth-url': 'http://unix:/run/ingress-rx/control.sock:/configuration/certs' }, reason: /unix socket/ },
  { name: 'auth-url naming a unix socket (any case)', ann: { 'auth-url': 'HTTPS://UNIX:/var/run/docker.sock:/containers/json' }, reason: /unix socket/ },
  { name: 'auth-url whose host has an empty label (auth.go:887)', ann: { 'auth-url': 'https://invalid..auth.url' }, reason: /empty label/ },
  { name: 'auth-method unknown', ann: { 'auth-url': 'http://a.com/', 'auth-method': 'FETCH' }, reason: /auth-method/ },
  { name: 'auth-response-headers invalid', ann: { 'auth-url': 'http://a.com/', 'auth-response-headers': 'X-Ok, X Bad' }, reason: /auth-response-headers/ },
];
for (const d of extDenials) {
  test(`external auth denies: ${d.name}`, () => {
    const { value, warnings } = parse(d.ann);
    assert.is(value.externalAuth, null);
    assert.match(value.denied ?? '', d.reason);
    assert.ok(warnings.length >= 1);
  });
}

test('auth-url above the risk limit is ignored with a warning (not denied)', () => {
  const { value, warnings } = parse({ 'auth-url': 'http://a.com/' }, [], { annotationsRiskLevel: 'Medium' });
  assert.is(value.externalAuth, null);
  assert.is(value.denied, null);
  assert.equal(warnedKeys(warnings), ['auth-url']);
});

test('invalid auth-signin, param, cache key and duration fall back with warnings', () => {
  const { value, warnings } = parse({
    'auth-url': 'http://a.com/', 'auth-signin': 'javascript:x', 'auth-signin-redirect-param': 'r d',
    'auth-cache-key': '$a"b', 'auth-cache-duration': '200 forever',
  });
  assert.equal([value.externalAuth?.signin, value.externalAuth?.signinRedirectParam, value.externalAuth?.cacheKey, value.externalAuth?.cacheDuration],
    ['', '', '', ['200 202 401 5m']]);
  assert.equal(warnedKeys(warnings), ['auth-cache-duration', 'auth-cache-key', 'auth-signin', 'auth-signin-redirect-param']);
  assert.is(value.denied, null);
});

const cm = (name: string, data: Record<string, string>, ns = 'shop'): ConfigMap => ({ metadata: { name, namespace: ns }, data });

test('external auth extras: request redirect, always-set-cookie, keepalive, headers from a ConfigMap', () => {
  const { value, warnings } = parse({
    'auth-url': 'http://auth.sso.svc:9000/check', 'auth-request-redirect': 'https://app.example.com$request_uri',
    'auth-always-set-cookie': 'true', 'auth-keepalive': '10', 'auth-keepalive-requests': '50', 'auth-keepalive-timeout': '30',
    'auth-keepalive-share-vars': 'true', 'auth-proxy-set-headers': 'auth-headers',
  }, [], {}, [cm('auth-headers', { 'X-Team': 'blue', 'X-Client': '$remote_addr' })]);
  assert.equal(warnings, []);
  const ea = value.externalAuth!;
  assert.equal([ea.requestRedirect, ea.alwaysSetCookie, ea.proxySetHeaders], ['https://app.example.com$request_uri', true, { 'X-Client': '$remote_addr', 'X-Team': 'blue' }]);
  assert.equal(ea.keepalive, { connections: 10, requests: 50, timeout: 30, peerHost: 'auth.sso.svc', peerPort: 9000 });
});

const keepaliveOff: Array<{ name: string; ann: Record<string, string>; key: string }> = [
  { name: 'negative', ann: { 'auth-keepalive': '-1' }, key: 'auth-keepalive' },
  { name: 'above the bound', ann: { 'auth-keepalive': '100000' }, key: 'auth-keepalive' },
  { name: 'not a number', ann: { 'auth-keepalive': '10;' }, key: 'auth-keepalive' },
  { name: 'zero requests', ann: { 'auth-keepalive': '10', 'auth-keepalive-requests': '0' }, key: 'auth-keepalive-requests' },
  { name: 'zero timeout', ann: { 'auth-keepalive': '10', 'auth-keepalive-timeout': '0' }, key: 'auth-keepalive-timeout' },
];
for (const k of keepaliveOff) {
  test(`auth-keepalive off with a warning: ${k.name}`, () => {
    const { value, warnings } = parse({ 'auth-url': 'http://auth.sso.svc/check', ...k.ann });
    assert.ok(value.externalAuth);
    // No connections kept; the service is still dialled from Lua under the address policy.
    assert.equal([value.externalAuth!.keepalive?.connections, value.externalAuth!.keepalive?.peerHost], [0, 'auth.sso.svc']);
    assert.equal(warnedKeys(warnings), [k.key]);
  });
}

test('an auth-url address the upstream address policy refuses denies the locations, with or without keepalive', () => {
  const refused = ['http://127.0.0.1:9000/check', 'http://[::1]:9000/check', 'http://169.254.169.254/latest/meta-data/', 'http://localhost:9000/check',
    'http://0.0.0.0:10254/metrics', 'http://[::ffff:127.0.0.1]:9000/', 'http://[::ffff:7f00:1]/', 'https://[fe80::1]/', 'http://127.1/', 'http://2130706433/'];
  for (const url of refused) {
    for (const extra of [{}, { 'auth-keepalive': '10' }] as Array<Record<string, string>>) {
      const { value, warnings } = parse({ 'auth-url': url, ...extra });
      assert.is(value.externalAuth, null, url);
      assert.match(value.denied ?? '', /auth-url: .*refused by the upstream address policy/, url);
      assert.equal(warnedKeys(warnings), ['auth-url'], url);
    }
  }
  const local: AddressPolicy = { allow: new Set(['loopback']), ownPorts: new Set([8080]) };
  assert.equal(parse({ 'auth-url': 'http://[::1]:9000/check', 'auth-keepalive': '10' }, [], {}, [], local).value.externalAuth?.keepalive?.peerHost, '::1');
  assert.is(parse({ 'auth-url': 'http://127.0.0.1:9000/check' }, [], {}, [], local).value.denied, null, 'loopback opened by the policy');
  const own = parse({ 'auth-url': 'http://127.0.0.1:8080/check' }, [], {}, [], local);
  assert.match(own.value.denied ?? '', /auth-url: 127\.0\.0\.1:8080 refused/, 'own port');
  // Names and $host are judged where they are dialled, not here.
  assert.is(parse({ 'auth-url': 'http://auth.sso.svc:9000/check' }).value.denied, null);
  assert.is(parse({ 'auth-url': 'https://$host/oauth2/auth' }).value.denied, null);
});

test('invalid auth-request-redirect, auth-always-set-cookie and auth-keepalive-share-vars are warned; the first two fall back', () => {
  const { value, warnings } = parse({
    'auth-url': 'http://a.com/', 'auth-request-redirect': '/x"; return 200 "', 'auth-always-set-cookie': 'yes', 'auth-keepalive': '2', 'auth-keepalive-share-vars': 'on',
  });
  assert.equal([value.externalAuth?.requestRedirect, value.externalAuth?.alwaysSetCookie], ['', false]);
  assert.equal(warnedKeys(warnings), ['auth-always-set-cookie', 'auth-keepalive-share-vars', 'auth-request-redirect']);
});

test('auth-keepalive with $host in auth-url keeps no connection (the peer would follow the client); Lua still dials the Host under the policy', () => {
  const { value, warnings } = parse({ 'auth-url': 'http://$host/oauth2/auth', 'auth-keepalive': '10' });
  const unpooled = { connections: 0, requests: 1000, timeout: 60, peerHost: '$host', peerPort: 80 };
  assert.equal(value.externalAuth!.keepalive, unpooled);
  assert.match(warnings[0]!.message, /variable/);
  assert.equal(parse({ 'auth-url': 'http://$host/oauth2/auth' }).value.externalAuth!.keepalive, unpooled, 'not auth_request, whose Host NGINX would dial as written');
});

const headerDenials: Array<{ name: string; data?: Record<string, string>; ref?: string; ns?: string; reason: RegExp; settings?: Partial<NginxSettings> }> = [
  { name: 'a missing ConfigMap', ref: 'nope', reason: /not found/ },
  { name: 'another namespace', ref: 'kube-system/auth-headers', ns: 'kube-system', data: { 'X-A': 'b' }, reason: /another namespace/ },
  { name: 'a header name with a space', data: { 'X Bad': 'b' }, reason: /X Bad/ },
  { name: 'a value with a newline (header injection)', data: { 'X-A': 'b\r\nX-Injected: 1' }, reason: /X-A/ },
  { name: 'a value ending the directive', data: { 'X-A': 'b; proxy_pass http://evil' }, reason: /X-A/ },
  { name: 'a Host header (the auth location frames its request)', data: { Host: 'evil.example' }, reason: /frames/ },
  { name: 'too many headers', data: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`X-H${i}`, 'v'])), reason: /at most 64/ },
  { name: 'not a ConfigMap reference', ref: 'a/b/c', reason: /ConfigMap/ },
];
for (const h of headerDenials) {
  test(`auth-proxy-set-headers denies the location: ${h.name}`, () => {
    const ns = h.ns ?? 'shop';
    const { value, warnings } = parse({ 'auth-url': 'http://auth.sso.svc/check', 'auth-proxy-set-headers': h.ref ?? 'auth-headers' }, [], h.settings ?? {},
      h.data ? [cm('auth-headers', h.data, ns)] : []);
    assert.is(value.externalAuth, null);
    assert.match(value.denied ?? '', h.reason);
    assert.equal(warnedKeys(warnings), ['auth-proxy-set-headers']);
  });
}

test('auth-proxy-set-headers names another namespace with allow-cross-namespace-resources', () => {
  const { value, warnings } = parse({ 'auth-url': 'http://auth.sso.svc/check', 'auth-proxy-set-headers': 'sso/auth-headers' }, [],
    { allowCrossNamespaceResources: true }, [cm('auth-headers', { 'X-A': 'b' }, 'sso')]);
  assert.equal(warnings, []);
  assert.equal(value.externalAuth!.proxySetHeaders, { 'X-A': 'b' });
});

test('auth-snippet: refused without allow-snippet-annotations, kept with it, refused when it leaves its block', () => {
  const off = parse({ 'auth-url': 'http://a.com/', 'auth-snippet': 'proxy_set_header X-A b;' });
  assert.is(off.value.externalAuth!.snippet, '');
  assert.equal(warnedKeys(off.warnings), ['auth-snippet']);
  const allowed = { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' } as const;
  const on = parse({ 'auth-url': 'http://a.com/', 'auth-snippet': 'proxy_set_header X-A b;' }, [], allowed);
  assert.is(on.value.externalAuth!.snippet, 'proxy_set_header X-A b;');
  assert.equal(on.warnings, []);
  const escape = parse({ 'auth-url': 'http://a.com/', 'auth-snippet': '} location /x { return 200;' }, [], allowed);
  assert.is(escape.value.externalAuth!.snippet, '');
  assert.equal(warnedKeys(escape.warnings), ['auth-snippet']);
  const risk = parse({ 'auth-url': 'http://a.com/', 'auth-snippet': 'proxy_set_header X-A b;' }, [], { allowSnippetAnnotations: true, annotationsRiskLevel: 'High' });
  assert.is(risk.value.externalAuth!.snippet, '');
});

test('global auth: every Ingress without auth-url, unless enable-global-auth is false; an Ingress auth-url wins', () => {
  const settings = { globalAuthUrl: 'http://auth.sso.svc/check', globalAuthResponseHeaders: ['X-User'], globalAuthAlwaysSetCookie: true };
  const plain = parse({}, [], settings);
  assert.equal([plain.value.externalAuth?.url, plain.value.externalAuth?.responseHeaders, plain.value.externalAuth?.alwaysSetCookie], ['http://auth.sso.svc/check', ['X-User'], true]);
  assert.equal(plain.warnings, []);
  const off = parse({ 'enable-global-auth': 'false' }, [], settings);
  assert.is(off.value.externalAuth, null);
  const own = parse({ 'auth-url': 'http://mine.svc/check', 'enable-global-auth': 'true' }, [], settings);
  assert.is(own.value.externalAuth?.url, 'http://mine.svc/check');
  assert.equal(warnedKeys(own.warnings), ['enable-global-auth']);
  const none = parse({}, [], {});
  assert.is(none.value.externalAuth, null);
});

test('auth extras without auth-url warn that they are ignored', () => {
  const { value, warnings } = parse({ 'auth-keepalive': '10', 'auth-always-set-cookie': 'true' });
  assert.is(value.externalAuth, null);
  assert.equal(warnedKeys(warnings), ['auth-always-set-cookie', 'auth-keepalive']);
});

test.run();
