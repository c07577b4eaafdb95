// What real clients do that simpler tests never did, through `ingress-rx local` and real NGINX:
// request bodies through auth-url (the auth subrequest neither eats nor holds up the body),
// `Expect: 100-continue`, chunked uploads beyond client_body_buffer_size (buffered and streamed),
// WebSocket upgrades through auth-url and a canary, and large and many request headers within and
// beyond large-client-header-buffers. Each over the protocols it exists in; the static twin runs
// it with every host a server block.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix, StreamReset, type ProtocolClient } from '../support/protocols.js';

const NS = 'clients';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;
let auth: Server;
const authCalls: Array<{ url: string; headers: IncomingHttpHeaders; bodyBytes: number }> = [];
const sockets: Record<string, WebSocketServer> = {};

const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string>, svc = 'main') =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path: '/', service: svc }] });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const upstream = (r: Reply) => r.json as { method: string; bodyBytes: number; bodySha256: string; headers: Record<string, string> };

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.6.10', name: 'main' });
  // The auth service: 200 without a body for X-Allow: yes, else 401; it says how much body it got.
  auth = createServer((req, res) => {
    let bodyBytes = 0;
    req.on('data', (d: Buffer) => { bodyBytes += d.length; });
    req.on('end', () => {
      authCalls.push({ url: req.url ?? '', headers: req.headers, bodyBytes });
      const ok = req.headers['x-allow'] === 'yes';
      res.writeHead(ok ? 200 : 401, ok ? { 'x-auth-user': 'alice', 'content-length': 0 } : { 'www-authenticate': 'Bearer realm="x"', 'content-length': 0 });
      res.end();
    });
  });
  await new Promise<void>((resolve) => auth.listen(0, '127.0.0.1', resolve));
  const authUrl = (path: string) => `http://127.0.0.1:${(auth.address() as AddressInfo).port}${path}`;
  // WebSocket backends: each answers a message with its name, the message and the upgrade request's headers.
  for (const [i, name] of ['ws-main', 'ws-canary'].entries()) {
    const wss = new WebSocketServer({ host: `127.0.6.${20 + i}`, port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    wss.on('connection', (socket, req) => socket.on('message', (m) => socket.send(JSON.stringify({ name, message: String(m), headers: req.headers }))));
    sockets[name] = wss;
  }
  const wsEndpoint = (name: string) => ({ address: `127.0.6.${name === 'ws-main' ? 20 : 21}`, port: (sockets[name]!.address() as AddressInfo).port });
  ctl = await startLocal({
    files: {
      'services.json': [
        service(NS, 'main'), ...slices(NS, 'main', [echo]),
        service(NS, 'ws-main'), ...slices(NS, 'ws-main', [wsEndpoint('ws-main')]),
        service(NS, 'ws-canary'), ...slices(NS, 'ws-canary', [wsEndpoint('ws-canary')]),
      ],
      'ingresses.json': [
        on('plain', 'plain.test', {}),
        on('auth', 'auth.test', { 'auth-url': authUrl('/check'), 'auth-response-headers': 'X-Auth-User', 'proxy-body-size': '8m' }),
        on('auth-ka', 'auth-ka.test', { 'auth-url': authUrl('/check-ka'), 'auth-keepalive': '4', 'proxy-body-size': '8m' }),
        on('streamed', 'streamed.test', { 'proxy-request-buffering': 'off', 'proxy-body-size': '8m', 'auth-url': authUrl('/check-streamed') }),
        on('ws', 'ws.test', {}, 'ws-main'),
        on('ws-canary', 'ws.test', { canary: 'true', 'canary-by-header': 'X-Canary' }, 'ws-canary'),
        on('ws-auth', 'ws-auth.test', { 'auth-url': authUrl('/check-ws') }, 'ws-main'),
      ],
    },
  });
  await ctl.until('plain.test', '/', (r) => r.status === 200, { what: 'plain.test served' });
  await ctl.until('auth.test', '/', (r) => r.status === 401, { what: 'auth.test served' });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
  auth?.closeAllConnections();
  auth?.close();
  await Promise.all(Object.values(sockets).map((s) => new Promise((resolve) => s.close(resolve))));
});

// ---- request bodies

over.both('request bodies through auth-url: the auth service gets none, the upstream gets the whole body, nothing waits on it', async (p) => {
  const body = randomBytes(3 * 1024 * 1024).toString('base64');
  for (const host of ['auth.test', 'auth-ka.test']) {
    const before = authCalls.length;
    const t0 = Date.now();
    const r = await p.request(host, '/upload', { method: 'POST', body, headers: { 'X-Allow': 'yes', 'Content-Type': 'application/octet-stream' } });
    assert.is(r.status, 200, `${host}: ${r.body.slice(0, 200)}`);
    assert.equal([upstream(r).method, upstream(r).bodyBytes, upstream(r).bodySha256], ['POST', body.length, sha256(Buffer.from(body))], host);
    assert.ok(Date.now() - t0 < 8000, `${host}: ${Date.now() - t0} ms`);
    const call = authCalls.slice(before);
    assert.is(call.length, 1, host);
    assert.equal([call[0]!.bodyBytes, call[0]!.headers['content-length'] ?? '0'], [0, '0'], `${host}: the auth subrequest carries no body`);
    // Refused: 401 without the body reaching anyone.
    const refused = await p.request(host, '/upload', { method: 'POST', body });
    assert.is(refused.status, 401, host);
  }
  assert.is(upstream(await p.request('auth.test', '/after', { headers: { 'X-Allow': 'yes' } })).method, 'GET', 'the next request on a fresh connection is served');
});

over.both('chunked uploads (HTTP/2: a body without a length) beyond client_body_buffer_size reach the upstream whole, buffered and streamed', async (p) => {
  // plain.test keeps the ConfigMap's limits (1m, an 8k buffer): the body goes through a temp file.
  const cases: Array<[string, number, Record<string, string>]> = [
    ['plain.test', 700 * 1024, {}],
    ['streamed.test', 3 * 1024 * 1024, { 'X-Allow': 'yes' }],
  ];
  for (const [host, size, extra] of cases) {
    const body = randomBytes(size * 3 / 4).toString('base64');
    // HTTP/2 has no chunked coding (the header is dropped): its DATA frames carry the body without a length.
    const r = await p.request(host, '/chunked', { method: 'PUT', body, headers: { 'Transfer-Encoding': 'chunked', ...extra } });
    assert.is(r.status, 200, `${host}: ${r.body.slice(0, 200)}`);
    assert.equal([upstream(r).bodyBytes, upstream(r).bodySha256], [body.length, sha256(Buffer.from(body))], host);
  }
  // Beyond proxy-body-size, whatever the framing: 413.
  const tooBig = randomBytes(1536 * 1024).toString('base64');
  assert.is((await p.request('plain.test', '/chunked', { method: 'PUT', body: tooBig, headers: { 'Transfer-Encoding': 'chunked' } })).status, 413);
});

/** A POST that waits for NGINX's 100 Continue before sending its body, as curl does for large bodies. */
function expectContinue(host: string, body: string, headers: Record<string, string> = {}): Promise<{ continued: boolean; status: number; json: Record<string, unknown> | null }> {
  return new Promise((resolve, reject) => {
    let continued = false;
    const req = request({
      host: '127.0.0.1', port: ctl.ports.http, path: '/expect', method: 'POST', agent: false, timeout: 10_000,
      headers: { Host: host, Expect: '100-continue', 'Content-Length': String(Buffer.byteLength(body)), 'Content-Type': 'text/plain', ...headers },
    });
    req.on('continue', () => { continued = true; req.end(body); });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => {
        req.destroy();
        let json: Record<string, unknown> | null = null;
        try { json = JSON.parse(text) as Record<string, unknown>; } catch { /* an NGINX page */ }
        resolve({ continued, status: res.statusCode ?? 0, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out waiting for an answer')));
    req.on('error', reject);
    req.flushHeaders();
  });
}

over.http1Only('Expect: 100-continue: the body is sent after 100 Continue; a request auth-url or the size limit refuses is answered before it', 'Expect: 100-continue belongs to HTTP/1.1', async (p) => {
  const body = 'e'.repeat(200_000);
  for (const [host, headers] of [['plain.test', {}], ['auth.test', { 'X-Allow': 'yes' }]] as const) {
    const r = await expectContinue(host, body, headers);
    assert.equal([r.continued, r.status, r.json?.bodyBytes], [true, 200, body.length], host);
  }
  const refused = await expectContinue('auth.test', body);
  assert.equal([refused.continued, refused.status], [false, 401], 'auth-url refuses before the body is asked for');
  const tooBig = await expectContinue('plain.test', 'x'.repeat(2 * 1024 * 1024));
  assert.equal([tooBig.continued, tooBig.status], [false, 413], 'a Content-Length above proxy-body-size is refused before the body');
  assert.is((await p.request('plain.test', '/')).status, 200);
});

// ---- WebSocket

/** Opens a WebSocket to `host` through NGINX's HTTP port, sends `message` and resolves with the answer, or with the HTTP status that refused the upgrade. */
function webSocket(host: string, message: string, headers: Record<string, string> = {}): Promise<{ status: number; answer?: { name: string; message: string; headers: Record<string, string> } }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${ctl.ports.http}/socket`, { headers: { Host: host, ...headers }, handshakeTimeout: 10_000 });
    socket.on('unexpected-response', (_req, res) => { res.resume(); resolve({ status: res.statusCode ?? 0 }); socket.terminate(); });
    socket.on('open', () => socket.send(message));
    socket.on('message', (m) => { resolve({ status: 101, answer: JSON.parse(String(m)) }); socket.close(); });
    socket.on('error', (err) => (err.message.startsWith('Unexpected server response') ? undefined : reject(err)));
  });
}

over.http1Only('WebSocket upgrades through a canary and through auth-url: the frames reach the chosen backend; a refused upgrade gets the auth answer', 'the WebSocket upgrade is HTTP/1.1 (NGINX offers no WebSocket over HTTP/2)', async (p) => {
  const main = await webSocket('ws.test', 'hello');
  assert.equal([main.status, main.answer?.name, main.answer?.message], [101, 'ws-main', 'hello']);
  assert.is(main.answer?.headers.upgrade, 'websocket');
  const canary = await webSocket('ws.test', 'to the canary', { 'X-Canary': 'always' });
  assert.equal([canary.status, canary.answer?.name, canary.answer?.message], [101, 'ws-canary', 'to the canary']);
  const before = authCalls.filter((c) => c.url === '/check-ws').length;
  const allowed = await webSocket('ws-auth.test', 'authorised', { 'X-Allow': 'yes' });
  assert.equal([allowed.status, allowed.answer?.name, allowed.answer?.message], [101, 'ws-main', 'authorised']);
  const refused = await webSocket('ws-auth.test', 'never sent');
  assert.is(refused.status, 401);
  assert.is(authCalls.filter((c) => c.url === '/check-ws').length, before + 2, 'each upgrade was checked once');
  assert.is((await p.request('ws.test', '/')).status, 426, 'a plain request to the WebSocket backend gets its own answer');
});

// ---- headers

/** A refusal as each protocol makes it: HTTP/1.1 answers 400, HTTP/2 resets the stream (ENHANCE_YOUR_CALM, 11). */
async function refusal(p: ProtocolClient, headers: Record<string, string>): Promise<number | string> {
  return p.request('plain.test', '/', { headers }).then((r) => r.status, (e: unknown) => {
    if (e instanceof StreamReset) return `reset ${e.code}`;
    throw e;
  });
}

over.both('large and many request headers within large-client-header-buffers (4 8k) reach the upstream; beyond them they are refused as NGINX refuses them', async (p) => {
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`X-Many-${i}`, 'm'.repeat(90)]));
  const cookie = Array.from({ length: 200 }, (_, i) => `c${i}=${'v'.repeat(10)}`).join('; ');
  const r = await p.request('plain.test', '/', { headers: { 'X-Big': 'b'.repeat(7000), ...many, Cookie: cookie } });
  assert.is(r.status, 200);
  const seen = upstream(r).headers;
  assert.is(seen['x-big']?.length, 7000);
  assert.is(seen['x-many-99'], 'm'.repeat(90));
  assert.is(seen.cookie?.split('; ').length, 200, 'the cookie arrives whole (HTTP/2 crumbs joined)');
  // HTTP/2 counts a header as HPACK sent it, Huffman-coded (a letter in 5 to 7 bits): sizes well
  // beyond the limits are refused by both protocols, whatever the coding.
  const refused = p.protocol === 'HTTP/1.1' ? 400 : 'reset 11';
  assert.is(await refusal(p, { 'X-Big': 'b'.repeat(12_000) }), refused, 'one header well above 8k');
  assert.is(await refusal(p, Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`X-Large-${i}`, 'l'.repeat(7000)]))), refused, 'headers well above 4 × 8k together');
  assert.is((await p.request('plain.test', '/')).status, 200, 'the next request is served');
});

test.run();
