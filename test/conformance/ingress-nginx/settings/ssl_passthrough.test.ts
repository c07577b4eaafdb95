// ingress-nginx test/e2e/settings/ssl_passthrough.go, ported: with --enable-ssl-passthrough the
// HTTPS port becomes an SNI switch. A host annotated ssl-passthrough reaches its backend's own
// TLS untouched; every other name goes on, behind the PROXY protocol, to NGINX's HTTPS servers
// on --ssl-passthrough-proxy-port, where a host without the annotation is terminated by NGINX
// and an unknown name gets the default server's 404. The e2e suite adds the flags to a running
// Deployment; local mode takes them when it starts (one controller for both Its).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ingress, service, slices, tlsSecret } from '../../../support/local-harness.js';
import type { EchoServer } from '../../../support/echo-server.js';
import { freePort } from '../../../support/ports.js';
import { ported } from '../port.js';
import { http2Request } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'testpassthrough.com';
const BAD = 'noannotationnopassthrough.com';
let proxyPort = 0;
let backend: Http2SecureServer;
let backendCert = '';
let badCert = '';

test.before(async () => {
  // The passthrough backend: TLS of its own (a certificate for the passthrough host), HTTP/1.1 and h2.
  const own = await certificate([HOST]);
  backendCert = own.cert;
  backend = createSecureServer({ cert: own.cert, key: own.key, allowHTTP1: true }, (_req, res) => res.end('from the backend'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendPort = (backend.address() as AddressInfo).port;
  proxyPort = await freePort();
  const [hostTls, bad] = await Promise.all([certificate([HOST]), certificate([BAD])]);
  badCert = bad.cert;
  const ns = 'ssl-passthrough';
  fx = await startFixture(ns, {
    args: ['--enable-ssl-passthrough', `--ssl-passthrough-proxy-port=${proxyPort}`],
    files: {
      'passthrough.json': [
        service(ns, 'echopass'), ...slices(ns, 'echopass', [{ address: '127.0.0.1', port: backendPort } as EchoServer]),
        tlsSecret(ns, HOST, hostTls.cert, hostTls.key), tlsSecret(ns, BAD, bad.cert, bad.key),
        ingress(ns, 'pass', { host: HOST, annotations: { 'nginx.ingress.kubernetes.io/ssl-passthrough': 'true' }, tls: [{ hosts: [HOST], secretName: HOST }], paths: [{ path: '/', service: 'echopass' }] }),
        ingress(ns, 'bad', { host: BAD, tls: [{ hosts: [BAD], secretName: BAD }], paths: [{ path: '/', service: 'echopass' }] }),
      ],
    },
  });
  await fx.ctl.until(BAD, '/', (r) => r.status !== 404, { https: true, ca: badCert, what: `${BAD} served by NGINX` });
});
test.after(async () => {
  await fx.stop();
  backend.close();
});

its.both('settings/ssl_passthrough.go:56', async (p) => {
  // A name no Ingress has: the default server's 404, over HTTP and through the SNI switch.
  assert.is((await p.request('something', '/')).status, 404);
  assert.is((await p.request('something', '/', { https: true })).status, 404);
  // NGINX's HTTPS servers listen on the port the flag names, behind the PROXY protocol.
  const direct = await p.request('something', '/', { https: true, port: proxyPort, preface: 'PROXY TCP4 127.0.0.9 127.0.0.1 40000 443\r\n' });
  assert.is(direct.status, 404);
});

// settings/ssl_passthrough.go:78 differs on purpose (dispositions.ts): ingress-nginx proxies HTTPS
// to any Service an ssl-passthrough host uses, whatever the other Ingress's backend-protocol says
// (its e2e expects 404 on the host without the annotation; its httpbun would answer / with 200
// over HTTPS, so where that 404 comes from is not established). ingress-rx keeps
// that Ingress's backend-protocol (plain HTTP): its TLS-only backend refuses it and NGINX says 502,
// and the Ingress is warned (docs/differences.md, ssl-passthrough). What this test checks is the
// rest of the It, over both protocols.
for (const protocol of ['HTTP/1.1', 'HTTP/2'] as const) {
  test(`settings/ssl_passthrough.go:78 as ingress-rx serves it (differs on purpose) [${protocol}]`, async () => {
    const request = (host: string, ca: string) => (protocol === 'HTTP/1.1' ? fx.ctl.request(host, '/', { https: true, ca }) : http2Request(fx.ctl.ports.https, host, '/', { ca }));
    // Trusting only the backend's certificate: the TLS session was the backend's, not NGINX's.
    const known = await request(HOST, backendCert);
    assert.is(known.status, 200);
    assert.is(known.body, 'from the backend');
    // Without the annotation NGINX terminates TLS with the Ingress's own certificate and proxies
    // plain HTTP, as that Ingress says, to the same TLS-only backend: it never passes through.
    const bad = await request(BAD, badCert);
    assert.is(bad.status, 502);
    assert.is.not(bad.body, 'from the backend');
    await fx.ctl.logged(/Ingress ssl-passthrough\/bad.*backend \S+ is the backend of an ssl-passthrough host, which speaks TLS to it/);
  });
}

test.run();
