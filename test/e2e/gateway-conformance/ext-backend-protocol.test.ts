// Gateway API conformance: a backendRef to a Service port with appProtocol kubernetes.io/ws
// (HTTPRouteBackendProtocolWebSocket), ported to local mode with real NGINX: plain requests and a
// WebSocket upgrade through the Lua router reach the WebSocket backend. The upgrade exists only in
// HTTP/1.1 (NGINX offers no WebSocket over HTTP/2); the plain request runs over both protocols.
// And appProtocol kubernetes.io/h2c (HTTPRouteBackendProtocolH2C): the backend, a Node HTTP/2
// server without TLS, gets the request over HTTP/2 cleartext (NGINX's grpc_pass) with its method,
// URI, headers and body, and its status comes back.
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket, { WebSocketServer } from 'ws';
import { createServer, type Server } from 'node:http';
import { GATEWAY_V1 as V1, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import { slices, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix } from '../../support/protocols.js';
import { startFlakyServer, type FlakyServer } from '../../support/flaky-server.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let http: Server;
let wss: WebSocketServer;
let h2c: FlakyServer;

test.before(async () => {
  // One server answering plain HTTP (its name) and WebSocket messages (name, message, the upgrade's headers).
  http = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ name: 'ws-backend', path: req.url })); });
  wss = new WebSocketServer({ server: http });
  wss.on('connection', (socket, req) => socket.on('message', (m) => socket.send(JSON.stringify({ name: 'ws-backend', message: String(m), path: req.url, upgrade: req.headers.upgrade }))));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.30', resolve));
  const endpoint = { address: '127.0.0.30', port: (http.address() as AddressInfo).port };
  h2c = await startFlakyServer({ address: '127.0.0.31', name: 'h2c-backend', h2c: true });
  const h2cService = (name: string, appProtocol: string) => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'team-a' }, spec: { ports: [{ name: 'http', port: 8081, targetPort: 'http', appProtocol }] },
  });
  const h2cRoute = (name: string, host: string, backends: string[]) => ({
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
    spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host], rules: [{ backendRefs: backends.map((b) => ({ name: b, port: 8081 })) }] },
  });
  ({ ctl } = await startGatewayLocal([], {
    'ws.json': [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ws', namespace: 'team-a' }, spec: { ports: [{ name: 'http', port: 8080, targetPort: 'http', appProtocol: 'kubernetes.io/ws' }] } },
      ...slices('team-a', 'ws', [endpoint]),
      h2cService('h2c', 'kubernetes.io/h2c'), ...slices('team-a', 'h2c', [h2c]),
      h2cService('h1', 'http'), ...slices('team-a', 'h1', [endpoint]),
      h2cRoute('backend-protocol-h2c', 'h2c.test', ['h2c']),
      h2cRoute('mixed-protocols', 'h2c-mixed.test', ['h2c', 'h1']),
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
  await h2c?.close();
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

over.both('HTTPRouteBackendProtocolH2C › a kubernetes.io/h2c backend gets the request over HTTP/2 cleartext: method, URI, headers, body; its status comes back', async (p) => {
  const r = await p.until('h2c.test', '/', (x) => x.backend === 'h2c-backend', { what: 'h2c.test over this protocol' });
  assert.is(r.status, 200);
  assert.is(r.json?.protocol, '2.0');
  const get = await p.request('h2c.test', '/a%20b/c?x=1&y=%2F', { headers: { 'x-test': 'one' } });
  assert.equal([get.status, get.json?.method, get.json?.path], [200, 'GET', '/a%20b/c?x=1&y=%2F']);
  const headers = get.json?.headers as Record<string, string>;
  assert.is(headers['x-test'], 'one');
  assert.is(headers[':authority'] ?? headers.host, 'h2c.test', JSON.stringify(headers));
  assert.is(headers['x-forwarded-for'], '127.0.0.1');
  assert.not.ok('connection' in headers || 'upgrade' in headers, 'no HTTP/1.1 hop-by-hop header over HTTP/2');
  const body = 'a body\r\nover two lines'.repeat(1000);
  const post = await p.request('h2c.test', '/post', { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
  assert.equal([post.status, post.json?.method, post.json?.body], [200, 'POST', body]);
  const failing = await p.request('h2c.test', `/fail?uuid=${p.tag}-fail&responseCode=503&succeedAfter=1`);
  assert.equal([failing.status, failing.body], [503, `failing try 1 of ${p.tag}-fail\n`]);
});

over.both('HTTPRouteBackendProtocolH2C › a rule mixing h2c and HTTP/1.1 Service ports is named and set aside', async (p) => {
  await ctl.logged(/HTTPRoute team-a\/mixed-protocols.*spec\.rules\[0\]\.backendRefs.*mix Service ports of appProtocol kubernetes\.io\/h2c.*rule set aside/, 'the mixed rule named');
  assert.is((await p.request('h2c-mixed.test', '/')).status, 404);
});

test.run();
