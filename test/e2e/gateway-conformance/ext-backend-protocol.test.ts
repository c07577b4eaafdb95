// Gateway API conformance: a backendRef to a Service port with appProtocol kubernetes.io/ws
// (HTTPRouteBackendProtocolWebSocket), ported to local mode with real NGINX: plain requests and a
// WebSocket upgrade through the Lua router reach the WebSocket backend. The upgrade exists only in
// HTTP/1.1 (NGINX offers no WebSocket over HTTP/2); the plain request runs over both protocols.
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket, { WebSocketServer } from 'ws';
import { createServer, type Server } from 'node:http';
import { GATEWAY_V1 as V1, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import { slices, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix } from '../../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let http: Server;
let wss: WebSocketServer;

test.before(async () => {
  // One server answering plain HTTP (its name) and WebSocket messages (name, message, the upgrade's headers).
  http = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ name: 'ws-backend', path: req.url })); });
  wss = new WebSocketServer({ server: http });
  wss.on('connection', (socket, req) => socket.on('message', (m) => socket.send(JSON.stringify({ name: 'ws-backend', message: String(m), path: req.url, upgrade: req.headers.upgrade }))));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.30', resolve));
  const endpoint = { address: '127.0.0.30', port: (http.address() as AddressInfo).port };
  ({ ctl } = await startGatewayLocal([], {
    'ws.json': [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ws', namespace: 'team-a' }, spec: { ports: [{ name: 'http', port: 8080, targetPort: 'http', appProtocol: 'kubernetes.io/ws' }] } },
      ...slices('team-a', 'ws', [endpoint]),
      {
        apiVersion: V1, kind: 'HTTPRoute', metadata: { name: 'backend-protocol-ws', namespace: 'team-a' },
        spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['ws.test'], rules: [{ backendRefs: [{ name: 'ws', port: 8080 }] }] },
      },
    ],
  }));
  await ctl.until('ws.test', '/', (r) => r.backend === 'ws-backend', { what: 'ws.test served' });
});

test.after(async () => {
  await stopGatewayLocal(ctl, {});
  wss?.close();
  http?.close();
});

over.both('HTTPRouteBackendProtocolWebSocket › a plain request reaches the kubernetes.io/ws backend', async (p) => {
  const r = await p.until('ws.test', '/plain', (x) => x.status === 200, { what: 'ws.test over this protocol' });
  assert.is(r.backend, 'ws-backend');
  assert.is(r.json?.path, '/plain');
});

over.http1Only('HTTPRouteBackendProtocolWebSocket › a WebSocket upgrade through the route: frames go both ways', 'the WebSocket upgrade is HTTP/1.1 (NGINX offers no WebSocket over HTTP/2)', async () => {
  const answer = await new Promise<{ name: string; message: string; path: string; upgrade: string }>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${ctl.ports.http}/socket`, { headers: { Host: 'ws.test' }, handshakeTimeout: 10_000 });
    socket.on('open', () => socket.send('hello'));
    socket.on('message', (m) => { resolve(JSON.parse(String(m))); socket.close(); });
    socket.on('error', reject);
  });
  assert.equal(answer, { name: 'ws-backend', message: 'hello', path: '/socket', upgrade: 'websocket' });
});

test.run();
