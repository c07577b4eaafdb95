// ingress-nginx test/e2e/defaultbackend/{default_backend,ssl,with_hosts}.go, ported on one
// controller: the built-in default backend's answers, the access log for it (one ConfigMap change
// on, one off), the fallback certificate, and an Ingress whose spec.defaultBackend serves a rule
// host without paths. (custom_default_backend.go needs a flag: a file of its own.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { annotations, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'default-backend';

const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: NS }, data });

test.before(async () => {
  fx = await startFixture(NS, { args: ['--configmap', `${NS}/nginx-config`], files: { 'configmap.json': [configMap({})] } });
  // with_hosts.go: a rule host without paths, served by the Ingress's spec.defaultBackend.
  const withHost = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name: 'default-backend-annotations', namespace: NS, annotations: annotations({ 'proxy-buffer-size': '8k' }) },
    spec: { defaultBackend: { service: { name: 'echo', port: { number: 80 } } }, rules: [{ host: 'foo.com' }] },
  };
  await fx.applyAndWait('ingresses.json', [withHost], 'foo.com');
});
test.after(async () => {
  await fx.stop();
});

its.both('defaultbackend/default_backend.go:33', async (p) => {
  // Without a Host header the e2e client names the address; over HTTP/2 every request is HTTPS.
  for (const host of ['127.0.0.1', 'foo.bar.com']) {
    for (const https of p.protocol === 'HTTP/2' ? [true] : [false, true]) {
      for (const method of ['GET', 'POST']) {
        for (const path of ['/', '/demo']) {
          const r = await p.request(host, path, { https, method });
          assert.is(r.status, 404, `${method} ${https ? 'https' : 'http'}://${host}${path}`);
          assert.is(r.backend, undefined);
        }
      }
    }
  }
});

const accessLog = () => readFileSync(join(fx.ctl.workdir, 'logs', 'access.log'), 'utf8');

/** Rewrites the ConfigMap and waits until NGINX's workers run the configuration made from it. */
async function setConfigMap(data: Record<string, string>): Promise<void> {
  const checksum = async () => (await fx.ctl.control('/configuration-checksum')).body;
  const before = await checksum();
  fx.apply('configmap.json', [configMap(data)]);
  await waitFor(async () => {
    const running = await checksum();
    const written = /^# Configuration checksum: (\w+)/.exec((await fx.ctl.control('/nginx.conf')).body)?.[1];
    return running !== before && running === written;
  }, { timeoutMs: 15_000, what: 'NGINX running the new ConfigMap' });
}

its.both('defaultbackend/default_backend.go:88', async (p: ProtocolClient) => {
  // The HTTP/1.1 leg runs first and changes the ConfigMap; the HTTP/2 leg finds it so.
  if (p.protocol === 'HTTP/1.1') await setConfigMap({ 'enable-access-log-for-default-backend': 'true' });
  const path = `/somethingOne-${p.tag}`;
  const r = await p.until('foo', path, () => accessLog().includes(path), { what: `${path} in the access log` });
  assert.is(r.status, 404);
});

its.both('defaultbackend/default_backend.go:102', async (p: ProtocolClient) => {
  if (p.protocol === 'HTTP/1.1') await setConfigMap({ 'enable-access-log-for-default-backend': 'false' });
  const path = `/somethingTwo-${p.tag}`;
  assert.is((await p.request('bar', path)).status, 404);
  // A request logged after it (a served host's) shows the log has caught up.
  const mark = `/logged-after-${p.tag}`;
  await p.until('foo.com', mark, () => accessLog().includes(mark), { what: 'a later request in the access log' });
  assert.not.ok(accessLog().includes(path), `${path} is not logged`);
});

/** The issuer CN of the certificate NGINX presents on its HTTPS port (with SNI `servername`, or none). */
function issuerOf(servername: string | undefined, alpn: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: fx.ctl.ports.https, rejectUnauthorized: false, ALPNProtocols: [alpn], ...(servername ? { servername } : {}) }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(String(cert.issuer?.CN ?? ''));
    });
    socket.on('error', reject);
  });
}

its.noClient('defaultbackend/ssl.go:29', 'the certificate of the TLS handshake, offering h2 and http/1.1', async () => {
  for (const alpn of ['h2', 'http/1.1']) {
    for (const servername of [undefined, 'foo.bar.com']) {
      assert.is(await issuerOf(servername, alpn), 'Kubernetes Ingress Controller Fake Certificate', `${alpn}, SNI ${servername ?? 'none'}`);
    }
  }
});

its.both('defaultbackend/with_hosts.go:38', async (p) => {
  const r = await p.request('foo.com', '/');
  assert.is(r.status, 200);
  assert.ok(r.backend?.startsWith('echo-'), `the echo answered: ${r.backend}`);
});

test.run();
