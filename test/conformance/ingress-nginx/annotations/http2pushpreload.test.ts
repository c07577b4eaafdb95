// ingress-nginx test/e2e/annotations/http2pushpreload.go, ported. The e2e test reads
// http2_push_preload in nginx.conf; the port shows what it does: the backend's
// `Link: <…>; rel=preload` becomes an HTTP/2 server push, and not on a host without the annotation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
let preloader: Server;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('http2pushpreload');
  preloader = createServer((_req, res) => {
    res.writeHead(200, { link: '</pushed.css>; rel=preload; as=style', 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  await new Promise<void>((resolve) => preloader.listen(0, '127.0.9.32', resolve));
  const { port } = preloader.address() as AddressInfo;
  fx.apply('ingresses.json', [
    service(fx.ns, 'preloader'), ...slices(fx.ns, 'preloader', [{ address: '127.0.9.32', port }]),
    fx.single('push', 'http2pp.foo.com', { 'http2-push-preload': 'true' }, { svc: 'preloader' }),
    fx.single('nopush', 'nopush.foo.com', {}, { svc: 'preloader' }),
  ]);
  await Promise.all(['http2pp.foo.com', 'nopush.foo.com'].map((h) => fx.ctl.until(h, '/', (r) => r.status === 200 && r.body === 'ok', { what: `${h} served`, https: true })));
});
test.after(async () => { await fx?.stop(); await new Promise<void>((resolve) => (preloader ? preloader.close(() => resolve()) : resolve())); });

its.http2Only('annotations/http2pushpreload.go:34', 'server push is HTTP/2', async () => {
  const session = http2Connect(`https://127.0.0.1:${fx.ctl.ports.https}`, { servername: 'http2pp.foo.com', rejectUnauthorized: false });
  try {
    const pushed: string[] = [];
    session.on('stream', (stream, headers) => {
      pushed.push(String(headers[':path']));
      stream.resume();
    });
    const answer = (host: string) => new Promise<number>((resolve, reject) => {
      const req = session.request({ ':path': '/page', ':authority': host });
      req.on('response', (h) => resolve(Number(h[':status'])));
      req.on('error', reject);
      req.resume();
      req.end();
    });
    assert.is(await answer('http2pp.foo.com'), 200);
    await waitFor(() => pushed.includes('/pushed.css'), { timeoutMs: 5000, what: 'the pushed stream' });
    assert.is(await answer('nopush.foo.com'), 200);
    assert.equal(pushed, ['/pushed.css'], 'no push without the annotation');
  } finally {
    session.close();
  }
});

test.run();
