// ingress-nginx test/e2e/security/request_smuggling.go, ported: a host with external auth (an
// auth-url that refuses, an auth-signin) and, through the http-snippet, another server with a
// hidden page. A request whose body is a second request for that page must not get the page:
// NGINX reads the body as a body. The e2e test reads 1 KB after a pause; the port sends a third
// request on the same connection and reads every answer until NGINX closes it, so a smuggled
// answer would be found between the two.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { startHttpBun, type HttpBun } from '../httpbun.js';

let fx: Fixture;
let bun: HttpBun;
const its = ported(test, () => fx.ctl);
const HOST = 'foo.bar.com';
const HIDDEN = 'This should be hidden!';

test.before(async () => {
  bun = await startHttpBun('127.0.35.10');
  // A first start tells the HTTP port; the ConfigMap's server listens on it too.
  fx = await startFixture('request-smuggling', { configmap: {} });
  await fx.configure({
    // The operator's snippets apply only at risk level Critical here (docs/differences.md,
    // Annotations and ConfigMap parsing); ingress-nginx applies them always.
    'annotations-risk-level': 'Critical',
    'http-snippet': `server {\n  listen 127.0.0.1:${fx.ctl.ports.http};\n  server_name notlocalhost;\n  location /_hidden/index.html {\n    return 200 '${HIDDEN}';\n  }\n}`,
  });
  const ing = fx.single('smuggling', HOST, {
    'auth-url': `http://${bun.authority}/basic-auth/user/passwd`,
    'auth-signin': `http://${bun.authority}/bearer/d4bcba7a-0def-4a31-91a7-47e420adf44b`,
  });
  await fx.applyAndWait('ingress.json', [ing], HOST, '/', (r) => r.status === 302);
  // The hidden page is there for a request that asks for it plainly.
  await fx.ctl.until('notlocalhost', '/_hidden/index.html', (r) => r.body === HIDDEN, { what: 'the http-snippet server' });
});
test.after(async () => {
  await fx?.stop();
  await bun?.close();
});

its.http1Only('security/request_smuggling.go:39', 'request smuggling is an HTTP/1.1 framing attack (Content-Length on a connection); HTTP/2 frames each request', async () => {
  const smuggled = `GET /_hidden/index.html HTTP/1.1\r\nHost: notlocalhost\r\n\r\n`;
  assert.is(Buffer.byteLength(smuggled), 56);
  const out = await new Promise<string>((resolve, reject) => {
    const s = connect(fx.ctl.ports.http, '127.0.0.1', () => {
      s.write(`GET /echo HTTP/1.1\r\nHost: ${HOST}\r\nContent-Length: 56\r\n\r\n${smuggled}`);
      s.write(`GET /last HTTP/1.1\r\nHost: ${HOST}\r\nConnection: close\r\n\r\n`);
    });
    let got = '';
    s.setTimeout(10_000, () => s.destroy(new Error(`no close after: ${got}`)));
    s.on('data', (d: Buffer) => { got += d.toString('utf8'); });
    s.on('end', () => resolve(got));
    s.on('error', reject);
  });
  assert.not.ok(out.includes(HIDDEN), out);
  // The first request's answer (the sign-in redirect) and the last one's, nothing between.
  assert.equal(out.match(/^HTTP\/1\.1 \d+/gm), ['HTTP/1.1 302', 'HTTP/1.1 302'], out);
});

test.run();
