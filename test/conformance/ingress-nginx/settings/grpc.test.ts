// ingress-nginx test/e2e/settings/grpc.go, ported with a @grpc/grpc-js server (echo.Echo,
// test/support/protocol-servers.ts) in place of grpcbin, reached through a Service with
// endpoints (see annotations/grpc.test.ts): grpc-buffer-size-kb 8 is the running
// grpc_buffer_size (the buffer has no effect a client sees), and a unary call through a
// backend-protocol GRPC Ingress answers with the content type and the :authority it was sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { service, slices } from '../../../support/local-harness.js';
import { grpcClient, startGrpcServer, type ProtocolServer } from '../../../support/protocol-servers.js';

let fx: Fixture;
let grpc: ProtocolServer;
const its = ported(test, () => fx.ctl);
const HOST = 'echo';

test.before(async () => {
  fx = await startFixture('grpc-buffersize', { configmap: { 'grpc-buffer-size-kb': '8' } });
  grpc = await startGrpcServer({ address: '127.0.9.63', name: 'grpc' });
  fx.apply('grpc.json', [
    service(fx.ns, 'grpcbin-test', { port: grpc.port }), ...slices(fx.ns, 'grpcbin-test', [grpc]),
    fx.single('grpc', HOST, { 'backend-protocol': 'GRPC' }, { svc: 'grpcbin-test', port: grpc.port }),
  ]);
  await fx.ctl.until(HOST, '/echo.Echo/Say', (r) => r.status !== 404, { https: true, what: 'the gRPC host served' });
});
test.after(async () => { await fx.stop(); await grpc.close(); });

its.http2Only('settings/grpc.go:42', 'gRPC runs over HTTP/2', async (p) => {
  assert.match((await fx.ctl.control('/nginx.conf')).body, 'grpc_buffer_size 8k;');
  const client = grpcClient(p.port, HOST);
  try {
    // grpc-js answers only a call whose content-type is application/grpc (it then drops the header from the metadata).
    const said = await client.say({ text: 'hi' }) as { name: string; host: string; request: unknown };
    assert.equal([said.name, said.host, said.request], ['grpc', HOST, { text: 'hi' }]);
  } finally {
    client.close();
  }
});

test.run();
