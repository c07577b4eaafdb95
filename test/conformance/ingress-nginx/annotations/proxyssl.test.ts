// ingress-nginx test/e2e/annotations/proxyssl.go, ported: each It a host of its own on one
// controller. The e2e tests grep nginx.conf for the proxy_ssl_* directives (over an HTTP echo
// backend, where they do nothing); the port gives each host `backend-protocol: HTTPS` and an
// HTTPS backend that asks for a client certificate and reports what NGINX's connection to it
// carried: the client certificate, the SNI, the TLS version and cipher. The Secret is one CA's,
// as framework.CreateIngressMASecret makes it: ca.crt, and a tls.crt/tls.key the CA issued.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { ingress, service, slices, type Reply } from '../../../support/local-harness.js';
import { annotations, certificateAuthority, secret, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'proxyssl';
const backends: HttpsServer[] = [];

/** What the HTTPS backend saw of NGINX's connection. */
interface Seen { sni: string; clientCN: string; protocol: string; cipher: string }
const seen = (r: Reply) => r.json as unknown as Seen & { name: string };

/** An HTTPS backend at `address` with `cert`, asking for any client certificate. */
async function startHttpsBackend(address: string, name: string, cert: { cert: string; key: string }): Promise<{ address: string; port: number }> {
  const server = createHttpsServer({ ...cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const body: Seen & { name: string } = {
      name,
      sni: (socket as unknown as { servername?: string | false }).servername || '',
      clientCN: String(socket.getPeerCertificate()?.subject?.CN ?? ''),
      protocol: String(socket.getProtocol()),
      cipher: socket.getCipher().name,
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  backends.push(server);
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { address, port: (server.address() as AddressInfo).port };
}

const HOST = 'proxyssl.foo.com';
const hostOf = (it: string) => `${it}.${HOST}`;
const HOSTS: Record<string, Record<string, string>> = {
  secret: {},
  verify: { 'proxy-ssl-verify': 'on', 'proxy-ssl-verify-depth': '2', 'proxy-ssl-server-name': 'on' },
  ciphers: { 'proxy-ssl-ciphers': 'HIGH:!AES' },
  protocols: { 'proxy-ssl-protocols': 'TLSv1.2 TLSv1.3' },
};
const LOCATION_ONLY = 'proxyssl.com';

test.before(async () => {
  const ca = certificateAuthority('proxyssl-ca');
  const other = certificateAuthority('other-ca');
  const hosts = [...Object.keys(HOSTS).map(hostOf), 'wrong-ca.proxyssl.foo.com', LOCATION_ONLY];
  const pair = ca.issue(HOST, hosts);
  // NGINX's proxy_ssl_name is proxy_pass's host unless proxy-ssl-name says otherwise: upstream_balancer.
  const https = await startHttpsBackend('127.0.9.30', 'https', ca.issue('upstream_balancer'));
  const wrong = await startHttpsBackend('127.0.9.31', 'wrong-ca', other.issue('upstream_balancer'));
  fx = await startFixture(NS, { configmap: {} });
  const tlsOf = (host: string) => [{ hosts: [host], secretName: 'proxyssl' }];
  const on = (name: string, host: string, a: Record<string, string>, o: { svc?: string; path?: string; created?: string } = {}) => ingress(NS, name, {
    host, annotations: annotations({ 'backend-protocol': 'HTTPS', 'proxy-ssl-secret': `${NS}/proxyssl`, ...a }), tls: tlsOf(host),
    paths: [{ path: o.path ?? '/', service: o.svc ?? 'https' }], created: o.created,
  });
  fx.apply('objects.json', [
    secret(NS, 'proxyssl', { 'tls.crt': pair.cert, 'tls.key': pair.key, 'ca.crt': ca.cert }),
    service(NS, 'https'), ...slices(NS, 'https', [https]),
    service(NS, 'wrong-ca'), ...slices(NS, 'wrong-ca', [wrong]),
    ...Object.entries(HOSTS).map(([it, a]) => on(it, hostOf(it), a)),
    on('wrong-ca', 'wrong-ca.proxyssl.foo.com', HOSTS.verify!, { svc: 'wrong-ca' }),
    // The host's oldest Ingress sets proxy-ssl-*; a newer one on /plain sets none.
    on('location-only', LOCATION_ONLY, { 'proxy-ssl-verify': 'on', 'proxy-ssl-server-name': 'on' }, { path: '/bar', created: '2024-01-01T00:00:00Z' }),
    ingress(NS, 'location-only-plain', { host: LOCATION_ONLY, created: '2024-06-01T00:00:00Z', annotations: annotations({ 'backend-protocol': 'HTTPS' }), tls: tlsOf(LOCATION_ONLY), paths: [{ path: '/plain', service: 'https' }] }),
  ]);
  await Promise.all([...Object.keys(HOSTS).map(hostOf), LOCATION_ONLY].map((h) => fx.ctl.until(h, h === LOCATION_ONLY ? '/bar' : '/', (r) => r.status === 200, { https: true, what: `${h} served` })));
});
test.after(async () => {
  await fx.stop();
  await Promise.all(backends.map((b) => new Promise((resolve) => b.close(resolve))));
});

/** Over HTTP/1.1 the plain-HTTP request is redirected to HTTPS first (the host has TLS); then the HTTPS answer. */
async function viaHttps(p: ProtocolClient, host: string, path = '/'): Promise<Seen & { name: string }> {
  if (p.protocol === 'HTTP/1.1') assert.is((await p.request(host, path)).status, 308);
  const r = await p.request(host, path, { https: true });
  assert.is(r.status, 200, `${host}${path} over HTTPS`);
  return seen(r);
}

its.both('annotations/proxyssl.go:39', async (p) => {
  const s = await viaHttps(p, hostOf('secret'));
  // proxy_ssl_certificate: NGINX presents the Secret's certificate to the backend.
  assert.is(s.clientCN, HOST);
  // proxy-ssl-server-name is off by default: no SNI; proxy-ssl-protocols is TLSv1.2 by default.
  assert.is(s.sni, '');
  assert.is(s.protocol, 'TLSv1.2');
});

its.both('annotations/proxyssl.go:66', async (p) => {
  const s = await viaHttps(p, hostOf('verify'));
  assert.is(s.clientCN, HOST);
  assert.is(s.sni, 'upstream_balancer');
  // proxy-ssl-verify on: a backend whose certificate another CA issued is refused (502).
  const r = await p.request('wrong-ca.proxyssl.foo.com', '/', { https: true });
  assert.is(r.status, 502);
});

its.both('annotations/proxyssl.go:96', async (p) => {
  const s = await viaHttps(p, hostOf('ciphers'));
  assert.is(s.protocol, 'TLSv1.2');
  assert.not.match(s.cipher, /AES/);
});

its.both('annotations/proxyssl.go:124', async (p) => {
  assert.is((await viaHttps(p, hostOf('protocols'))).protocol, 'TLSv1.3');
});

its.both('annotations/proxyssl.go:152', async (p) => {
  // Without proxy-ssl-location-only, the server block carries the oldest Ingress's proxy-ssl-*:
  // the newer Ingress's location sends the Secret's client certificate too.
  assert.is((await viaHttps(p, LOCATION_ONLY, '/bar')).clientCN, HOST);
  assert.is((await viaHttps(p, LOCATION_ONLY, '/plain')).clientCN, HOST);
  await fx.configure({ 'proxy-ssl-location-only': 'true' });
  try {
    assert.is((await viaHttps(p, LOCATION_ONLY, '/bar')).clientCN, HOST);
    assert.is((await viaHttps(p, LOCATION_ONLY, '/plain')).clientCN, '', 'the newer Ingress no longer inherits the client certificate');
  } finally {
    await fx.configure({});
  }
  assert.is((await viaHttps(p, LOCATION_ONLY, '/plain')).clientCN, HOST);
});

test.run();
