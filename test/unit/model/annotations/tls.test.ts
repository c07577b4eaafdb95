// Tests for the authtls, proxyssl and sslcipher groups and the Secrets they read: CA bundles,
// CRLs and key pairs checked as NGINX loads them, failing closed on anything unusable, and
// hostile values (injection into match-cn, names, cipher lists; huge Secrets; other namespaces).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { Secret } from '../../../../src/store/kube-types.js';
import { parse, secret, warnedKeys as keysWarned } from '../../../support/annotation-parse.js';

const dir = mkdtempSync(join(tmpdir(), 'irx-tls-unit-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '1', '-subj', '/CN=ca');
openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'other.key', '-out', 'other.crt', '-days', '1', '-subj', '/CN=other');
openssl('ca', '-gencrl', '-keyfile', 'ca.key', '-cert', 'ca.crt', '-out', 'ca.crl', '-config', writeCAConfig());
const CA = readFileSync(join(dir, 'ca.crt'), 'utf8');
const CA_KEY = readFileSync(join(dir, 'ca.key'), 'utf8');
const OTHER = readFileSync(join(dir, 'other.crt'), 'utf8');
const CRL = readFileSync(join(dir, 'ca.crl'), 'utf8');
rmSync(dir, { recursive: true, force: true });

/** A minimal `openssl ca` configuration (an empty database) to make a CRL. */
function writeCAConfig(): string {
  execFileSync('sh', ['-c', `touch ${dir}/index.txt && printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=${dir}/index.txt\\ndefault_md=sha256\\ndefault_crl_days=1\\n' > ${dir}/ca.cnf`]);
  return join(dir, 'ca.cnf');
}

test('auth-tls: the CA bundle (text between certificates dropped), the CRL, and the settings with their defaults', () => {
  const { value, warnings } = parse({ 'auth-tls-secret': 'ca' }, [secret('ca', { 'ca.crt': `subject=/CN=ca\n${CA}\n# and another\n${OTHER}`, 'ca.crl': CRL })]);
  assert.equal(warnings, []);
  assert.equal(value.authTLS, {
    secret: 'shop/ca', ca: CA + OTHER, crl: CRL, verifyClient: 'on', verifyDepth: 1, errorPage: '', passCertificateToUpstream: false, matchCN: '',
  });
  assert.is(value.denied, null);
  const set = parse({
    'auth-tls-secret': 'shop/ca', 'auth-tls-verify-client': 'optional_no_ca', 'auth-tls-verify-depth': '0', 'auth-tls-error-page': 'https://errors.example/cert',
    'auth-tls-pass-certificate-to-upstream': 'true', 'auth-tls-match-cn': 'CN=(alice|bob)$',
  }, [secret('ca', { 'ca.crt': CA })]).value.authTLS;
  assert.equal(set && 'verifyClient' in set ? [set.verifyClient, set.verifyDepth, set.errorPage, set.passCertificateToUpstream, set.matchCN, set.crl] : set,
    ['optional_no_ca', 1, 'https://errors.example/cert', true, 'CN=(alice|bob)$', null]);
});

test('auth-tls fails closed: each unusable Secret denies with the reason, and the host gets the error', () => {
  const cases: Array<[string, Secret[], RegExp, Partial<NginxSettings>?]> = [
    ['missing', [], /Secret shop\/missing not found/],
    ['other/ca', [secret('ca', { 'ca.crt': CA }, 'other')], /another namespace and allow-cross-namespace-resources is false/],
    ['no-ca', [secret('no-ca', { 'tls.crt': CA })], /has no data\["ca.crt"\]/],
    ['not-pem', [secret('not-pem', { 'ca.crt': 'hello' })], /holds no PEM certificate/],
    ['broken', [secret('broken', { 'ca.crt': CA.replace(/\n[A-Za-z0-9+/]{20}/, '\nAAAAAAAAAAAAAAAAAAAA') })], /not X.509|refused by the local OpenSSL/],
    ['bad-crl', [secret('bad-crl', { 'ca.crt': CA, 'ca.crl': CA })], /ca.crl.*not a PEM certificate revocation list/],
    ['huge', [secret('huge', { 'ca.crt': CA.repeat(3000) })], /larger than/],
    ['a/b/c', [], /must be `name` or `namespace\/name`/],
    ['../etc', [], /must be `name` or `namespace\/name`/],
  ];
  for (const [ref, secrets, why] of cases) {
    const { value, warnings } = parse({ 'auth-tls-secret': ref, 'auth-tls-verify-client': 'on' }, secrets);
    assert.ok(value.authTLS !== null && 'error' in value.authTLS, ref);
    assert.match((value.authTLS as { error: string }).error, why, ref);
    assert.match(value.denied ?? '', why, ref);
    assert.equal(keysWarned(warnings), ['auth-tls-secret'], ref);
  }
  // allow-cross-namespace-resources lets another namespace's Secret be used.
  const cross = parse({ 'auth-tls-secret': 'other/ca' }, [secret('ca', { 'ca.crt': CA }, 'other')], { allowCrossNamespaceResources: true });
  assert.is(cross.value.denied, null);
  assert.is((cross.value.authTLS as { secret: string }).secret, 'other/ca');
});

test('auth-tls-match-cn: only CN= and a PCRE2 expression without characters that leave the quotes; a bad one denies', () => {
  const ok = [secret('ca', { 'ca.crt': CA })];
  for (const bad of ['CN=x") { return 200; } if ($host ~ "y', 'CN=a;b', 'CN=(unclosed', 'O=org', 'CN=a\\"b', `CN=${'a'.repeat(5000)}`, 'CN=a\nreturn 200;', 'CN=${jndi}']) {
    const { value, warnings } = parse({ 'auth-tls-secret': 'ca', 'auth-tls-match-cn': bad }, ok);
    assert.ok(value.authTLS !== null && 'error' in value.authTLS, bad);
    assert.ok(value.denied?.startsWith('annotation auth-tls-match-cn'), bad);
    assert.equal(keysWarned(warnings), ['auth-tls-match-cn'], bad);
  }
});

test('auth-tls: invalid settings fall back to ingress-nginx defaults with a warning; named locations are refused as error pages', () => {
  const { value, warnings } = parse({
    'auth-tls-secret': 'ca', 'auth-tls-verify-client': 'maybe', 'auth-tls-verify-depth': '-1', 'auth-tls-error-page': '@named',
    'auth-tls-pass-certificate-to-upstream': 'yes please',
  }, [secret('ca', { 'ca.crt': CA })]);
  const a = value.authTLS as { verifyClient: string; verifyDepth: number; errorPage: string; passCertificateToUpstream: boolean };
  assert.equal([a.verifyClient, a.verifyDepth, a.errorPage, a.passCertificateToUpstream], ['on', 1, '', false]);
  assert.equal(keysWarned(warnings), ['auth-tls-error-page', 'auth-tls-pass-certificate-to-upstream', 'auth-tls-verify-client', 'auth-tls-verify-depth']);
  for (const page of ['https://e.example/x"; return 200; #', 'javascript:alert(1)', '/a b', 'http://$host/x']) {
    const r = parse({ 'auth-tls-secret': 'ca', 'auth-tls-error-page': page }, [secret('ca', { 'ca.crt': CA })]);
    assert.is((r.value.authTLS as { errorPage: string }).errorPage, '', page);
  }
  // Without auth-tls-secret the other keys do nothing, and say so.
  const alone = parse({ 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=x' });
  assert.is(alone.value.authTLS, null);
  assert.equal(keysWarned(alone.warnings), ['auth-tls-match-cn', 'auth-tls-verify-client']);
});

test('proxy-ssl: CA and key pair, defaults as ingress-nginx, sorted protocols; the key must match the certificate', () => {
  const secrets = [secret('backend', { 'ca.crt': CA, 'tls.crt': CA, 'tls.key': CA_KEY }), secret('mismatch', { 'tls.crt': OTHER, 'tls.key': CA_KEY }), secret('ca-only', { 'ca.crt': CA }), secret('pair-only', { 'tls.crt': CA, 'tls.key': CA_KEY })];
  const d = parse({ 'proxy-ssl-secret': 'backend' }, secrets);
  assert.equal(d.warnings, []);
  assert.equal(d.value.proxySSL, {
    secret: 'shop/backend', ca: CA, clientCertificate: { cert: CA, key: CA_KEY }, ciphers: 'DEFAULT', protocols: ['TLSv1.2'], name: '', verify: 'off', verifyDepth: 1, serverName: 'off',
  });
  const set = parse({ 'proxy-ssl-secret': 'ca-only', 'proxy-ssl-protocols': 'TLSv1.3 TLSv1.2 TLSv1.3', 'proxy-ssl-name': '$host', 'proxy-ssl-verify': 'on', 'proxy-ssl-verify-depth': '3', 'proxy-ssl-server-name': 'on', 'proxy-ssl-ciphers': 'ECDHE+AESGCM:!aNULL' }, secrets);
  assert.equal(set.warnings, []);
  const p = set.value.proxySSL!;
  assert.equal([p.protocols, p.name, p.verify, p.verifyDepth, p.serverName, p.ciphers, p.clientCertificate], [['TLSv1.2', 'TLSv1.3'], '$host', 'on', 3, 'on', 'ECDHE+AESGCM:!aNULL', null]);
  const mismatch = parse({ 'proxy-ssl-secret': 'mismatch' }, secrets);
  assert.is(mismatch.value.proxySSL, null);
  assert.match(mismatch.value.denied ?? '', /does not match the certificate/);
  // verify on needs a CA: ingress-nginx would proxy unverified.
  const noCA = parse({ 'proxy-ssl-secret': 'pair-only', 'proxy-ssl-verify': 'on' }, secrets);
  assert.is(noCA.value.proxySSL, null);
  assert.match(noCA.value.denied ?? '', /proxy-ssl-verify is on but Secret shop\/pair-only has no data\["ca.crt"\]/);
  for (const [ref, why] of [['missing', /not found/], ['other/backend', /another namespace/]] as const) {
    const r = parse({ 'proxy-ssl-secret': ref }, [...secrets, secret('backend', { 'ca.crt': CA }, 'other')]);
    assert.match(r.value.denied ?? '', why, ref);
  }
});

test('proxy-ssl and ssl-ciphers: hostile values keep the defaults with a warning', () => {
  const secrets = [secret('ca', { 'ca.crt': CA })];
  const hostile = {
    'proxy-ssl-ciphers': 'HIGH; return 200', 'proxy-ssl-protocols': 'SSLv3', 'proxy-ssl-name': 'a.example; proxy_pass http://evil',
    'proxy-ssl-verify': 'maybe', 'proxy-ssl-verify-depth': 'x', 'proxy-ssl-server-name': '"on"',
  };
  const { value, warnings } = parse({ 'proxy-ssl-secret': 'ca', ...hostile }, secrets);
  assert.equal(keysWarned(warnings), Object.keys(hostile).sort());
  const p = value.proxySSL!;
  assert.equal([p.ciphers, p.protocols, p.name, p.verify, p.verifyDepth, p.serverName], ['DEFAULT', ['TLSv1.2'], '', 'off', 1, 'off']);
  for (const bad of ['NOSUCHCIPHER', 'HIGH"', `${'A'.repeat(5000)}`, 'HIGH{}']) {
    const r = parse({ 'ssl-ciphers': bad, 'ssl-prefer-server-ciphers': 'sometimes' });
    assert.is(r.value.sslCiphers, '', bad);
    assert.is(r.value.sslPreferServerCiphers, null, bad);
    assert.equal(keysWarned(r.warnings), ['ssl-ciphers', 'ssl-prefer-server-ciphers'], bad);
  }
  const ok = parse({ 'ssl-ciphers': 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256', 'ssl-prefer-server-ciphers': 'false' });
  assert.equal([ok.value.sslCiphers, ok.value.sslPreferServerCiphers, ok.warnings], ['ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256', false, []]);
});

test.run();
