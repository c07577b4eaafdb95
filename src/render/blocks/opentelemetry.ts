// opentelemetry group: tracing in Lua (lua/opentelemetry.lua) where ingress-nginx loads its
// OpenTelemetry module. A traced location opens its span first in its rewrite phase; the http
// level configures the tracer (the ConfigMap's otel-*/otlp-* keys), starts each worker's export
// timer and closes spans in the log phase, all only when some location is traced.
import type { Configuration, Server } from '../../model/core/types.js';
import { locationLabel } from '../../model/core/origin.js';
import { tracedIn } from '../../model/core/route-settings.js';
import { version } from '../../version.js';
import * as f from '../filters.js';
import { RenderError } from '../filters.js';
import type { RenderBlock } from './types.js';


export const opentelemetryBlock: RenderBlock = {
  group: 'opentelemetry',
  applied: 'directives',
  location: {
    lua({ loc, settings: s }) {
      if (!tracedIn(loc, s)) return null;
      const trust = loc.settings.opentelemetry?.trust ?? s.opentelemetryTrustIncomingSpan;
      // As the module ingress-nginx loads: the operation name, else NGINX's location name (literally).
      const operation = loc.settings.opentelemetry?.operationName || s.opentelemetryOperationName;
      const args = [f.luaBool(trust, 'opentelemetry-trust-incoming-span'), f.luaString(operation || loc.path, 'opentelemetry-operation-name'), f.luaBool(operation === '', 'literal')];
      if (loc.ingress) args.push(f.luaString(loc.ingress.namespace, 'namespace'), f.luaString(locationLabel(loc.ingress), 'ingress'));
      return { first: `opentelemetry.start(${args.join(', ')})` };
    },
  },
};

/** What nginx.conf needs at http level when some location is traced. */
export interface OpentelemetryHttp {
  used: boolean;
  /** The Lua table the tracer is configured with (init_by_lua). */
  config: string;
  warnings: string[];
}

function ratio(v: number): string {
  if (!Number.isFinite(v) || v < 0 || v > 1) throw new RenderError('otel-sampler-ratio', `not a number in [0, 1]: ${v}`);
  return String(v);
}

/** Whether an annotation turns tracing on in one of a server's locations. */
export const tracesSomeLocation = (server: Server): boolean => server.locations.some((loc) => loc.settings.opentelemetry?.enable === true);

/** `traced`: whether some server traces a location (the renderer has it memoised per Server object). */
export function opentelemetryHttp(config: Configuration, traced = config.servers.some(tracesSomeLocation)): OpentelemetryHttp {
  const s = config.settings;
  const used = s.enableOpentelemetry || traced;
  if (!used) return { used: false, config: '', warnings: [] };
  const warnings: string[] = [];
  if (s.otlpCollectorHost === '') warnings.push('OpenTelemetry is on but otlp-collector-host is empty: the trace context is passed upstream, no span is exported');
  if (s.otlpCollectorPort === 4317) warnings.push("otlp-collector-port is 4317, OTLP/gRPC's port: ingress-rx exports OTLP/HTTP, so point it at the collector's OTLP/HTTP receiver (4318 by default)");
  const table = [
    `host = ${f.luaString(s.otlpCollectorHost, 'otlp-collector-host')}`,
    `port = ${f.num(s.otlpCollectorPort, 'otlp-collector-port')}`,
    `service_name = ${f.luaString(s.otelServiceName, 'otel-service-name')}`,
    `sampler = ${f.luaString(s.otelSampler, 'otel-sampler')}`,
    `ratio = ${ratio(s.otelSamplerRatio)}`,
    `parent_based = ${f.luaBool(s.otelSamplerParentBased, 'otel-sampler-parent-based')}`,
    `max_queue = ${f.num(s.otelMaxQueuesize, 'otel-max-queuesize')}`,
    `delay_ms = ${f.num(s.otelScheduleDelayMillis, 'otel-schedule-delay-millis')}`,
    `batch = ${f.num(s.otelMaxExportBatchSize, 'otel-max-export-batch-size')}`,
    `scope_version = ${f.luaString(version(), 'version')}`,
  ];
  return { used, config: `{ ${table.join(', ')} }`, warnings };
}
