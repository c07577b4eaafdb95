// The validating webhook over real HTTPS: AdmissionReviews shaped as the API server sends them
// (test/fixtures/admission, written from the Kubernetes API reference), malformed and hostile
// requests, bounded bodies, slow clients, concurrent reviews, certificate rotation, the
// admission metrics — and no process is ever spawned while reviewing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { Registry } from 'prom-client';
import { silentLogger } from '../../../src/log.js';
import { createReviewer } from '../../../src/admission/review.js';
import { createAdmissionMetrics } from '../../../src/admission/metrics.js';
import { parseListenAddress, startWebhookServer, type WebhookServer } from '../../../src/admission/server.js';
import { ingressOf, readAdmissionReview } from '../../../src/admission/admission-review.js';
import type { Ingress, IngressClass } from '../../../src/store/kube-types.js';
import { waitFor } from '../../support/wait.js';
import { ingress, service, slice, testStore } from '../../support/model-objects.js';
import { postToWebhook, type WebhookReply } from '../../support/admission-review.js';

// ---- a spy on every way to start a process, installed before anything is reviewed
const require = createRequire(import.meta.url);
const childProcess = require('node:child_process') as Record<string, unknown>;
const spawned: string[] = [];
for (const fn of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  const original = childProcess[fn] as (...a: unknown[]) => unknown;
  childProcess[fn] = (...args: unknown[]) => {
    spawned.push(`${fn} ${String(args[0])}`);
    return original(...args);
  };
}
syncBuiltinESMExports();

const fixtures = new URL('../../fixtures/admission/', import.meta.url).pathname;
const certs = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const review = (name: string) => JSON.parse(readFileSync(join(fixtures, name), 'utf8')) as { request: Record<string, any> };
const CA = readFileSync(join(certs, 'default.crt'));
const SERVERNAME = 'ingress.local';

const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-webhook-'));
const certFile = join(dir, 'tls.crt');
const keyFile = join(dir, 'tls.key');
copyFileSync(join(certs, 'default.crt'), certFile);
copyFileSync(join(certs, 'default.key'), keyFile);

const store = testStore({ watchIngressWithoutClass: false });
store.put('IngressClass', { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } as IngressClass);
store.put('Service', service('web', 'apps'));
store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1'], 'apps'));
const owner = ingress('owner', 'owned.example.com', [['/', 'Prefix', 'web', 80]], { ns: 'apps', ts: '2026-01-01T00:00:00Z' });
owner.spec.ingressClassName = 'nginx';
store.put('Ingress', owner);

let ready = true;
const registry = new Registry();
const MAX_BODY = 512 * 1024;
let webhook: WebhookServer;

test.before(async () => {
  webhook = await startWebhookServer({
    address: '127.0.0.1:0', certFile, keyFile, logger: silentLogger(),
    reviewer: createReviewer({ store, annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }),
    metrics: createAdmissionMetrics(registry),
    ready: () => ready,
    maxBodyBytes: MAX_BODY, maxInFlightBytes: 2 * MAX_BODY,
    handshakeTimeoutMs: 400, headersTimeoutMs: 400, requestTimeoutMs: 900, timeoutCheckIntervalMs: 50,
    certCheckIntervalMs: 50,
  });
});

test.after(async () => {
  await webhook.close();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: string | Buffer, headers: Record<string, string> = {}, method = 'POST'): Promise<WebhookReply> =>
  postToWebhook(webhook.port, body, { ca: CA, headers, method });
const send = (r: unknown) => post(JSON.stringify(r));

function withObject(base: string, edit: (o: Ingress, r: Record<string, any>) => void): unknown {
  const r = review(base);
  edit(r.request.object as Ingress, r.request);
  return r;
}

async function rawTLS(): Promise<TLSSocket> {
  const sock = tlsConnect({ host: '127.0.0.1', port: webhook.port, ca: CA, servername: SERVERNAME });
  await new Promise<void>((resolve, reject) => { sock.once('secureConnect', () => resolve()); sock.once('error', reject); });
  return sock;
}

function received(sock: { on(e: 'data', f: (b: Buffer) => void): unknown; once(e: 'close', f: () => void): unknown }): { text: () => string; closed: () => boolean } {
  let text = '';
  let closed = false;
  sock.on('data', (b: Buffer) => { text += b.toString('utf8'); });
  sock.once('close', () => { closed = true; });
  return { text: () => text, closed: () => closed };
}

test('a CREATE as the API server sends it: allowed, uid echoed, admission.k8s.io/v1', async () => {
  const r = await send(review('create-ingress.json'));
  assert.is(r.status, 200);
  assert.equal(r.json, {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    response: { uid: '4b2f6c1e-7a0d-4a4e-9c61-0d5d2b7f1a10', allowed: true },
  });
});

test('an invalid Ingress is denied with a 400 status naming Ingress, field and reason; warnings ride along', async () => {
  const r = await send(withObject('create-ingress.json', (o) => {
    o.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-body-size'] = 'huge';
    o.metadata.annotations!['nginx.ingress.kubernetes.io/no-such-annotation'] = 'http://mirror/';
  }));
  const res = r.json.response;
  assert.is(res.allowed, false);
  assert.is(res.status.code, 400);
  assert.is(res.status.status, 'Failure');
  assert.is(res.status.message, 'ingress-rx refuses Ingress apps/shop:\n- metadata.annotations["nginx.ingress.kubernetes.io/proxy-body-size"]: "huge" is not a size (digits with an optional k, m or g, at most 2^63-1 bytes)');
  assert.equal(res.warnings, ['metadata.annotations["nginx.ingress.kubernetes.io/no-such-annotation"]: annotation is not supported by ingress-rx; ignored']);
});

test('an UPDATE is judged on the new object; DELETE and other kinds are not Ingress reviews', async () => {
  assert.is((await send(review('update-ingress.json'))).json.response.allowed, true);
  const stolen = await send(withObject('create-ingress.json', (o) => { o.spec.rules![0]!.host = 'owned.example.com'; }));
  assert.is(stolen.json.response.allowed, false);
  assert.match(stolen.json.response.status.message, /already defined by the older Ingress apps\/owner/);
  const del = await send(review('delete-ingress.json'));
  assert.equal(del.json.response, { uid: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e', allowed: true });
  const cm = await send(review('create-configmap.json'));
  assert.is(cm.json.response.allowed, false);
  assert.match(cm.json.response.status.message, /networking\.k8s\.io\/v1 Ingresses and gateway\.networking\.k8s\.io\/v1 HTTPRoutes and Gateways, not core\/v1 ConfigMap/);
  const deleting = await send(withObject('create-ingress.json', (o) => {
    o.metadata.deletionTimestamp = '2026-05-01T11:00:00Z';
    o.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-body-size'] = 'huge';
  }));
  assert.is(deleting.json.response.allowed, true, 'an object being deleted is not judged (as ingress-nginx)');
});

test('malformed reviews: not JSON, wrong version, no uid, a bad operation are 400s; a mis-shaped object is denied', async () => {
  for (const [body, why] of [
    ['{"kind":', /not JSON/],
    ['[]', /not a JSON object/],
    [JSON.stringify({ ...review('create-ingress.json'), apiVersion: 'admission.k8s.io/v1beta1' }), /admission\.k8s\.io\/v1/],
    [JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), /request is missing/],
    [JSON.stringify(withObject('create-ingress.json', (_o, r) => { delete r.uid; })), /uid/],
    [JSON.stringify(withObject('create-ingress.json', (_o, r) => { r.operation = 'PATCH'; })), /operation/],
  ] as const) {
    const r = await post(body);
    assert.is(r.status, 400, body.slice(0, 60));
    assert.match(r.text, why);
  }
  for (const [edit, why] of [
    [(o: any) => { o.spec.rules = 'everything'; }, /request\.object\.spec\.rules must be a list/],
    [(o: any) => { o.spec.rules[0].http.paths[0].backend.service.port.number = '80'; }, /port\.number must be an integer/],
    [(o: any) => { o.metadata.annotations.x = 5; }, /annotations\["x"\] must be a string/],
    [(o: any) => { o.metadata.annotations.big = 'x'.repeat(300 * 1024); }, /more than the API allows/],
    [(o: any) => { delete o.metadata.name; }, /./],
  ] as const) {
    const r = await send(withObject('create-ingress.json', (o, req) => { edit(o); delete req.name; }));
    assert.is(r.status, 200);
    assert.is(r.json.response.allowed, false);
    assert.match(r.json.response.status.message, why);
  }
});

test('only POSTs of JSON', async () => {
  assert.is((await post('', {}, 'GET')).status, 405);
  assert.is((await post('{}', { 'content-type': 'text/plain' })).status, 415);
});

test('huge bodies: a declared length over the limit and a streamed one are both answered 413 without being buffered', async () => {
  const sock = await rawTLS();
  const got = received(sock);
  sock.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${20 * 1024 * 1024}\r\n\r\n`);
  await waitFor(() => got.closed(), { what: 'the connection to close' });
  assert.match(got.text(), /^HTTP\/1\.1 413 /);

  const sock2 = await rawTLS();
  const got2 = received(sock2);
  sock2.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
  const chunk = 'x'.repeat(64 * 1024);
  for (let i = 0; i < 10; i++) sock2.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  await waitFor(() => got2.text().length > 0, { what: 'an answer' });
  assert.match(got2.text(), /^HTTP\/1\.1 413 /);
  sock2.destroy();
  await waitFor(() => webhook.inFlightBytes() === 0, { what: 'the buffered bytes released' });
  assert.is((await send(review('create-ingress.json'))).json.response.allowed, true, 'still serving');
});

test('bodies in flight together are bounded: past the budget a request is answered 503', async () => {
  const held: TLSSocket[] = [];
  const size = 400 * 1024;
  const part = 350 * 1024; // three parts are more than the budget of 1 MB
  const body = JSON.stringify(review('create-ingress.json')).padEnd(size, ' ');
  for (let i = 0; i < 3; i++) {
    const s = await rawTLS();
    held.push(s);
    s.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
    s.write(body.slice(0, part));
  }
  await waitFor(() => webhook.inFlightBytes() >= 2 * part, { what: 'bodies buffered' });
  const answers = held.map(received);
  await waitFor(() => answers.some((a) => a.text().startsWith('HTTP/1.1 503')), { what: 'a 503' });
  // The others finish and are reviewed.
  for (const s of held) s.write(body.slice(part));
  await waitFor(() => answers.filter((a) => a.text().includes('"allowed":true')).length === 2, { what: 'two reviews answered' });
  for (const s of held) s.destroy();
  await waitFor(() => webhook.inFlightBytes() === 0, { what: 'released' });
});

test('slow clients are cut off: a silent TLS handshake, headers that never end, a body that never ends', async () => {
  const tcp = netConnect(webhook.port, '127.0.0.1');
  let tcpClosed = false;
  tcp.on('error', () => {});
  tcp.once('close', () => { tcpClosed = true; });
  await waitFor(() => tcpClosed, { timeoutMs: 5000, what: 'the handshake timeout' });

  const headers = await rawTLS();
  const h = received(headers);
  headers.write('POST / HTTP/1.1\r\nHost: x\r\n');
  await waitFor(() => h.closed(), { timeoutMs: 5000, what: 'the headers timeout' });
  assert.match(h.text(), /^HTTP\/1\.1 408 /);

  const body = await rawTLS();
  const b = received(body);
  body.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":');
  const trickle = setInterval(() => { if (!body.destroyed) body.write(' '); }, 100);
  try {
    await waitFor(() => b.closed(), { timeoutMs: 5000, what: 'the request timeout' });
  } finally {
    clearInterval(trickle);
  }
  assert.match(b.text(), /^HTTP\/1\.1 408 /);
  assert.is(webhook.inFlightBytes(), 0);
});

test('50 concurrent reviews each get their own answer', async () => {
  const reviews = Array.from({ length: 50 }, (_, i) => withObject('create-ingress.json', (o, r) => {
    r.uid = `uid-${i}`;
    r.name = o.metadata.name = `shop-${i}`;
    o.spec.rules![0]!.host = `shop-${i}.example.com`;
    if (i % 2 === 1) o.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-read-timeout'] = `never-${i}`;
  }));
  const replies = await Promise.all(reviews.map((r) => send(r)));
  replies.forEach((r, i) => {
    assert.is(r.json.response.uid, `uid-${i}`);
    assert.is(r.json.response.allowed, i % 2 === 0);
    if (i % 2 === 1) assert.match(r.json.response.status.message, new RegExp(`Ingress apps/shop-${i}:[\\s\\S]*"never-${i}"`));
  });
});

test('until the store holds the cluster, reviews are refused with 503 (retry), not judged on nothing', async () => {
  ready = false;
  try {
    const r = await send(review('create-ingress.json'));
    assert.is(r.json.response.allowed, false);
    assert.is(r.json.response.status.code, 503);
  } finally {
    ready = true;
  }
});

test('metrics: ingress-nginx\'s check counters per Ingress and the admission gauges', async () => {
  const text = await registry.metrics();
  assert.match(text, /nginx_ingress_controller_check_success\{namespace="apps",ingress="shop"\} \d+/);
  assert.match(text, /nginx_ingress_controller_check_errors\{namespace="apps",ingress="shop-1"\} 1/);
  for (const g of ['admission_tested_ingresses', 'admission_tested_duration', 'admission_render_ingresses', 'admission_render_duration', 'admission_config_size', 'admission_roundtrip_duration']) {
    assert.match(text, new RegExp(`^nginx_ingress_controller_${g} \\S+$`, 'm'));
  }
  // The last review's neighbourhood: the candidate and apps/owner, the oldest user of its Service.
  assert.match(text, /^nginx_ingress_controller_admission_tested_ingresses 2$/m);
});

test('admission_config_size: the last accepted review\'s servers, measured at the scrape; a denied review leaves it', async () => {
  const configSize = async () => Number(/^nginx_ingress_controller_admission_config_size (\S+)$/m.exec(await registry.metrics())![1]);
  // What a reviewer made for this one review measures, the object read as the server reads it.
  const expected = (body: unknown) => {
    const text = JSON.stringify(body);
    const read = readAdmissionReview(text);
    assert.ok(read.ok);
    const parsed = ingressOf(read.request, Buffer.byteLength(text));
    assert.ok(parsed.ok);
    return createReviewer({ store, annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }).review(parsed.ingress).configBytes();
  };
  const small = withObject('create-ingress.json', (o) => { o.spec.rules![0]!.host = 'sized.example.com'; });
  assert.is((await send(small)).json.response.allowed, true);
  const smallBytes = await configSize();
  assert.ok(smallBytes > 0);
  assert.is(smallBytes, expected(small));
  const larger = withObject('create-ingress.json', (o) => {
    o.spec.rules![0]!.host = 'sized.example.com';
    o.spec.rules![0]!.http!.paths.push({ path: '/more', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } });
  });
  assert.is((await send(larger)).json.response.allowed, true);
  assert.is(await configSize(), expected(larger));
  assert.ok(await configSize() > smallBytes, 'a path more, a larger server');
  const denied = await send(withObject('create-ingress.json', (o) => { o.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-body-size'] = 'huge'; }));
  assert.is(denied.json.response.allowed, false);
  assert.is(await configSize(), expected(larger), 'the last accepted review\'s still');
});

test('a rotated certificate is served without a restart; a half-written pair keeps the old one', async () => {
  const servedCN = async () => {
    const s = tlsConnect({ host: '127.0.0.1', port: webhook.port, rejectUnauthorized: false, servername: SERVERNAME });
    await new Promise<void>((resolve, reject) => { s.once('secureConnect', () => resolve()); s.once('error', reject); });
    const cn = s.getPeerCertificate().subject.CN;
    s.destroy();
    return cn;
  };
  assert.is(await servedCN(), 'ingress.local');
  copyFileSync(join(certs, 'other.crt'), certFile); // the key does not match yet
  const checked = Date.now();
  await waitFor(() => Date.now() - checked > 200, { what: 'a few certificate checks' });
  assert.is(await servedCN(), 'ingress.local', 'mismatched files: the previous pair stays');
  copyFileSync(join(certs, 'other.key'), keyFile);
  await waitFor(async () => (await servedCN()) === 'other.example.com', { what: 'the new certificate' });
});

test('no process was started while reviewing (and the spy would have seen one)', async () => {
  assert.equal(spawned, []);
  const { spawnSync } = await import('node:child_process');
  spawnSync('true');
  assert.equal(spawned, ['spawnSync true']);
});

test('listen addresses as ingress-nginx writes them', () => {
  assert.equal(parseListenAddress(':8443'), { host: undefined, port: 8443 });
  assert.equal(parseListenAddress('0.0.0.0:8443'), { host: '0.0.0.0', port: 8443 });
  assert.equal(parseListenAddress('[::1]:8443'), { host: '::1', port: 8443 });
  assert.throws(() => parseListenAddress('8443'), /not "<host>:<port>"/);
  assert.throws(() => parseListenAddress(':70000'), /not "<host>:<port>"/);
});

test.run();
