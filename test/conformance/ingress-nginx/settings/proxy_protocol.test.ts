// ingress-nginx test/e2e/settings/proxy_protocol.go, ported: with use-proxy-protocol, NGINX reads
// the client's address and port from the PROXY header a load balancer sends first (on the HTTP
// and the HTTPS listener): the upstream gets them as X-Forwarded-For and X-Forwarded-Port, and a
// destination port 443 makes the scheme https. With use-forwarded-headers too, X-Forwarded-For
// is believed only when the PROXY header's address is in proxy-real-ip-cidr. On loopback the
// TCP peer is 127.0.0.1 where the e2e cluster's is a pod address in 10.0.0.0/8: the CIDR lists
// say 127.0.0.1 where ingress-nginx's test says 10.0.0.0/8, and the untrusted case lists the peer
// but not the PROXY address (the e2e test, with the default 0.0.0.0/0, passes only because
// "192.168.0.111, …" contains "192.168.0.1").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { certificate, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'proxy-protocol';
const HOST = 'proxy-protocol.test';
const TLS_HOST = 'tls.proxy-protocol.test';
let ca = '';

const proxyHeader = (destPort: number) => `PROXY TCP4 192.168.0.1 192.168.0.11 56324 ${destPort}\r\n`;

test.before(async () => {
  fx = await startFixture(NS, { configmap: {} });
  const { cert, key } = await certificate([TLS_HOST]);
  ca = cert;
  fx.apply('ingress.json', [
    fx.single('proxy-protocol', HOST),
    tlsSecret(NS, 'proxy-protocol-tls', cert, key),
    ingress(NS, 'proxy-protocol-tls', { host: TLS_HOST, tls: [{ hosts: [TLS_HOST], secretName: 'proxy-protocol-tls' }], paths: [{ path: '/', service: 'echo' }] }),
  ]);
  await fx.ctl.until(HOST, '/', (r) => r.backend !== undefined);
  await fx.ctl.until(TLS_HOST, '/', (r) => r.backend !== undefined, { https: true, ca });
});
test.after(() => fx.stop());

async function viaProxy(p: ProtocolClient, destPort: number, opts: { host?: string; headers?: Record<string, string> } = {}) {
  const host = opts.host ?? HOST;
  const r = await p.request(host, '/', { preface: proxyHeader(destPort), headers: opts.headers, ...(host === TLS_HOST ? { https: true, ca } : {}) });
  assert.is(r.status, 200);
  return upstreamHeaders(r);
}

its.both('settings/proxy_protocol.go:49', async (p) => {
  await fx.configure({ 'use-proxy-protocol': 'true' });
  const h = await viaProxy(p, 1234);
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-port'], '1234');
  assert.is(h['x-forwarded-proto'], p.scheme, 'the listener\'s scheme (HTTP/2 runs over HTTPS)');
  assert.is(h['x-forwarded-for'], '192.168.0.1');
});

its.both('settings/proxy_protocol.go:86', async (p) => {
  await fx.configure({ 'use-proxy-protocol': 'true' });
  const h = await viaProxy(p, 443);
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-port'], '443');
  assert.is(h['x-forwarded-proto'], 'https', 'a PROXY destination port 443 is HTTPS');
  assert.is(h['x-forwarded-for'], '192.168.0.1');
});

its.both('settings/proxy_protocol.go:122', async (p) => {
  await fx.configure({ 'use-proxy-protocol': 'true' });
  const h = await viaProxy(p, 1234, { host: TLS_HOST });
  assert.is(h.host, TLS_HOST);
  assert.is(h['x-forwarded-port'], '1234');
  assert.is(h['x-forwarded-proto'], 'https');
  assert.is(h['x-scheme'], 'https');
  assert.is(h['x-forwarded-for'], '192.168.0.1');
});

its.both('settings/proxy_protocol.go:238', async (p) => {
  await fx.configure({ 'use-proxy-protocol': 'true', 'use-forwarded-headers': 'true', 'proxy-real-ip-cidr': '127.0.0.1/32' });
  const h = await viaProxy(p, 1234, { headers: { 'X-Forwarded-For': '192.168.0.111' } });
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-port'], '1234');
  assert.is(h['x-forwarded-proto'], p.scheme);
  assert.is(h['x-forwarded-for'], '192.168.0.1', 'the PROXY address, not the X-Forwarded-For of an untrusted peer');
});

its.both('settings/proxy_protocol.go:274', async (p) => {
  await fx.configure({ 'use-proxy-protocol': 'true', 'use-forwarded-headers': 'true', 'proxy-real-ip-cidr': '127.0.0.1/32,192.168.0.1/32' });
  const h = await viaProxy(p, 1234, { headers: { 'X-Forwarded-For': '192.168.0.111' } });
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-port'], '1234');
  assert.is(h['x-forwarded-proto'], p.scheme);
  assert.is(h['x-forwarded-for'], '192.168.0.111', 'the X-Forwarded-For of a trusted PROXY peer');
});

test.run();
