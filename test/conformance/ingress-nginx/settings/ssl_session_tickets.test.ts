// ingress-nginx test/e2e/settings/ssl_session_tickets.go, ported: by default NGINX issues no
// session tickets (a TLS 1.2 client gets none); ssl-session-tickets true issues them, and one
// resumes the session with the session cache off; with ssl-session-ticket-key every ticket is
// made with that key, so it starts with the key's name (its first 16 bytes, as NGINX reads an
// 80-byte key file). Three ConfigMap states.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serveTlsHost, startFixture, tlsSession, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'ssl-session-tickets.test';
/** The e2e test's key: 80 bytes, base64. */
const KEY = 'WW9gcPHgfcrw6DNqY5VE2NjM6gtgUhJ4Vn6ZwRGi/7+A9TNFa4Fvfe1cmlPec9bxDoenN70aMBeZBlcrKshnKT4WJxFNLCuTHhfn4loTOEo=';
let ca = '';

test.before(async () => {
  fx = await startFixture('ssl-session-tickets', { configmap: {} });
  ca = await serveTlsHost(fx, HOST);
});
test.after(() => fx.stop());

/** A handshake after a request over `p`, with `p`'s ALPN. */
async function handshake(p: ProtocolClient, session?: Buffer) {
  assert.is((await p.request(HOST, '/', { https: true, ca })).status, 200);
  return tlsSession(fx.ctl.ports.https, HOST, { ca, alpn: p.tag === 'h2' ? 'h2' : 'http/1.1', ...(session ? { session } : {}) });
}

its.both('settings/ssl_session_tickets.go:30', async (p) => {
  await fx.configure({});
  const s = await handshake(p);
  assert.is(s.version, 'TLSv1.2');
  assert.is(s.ticket, undefined, 'no ticket');
});

// The session cache off, so that only a ticket can resume a session.
const TICKETS = { 'ssl-session-tickets': 'true', 'ssl-session-cache': 'false' };

its.both('settings/ssl_session_tickets.go:36', async (p) => {
  await fx.configure(TICKETS);
  const first = await handshake(p);
  assert.ok(first.ticket && first.ticket.length > 0, 'a ticket');
  assert.ok((await handshake(p, first.session)).reused, 'the ticket resumes the session');
});

its.both('settings/ssl_session_tickets.go:44', async (p) => {
  await fx.configure({ ...TICKETS, 'ssl-session-ticket-key': KEY });
  const first = await handshake(p);
  assert.ok(first.ticket, 'a ticket');
  assert.equal(first.ticket!.subarray(0, 16), Buffer.from(KEY, 'base64').subarray(0, 16), 'made with the configured key');
  assert.ok((await handshake(p, first.session)).reused, 'the ticket resumes the session');
});

test.run();
