// ingress-nginx test/e2e/settings/stream_snippet.go, ported: the ConfigMap's stream-snippet opens
// a TCP server of its own in NGINX's stream block, forwarding to the controller's HTTP port, so a
// request through it reaches the Ingress's host. The e2e snippet listens on 8000 and forwards to
// port 80; here a free loopback port forwards to the local controller's HTTP port (and a second
// one to its HTTPS port, for the HTTP/2 leg). ingress-rx applies the operator's snippets only
// under annotations-risk-level Critical (docs/differences.md, the operator's snippets).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { freePorts } from '../../../support/ports.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'foo.com';
let plain = 0;
let tls = 0;

test.before(async () => {
  [plain, tls] = await freePorts(2) as [number, number];
  fx = await startFixture('cm-stream-snippet', { configmap: {} });
  await fx.applyAndWait('foo.json', [fx.single('foo', HOST)], HOST);
  await fx.configure({
    'annotations-risk-level': 'Critical',
    'stream-snippet': `server {listen 127.0.0.1:${plain}; proxy_pass 127.0.0.1:${fx.ctl.ports.http};}\nserver {listen 127.0.0.1:${tls}; proxy_pass 127.0.0.1:${fx.ctl.ports.https};}`,
  });
});
test.after(() => fx.stop());

its.both('settings/stream_snippet.go:42', async (p) => {
  const h2 = p.protocol === 'HTTP/2';
  const r = await p.request(HOST, '/healthz', { port: h2 ? tls : plain, https: h2 });
  assert.is(r.status, 200);
  assert.ok(r.backend?.startsWith('echo-'), 'the echo Service answered through the snippet\'s server');
});

test.run();
