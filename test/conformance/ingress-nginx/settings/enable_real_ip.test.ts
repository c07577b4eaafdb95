// ingress-nginx test/e2e/settings/enable_real_ip.go, ported: enable-real-ip takes the client
// address from X-Forwarded-For (trusted from proxy-real-ip-cidr, 0.0.0.0/0 by default) and passes
// it on, while the other X-Forwarded-* headers a client sends are still replaced by NGINX's own;
// off, the client's X-Forwarded-For and X-Forwarded-Host travel only as X-Original-Forwarded-*.
// Local mode's ports stand in for 80: HTTP announces its own, HTTPS (the HTTP/2 leg) 443.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'forwarded-for-header.test';
const CLIENT_HEADERS = { 'X-Forwarded-Port': '1234', 'X-Forwarded-Proto': 'myproto', 'X-Forwarded-For': '1.2.3.4', 'X-Forwarded-Host': 'myhost' };

test.before(async () => {
  fx = await startFixture('enable-real-ip', { configmap: { 'enable-real-ip': 'false' } });
  await fx.applyAndWait('ingress.json', [fx.single('forwarded-for-header', HOST)], HOST);
});
test.after(() => fx.stop());

/** The request sent with CLIENT_HEADERS; what reached the upstream, with the host and the scheme and port NGINX saw (HTTPS as 443). */
async function forwarded(p: ProtocolClient): Promise<Record<string, string>> {
  const r = await p.request(HOST, '/', { headers: CLIENT_HEADERS });
  assert.is(r.status, 200);
  const h = upstreamHeaders(r);
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-host'], HOST);
  assert.is(h['x-forwarded-proto'], p.scheme);
  assert.is(h['x-forwarded-port'], p.scheme === 'https' ? '443' : String(fx.ctl.ports.http));
  return h;
}

its.both('settings/enable_real_ip.go:40', async (p) => {
  await fx.configure({ 'enable-real-ip': 'true' });
  const h = await forwarded(p);
  assert.is(h['x-forwarded-for'], '1.2.3.4', 'the client address is the one X-Forwarded-For names');
  assert.is(h['x-real-ip'], '1.2.3.4');
});

its.both('settings/enable_real_ip.go:80', async (p) => {
  await fx.configure({ 'enable-real-ip': 'false' });
  const h = await forwarded(p);
  assert.is(h['x-original-forwarded-for'], '1.2.3.4');
  assert.is(h['x-original-forwarded-host'], 'myhost');
  assert.is(h['x-forwarded-for'], '127.0.0.1', 'the client address is the connection\'s');
});

test.run();
