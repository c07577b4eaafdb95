// ingress-nginx test/e2e/settings/default_ssl_certificate.go, ported against the fake API server:
// with --default-ssl-certificate the HTTPS listener presents that Secret's certificate before any
// Ingress exists, to a catch-all Ingress's clients, and for a host whose own TLS Secret's
// certificate does not name it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { certificate, ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret, type CliProcess } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

const NS = 'default-ssl-certificate';
let cluster: ClusterFixture;
let ctl: CliProcess;
const its = ported(test, () => ctl);
let defaultFingerprint = '';

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  cluster.echoService(NS);
  const { cert, key } = await certificate(['default-certificate.test']);
  defaultFingerprint = new X509Certificate(cert).fingerprint256;
  cluster.fake.create(tlsSecret(NS, 'my-custom-cert', cert, key));
  ctl = await cluster.controller([`--watch-namespace=${NS}`, `--default-ssl-certificate=${NS}/my-custom-cert`]);
});
test.after(() => cluster.stop());

/** The certificate the HTTPS listener presents for `servername` (none: no SNI), with `p`'s ALPN. */
function presented(p: ProtocolClient, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({
      host: '127.0.0.1', port: ctl.ports.https, rejectUnauthorized: false, ALPNProtocols: [p.tag === 'h2' ? 'h2' : 'http/1.1'],
      ...(servername ? { servername } : {}),
    }, () => { resolve(s.getPeerCertificate().fingerprint256); s.end(); });
    s.on('error', reject);
  });
}

its.both('settings/default_ssl_certificate.go:66', async (p) => {
  assert.is(await presented(p), defaultFingerprint, 'before any Ingress');
  cluster.fake.set(ingress(NS, 'catch-all', { className: 'nginx', defaultBackend: { service: 'echo', port: 80 } }));
  await p.until(`catch-all.${p.tag}.test`, '/', (r) => r.status === 200 && r.backend !== undefined, { https: true, what: 'the catch-all Ingress' });
  assert.is(await presented(p), defaultFingerprint, 'without SNI');
  assert.is(await presented(p, `catch-all.${p.tag}.test`), defaultFingerprint, 'for a name no Ingress has');
});

its.both('settings/default_ssl_certificate.go:82', async (p) => {
  const host = `foo.${p.tag}.test`;
  const other = await certificate(['not.foo']);
  cluster.fake.set(tlsSecret(NS, `foo-${p.tag}`, other.cert, other.key));
  cluster.fake.set(ingress(NS, `foo-${p.tag}`, { host, className: 'nginx', tls: [{ hosts: [host], secretName: `foo-${p.tag}` }], paths: [{ path: '/', service: 'echo' }] }));
  await p.until(host, '/', (r) => r.status === 200 && r.backend !== undefined, { https: true, what: host });
  assert.is(await presented(p, host), defaultFingerprint, 'the Secret\'s certificate does not name the host');
  assert.is(await presented(p), defaultFingerprint, 'without SNI');
});

test.run();
