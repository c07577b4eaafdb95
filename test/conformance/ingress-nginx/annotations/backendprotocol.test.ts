// ingress-nginx test/e2e/annotations/backendprotocol.go, ported. The e2e tests read the
// proxy_pass/grpc_pass/fastcgi_pass line; here each protocol is shown by an upstream that speaks
// only it answering (an HTTPS echo, a gRPC server in cleartext and over TLS, a FastCGI responder),
// and, where the protocol follows the client's scheme (AUTO_HTTP), by the one that does not
// speak it failing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { service, slices } from '../../../support/local-harness.js';
import { generateCertificate } from '../../../support/lua-nginx.js';
import { grpcClient, startFastCgiServer, startGrpcServer, type ProtocolServer } from '../../../support/protocol-servers.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let certDir: string;
const its = ported(test, () => fx.ctl);
const upstreams: Array<EchoServer | ProtocolServer> = [];

test.before(async () => {
  fx = await startFixture('backendprotocol');
  certDir = mkdtempSync(join(tmpdir(), 'irx-backendprotocol-'));
  const pem = await generateCertificate(certDir, 'backend.internal');
  const tls = { cert: readFileSync(pem.certPath, 'utf8'), key: readFileSync(pem.keyPath, 'utf8') };
  // Each on an address of its own: NGINX keeps upstream connections by address.
  const https = await startEchoServer({ address: '127.0.9.40', name: 'https', tls });
  const autoTls = await startEchoServer({ address: '127.0.9.41', name: 'auto-tls', tls });
  const autoPlain = await startEchoServer({ address: '127.0.9.42', name: 'auto-plain' });
  const grpc = await startGrpcServer({ address: '127.0.9.43', name: 'grpc' });
  const grpcs = await startGrpcServer({ address: '127.0.9.44', name: 'grpcs', tls });
  const fcgi = await startFastCgiServer({ address: '127.0.9.45', name: 'fcgi' });
  upstreams.push(https, autoTls, autoPlain, grpc, grpcs, fcgi);
  const backend = (name: string, host: string, protocol: string, endpoint: { address: string; port: number }) => [
    service(fx.ns, name), ...slices(fx.ns, name, [endpoint]), fx.single(name, host, { 'backend-protocol': protocol }, { svc: name }),
  ];
  fx.apply('ingresses.json', [
    ...backend('https', 'https.backendprotocol.foo.com', 'HTTPS', https),
    ...backend('lower', 'lower.backendprotocol.foo.com', 'https', https),
    ...backend('auto-tls', 'auto-tls.backendprotocol.foo.com', 'AUTO_HTTP', autoTls),
    ...backend('auto-plain', 'auto-plain.backendprotocol.foo.com', 'AUTO_HTTP', autoPlain),
    ...backend('grpc', 'grpc.backendprotocol.foo.com', 'GRPC', grpc),
    ...backend('grpcs', 'grpcs.backendprotocol.foo.com', 'GRPCS', grpcs),
    ...backend('fcgi', 'fcgi.backendprotocol.foo.com', 'FCGI', fcgi),
  ]);
  await Promise.all(['https', 'lower', 'fcgi'].map((h) =>
    fx.ctl.until(`${h}.backendprotocol.foo.com`, '/', (r) => r.status === 200, { what: `${h} served` })));
});
test.after(async () => {
  await fx.stop();
  await Promise.all(upstreams.map((u) => u.close()));
  rmSync(certDir, { recursive: true, force: true });
});

async function answersOverHttps(p: ProtocolClient, host: string): Promise<void> {
  const r = await p.request(host, '/x?y=1');
  assert.is(r.status, 200);
  assert.is(r.backend, 'https', 'the TLS-only upstream answered');
  assert.is(r.json?.path, '/x?y=1');
}

its.both('annotations/backendprotocol.go:36', async (p) => {
  await answersOverHttps(p, 'https.backendprotocol.foo.com');
});

its.both('annotations/backendprotocol.go:51', async (p) => {
  await answersOverHttps(p, 'lower.backendprotocol.foo.com');
});

its.both('annotations/backendprotocol.go:66', async (p) => {
  // $scheme: a plain-HTTP request goes upstream in plain HTTP, an HTTPS one over TLS (HTTP/2 is
  // always HTTPS here).
  for (const https of p.protocol === 'HTTP/2' ? [true] : [false, true]) {
    const [plain, tls] = await Promise.all(['auto-plain', 'auto-tls'].map((h) => p.request(`${h}.backendprotocol.foo.com`, '/', { https })));
    assert.equal([plain!.status, plain!.backend, tls!.status, tls!.backend],
      https ? [502, undefined, 200, 'auto-tls'] : [200, 'auto-plain', 502, undefined], `client over ${https ? 'HTTPS' : 'HTTP'}`);
  }
});

async function grpcCall(p: ProtocolClient, host: string, name: string): Promise<void> {
  const client = grpcClient(p.port, host);
  try {
    const said = await client.say({ text: 'hi' });
    assert.equal([said.name, said.path, said.request], [name, '/echo.Echo/Say', { text: 'hi' }]);
  } finally {
    client.close();
  }
}

its.http2Only('annotations/backendprotocol.go:81', 'gRPC is HTTP/2', async (p) => {
  await grpcCall(p, 'grpc.backendprotocol.foo.com', 'grpc');
});

its.http2Only('annotations/backendprotocol.go:96', 'gRPC is HTTP/2', async (p) => {
  await grpcCall(p, 'grpcs.backendprotocol.foo.com', 'grpcs');
});

its.both('annotations/backendprotocol.go:111', async (p) => {
  const r = await p.request('fcgi.backendprotocol.foo.com', '/script.php?q=1');
  assert.is(r.status, 200);
  assert.is(r.json?.name, 'fcgi');
  assert.is((r.json?.params as Record<string, string>).REQUEST_URI, '/script.php?q=1');
});

test.run();
