// ingress-nginx test/e2e/settings/forwarded_headers.go, ported: use-forwarded-headers trusts
// every X-Forwarded-* header a client sends (the first X-Forwarded-Host becomes the upstream's
// Host); off, NGINX's own values replace them and the client's X-Forwarded-For and
// X-Forwarded-Host travel as X-Original-Forwarded-*. Local mode's ports stand in for 80: HTTP
// announces its own, HTTPS (the HTTP/2 leg) 443.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'forwarded-headers.test';
const CLIENT_HEADERS = { 'X-Forwarded-Port': '1234', 'X-Forwarded-Proto': 'myproto', 'X-Forwarded-Scheme': 'myproto', 'X-Forwarded-For': '1.2.3.4', 'X-Forwarded-Host': 'myhost' };

test.before(async () => {
  fx = await startFixture('forwarded-headers', { configmap: { 'use-forwarded-headers': 'false' } });
  await fx.applyAndWait('ingress.json', [fx.single('forwarded-headers', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/forwarded_headers.go:41', async (p) => {
  await fx.configure({ 'use-forwarded-headers': 'true' });
  const r = await p.request(HOST, '/', { headers: CLIENT_HEADERS });
  assert.is(r.status, 200);
  const h = upstreamHeaders(r);
  assert.is(h.host, 'myhost');
  assert.is(h['x-forwarded-host'], 'myhost');
  assert.is(h['x-forwarded-proto'], 'myproto');
  assert.is(h['x-forwarded-scheme'], 'myproto');
  assert.is(h['x-forwarded-port'], '1234');
  assert.is(h['x-forwarded-for'], '1.2.3.4');

  // The first X-Forwarded-Host is the best host.
  const first = await p.request(HOST, '/', { headers: { ...CLIENT_HEADERS, 'X-Forwarded-Host': 'myhost.com, another.host,example.net' } });
  assert.is(first.status, 200);
  assert.is(upstreamHeaders(first).host, 'myhost.com');
  assert.is(upstreamHeaders(first)['x-forwarded-host'], 'myhost.com');
});

its.both('settings/forwarded_headers.go:95', async (p: ProtocolClient) => {
  await fx.configure({ 'use-forwarded-headers': 'false' });
  const r = await p.request(HOST, '/', { headers: CLIENT_HEADERS });
  assert.is(r.status, 200);
  const h = upstreamHeaders(r);
  assert.is(h.host, HOST);
  assert.is(h['x-forwarded-port'], p.scheme === 'https' ? '443' : String(fx.ctl.ports.http));
  assert.is(h['x-forwarded-proto'], p.scheme);
  assert.is(h['x-forwarded-scheme'], p.scheme);
  assert.is(h['x-original-forwarded-for'], '1.2.3.4');
  assert.is(h['x-original-forwarded-host'], 'myhost');
  assert.is(h['x-forwarded-host'], HOST);
  assert.is(h['x-forwarded-for'], '127.0.0.1');
});

test.run();
