// The opentelemetry block: nothing in nginx.conf unless some location is traced; then the tracer
// configured from the ConfigMap at http level, each traced location opening its span first in
// its rewrite phase (trust and name from its annotations over the ConfigMap), and warnings for a
// collector that cannot work. The behaviour on the wire is test/e2e/opentelemetry.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRenderer } from '../../../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../../../../src/render/runtime.js';
import type { OpentelemetryConfig } from '../../../../src/model/ingress/annotations/opentelemetry.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import { silentLogger } from '../../../../src/log.js';
import { configuration, location, server } from '../../../support/config-builder.js';
import { routeTrace } from '../../../../src/model/core/route-settings.js';
import { defaultSettings } from '../../../../src/model/core/config/defaults.js';

const rt = defaultRuntime({ prefix: '/tmp/irx-otel-unit' });
const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
const ot = (over: Partial<OpentelemetryConfig>): OpentelemetryConfig => ({ enable: true, trust: null, operationName: '', ...over });
const render = (locs: Array<OpentelemetryConfig | null>, settings: Partial<NginxSettings> = {}) => renderer.renderWithWarnings(configuration(
  locs.map((o, i) => server(`h${i}.example.com`, { locations: [location({ path: '/api', opentelemetry: o })] })), {}, settings), rt);
const loc = (text: string, i: number) => text.slice(text.indexOf(`server_name h${i}.example.com;`)).split('location ')[1]!;

test('nothing traced: no tracer, no log phase, no call', () => {
  const r = render([null, ot({ enable: false })]);
  assert.not.match(r.text, /opentelemetry/);
  assert.not.match(r.text, /log_by_lua/);
  assert.not.match(r.text, /otel_request_fields/);
});

test('the ConfigMap: the tracer configured at http level; every location opens its span first, with its own trust and name', () => {
  const r = render([null, ot({ trust: false, operationName: 'checkout' }), ot({ enable: false })], {
    enableOpentelemetry: true, otlpCollectorHost: 'otel.example', otlpCollectorPort: 4318, otelServiceName: 'edge',
    otelSampler: 'TraceIdRatioBased', otelSamplerRatio: 0.25, opentelemetryOperationName: '$request_method $uri',
  });
  assert.match(r.text, 'opentelemetry.configure({ host = "otel.example", port = 4318, service_name = "edge", sampler = "TraceIdRatioBased", ratio = 0.25, parent_based = true, max_queue = 2048, delay_ms = 5000, batch = 512, scope_version = ');
  assert.match(r.text, /init_worker_by_lua_block \{\n[^}]*opentelemetry\.init_worker\(\)/);
  assert.match(r.text, /    log_by_lua_block \{\n        opentelemetry\.finish\(\)\n    \}/);
  // The span's attributes read as one variable.
  assert.match(r.text, 'map "" $otel_request_fields {\n        default "$server_port $remote_port $remote_addr $scheme $server_name $request_uri";\n    }');
  // The ConfigMap's name, $ escaped for Lua (expanded per request there), opened before the redirect and balancer.
  assert.match(loc(r.text, 0), 'rewrite_by_lua_block {\n                opentelemetry.start(true, "\\036request_method \\036uri", false');
  assert.match(loc(r.text, 1), 'opentelemetry.start(false, "checkout", false');
  assert.not.match(loc(r.text, 2), /opentelemetry/);
  assert.equal(r.warnings.filter((w) => /otlp|OpenTelemetry/.test(w)), []);
});

test("an annotation alone traces its locations, named after the location's path; a collector that cannot work is named", () => {
  const r = render([ot({ enable: true }), null], { otlpCollectorPort: 4317 });
  // Literally: a path is not an operator's template.
  assert.match(loc(r.text, 0), 'opentelemetry.start(true, "/api", true');
  assert.not.match(loc(r.text, 1), /opentelemetry/);
  assert.ok(r.warnings.some((w) => w.includes('otlp-collector-host is empty')), r.warnings.join('\n'));
  assert.ok(r.warnings.some((w) => w.includes("otlp-collector-port is 4317, OTLP/gRPC's port")), r.warnings.join('\n'));
});

test("a span names what the request matched: the Ingress, or the HTTPRoute's rule, and its namespace", () => {
  const r = renderer.renderWithWarnings(configuration([
    server('h0.example.com', { locations: [location({ path: '/api', opentelemetry: ot({}), ingress: { namespace: 'shop', name: 'web' } })] }),
    server('h1.example.com', { locations: [location({ path: '/api', opentelemetry: ot({}), ingress: { namespace: 'shop', name: 'web', rule: 2 } })] }),
  ]), rt);
  assert.match(loc(r.text, 0), 'opentelemetry.start(true, "/api", true, "shop", "web")');
  assert.match(loc(r.text, 1), 'opentelemetry.start(true, "/api", true, "shop", "httproute/web/2")');
});

test("a dynamic route's span (the Lua router opens it): traced by the ConfigMap, its operation name or '' for the path taken literally", () => {
  const gatewayRule = location({ path: '/api', ingress: { namespace: 'shop', name: 'web', rule: 0 } });
  assert.equal(routeTrace(gatewayRule, defaultSettings()), {}, 'tracing off: no trace field, the entry unchanged');
  assert.equal(routeTrace(gatewayRule, { ...defaultSettings(), enableOpentelemetry: true }), { trace: { trust: true, name: '' } });
  assert.equal(routeTrace(gatewayRule, { ...defaultSettings(), enableOpentelemetry: true, opentelemetryTrustIncomingSpan: false, opentelemetryOperationName: 'HTTP $request_method' }),
    { trace: { trust: false, name: 'HTTP $request_method' } });
});

test.run();
