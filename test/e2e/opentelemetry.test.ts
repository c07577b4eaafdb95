// OpenTelemetry as ingress-rx does it without an NGINX module: spans made in Lua, the W3C trace
// context passed upstream, exported as OTLP/HTTP JSON to a collector (here a receiver written in
// the test). One `ingress-rx local`, real NGINX and real requests, in three phases: tracing from
// the ConfigMap, then only where an annotation asks for it with a ratio sampler and a collector
// that is down, then a collector that does not answer while the queue fills.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';
import { GATEWAY_MANIFESTS, GATEWAY_V1 } from '../support/gateway-local.js';

const NS = 'otel';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let echo: EchoServer;

interface KeyValue { key: string; value: { stringValue?: string; intValue?: string } }
interface Span { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; startTimeUnixNano: string; endTimeUnixNano: string; attributes: KeyValue[] }
interface Export { service: string; scope: string; spans: Span[] }

/** An OTLP/HTTP receiver: POST /v1/traces with JSON, as the OpenTelemetry Collector takes it. */
const received: Export[] = [];
const utf8 = new TextDecoder('utf-8', { fatal: true });
let receiver: Server;
let receiverPort = 0;
let posts = 0;
/** While set, the receiver keeps its answers (a collector that hangs); releasing answers them. */
let held: Array<() => void> | null = null;
const spans = () => received.flatMap((e) => e.spans);
const attr = (s: Span, key: string) => { const v = s.attributes.find((a) => a.key === key)?.value; return v?.stringValue ?? v?.intValue; };
const spanOf = (host: string, target: string) => spans().find((s) => attr(s, 'http.host') === host && attr(s, 'http.target') === target);

const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string> = {}) =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path: '/', pathType: 'Prefix', service: 'main' }] });
const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: NS }, data });
const upstreamHeaders = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/;

/**
 * Applies a ConfigMap and waits until NGINX runs it: its nginx.conf (`marker`) and, where given,
 * its route table (`routesMarker`): the dynamic hosts' table is posted after the reload.
 */
async function phase(data: Record<string, string>, marker: (conf: string) => boolean, routesMarker?: (hosts: Record<string, unknown>) => boolean): Promise<void> {
  ctl.write('configmap.json', [configMap(data)]);
  await waitFor(async () => {
    const conf = (await ctl.control('/nginx.conf')).body;
    const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
    return marker(conf) && (await ctl.control('/configuration-checksum')).body === checksum;
  }, { timeoutMs: 20_000, what: 'NGINX running the phase configuration' });
  if (routesMarker) {
    await waitFor(async () => routesMarker((JSON.parse((await ctl.control('/configuration/routes')).body) as { hosts: Record<string, unknown> }).hosts),
      { timeoutMs: 20_000, what: 'NGINX holding the phase route table' });
  }
  await ctl.until('traced.test', '/', (r) => r.status === 200);
}

const fromConfigMap = suite('tracing from the ConfigMap');
const overConfigMap = protocolMatrix(fromConfigMap, () => ctl);

fromConfigMap.before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => { chunks.push(d); });
    req.on('end', () => {
      posts++;
      let body: string;
      // Strict as a collector's OTLP/JSON parser: a body that is not UTF-8 is refused whole.
      try { body = utf8.decode(Buffer.concat(chunks)); } catch { body = ''; }
      if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/json' || body === '') {
        res.writeHead(400).end();
        return;
      }
      const doc = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: KeyValue[] }; scopeSpans: Array<{ scope: { name: string }; spans: Span[] }> }> };
      for (const rs of doc.resourceSpans) {
        for (const ss of rs.scopeSpans) {
          received.push({ service: rs.resource.attributes.find((x) => x.key === 'service.name')?.value.stringValue ?? '', scope: ss.scope.name, spans: ss.spans });
        }
      }
      const answer = () => { res.writeHead(200, { 'content-type': 'application/json' }).end('{}'); };
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverPort = (receiver.address() as AddressInfo).port;
  echo = await startEchoServer({ address: '127.0.7.10', name: 'main' });
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [service(NS, 'main'), ...slices(NS, 'main', [echo])],
      'ingresses.json': [
        on('traced', 'traced.test'),
        on('off', 'off.test', { 'enable-opentelemetry': 'false' }),
        on('notrust', 'notrust.test', { 'enable-opentelemetry': 'true', 'opentelemetry-trust-incoming-span': 'false' }),
        on('named', 'named.test', { 'enable-opentelemetry': 'true', 'opentelemetry-operation-name': 'checkout' }),
        // Without enable-opentelemetry "true" ingress-nginx reads neither: the ConfigMap's apply.
        on('ignored', 'ignored.test', { 'opentelemetry-trust-incoming-span': 'false', 'opentelemetry-operation-name': 'ignored' }),
        on('annotated', 'annotated.test', { 'enable-opentelemetry': 'true' }),
        on('errors', 'errors.test', { 'custom-http-errors': '418' }),
      ],
      // Served by the Lua router, traced from the ConfigMap (a traced Ingress keeps a server block).
      'gateway.json': [...GATEWAY_MANIFESTS, {
        apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name: 'shop', namespace: NS },
        spec: {
          parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['routed.test'],
          rules: [
            { matches: [{ path: { type: 'PathPrefix', value: '/other' } }], backendRefs: [{ name: 'main', port: 80 }] },
            { matches: [{ path: { type: 'PathPrefix', value: '/cart' } }], backendRefs: [{ name: 'main', port: 80 }] },
          ],
        },
      }],
    },
  });
  await phase({
    'enable-opentelemetry': 'true', 'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(receiverPort),
    'otel-service-name': 'edge', 'otel-schedule-delay-millis': '100', 'opentelemetry-operation-name': 'HTTP $request_method',
    'otel-max-export-batch-size': '5',
  }, (c) => c.includes('service_name = "edge"'));
});

overConfigMap.both('a request gets a server span; the upstream sees its trace context; the collector gets it as OTLP/HTTP JSON', async (p) => {
  const r = await p.request('traced.test', `/orders-${p.tag}?id=7`, { headers: { 'User-Agent': 'probe/1' } });
  assert.is(r.status, 200);
  const m = TRACEPARENT.exec(upstreamHeaders(r).traceparent ?? '');
  assert.ok(m, `upstream traceparent: ${upstreamHeaders(r).traceparent}`);
  assert.is(m![3], '1', 'sampled (AlwaysOn)');
  const span = await waitFor(() => spanOf('traced.test', `/orders-${p.tag}?id=7`), { what: 'the span at the collector' });
  assert.is(span.traceId, m![1]);
  assert.is(span.spanId, m![2]);
  assert.is(span.parentSpanId, undefined);
  assert.is(span.kind, 2);
  // The ConfigMap's operation name, its NGINX variables expanded for the request.
  assert.is(span.name, 'HTTP GET');
  assert.equal([attr(span, 'http.method'), attr(span, 'http.status_code'), attr(span, 'http.user_agent'), attr(span, 'http.scheme'), attr(span, 'net.host.port')],
    ['GET', '200', 'probe/1', p.scheme, String(p.port)]);
  assert.ok(BigInt(span.startTimeUnixNano) <= BigInt(span.endTimeUnixNano));
  assert.ok(Math.abs(Number(BigInt(span.startTimeUnixNano) / 1_000_000n) - Date.now()) < 60_000, 'the start time is now');
  const e = received.find((x) => x.spans.includes(span))!;
  assert.equal([e.service, e.scope], ['edge', 'ingress-rx']);
  // What a client sends is text in the JSON, whatever it holds (the receiver parses it); a byte
  // that is not UTF-8 (Node sends this header as Latin-1) becomes U+FFFD, the rest is kept.
  await p.request('traced.test', `/q"uote-${p.tag}?a="b"\\`, { headers: { 'User-Agent': 'probe "quoted" \\ back\\slash \u00e9' } });
  const hostile = await waitFor(() => spans().find((x) => attr(x, 'http.target') === `/q"uote-${p.tag}?a="b"\\`), { what: 'the span of the hostile request' });
  assert.is(attr(hostile, 'http.user_agent'), 'probe "quoted" \\ back\\slash \ufffd');
  // Every request its own trace and span.
  const ids = await Promise.all(Array.from({ length: 20 }, () => p.request('traced.test', `/many-${p.tag}`).then((x) => TRACEPARENT.exec(upstreamHeaders(x).traceparent ?? '')!)));
  assert.is(new Set(ids.map((x) => x[1])).size, 20);
  assert.is(new Set(ids.map((x) => x[2])).size, 20);
  // All twenty reach the collector, at most otel-max-export-batch-size (5) in one request.
  await waitFor(() => spans().filter((x) => attr(x, 'http.target') === `/many-${p.tag}`).length === 20, { what: 'the twenty spans' });
  assert.ok(received.every((x) => x.spans.length <= 5), `batches: ${received.map((x) => x.spans.length).join(' ')}`);
});

overConfigMap.both("the client's trace is continued: same trace id, its span as parent, its tracestate kept", async (p) => {
  const client = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const r = await p.request('traced.test', `/continued-${p.tag}`, { headers: { traceparent: client, tracestate: 'vendor=x' } });
  const m = TRACEPARENT.exec(upstreamHeaders(r).traceparent ?? '')!;
  assert.is(m[1], '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.is.not(m[2], '00f067aa0ba902b7');
  assert.is(upstreamHeaders(r).tracestate, 'vendor=x');
  const span = await waitFor(() => spanOf('traced.test', `/continued-${p.tag}`), { what: 'the continued span' });
  assert.equal([span.traceId, span.parentSpanId, span.spanId], ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', m[2]]);
  // A malformed traceparent starts a new trace.
  const bad = await p.request('traced.test', '/malformed', { headers: { traceparent: '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01' } });
  assert.is.not(TRACEPARENT.exec(upstreamHeaders(bad).traceparent ?? '')?.[1], '4bf92f3577b34da6a3ce929d0e0e4736');
});

overConfigMap.both('opentelemetry-trust-incoming-span "false" starts a new trace and drops the client\'s tracestate; without enable-opentelemetry "true" it is ignored', async (p) => {
  const r = await p.request('notrust.test', `/${p.tag}`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=x' } });
  const m = TRACEPARENT.exec(upstreamHeaders(r).traceparent ?? '')!;
  assert.is.not(m[1], '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.is(upstreamHeaders(r).tracestate, undefined);
  const span = await waitFor(() => spanOf('notrust.test', `/${p.tag}`), { what: 'the untrusting span' });
  assert.is(span.parentSpanId, undefined);
  assert.is(span.traceId, m[1]);  // Set without enable-opentelemetry "true" on its Ingress, it is ignored (as ingress-nginx) and named in a warning.
  const kept = await p.request('ignored.test', `/${p.tag}`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
  assert.match(upstreamHeaders(kept).traceparent ?? '', /^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
  assert.is((await waitFor(() => spanOf('ignored.test', `/${p.tag}`), { what: 'the span of the ignored annotations' })).name, 'HTTP GET');
  await waitFor(() => /opentelemetry-trust-incoming-span[^\n]*applies only with enable-opentelemetry/.test(ctl.output()), { what: 'the warning naming the ignored annotation' });
});

overConfigMap.both("each span names what the request matched: an HTTPRoute's rule through the Lua router, or an Ingress, and its namespace", async (p) => {
  assert.not.match((await ctl.control('/nginx.conf')).body, 'routed.test', 'the HTTPRoute is a dynamic host: no server block');
  const r = await p.request('routed.test', `/cart/items-${p.tag}`);
  assert.is(r.status, 200);
  const m = TRACEPARENT.exec(upstreamHeaders(r).traceparent ?? '');
  assert.ok(m, `upstream traceparent: ${upstreamHeaders(r).traceparent}`);
  const routed = await waitFor(() => spanOf('routed.test', `/cart/items-${p.tag}`), { what: "the HTTPRoute's span" });
  assert.equal([routed.traceId, routed.spanId, routed.name], [m![1], m![2], 'HTTP GET']);
  assert.equal([attr(routed, 'ingress_rx.frontend'), attr(routed, 'k8s.namespace.name'), attr(routed, 'ingress_rx.route')], ['httproute', NS, 'httproute/shop/1']);
  await p.request('traced.test', `/named-route-${p.tag}`);
  const ingressSpan = await waitFor(() => spanOf('traced.test', `/named-route-${p.tag}`), { what: "the Ingress's span" });
  assert.equal([attr(ingressSpan, 'ingress_rx.frontend'), attr(ingressSpan, 'k8s.namespace.name'), attr(ingressSpan, 'ingress_rx.route')], ['ingress', NS, 'traced']);
});

overConfigMap.both('opentelemetry-operation-name on an Ingress names its spans; enable-opentelemetry "false" turns tracing off for its Ingress', async (p) => {
  await p.request('named.test', `/pay-${p.tag}`);
  assert.is((await waitFor(() => spanOf('named.test', `/pay-${p.tag}`), { what: 'the named span' })).name, 'checkout');
  const off = await p.request('off.test', `/quiet-${p.tag}`);
  assert.is(upstreamHeaders(off).traceparent, undefined);
  // Spans of later requests arrived while this one's would have: it was never made.
  await p.request('traced.test', `/after-quiet-${p.tag}`);
  await waitFor(() => spanOf('traced.test', `/after-quiet-${p.tag}`), { what: 'a later span' });
  assert.is(spanOf('off.test', `/quiet-${p.tag}`), undefined);
});

overConfigMap.both('a request NGINX redirects internally (custom-http-errors) keeps its span', async (p) => {
  // The echo's 418 goes to the built-in default backend, which answers 404.
  assert.is((await p.request('errors.test', `/${p.tag}/__status/418`)).status, 404);
  const span = await waitFor(() => spanOf('errors.test', `/${p.tag}/__status/418`), { what: 'the span of the redirected request' });
  assert.equal([attr(span, 'http.status_code'), span.kind, span.name], ['404', 2, 'HTTP GET']);
});

overConfigMap.both("a parent that was not sampled is followed (otel-sampler-parent-based): its context passes on, no span", async (p) => {
  const r = await p.request('traced.test', `/unsampled-${p.tag}`, { headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00' } });
  assert.match(upstreamHeaders(r).traceparent ?? '', /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
  await p.request('traced.test', `/after-unsampled-${p.tag}`);
  await waitFor(() => spanOf('traced.test', `/after-unsampled-${p.tag}`), { what: 'a later span' });
  assert.is(spanOf('traced.test', `/unsampled-${p.tag}`), undefined);
});

const perIngress = suite('tracing per Ingress, a ratio sampler, a collector that is down');
const overPerIngress = protocolMatrix(perIngress, () => ctl);

perIngress.before(async () => {
  const closed = await freePort();
  await phase({
    'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(closed), 'otel-schedule-delay-millis': '100',
    'otel-sampler': 'TraceIdRatioBased', 'otel-sampler-ratio': '0',
    // One worker: the second leg's failed export meets the first leg's 10 s log limit.
    'worker-processes': '1',
  }, (c) => c.includes('sampler = "TraceIdRatioBased"') && c.includes('\nworker_processes 1;'),
  (hosts) => hosts['routed.test'] !== undefined && !JSON.stringify(hosts['routed.test']).includes('"trace"'));
});

overPerIngress.both('only the annotated Ingress is traced; ratio 0 samples nothing; requests are answered while the collector is down', async (p) => {
  const traced = await p.request('annotated.test', '/');
  assert.is(traced.status, 200);
  assert.match(upstreamHeaders(traced).traceparent ?? '', /^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  assert.is(upstreamHeaders(await p.request('traced.test', '/')).traceparent, undefined);
  assert.is(upstreamHeaders(await p.request('routed.test', '/cart')).traceparent, undefined, 'the HTTPRoute is not traced once the ConfigMap stops tracing');
  // A sampled parent is still followed, and its span is exported to a collector that is down: the request does not wait for it.
  // A batch may hold more than this span (the other leg's, a retry): any failed export after this request counts.
  const failedExports = () => (readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8').match(/opentelemetry: export of \d+ spans failed[^\n]*connect to 127\.0\.0\.1/g) ?? []).length;
  const before = failedExports();
  const t0 = Date.now();
  const r = await p.request('annotated.test', '/to-nowhere', { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
  assert.is(r.status, 200);
  assert.ok(Date.now() - t0 < 2000);
  // A worker writes at most one such line every 10 s (the other leg's has just been written in
  // the same worker); the one held back follows once the 10 s are over, with no request after it.
  await waitFor(() => failedExports() > before, { what: 'the failed export in the error log', timeoutMs: 20_000 });
});

const fullQueue = suite('a collector that does not answer: the queue is bounded');
const overFullQueue = protocolMatrix(fullQueue, () => ctl);

fullQueue.before(async () => {
  await phase({
    'enable-opentelemetry': 'true', 'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(receiverPort),
    // One worker: a leg starts once the spans the worker still holds from the leg before are exported.
    'otel-schedule-delay-millis': '100', 'otel-max-queuesize': '2', 'worker-processes': '1',
  }, (c) => c.includes('max_queue = 2,') && c.includes('\nworker_processes 1;'));
});

overFullQueue.both('otel-max-queuesize: while an export hangs a worker keeps at most that many spans, drops the rest and says so; requests are answered', async (p) => {
  // What the worker still queues from the leg before would fill this leg's queue: a marker span
  // exported means the queue was empty (a marker may itself be dropped while it is not).
  let marker = 0;
  await waitFor(async () => {
    await p.request('traced.test', `/drain-${p.tag}-${marker++}`);
    return spans().some((x) => (attr(x, 'http.target') ?? '').startsWith(`/drain-${p.tag}-`));
  }, { what: "the worker's queue drained of the leg before", timeoutMs: 20_000 });
  held = [];
  const before = posts;
  const t0 = Date.now();
  for (let i = 0; i < 20; i++) assert.is((await p.request('traced.test', `/queued-${p.tag}-${i}`)).status, 200);
  assert.ok(Date.now() - t0 < 5000, 'requests do not wait for the collector');
  // The worker has one export (at most 2 spans) hanging; what comes after it waits in a queue of
  // 2 or is dropped.
  await waitFor(() => posts > before, { what: 'an export reaching the hanging collector' });
  const release = () => { for (const answer of held!.splice(0)) answer(); };
  release();
  held = null;
  await waitFor(() => /opentelemetry: [^\n]*spans dropped so far: the queue \(otel-max-queuesize 2\) was full/.test(readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8')), { what: 'the dropped spans in the error log' });
  const arrived = () => spans().filter((x) => (attr(x, 'http.target') ?? '').startsWith(`/queued-${p.tag}-`)).length;
  await waitFor(() => arrived() >= 2, { what: 'the exported spans' });
  assert.ok(arrived() <= 4, `${arrived()} of 20 spans exported (at most 2 exporting and 2 queued)`);
});

fullQueue.after(async () => {
  await ctl?.stop();
  await echo?.close();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

fromConfigMap.run();
perIngress.run();
fullQueue.run();
