// ingress-nginx test/e2e/ssl/{http_redirect,secret_update}.go, ported on one controller, a host
// per It. The e2e tests read nginx.conf for `listen 443`; the port makes the HTTPS requests that
// listener answers and reads the certificate NGINX presents. Where the e2e test reads the
// controller's log for what it did with a Secret no Ingress uses, the port reads the pipeline's
// trace (`--trace` to the log): the Secret's change is received and filtered by the store.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type PeerCertificate } from 'node:tls';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, tlsSecret } from '../../../support/local-harness.js';
import { waitFor, waitForSteady } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'ssl';

const withTls = (host: string) => ingress(NS, host, { host, paths: [{ path: '/', service: 'echo' }], tls: [{ hosts: [host], secretName: host }] });
const dummy = (data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dummy', namespace: NS },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

test.before(async () => {
  fx = await startFixture(NS, { args: ['--trace'] });
  const c = await certificate(['ssl-update']);
  fx.apply('dummy.json', [dummy({ key: 'value' })]);
  fx.apply('ingresses.json', [
    // Its Secret does not exist.
    withTls('redirect.com'),
    withTls('ssl-update'), tlsSecret(NS, 'ssl-update', c.cert, c.key),
    // Its Secret holds nothing.
    withTls('invalid-ssl'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'invalid-ssl', namespace: NS } },
  ]);
  // Each TLS host redirects plain HTTP once every worker knows which hosts hold a certificate
  // (each learns it on its own timer).
  await Promise.all(['redirect.com', 'ssl-update', 'invalid-ssl'].map((h) =>
    waitForSteady(async () => (await fx.ctl.request(h, '/')).status === 308, { what: `${h} redirected by every worker` })));
});
test.after(() => fx.stop());

/** The certificate chain NGINX presents for `host` with the protocol's ALPN. */
function peerChain(p: ProtocolClient, host: string): Promise<PeerCertificate[]> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: fx.ctl.ports.https, servername: host, rejectUnauthorized: false, ALPNProtocols: [p.protocol === 'HTTP/2' ? 'h2' : 'http/1.1'] }, () => {
      const chain: PeerCertificate[] = [];
      for (let c = s.getPeerCertificate(true); c && !chain.includes(c); c = c.issuerCertificate) {
        chain.push(c);
        if (c.issuerCertificate === c) break;
      }
      s.end();
      resolve(chain);
    });
    s.on('error', reject);
  });
}

its.http1Only('ssl/http_redirect.go:36', 'the redirect answers plain HTTP, which HTTP/2 is not spoken over here', async (p) => {
  const r = await p.request('redirect.com', '/');
  assert.is(r.status, 308);
  // ingress-nginx's e2e serves HTTPS on 443, so its Location names no port; local mode's HTTPS
  // port is not 443, which the redirect names (docs/differences.md, "Redirect port"). The
  // trailing slash of `/` is dropped, as ingress-nginx does.
  assert.is(r.headers.location, `https://redirect.com:${fx.ctl.ports.https}`);
});

its.both('ssl/secret_update.go:40', async (p) => {
  const r = await p.request('ssl-update', '/', { https: true });
  assert.is(r.status, 200);
  assert.is((await peerChain(p, 'ssl-update'))[0]!.subject.CN, 'ssl-update');
  // A change of a Secret no Ingress names is received and set aside by the store: no sync, no PEM.
  const before = fx.ctl.output().length;
  fx.apply('dummy.json', [dummy({ key: 'value', 'some-key': `some value ${p.protocol}` })]);
  const id = await waitFor(() => /"msg":"trace: #(\d+) received"/.exec(fx.ctl.output().slice(before).split('\n').find((l) => l.includes(`${NS}/dummy`) && l.includes('received')) ?? '')?.[1], { what: 'the Secret change received' });
  const filtered = await waitFor(() => fx.ctl.output().slice(before).split('\n').find((l) => l.includes(`"trace: #${id} filtered`)), { what: 'the Secret change filtered' });
  assert.match(filtered, 'Secret not referenced by a served Ingress');
  assert.not.ok(fx.warnings().some((w) => w.includes(`${NS}/dummy`)), 'no warning about the unused Secret');
});

its.both('ssl/secret_update.go:83', async (p) => {
  const r = await p.request('invalid-ssl', '/', { https: true });
  assert.is(r.status, 200);
  const chain = await peerChain(p, 'invalid-ssl');
  assert.is(chain.length, 1);
  assert.is(chain[0]!.issuer.CN, 'Kubernetes Ingress Controller Fake Certificate');
  assert.is(chain[0]!.subject.CN, 'Kubernetes Ingress Controller Fake Certificate');
  assert.is(chain[0]!.subject.O, 'Acme Co');
  assert.is(chain[0]!.subjectaltname, 'DNS:ingress.local');
  await fx.warned((w) => w.includes(`${NS}/invalid-ssl`), 'a warning naming the Secret');
});

test.run();
