// ingress-nginx test/e2e/annotations/streamsnippet.go, ported: a stream-snippet (annotation, or
// the ConfigMap's) opens a TCP server of its own in NGINX's stream block, here forwarding to the
// controller's HTTP port (HTTPS for the HTTP/2 leg), so a request through it reaches the
// Ingress's host. The e2e snippet listens on 8000 and forwards to port 80; the ports here are
// free loopback ports and the local controller's own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { untilRunning } from '../../../support/local-harness.js';
import { ported } from '../port.js';
import { freePorts } from '../../../support/ports.js';
import { StreamReset, type ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
/**
 * Ports the snippets listen on: [annotation HTTP, annotation HTTPS, ConfigMap HTTP, ConfigMap HTTPS,
 * then the dropped annotation's HTTP and HTTPS, a pair per protocol leg: the first leg's Ingress is
 * served again when its leg restores allow-snippet-annotations, and the second leg's must not ask for
 * the same ports (NGINX refuses a duplicate listen).]
 */
let ports: number[] = [];

/** Two stream servers: `plain` forwards to the controller's HTTP port, `tls` to its HTTPS port. */
const snippet = (plain: number, tls: number) =>
  `server {listen 127.0.0.1:${plain}; proxy_pass 127.0.0.1:${fx.ctl.ports.http};}\nserver {listen 127.0.0.1:${tls}; proxy_pass 127.0.0.1:${fx.ctl.ports.https};}`;

test.before(async () => {
  ports = await freePorts(8);
  fx = await startFixture('stream-snippet', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  await fx.applyAndWait('foo.json', [fx.single('foo', 'foo.com', { 'stream-snippet': snippet(ports[0]!, ports[1]!) })], 'foo.com');
  await untilRunning(fx.ctl, `listen 127.0.0.1:${ports[0]};`);
});
test.after(() => fx.stop());

/** A request of `host` through the snippet's server on `plain` (HTTP/1.1) or `tls` (HTTP/2): the echo Service's status, or 'refused'. */
const through = (p: ProtocolClient, host: string, plain: number, tls: number): Promise<number | string> =>
  p.request(host, '/', { port: p.protocol === 'HTTP/1.1' ? plain : tls, https: p.protocol === 'HTTP/2' })
    .then((r) => (r.backend?.startsWith('echo-') ? r.status : `answered ${r.status}`), (err: NodeJS.ErrnoException) => (err instanceof StreamReset || /ECONNREFUSED/.test(`${err.code} ${err.message}`) ? 'refused' : err.message));

its.both('annotations/streamsnippet.go:41', async (p) => {
  // Added after the controller started: the stream block changes with it (a reload).
  assert.is(await through(p, 'foo.com', ports[0]!, ports[1]!), 200);
});

its.both('annotations/streamsnippet.go:88', async (p) => {
  const cmSnippet = snippet(ports[2]!, ports[3]!);
  const [annotPlain, annotTls] = p.protocol === 'HTTP/1.1' ? [ports[4]!, ports[5]!] : [ports[6]!, ports[7]!];
  fx.apply(`annot-${p.tag}.json`, [fx.single(`annot-${p.tag}`, `annot-${p.tag}.foo.com`, { 'stream-snippet': snippet(annotPlain, annotTls) })]);
  await fx.applyAndWait('cm.json', [fx.single('cm', 'cm.foo.com')], 'cm.foo.com');
  // ingress-nginx applies the ConfigMap's snippets whatever annotations-risk-level says; ingress-rx
  // only under Critical, and warns otherwise (docs/differences.md, the operator's snippets).
  await fx.configure({ 'allow-snippet-annotations': 'false', 'stream-snippet': cmSnippet });
  await fx.warned((w) => w.includes('stream-snippet is Critical'), 'the ignored ConfigMap snippet is named');
  assert.is(await through(p, 'cm.foo.com', ports[2]!, ports[3]!), 'refused');
  await fx.configure({ 'allow-snippet-annotations': 'false', 'annotations-risk-level': 'Critical', 'stream-snippet': cmSnippet });
  try {
    assert.is(await through(p, 'cm.foo.com', ports[2]!, ports[3]!), 200);
    // allow-snippet-annotations false drops every snippet annotation, this one's and :41's.
    assert.is(await through(p, `annot-${p.tag}.foo.com`, annotPlain, annotTls), 'refused');
    assert.is(await through(p, 'foo.com', ports[0]!, ports[1]!), 'refused');
  } finally {
    await fx.configure({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' });
  }
});

test.run();
