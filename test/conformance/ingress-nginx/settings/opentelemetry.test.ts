// ingress-nginx test/e2e/settings/opentelemetry.go, ported. Its Its grep nginx.conf for the
// module's directives; ingress-rx has no module (spans are made in Lua and exported as OTLP/HTTP
// JSON), so each It shows the behaviour the directive stands for: whether the upstream gets a
// trace context and a collector (a receiver on loopback) gets the request's span, whether the
// client's trace is continued, and the span's name. `opentelemetry-config` (the module's file) is
// refused with a warning and the rest of the ConfigMap applies (docs/differences.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'enable-opentelemetry.test';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

interface Span { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }
const spans: Span[] = [];
let collector: Server;
let collectorPort = 0;
const spanOf = (target: string) => spans.find((s) => s.attributes.some((a) => a.key === 'http.target' && a.value.stringValue === target));

/** The ConfigMap of an It: tracing to the receiver, and the keys the It sets. */
const tracing = (data: Record<string, string>) => ({
  'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(collectorPort), 'otel-schedule-delay-millis': '100', ...data,
});
const ENABLED = { 'enable-opentelemetry': 'true', 'opentelemetry-config': '/etc/ingress-controller/telemetry/opentelemetry.toml' };

test.before(async () => {
  collector = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> };
      for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorPort = (collector.address() as AddressInfo).port;
  fx = await startFixture('enable-opentelemetry', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('enable-opentelemetry', HOST)], HOST);
});
test.after(async () => {
  await fx.stop();
  collector.closeAllConnections();
  await new Promise((resolve) => collector.close(resolve));
});

/** A traced request: the trace context the upstream got and, once exported, its span. */
async function traced(p: ProtocolClient, path: string, headers: Record<string, string> = {}) {
  const r = await p.request(HOST, path, { headers });
  assert.is(r.status, 200);
  const m = TRACEPARENT.exec(upstreamHeaders(r).traceparent ?? '');
  assert.ok(m, 'the upstream gets a sampled trace context');
  const span = await waitFor(() => spanOf(path), { what: `the span of ${path} at the collector` });
  assert.equal([span.traceId, span.spanId], [m![1], m![2]]);
  return span;
}

its.both('settings/opentelemetry.go:49', async (p) => {
  await fx.configure(tracing({ 'enable-opentelemetry': 'false' }));
  const r = await p.request(HOST, `/off-${p.tag}`);
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).traceparent, undefined, 'no trace context upstream');
  // A span made for it would have been exported by now, with the next one: none was.
  await fx.configure(tracing(ENABLED));
  await traced(p, `/after-off-${p.tag}`);
  assert.is(spanOf(`/off-${p.tag}`), undefined);
});

its.both('settings/opentelemetry.go:62', async (p) => {
  await fx.configure(tracing(ENABLED));
  const span = await traced(p, `/on-${p.tag}`);
  assert.is(span.parentSpanId, undefined);
  await fx.warned((w) => w.includes('opentelemetry-config') && w.includes('ignored'), 'the module file key is named as refused');
});

its.both('settings/opentelemetry.go:76', async (p) => {
  await fx.configure(tracing({ ...ENABLED, 'opentelemetry-trust-incoming-span': 'true' }));
  const span = await traced(p, `/trusted-${p.tag}`, { traceparent: `00-${CLIENT_TRACE}-00f067aa0ba902b7-01` });
  assert.equal([span.traceId, span.parentSpanId], [CLIENT_TRACE, '00f067aa0ba902b7'], "the client's trace is continued");
});

its.both('settings/opentelemetry.go:91', async (p) => {
  await fx.configure(tracing({ ...ENABLED, 'opentelemetry-operation-name': '' }));
  // No operation name: the span is named after the location's path.
  assert.is((await traced(p, `/unnamed-${p.tag}`)).name, '/');
});

its.both('settings/opentelemetry.go:106', async (p) => {
  await fx.configure(tracing({ ...ENABLED, 'opentelemetry-operation-name': 'HTTP $request_method $uri' }));
  assert.is((await traced(p, `/named-${p.tag}`)).name, `HTTP GET /named-${p.tag}`, 'the variables expanded for the request');
});

test.run();
