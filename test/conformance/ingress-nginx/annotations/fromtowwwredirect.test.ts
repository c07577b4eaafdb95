// ingress-nginx test/e2e/annotations/fromtowwwredirect.go, ported: the www twin answers 308 to
// the host, over HTTP and HTTPS (a certificate naming both, SNI the twin's).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';
import { generateCertificate } from '../../../support/lua-nginx.js';

let fx: Fixture;
let certDir: string;
const its = ported(test, () => fx.ctl);
const PLAIN = 'fromtowwwredirect.bar.com';
const TLS = 'tls.fromtowwwredirect.test';

test.before(async () => {
  // As the e2e test: snippets allowed, so the host can echo the Host it was asked with.
  fx = await startFixture('fromtowwwredirect', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  certDir = mkdtempSync(join(tmpdir(), 'fromtowww-'));
  const cert = await generateCertificate(certDir, TLS, [TLS, `www.${TLS}`]);
  const tlsIngress = ingress(fx.ns, 'tls', {
    host: TLS, paths: [{ path: '/', pathType: 'Prefix', service: 'echo' }], tls: [{ hosts: [TLS, `www.${TLS}`], secretName: 'www-tls' }],
    annotations: { 'nginx.ingress.kubernetes.io/from-to-www-redirect': 'true', 'nginx.ingress.kubernetes.io/configuration-snippet': 'more_set_headers "ExpectedHost: $http_host";' },
  });
  fx.apply('ingresses.json', [
    tlsSecret(fx.ns, 'www-tls', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
    fx.single('plain', PLAIN, { 'from-to-www-redirect': 'true' }),
    tlsIngress,
  ]);
  await fx.ctl.until(`www.${PLAIN}`, '/foo', (r) => r.status === 308, { what: `www.${PLAIN} redirects` });
  await fx.ctl.until(TLS, '/', (r) => r.headers.expectedhost === TLS, { what: `${TLS} served with its snippet`, https: true });
});
test.after(async () => { await fx.stop(); rmSync(certDir, { recursive: true, force: true }); });

its.http1Only('annotations/fromtowwwredirect.go:38', 'the e2e test asks over plain HTTP, which HTTP/2 clients do not speak', async (p) => {
  const r = await p.request(`www.${PLAIN}`, '/foo');
  assert.is(r.status, 308);
  // The Location names the port the request came to ($server_port; ingress-nginx's e2e test sees :80).
  assert.is(r.headers.location, `http://${PLAIN}:${p.port}/foo`);
});

its.both('annotations/fromtowwwredirect.go:64', async (p) => {
  const port = fx.ctl.ports.https;
  const www = await p.request(`www.${TLS}`, '/', { https: true });
  assert.is(www.status, 308);
  assert.is(www.headers.location, `https://${TLS}:${port}`);
  const direct = await p.request(TLS, '/', { https: true });
  assert.is(direct.status, 200);
  assert.is(direct.headers.expectedhost, TLS);
});

test.run();
