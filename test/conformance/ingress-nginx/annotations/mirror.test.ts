// ingress-nginx test/e2e/annotations/mirror.go, ported: each It a host of its own on one
// controller. The e2e tests grep nginx.conf for the mirror location and mirror_request_body; the
// port runs the mirror targets and reads what each receives: a copy of the request (the client's
// answer comes from the echo Service), with or without the body. The e2e targets are names
// (localhost, test.env.com); NGINX would resolve them through the machine's resolver, which tests
// never use, so the targets here are the addresses such names lead to, on loopback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { certificate, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

interface Copy { url: string; method: string; headers: IncomingMessage['headers']; body: string }
interface Mirror { server: Server; port: number; copies: Copy[] }

async function startMirror(address: string, tls?: { cert: string; key: string }): Promise<Mirror> {
  const copies: Copy[] = [];
  const handler = (req: IncomingMessage, res: import('node:http').ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => { body += d; });
    req.on('end', () => { copies.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body }); res.end('mirrored'); });
  };
  const server = tls ? createHttpsServer(tls, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { server, port: (server.address() as AddressInfo).port, copies };
}

let plain: Mirror;
let secure: Mirror;

test.before(async () => {
  plain = await startMirror('127.0.9.50');
  secure = await startMirror('127.0.9.51', await certificate(['test.env.com']));
  fx = await startFixture('mirror');
  const hosts = {
    'target.mirror.foo.com': { 'mirror-target': `http://127.0.9.50:${plain.port}/mirror` },
    'uri.mirror.foo.com': { 'mirror-target': `https://127.0.9.51:${secure.port}/$request_uri` },
    'no-body.mirror.foo.com': { 'mirror-target': `http://127.0.9.50:${plain.port}/mirror`, 'mirror-request-body': 'off' },
  };
  fx.apply('ingresses.json', Object.entries(hosts).map(([h, a]) => fx.single(h.split('.')[0]!, h, a)));
  await Promise.all(Object.keys(hosts).map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(async () => {
  await fx.stop();
  for (const m of [plain, secure]) await new Promise((resolve) => m.server.close(resolve));
});

/** A POST of `body` to `host` `path`, answered by the echo Service; then the copy `mirror` received of it. */
async function mirrored(p: import('../../../support/protocols.js').ProtocolClient, mirror: Mirror, host: string, path: string, body: string): Promise<Copy> {
  // The copy carries the client's headers: this one tells it from the copies of other requests.
  const id = `${p.tag}-${Math.random().toString(36).slice(2)}`;
  const r = await p.request(host, path, { method: 'POST', body, headers: { 'X-Copy-Of': id } });
  assert.is(r.status, 200);
  assert.ok(r.backend?.startsWith('echo-'), 'the client\'s answer is the upstream\'s');
  assert.is(r.json?.bodyBytes, body.length);
  return waitFor(() => mirror.copies.find((c) => c.headers['x-copy-of'] === id), { timeoutMs: 5000, what: `the copy of ${host}${path}` });
}

its.both('annotations/mirror.go:36', async (p) => {
  const path = `/original-${p.tag}-${Date.now()}`;
  const copy = await mirrored(p, plain, 'target.mirror.foo.com', path, 'payload');
  assert.is(copy.url, '/mirror');
  assert.is(copy.method, 'POST');
  // mirror_request_body is on by default: the copy carries the body.
  assert.is(copy.body, 'payload');
});

its.both('annotations/mirror.go:51', async (p) => {
  const path = `/original-${p.tag}-${Date.now()}?q=1`;
  const copy = await mirrored(p, secure, 'uri.mirror.foo.com', path, 'payload');
  // The target's path is `/` then $request_uri.
  assert.is(copy.url, `/${path}`);
  assert.is(copy.body, 'payload');
});

its.both('annotations/mirror.go:67', async (p) => {
  const path = `/original-${p.tag}-${Date.now()}`;
  const copy = await mirrored(p, plain, 'no-body.mirror.foo.com', path, 'payload');
  assert.is(copy.url, '/mirror');
  assert.is(copy.body, '');
});

test.run();
