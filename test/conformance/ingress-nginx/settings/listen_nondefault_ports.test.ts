// ingress-nginx test/e2e/settings/listen_nondefault_ports.go, ported. Local mode listens on ports
// of its own, as that e2e controller does on 1080 and 1443: plain HTTP announces its port in
// X-Forwarded-Port, HTTPS announces 443 (ingress-nginx's Lua maps the HTTPS listener to 443), with
// or without external authentication in front of the location.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { certificate, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';

let fx: Fixture;
let auth: Server;
let ca = '';
const its = ported(test, () => fx.ctl);
const NS = 'forwarded-port-headers';
const PLAIN = 'plain.forwarded-headers.test';
const TLS = 'tls.forwarded-headers.test';
const AUTH = 'auth.forwarded-headers.test';
const BASIC = `Basic ${Buffer.from('user:password').toString('base64')}`;

test.before(async () => {
  // httpbun's /basic-auth/user/password: 200 for those credentials, else 401.
  auth = createServer((req, res) => {
    res.writeHead(req.headers.authorization === BASIC ? 200 : 401).end();
  });
  await new Promise<void>((resolve) => auth.listen(0, '127.0.9.30', resolve));
  const authUrl = `http://127.0.9.30:${(auth.address() as AddressInfo).port}/basic-auth/user/password`;
  const { cert, key } = await certificate([TLS, AUTH]);
  ca = cert;
  fx = await startFixture(NS);
  const tlsIngress = (name: string, host: string, a: Record<string, string> = {}) => ingress(NS, name, {
    host, paths: [{ path: '/', service: 'echo' }], tls: [{ hosts: [host], secretName: 'forwarded-headers-tls' }],
    annotations: Object.fromEntries(Object.entries(a).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])),
  });
  fx.apply('ingresses.json', [
    tlsSecret(NS, 'forwarded-headers-tls', cert, key),
    fx.single('plain', PLAIN),
    tlsIngress('tls', TLS),
    tlsIngress('auth', AUTH, { 'auth-url': authUrl, 'auth-signin': 'http://$host/auth/start' }),
  ]);
  await fx.ctl.until(PLAIN, '/', (r) => r.status === 200);
  await fx.ctl.until(TLS, '/', (r) => r.status === 200, { https: true, ca });
  await fx.ctl.until(AUTH, '/', (r) => r.status === 200, { https: true, ca, headers: { Authorization: BASIC } });
});
test.after(async () => {
  await fx.stop();
  await new Promise((resolve) => auth.close(resolve));
});

its.http1Only('settings/listen_nondefault_ports.go:45', 'the plain-HTTP port itself', async (p) => {
  const r = await p.request(PLAIN, '/');
  assert.is(r.status, 200);
  assert.not.equal(fx.ctl.ports.http, 80);
  assert.is(upstreamHeaders(r)['x-forwarded-port'], String(fx.ctl.ports.http));
});

its.both('settings/listen_nondefault_ports.go:65', async (p) => {
  const r = await p.request(TLS, '/', { https: true, ca });
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r)['x-forwarded-port'], '443', `HTTPS on port ${fx.ctl.ports.https} is announced as 443`);
  assert.is(upstreamHeaders(r)['x-forwarded-proto'], 'https');
});

its.both('settings/listen_nondefault_ports.go:93', async (p) => {
  const denied = await p.request(AUTH, '/', { https: true, ca });
  assert.is(denied.status, 302, 'without credentials: to auth-signin');
  const r = await p.request(AUTH, '/', { https: true, ca, headers: { Authorization: BASIC } });
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r)['x-forwarded-port'], '443');
});

test.run();
