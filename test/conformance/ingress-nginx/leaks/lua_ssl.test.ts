// ingress-nginx test/e2e/leaks/lua_ssl.go: TLS hosts, each with a certificate of its own, are
// created, served with that certificate and deleted, again and again, and every host is served
// right each time (the e2e test runs 1,000 hosts ten times, a minute apart, and asserts only
// that; its name says what a human watches meanwhile). The port keeps the cycle at a size one
// shared CI core runs in seconds: HOSTS hosts at once, ROUNDS times per protocol; each request
// trusts only its host's certificate, so a 200 shows NGINX chose it by SNI, and a deleted host
// answers 404.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';

const NS = 'lua-dynamic-certificates';
const HOSTS = 8;
const ROUNDS = 3;
let fx: Fixture;
const its = ported(test, () => fx.ctl);
const hosts = Array.from({ length: HOSTS }, (_, i) => `hostname-${i + 1}`);
const certs = new Map<string, { cert: string; key: string }>();

test.before(async () => {
  fx = await startFixture(NS);
  for (const h of hosts) certs.set(h, await certificate([h]));
});
test.after(() => fx.stop());

its.both('leaks/lua_ssl.go:42', async (p) => {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const h of hosts) {
      fx.apply(`${h}.json`, [
        tlsSecret(NS, h, certs.get(h)!.cert, certs.get(h)!.key),
        ingress(NS, h, { host: h, paths: [{ path: '/', service: 'echo' }], tls: [{ hosts: [h], secretName: h }] }),
      ]);
    }
    await Promise.all(hosts.map((h) => p.until(h, '/', (r) => r.backend !== undefined, { https: true, ca: certs.get(h)!.cert, what: `${h} over HTTPS with its certificate, round ${round}` })));
    for (const h of hosts) {
      const r = await p.request(h, '/', { https: true, ca: certs.get(h)!.cert });
      assert.is(r.status, 200, `${h}, round ${round}`);
    }
    for (const h of hosts) fx.apply(`${h}.json`, []);
    await Promise.all(hosts.map((h) => p.until(h, '/', (r) => r.status === 404, { what: `${h} gone, round ${round}` })));
  }
});

test.run();
