// The webhook with its transport on a thread of its own (src/admission/transport.ts): TLS, HTTP
// and the AdmissionReview's JSON there, the review here, over real HTTPS. The verdict, the
// readiness gate, a failing review, the metrics and the fair order between clients all cross the
// thread as they work in one thread (test/unit/admission/server*.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { Registry } from 'prom-client';
import { silentLogger } from '../../../src/log.js';
import { createReviewer } from '../../../src/admission/review.js';
import { createAdmissionMetrics } from '../../../src/admission/metrics.js';
import { REVIEW_WINDOW, startWebhookTransport, type WebhookTransport } from '../../../src/admission/transport.js';
import type { Reviewer, ReviewResult } from '../../../src/admission/review.js';
import type { IngressClass } from '../../../src/store/kube-types.js';
import { waitFor } from '../../support/wait.js';
import { ingress, service, slice, testStore } from '../../support/model-objects.js';

const certs = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const CA = readFileSync(`${certs}default.crt`);
const fixture = JSON.parse(readFileSync(new URL('../../fixtures/admission/create-ingress.json', import.meta.url), 'utf8')) as { request: Record<string, any> };

const store = testStore({ watchIngressWithoutClass: false });
store.put('IngressClass', { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } as IngressClass);
store.put('Service', service('web', 'apps'));
store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1'], 'apps'));
const owner = ingress('owner', 'owned.example.com', [['/', 'Prefix', 'web', 80]], { ns: 'apps', ts: '2026-01-01T00:00:00Z' });
owner.spec.ingressClassName = 'nginx';
store.put('Ingress', owner);
const storeReviewer = createReviewer({ store, annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 });

/** The order reviews reach the reviewer (on this thread); `slow…` costs 30 ms of it, `boom…` throws, the rest go to the store's reviewer. */
const seen: string[] = [];
const reviewer: Reviewer = {
  review(ing): ReviewResult {
    seen.push(ing.metadata.name);
    if (ing.metadata.name.startsWith('boom')) throw new Error('a bug of ours');
    if (ing.metadata.name.startsWith('slow')) {
      const end = performance.now() + 30;
      while (performance.now() < end) { /* busy */ }
      return { served: true, reason: '', allowed: true, findings: [], tested: 1, viewMs: 0, buildMs: 0, configBytes: () => 0 };
    }
    return storeReviewer.review(ing);
  },
};

let ready = true;
const registry = new Registry();
let webhook: WebhookTransport;
test.before(async () => {
  webhook = await startWebhookTransport({
    address: '127.0.0.1:0', certFile: `${certs}default.crt`, keyFile: `${certs}default.key`, logger: silentLogger(), reviewer,
    metrics: createAdmissionMetrics(registry), ready: () => ready,
  });
});
test.after(() => webhook.close());

function body(name: string, host = `${name}.example.com`): string {
  const object = { ...fixture.request.object, metadata: { ...fixture.request.object.metadata, name, namespace: 'apps' } };
  object.spec = { ingressClassName: 'nginx', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] };
  return JSON.stringify({ ...fixture, request: { ...fixture.request, uid: name, name, namespace: 'apps', object } });
}

function review(text: string, agent: Agent | false = false, from = '127.0.0.1'): Promise<{ status: number; json?: any }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: webhook.port, method: 'POST', path: '/', ca: CA, servername: 'ingress.local', agent, localAddress: from, headers: { 'content-type': 'application/json' } }, (res) => {
      let t = '';
      res.on('data', (d: Buffer) => { t += d; });
      res.on('end', () => { let json: unknown; try { json = JSON.parse(t); } catch { /* not a review */ } resolve({ status: res.statusCode ?? 0, json }); });
    });
    req.on('error', () => resolve({ status: 0 }));
    req.end(text);
  });
}

test('an Ingress is reviewed against this thread\'s store: accepted, or refused naming the Ingress it clashes with', async () => {
  const ok = await review(body('shop'));
  assert.is(ok.status, 200);
  assert.equal([ok.json.response.uid, ok.json.response.allowed], ['shop', true]);
  const stolen = await review(body('thief', 'owned.example.com'));
  assert.equal([stolen.json.response.uid, stolen.json.response.allowed, stolen.json.response.status.code], ['thief', false, 400]);
  assert.match(stolen.json.response.status.message, /already defined by the older Ingress apps\/owner/);
});

test('the transport answers what needs no review itself: a GET, a review of another kind', async () => {
  const get = await new Promise<number>((resolve) => {
    request({ host: '127.0.0.1', port: webhook.port, method: 'GET', path: '/', ca: CA, servername: 'ingress.local', agent: false }, (res) => { res.resume(); resolve(res.statusCode ?? 0); }).end();
  });
  assert.is(get, 405);
  const before = seen.length;
  const other = JSON.parse(body('route'));
  other.request.kind = { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute' };
  const r = await review(JSON.stringify(other));
  assert.is(r.json.response.allowed, false);
  assert.match(r.json.response.status.message, /reviews networking\.k8s\.io\/v1 Ingresses, not gateway\.networking\.k8s\.io\/v1 HTTPRoute/);
  assert.is(seen.length, before, 'not asked of the reviewer');
});

test('until this thread\'s store holds the cluster, reviews are refused with 503 (retry)', async () => {
  ready = false;
  try {
    const r = await review(body('early'));
    assert.equal([r.json.response.uid, r.json.response.allowed, r.json.response.status.code], ['early', false, 503]);
  } finally {
    ready = true;
  }
});

test('a review that throws on this thread: the object is denied with the reason, and the next review is answered', async () => {
  const r = await review(body('boom'));
  assert.equal([r.status, r.json.response.uid, r.json.response.allowed], [200, 'boom', false]);
  assert.match(r.json.response.status.message, /could not review this object: a bug of ours/);
  assert.is((await review(body('after-boom'))).json.response.allowed, true);
});

test('metrics: the transport\'s observations reach this thread\'s registry, the config size of the last accepted review', async () => {
  await review(body('measured'));
  // The transport observes after the answer is sent: the count lands a message later.
  const text = await waitFor(async () => { const t = await registry.metrics(); return /ingress="measured"/.test(t) ? t : null; }, { what: 'the observation' });
  assert.match(text, /nginx_ingress_controller_check_success\{namespace="apps",ingress="measured"\} 1/);
  assert.match(text, /nginx_ingress_controller_check_errors\{namespace="apps",ingress="thief"\} 1/);
  const size = Number(/^nginx_ingress_controller_admission_config_size (\S+)$/m.exec(text)![1]);
  assert.ok(size > 0, `the config size of an accepted review (${size})`);
});

test('reviews cross the thread in the fair order: costly reviews without pause delay another client\'s by a few at most', async () => {
  // The quick clients hold kept-alive connections, as the API server does; each client its own loopback address.
  const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })];
  await review(body('warm-1'), agents[0], '127.0.5.2');
  await review(body('warm-2'), agents[1], '127.0.5.3');
  // The slow client's twelve connections open beforehand (this thread, busy reviewing, would
  // open them slowly): its twelve reviews are read at once, and its queue never runs dry.
  const slowAgent = new Agent({ keepAlive: true, maxSockets: 12 });
  await Promise.all(Array.from({ length: 12 }, (_, i) => review(body(`warm-slow-${i}`), slowAgent, '127.0.5.1')));
  seen.length = 0;
  const slow = Array.from({ length: 12 }, (_, i) => review(body(`slow-${i}`), slowAgent, '127.0.5.1'));
  await waitFor(() => seen.length >= 2, { what: 'the slow client served', intervalMs: 1 });
  const reviewedBefore = seen.length;
  const quick = await Promise.all([review(body('quick-1'), agents[0], '127.0.5.2'), review(body('quick-2'), agents[1], '127.0.5.3')]);
  assert.equal(quick.map((r) => r.json?.response.uid), ['quick-1', 'quick-2']);
  assert.equal((await Promise.all(slow)).map((r) => r.json?.response.uid), Array.from({ length: 12 }, (_, i) => `slow-${i}`));
  // Once read, a quick review waits for the slow ones asked already (the window) and maybe one
  // more whose turn came first: counted from the slow ones reviewed when it was sent.
  const firstQuick = Math.min(seen.indexOf('quick-1'), seen.indexOf('quick-2'));
  const slowBefore = seen.slice(0, firstQuick).filter((n) => n.startsWith('slow')).length;
  assert.ok(slowBefore <= reviewedBefore + REVIEW_WINDOW + 1, `the first quick review after ${slowBefore} slow ones, ${reviewedBefore} reviewed when sent (order: ${seen.join(' ')})`);
  assert.ok(Math.abs(seen.indexOf('quick-1') - seen.indexOf('quick-2')) <= 2, `both quick ones together (order: ${seen.join(' ')})`);
  assert.ok(seen.indexOf('quick-2') < seen.indexOf('slow-11'), `not left for after the slow client (order: ${seen.join(' ')})`);
  for (const a of [...agents, slowAgent]) a.destroy();
});

test.run();
