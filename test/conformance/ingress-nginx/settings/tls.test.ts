// ingress-nginx test/e2e/settings/tls.go, ported: ssl-ciphers and ssl-protocols as a TLS client
// negotiates them, the HSTS header the hsts-* keys make (replacing one the upstream sends), and
// the HTTP to HTTPS redirect naming the host without a port (nor X-Forwarded-Host's port). The
// certificate is RSA, as the ECDHE-RSA suites of the e2e test need. The Its that share a
// ConfigMap state are registered together, so the file reloads four times.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as tlsConnect } from 'node:tls';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'settings-tls.test';
const NS = 'settings-tls';
const CIPHERS = 'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-SHA';
let ca = '';

test.before(async () => {
  fx = await startFixture(NS, { configmap: {} });
  const { cert, key } = await certificate([HOST], { rsa: true });
  ca = cert;
  fx.apply('ingress.json', [
    tlsSecret(NS, 'settings-tls', cert, key),
    ingress(NS, 'settings-tls', { host: HOST, tls: [{ hosts: [HOST], secretName: 'settings-tls' }], paths: [{ path: '/', service: 'echo' }] }),
  ]);
  await fx.ctl.until(HOST, '/', (r) => r.status === 200, { https: true, ca });
});
test.after(() => fx.stop());

const https = (p: ProtocolClient, path = '/') => p.request(HOST, path, { https: true, ca });

/** The TLS version and cipher a client offering every suite gets, with the ALPN of `p`'s protocol. */
function handshake(p: ProtocolClient): Promise<{ version: string; cipher: string }> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: fx.ctl.ports.https, servername: HOST, ca, ALPNProtocols: [p.tag === 'h2' ? 'h2' : 'http/1.1'] }, () => {
      resolve({ version: s.getProtocol() ?? '', cipher: s.getCipher().name });
      s.end();
    });
    s.on('error', reject);
  });
}

its.both('settings/tls.go:66', async (p) => {
  await fx.configure({ 'ssl-ciphers': CIPHERS, 'ssl-protocols': 'TLSv1.2' });
  assert.is((await https(p)).status, 200);
  assert.equal(await handshake(p), { version: 'TLSv1.2', cipher: 'ECDHE-RSA-AES256-GCM-SHA384' });
});

// hsts-max-age alone, with use-forwarded-headers for the second redirect It (the first sends no
// X-Forwarded-Host, so the key changes nothing for it).
const MAX_AGE = { 'hsts-max-age': '86400', 'use-forwarded-headers': 'true' };

its.both('settings/tls.go:110', async (p) => {
  await fx.configure(MAX_AGE);
  const r = await https(p);
  assert.is(r.status, 200);
  assert.is(r.headers['strict-transport-security'], 'max-age=86400; includeSubDomains');
});

/**
 * The port a redirect names: none on 443, as ingress-nginx; local mode's unprivileged HTTPS port
 * is named, so the redirect reaches it (docs/differences.md, "Redirect port").
 */
const redirectPort = () => (fx.ctl.ports.https === 443 ? '' : `:${fx.ctl.ports.https}`);

its.http1Only('settings/tls.go:190', 'the redirect is from the plain-HTTP port', async (p) => {
  await fx.configure(MAX_AGE);
  const r = await p.request(`${HOST}:${fx.ctl.ports.http}`, '/');
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://${HOST}${redirectPort()}`, 'not the Host header\'s port, and no trailing slash for /');
});

its.http1Only('settings/tls.go:208', 'the redirect is from the plain-HTTP port', async (p) => {
  await fx.configure(MAX_AGE);
  const r = await p.request(HOST, '/', { headers: { 'X-Forwarded-Host': 'example.com:80' } });
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://example.com${redirectPort()}`, 'X-Forwarded-Host\'s host, not its port');
  const list = await p.request(HOST, '/a/', { headers: { 'X-Forwarded-Host': 'first.example.com, second.example.com' } });
  assert.is(list.headers.location, `https://first.example.com${redirectPort()}/a`, 'the first of a list');
  const hostile = await p.request(HOST, '/', { headers: { 'X-Forwarded-Host': 'evil.example.com/x?' } });
  assert.is(hostile.headers.location, `https://${HOST}${redirectPort()}`, 'a value that is not a host name is not followed');
});

its.both('settings/tls.go:127', async (p) => {
  await fx.configure({ 'hsts-max-age': '86400', 'hsts-include-subdomains': 'false' });
  const r = await https(p);
  assert.is(r.status, 200);
  assert.is(r.headers['strict-transport-security'], 'max-age=86400');
});

const PRELOAD = { 'hsts-max-age': '86400', 'hsts-preload': 'true', 'hsts-include-subdomains': 'false' };

its.both('settings/tls.go:147', async (p) => {
  await fx.configure(PRELOAD);
  const r = await https(p);
  assert.is(r.status, 200);
  assert.is(r.headers['strict-transport-security'], 'max-age=86400; preload');
});

its.both('settings/tls.go:168', async (p) => {
  await fx.configure(PRELOAD);
  const r = await https(p, `/__header/Strict-Transport-Security/${encodeURIComponent('max-age=1; includeSubDomains')}`);
  assert.is(r.status, 200);
  const sent = r.rawHeaders.filter((_, i) => i % 2 === 0 && r.rawHeaders[i]!.toLowerCase() === 'strict-transport-security');
  assert.is(sent.length, 1, 'one Strict-Transport-Security header');
  assert.is(r.headers['strict-transport-security'], 'max-age=86400; preload', 'the upstream\'s is replaced');
});

test.run();
