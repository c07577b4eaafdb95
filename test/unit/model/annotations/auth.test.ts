// Tests for the authbasic and authexternal groups: users from Secrets, denial on any problem
// with the Secret or the auth URL, and validated external-auth fields.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { htpasswdLines } from '../../../../src/model/annotations/authbasic.js';
import type { Secret } from '../../../../src/store/kube-types.js';
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
  { name: 'malformed htpasswd line', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { auth: 'alice:$apr1$x\nnot a line\n' })], reason: /line 2/, warn: ['auth-secret'] },
  { name: 'empty htpasswd', ann: { 'auth-type': 'basic', 'auth-secret': 'users' }, secrets: [secret('users', { auth: '\n' })], reason: /no users/, warn: ['auth-secret'] },
  { name: 'auth-map with invalid user', ann: { 'auth-type': 'basic', 'auth-secret': 'map', 'auth-secret-type': 'auth-map' }, secrets: [secret('map', { 'a b': 'hash' })], reason: /auth-map/, warn: ['auth-secret'] },
];

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
  assert.equal(htpasswdLines('# users\n\nalice:x\r\n'), ['alice:x']);
  assert.throws(() => htpasswdLines('alice:has space'), /line 1/);
  assert.throws(() => htpasswdLines(':nouser'), /line 1/);
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
  });
  assert.equal(warnings, []);
  assert.is(value.denied, null);
});

test('external auth defaults', () => {
  const { value } = parse({ 'auth-url': 'http://auth.svc.cluster.local:8080/check' });
  assert.equal(value.externalAuth, {
    url: 'http://auth.svc.cluster.local:8080/check', host: 'auth.svc.cluster.local', method: '', signin: '',
    signinRedirectParam: '', responseHeaders: [], cacheKey: '', cacheDuration: ['200 202 401 5m'],
  });
});

const extDenials: Array<{ name: string; ann: Record<string, string>; reason: RegExp }> = [
  { name: 'auth-url not http', ann: { 'auth-url': 'file:///etc/passwd' }, reason: /auth-url/ },
  { name: 'auth-url not a URL', ann: { 'auth-url': 'auth-service' }, reason: /auth-url/ },
  { name: 'auth-url with semicolon', ann: { 'auth-url': 'http://a.com/x;y' }, reason: /auth-url/ },
  { name: 'auth-url naming a unix socket', ann: { 'auth-url': 'http://unix:/run/ingress-rx/control.sock:/configuration/certs' }, reason: /unix socket/ },
  { name: 'auth-url naming a unix socket (any case)', ann: { 'auth-url': 'HTTPS://UNIX:/var/run/docker.sock:/containers/json' }, reason: /unix socket/ },
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

test.run();
