// ingress-nginx test/e2e/annotations/grpc.go, ported with a @grpc/grpc-js server (echo.Echo,
// test/support/protocol-servers.ts) in place of grpcbin: its Say answers with the :authority and
// metadata it received, as grpcbin's HeadersUnary does. Differences of set-up, not of behaviour:
// - the e2e tests reach grpcbin through an ExternalName Service; here a Service with endpoints
//   (ExternalName resolution is servicebackend/service_externalname.go's);
// - their TLS Ingresses name a Secret; the client does not verify the certificate either way
//   (InsecureSkipVerify there), so the default certificate serves here;
// - the GRPCS It adds a configuration-snippet so that NGINX sends grpcbin's name as SNI; this
//   server does not ask for one, so no snippet (snippets stay off);
// - the timeout Its wait 10 s for a 15 s delay; here 2 s for a 3 s delay (the same rule, a fifth
//   of the time), and over TLS where they use cleartext HTTP/2 (see below).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';
import { generateCertificate } from '../../../support/lua-nginx.js';
import { waitFor } from '../../../support/wait.js';
import { GRPC_CLEARTEXT } from '../../../../src/model/ingress/annotations/backendprotocol.js';
import { grpcClient, startGrpcServer, type EchoClient, type ProtocolServer } from '../../../support/protocol-servers.js';

let fx: Fixture;
let certDir: string;
let grpc: ProtocolServer;
let grpcs: ProtocolServer;
let auth: Server;
const its = ported(test, () => fx.ctl);

const TIMEOUTS = { 'proxy-connect-timeout': '2', 'proxy-send-timeout': '2', 'proxy-read-timeout': '2' };

test.before(async () => {
  fx = await startFixture('grpc');
  certDir = mkdtempSync(join(tmpdir(), 'irx-grpc-'));
  const pem = await generateCertificate(certDir, 'grpcbin.internal');
  grpc = await startGrpcServer({ address: '127.0.9.60', name: 'grpc' });
  grpcs = await startGrpcServer({ address: '127.0.9.61', name: 'grpcs', tls: { cert: readFileSync(pem.certPath, 'utf8'), key: readFileSync(pem.keyPath, 'utf8') } });
  // httpbun's /response-headers?authorization=foo: answers 200 with the headers its query names.
  auth = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://auth').searchParams;
    res.writeHead(200, Object.fromEntries(query)).end();
  });
  await new Promise<void>((r) => auth.listen(0, '127.0.9.62', r));
  const authUrl = `http://127.0.9.62:${(auth.address() as AddressInfo).port}/response-headers?authorization=foo`;
  const backend = (name: string, server: ProtocolServer) => [service(fx.ns, name, { port: server.port }), ...slices(fx.ns, name, [server])];
  fx.apply('ingresses.json', [
    ...backend('grpcbin', grpc), ...backend('grpcbin-tls', grpcs),
    fx.single('g48', 'g48.grpc.foo.com', { 'backend-protocol': 'GRPC' }, { svc: 'grpcbin', port: grpc.port }),
    fx.single('g109', 'g109.grpc.foo.com', { 'backend-protocol': 'GRPC', 'auth-url': authUrl, 'auth-response-headers': 'Authorization' }, { svc: 'grpcbin', port: grpc.port }),
    fx.single('g170', 'g170.grpc.foo.com', { 'backend-protocol': 'GRPCS' }, { svc: 'grpcbin-tls', port: grpcs.port }),
    fx.single('g237', 'g237.grpc.foo.com', { 'backend-protocol': 'GRPC', ...TIMEOUTS }, { svc: 'grpcbin', port: grpc.port }),
    fx.single('g280', 'g280.grpc.foo.com', { 'backend-protocol': 'GRPC', ...TIMEOUTS }, { svc: 'grpcbin', port: grpc.port }),
  ]);
  // A gRPC call answered through the last host written says the file is served: its route (not
  // 404) and its backend's endpoints (not 503), which g48, g109 and g237 share.
  await fx.ctl.until('g280.grpc.foo.com', '/echo.Echo/Say', (r) => r.status !== 404 && r.status !== 503, { https: true, what: 'the gRPC hosts served' });
});
test.after(async () => {
  await fx.stop();
  await Promise.all([grpc.close(), grpcs.close(), new Promise((r) => auth.close(r))]);
  rmSync(certDir, { recursive: true, force: true });
});

async function withClient<T>(client: EchoClient, fn: (c: EchoClient) => Promise<T>): Promise<T> {
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

its.http2Only('annotations/grpc.go:48', 'gRPC is HTTP/2', async (p) => {
  const said = await withClient(grpcClient(p.port, 'g48.grpc.foo.com'), (c) => c.say({ text: 'hi' }));
  // grpc-js answers only a call whose content-type is application/grpc (it then drops the header from the metadata).
  assert.equal([said.name, said.host, said.request], ['grpc', 'g48.grpc.foo.com', { text: 'hi' }]);
});

its.http2Only('annotations/grpc.go:109', 'gRPC is HTTP/2', async (p) => {
  const said = await withClient(grpcClient(p.port, 'g109.grpc.foo.com'), (c) => c.say({}, { authorization: 'bar' }));
  assert.is((said.metadata as Record<string, string>).authorization, 'foo', 'the auth response\'s Authorization replaced the client\'s');
});

its.http2Only('annotations/grpc.go:170', 'gRPC is HTTP/2', async (p) => {
  const said = await withClient(grpcClient(p.port, 'g170.grpc.foo.com'), (c) => c.say({ text: 'tls' }));
  assert.equal([said.name, said.request], ['grpcs', { text: 'tls' }]);
});

// The e2e tests make these two calls over cleartext HTTP/2 (h2c) to port 80, which NGINX 1.22
// cannot serve beside HTTP/1.1 (docs/differences.md, "gRPC over cleartext HTTP/2"): here over TLS.
its.http2Only('annotations/grpc.go:237', 'gRPC is HTTP/2', async (p) => {
  const said = await withClient(grpcClient(p.port, 'g237.grpc.foo.com'), (c) => c.say({ delayMs: 500 }));
  assert.equal([said.name, said.host], ['grpc', 'g237.grpc.foo.com']);
  // The difference as documented: a cleartext call fails, and the Ingress is warned about it.
  const cleartext = await withClient(grpcClient(fx.ctl.ports.http, 'g237.grpc.foo.com', { cleartext: true }), (c) => c.say({}))
    .then(() => null, (e: { code: number }) => e);
  assert.is(cleartext?.code, 14, 'a cleartext HTTP/2 call to the HTTP port fails');
  await waitFor(() => fx.ctl.output().split('\n').some((l) => l.includes(GRPC_CLEARTEXT) && l.includes('grpc/g237')),
    { what: 'the grpc-cleartext warning in the controller log' });
});

its.http2Only('annotations/grpc.go:280', 'gRPC is HTTP/2', async (p) => {
  const started = Date.now();
  const err = await withClient(grpcClient(p.port, 'g280.grpc.foo.com'), (c) => c.say({ delayMs: 3000 }))
    .then(() => null, (e: { code: number; details: string }) => e);
  // NGINX gives up after grpc_read_timeout (2 s) and answers 504, which gRPC reads as UNAVAILABLE.
  assert.ok(err, 'the call delayed past grpc_read_timeout fails');
  assert.is(err!.code, 14, err!.details);
  assert.ok(Date.now() - started < 2900, 'the proxy gave up before the server answered');
});

test.run();
