// ingress-nginx test/e2e/annotations/authtls.go, ported: each It a host of its own on one
// controller (client authentication is the server's), all with one CA's Secret, as
// framework.CreateIngressMASecret makes it: ca.crt, and the server's tls.crt/tls.key; the client
// certificate (CN `authtls.foo.com-client`) is the same CA's. Its that change an Ingress have a
// host per protocol's leg. The e2e tests also grep ssl_client_certificate, ssl_verify_client and
// ssl_verify_depth in nginx.conf; the port asks for the answers those directives give.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingress, type Reply } from '../../../support/local-harness.js';
import { annotations, certificateAuthority, secret, startFixture, upstreamHeaders, type Fixture, type Issued } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let client: Issued;
const its = ported(test, () => fx.ctl);
const NS = 'authtls';
const SECRET = `${NS}/authtls.foo.com`;
const hostOf = (it: string) => `${it}.authtls.foo.com`;
const ERROR_PAGE = 'http://errors.authtls.test/error';

const HOSTS: Record<string, Record<string, string>> = {
  'h1-added': {},
  'h2-added': {},
  'verify-off': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'off', 'auth-tls-verify-depth': '2' },
  'error-page': { 'auth-tls-secret': SECRET, 'auth-tls-error-page': ERROR_PAGE },
  'pass-cert': { 'auth-tls-secret': SECRET, 'auth-tls-pass-certificate-to-upstream': 'true' },
  'h1-verify': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on' },
  'h2-verify': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on' },
  'cn-mismatch': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=notgonnamatch' },
  'cn-match': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=authtls' },
  'h1-cn-update': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=notvalid' },
  'h2-cn-update': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=notvalid' },
  'cn-options': { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'on', 'auth-tls-match-cn': 'CN=(itwillmatch|withthenextoption|authtls)' },
};

const ing = (it: string, a: Record<string, string>) => ingress(NS, it, {
  host: hostOf(it), annotations: annotations(a), tls: [{ hosts: [hostOf(it)], secretName: 'authtls.foo.com' }], paths: [{ path: '/', service: 'echo' }],
});

test.before(async () => {
  const ca = certificateAuthority('authtls.foo.com-ca');
  const server = ca.issue('authtls.foo.com', Object.keys(HOSTS).map(hostOf));
  client = ca.issue('authtls.foo.com-client');
  fx = await startFixture(NS);
  fx.apply('secret.json', [secret(NS, 'authtls.foo.com', { 'tls.crt': server.cert, 'tls.key': server.key, 'ca.crt': ca.cert })]);
  for (const [it, a] of Object.entries(HOSTS)) fx.apply(`${it}.json`, [ing(it, a)]);
  // Served once the client certificate is accepted (or, without client authentication, at all).
  await Promise.all(Object.keys(HOSTS).map((it) => fx.ctl.until(hostOf(it), '/', (r) => r.status !== 404 && r.status !== 502 && r.status !== 503, {
    https: true, cert: client.cert, key: client.key, what: `${it} served`,
  })));
});
test.after(() => fx.stop());

/** A request of the It's host over HTTPS, with the client certificate or without one. */
const get = (p: ProtocolClient, it: string, withCert: boolean): Promise<Reply> =>
  p.request(hostOf(it), '/', { https: true, ...(withCert ? { cert: client.cert, key: client.key } : {}) });

/** The Ingress of the It's host becomes `a`; resolves once a request shows it (`check`). */
async function update(p: ProtocolClient, it: string, a: Record<string, string>, withCert: boolean, check: (r: Reply) => boolean): Promise<void> {
  fx.apply(`${it}.json`, [ing(it, a)]);
  await p.until(hostOf(it), '/', check, { https: true, ...(withCert ? { cert: client.cert, key: client.key } : {}), what: `${it} after the update` });
}

its.both('annotations/authtls.go:38', async (p) => {
  const it = `${p.tag}-added`;
  // No client authentication yet: a request without a certificate is served.
  assert.is((await get(p, it, false)).status, 200);
  await update(p, it, { 'auth-tls-secret': SECRET }, false, (r) => r.status === 400);
  // NGINX's answer to a missing required certificate is 400.
  const refused = await get(p, it, false);
  assert.is(refused.status, 400);
  assert.match(refused.body, 'No required SSL certificate was sent');
  assert.is((await get(p, it, true)).status, 200);
});

its.both('annotations/authtls.go:86', async (p) => {
  assert.is((await get(p, 'verify-off', false)).status, 200);
  // With verification off no certificate is asked for, though the client has one: the upstream hears of none.
  const r = await get(p, 'verify-off', true);
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r)['ssl-client-verify'], 'NONE');
});

its.both('annotations/authtls.go:116', async (p) => {
  const refused = await get(p, 'error-page', false);
  assert.is(refused.status, 302);
  assert.is(refused.headers.location, ERROR_PAGE);
  assert.is((await get(p, 'error-page', true)).status, 200);
});

its.both('annotations/authtls.go:163', async (p) => {
  assert.is((await get(p, 'pass-cert', false)).status, 400);
  const r = await get(p, 'pass-cert', true);
  assert.is(r.status, 200);
  const header = upstreamHeaders(r)['ssl-client-cert'] ?? '';
  assert.ok(header.startsWith('-----BEGIN%20CERTIFICATE-----%0A'), header.slice(0, 80));
  assert.is(decodeURIComponent(header), client.cert);
});

its.both('annotations/authtls.go:208', async (p) => {
  const it = `${p.tag}-verify`;
  assert.is((await get(p, it, true)).status, 200);
  assert.is((await get(p, it, false)).status, 400);
  await update(p, it, { 'auth-tls-secret': SECRET, 'auth-tls-verify-client': 'off' }, false, (r) => r.status === 200);
  assert.is((await get(p, it, true)).status, 200);
  assert.is((await get(p, it, false)).status, 200);
});

its.both('annotations/authtls.go:267', async (p) => {
  assert.is((await get(p, 'cn-mismatch', true)).status, 403);
});

its.both('annotations/authtls.go:296', async (p) => {
  assert.is((await get(p, 'cn-match', true)).status, 200);
});

its.both('annotations/authtls.go:325', async (p) => {
  const it = `${p.tag}-cn-update`;
  assert.is((await get(p, it, true)).status, 403);
  await update(p, it, { ...HOSTS[it]!, 'auth-tls-match-cn': 'CN=authtls' }, true, (r) => r.status === 200);
  assert.is((await get(p, it, true)).status, 200);
});

its.both('annotations/authtls.go:368', async (p) => {
  assert.is((await get(p, 'cn-options', true)).status, 200);
});

test.run();
