// ingress-nginx test/e2e/annotations/sslciphers.go, ported. The e2e test reads ssl_ciphers and
// ssl_prefer_server_ciphers in nginx.conf and asks over HTTPS; the port also shows the list is
// the host's own: a TLS 1.2 client offering only a cipher that the host's list allows and the
// ConfigMap's default excludes (AES128-SHA) is served there, and refused on a host without it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('sslciphers');
  const on = (host: string, a: Record<string, string>) => fx.single(host.split('.')[0]!, host, a, { path: '/something' });
  fx.apply('ingresses.json', [
    on('change.ciphers.test', { 'ssl-ciphers': 'ALL:!aNULL:!EXPORT56:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP', 'ssl-prefer-server-ciphers': 'false' }),
    on('keep.ciphers.test', { 'ssl-ciphers': 'ALL:!aNULL:!EXPORT56:RC4+RSA@STRENGTH:+HIGH@SECLEVEL=0:+MEDIUM:+LOW:+SSLv2:+EXP', 'ssl-prefer-server-ciphers': 'true' }),
    on('default.ciphers.test', {}),
  ]);
  await Promise.all(['change', 'keep', 'default'].map((h) => fx.ctl.until(`${h}.ciphers.test`, '/something', (r) => r.backend !== undefined, { what: `${h} served`, https: true })));
});
test.after(() => fx.stop());

/** The cipher a TLS 1.2 handshake offering only `ciphers` agrees with `sni`, or the error. */
function handshake(sni: string, ciphers: string): Promise<string> {
  return new Promise((resolve) => {
    const socket: TLSSocket = tlsConnect({ host: '127.0.0.1', port: fx.ctl.ports.https, servername: sni, rejectUnauthorized: false, ciphers, maxVersion: 'TLSv1.2' }, () => {
      resolve(socket.getCipher().name);
      socket.end();
    });
    socket.on('error', (err) => resolve(`error: ${err.message}`));
    socket.setTimeout(5000, () => socket.destroy(new Error('handshake timed out')));
  });
}

its.both('annotations/sslciphers.go:35', async (p) => {
  assert.is((await p.request('change.ciphers.test', '/something', { https: true })).status, 200);
  assert.is(await handshake('change.ciphers.test', 'AES128-SHA'), 'AES128-SHA');
  assert.match(await handshake('default.ciphers.test', 'AES128-SHA'), /^error: /, 'the ConfigMap\'s list elsewhere');
});

its.both('annotations/sslciphers.go:58', async (p) => {
  assert.is((await p.request('keep.ciphers.test', '/something', { https: true })).status, 200);
  assert.is(await handshake('keep.ciphers.test', 'AES128-SHA'), 'AES128-SHA');
});

test.run();
