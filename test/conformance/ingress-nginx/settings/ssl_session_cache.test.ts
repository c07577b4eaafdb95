// ingress-nginx test/e2e/settings/ssl_session_cache.go, ported: NGINX's shared session cache is on
// by default, so a TLS 1.2 client (session tickets are off by default) resumes its session;
// ssl-session-cache false turns it off and the same client makes a full handshake. The cache's
// size and the sessions' lifetime have no effect a client sees short of filling the cache or
// waiting for 10 minutes: for those the running configuration is read. The Its sharing a
// ConfigMap state run together (three states).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveTlsHost, startFixture, tlsSession, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'ssl-session-cache.test';
let ca = '';

test.before(async () => {
  fx = await startFixture('ssl-session-cache', { configmap: {} });
  ca = await serveTlsHost(fx, HOST);
});
test.after(() => fx.stop());

/** Whether a second handshake of `p`'s ALPN resumes the first one's session (after a request over `p`). */
async function resumes(p: ProtocolClient): Promise<boolean> {
  assert.is((await p.request(HOST, '/', { https: true, ca })).status, 200);
  const alpn = p.tag === 'h2' ? 'h2' : 'http/1.1';
  const first = await tlsSession(fx.ctl.ports.https, HOST, { ca, alpn });
  assert.is(first.version, 'TLSv1.2');
  assert.not.ok(first.reused);
  assert.is(first.ticket, undefined, 'no session ticket (ssl-session-tickets is off)');
  return (await tlsSession(fx.ctl.ports.https, HOST, { ca, alpn, session: first.session })).reused;
}

const conf = async () => (await fx.ctl.control('/nginx.conf')).body;

its.both('settings/ssl_session_cache.go:30', async (p) => {
  await fx.configure({});
  assert.ok(await resumes(p), 'the session is resumed from the cache');
  assert.match(await conf(), /ssl_session_cache shared:SSL:10m;\s+ssl_session_timeout 10m;/);
});

// The size and the timeout, in one state.
const SIZED = { 'ssl-session-cache-size': '20m', 'ssl-session-timeout': '30m' };

its.both('settings/ssl_session_cache.go:45', async (p) => {
  await fx.configure(SIZED);
  assert.ok(await resumes(p), 'the session is resumed from the cache');
  assert.match(await conf(), 'ssl_session_cache shared:SSL:20m;');
});

its.both('settings/ssl_session_cache.go:53', async (p) => {
  await fx.configure(SIZED);
  assert.ok(await resumes(p), 'the session is resumed from the cache');
  assert.match(await conf(), 'ssl_session_timeout 30m;');
});

its.both('settings/ssl_session_cache.go:37', async (p) => {
  await fx.configure({ 'ssl-session-cache': 'false' });
  assert.not.ok(await resumes(p), 'no cache, no ticket: a full handshake');
  assert.not.match(await conf(), 'ssl_session_cache');
});

test.run();
