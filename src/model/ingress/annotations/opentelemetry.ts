// opentelemetry group: tracing for the Ingress's locations over the ConfigMap's enable-opentelemetry:
// on or off, whether the client's trace is continued, and the span's name. The spans are made in
// Lua and exported by lua/opentelemetry.lua (the ConfigMap's otel-*/otlp-* keys configure it).
import { bool, InvalidValue, preview, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'enable-opentelemetry': 'Low',
  'opentelemetry-trust-incoming-span': 'Low',
  'opentelemetry-operation-name': 'Medium',
} as const;

export interface OpentelemetryConfig {
  /** enable-opentelemetry (absent or invalid: no config, the ConfigMap decides). */
  readonly enable: boolean;
  /** opentelemetry-trust-incoming-span; null when absent, invalid or tracing is off (the ConfigMap decides). */
  readonly trust: boolean | null;
  /** opentelemetry-operation-name, or '' (the ConfigMap's, else the location's path). */
  readonly operationName: string;
}

export interface OpentelemetryValue {
  /** null when the Ingress sets no valid enable-opentelemetry. */
  readonly opentelemetry: OpentelemetryConfig | null;
}

const fields = { opentelemetry: 'location' } as const;

/** As ingress-nginx: letters, digits, `_` and `-`. */
export const operationName: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 256 || !/^[A-Za-z0-9_-]*$/.test(v)) throw new InvalidValue(`"${preview(v)}" is not letters, digits, _ and -`);
  return v;
};

export const opentelemetryGroup: AnnotationGroup<OpentelemetryValue, typeof fields> = {
  name: 'opentelemetry',
  keys,
  fields,
  // A traced location opens its span in its own rewrite phase; the router's location opens none.
  perRequest: ({ opentelemetry: o }, s) => ((o?.enable ?? s.enableOpentelemetry) === true ? 'opentelemetry opens its span in the location' : null),
  docs: {
    'enable-opentelemetry': { values: '"true" or "false"', default: 'ConfigMap enable-opentelemetry', description: 'A server span for each request of the locations, the W3C trace context passed upstream (`false`: none, even when the ConfigMap turns tracing on).' },
    'opentelemetry-trust-incoming-span': { values: '"true" or "false"', default: 'ConfigMap opentelemetry-trust-incoming-span', description: "Continue the client's trace (its traceparent) instead of starting a new one. Read only with enable-opentelemetry \"true\" on the Ingress." },
    'opentelemetry-operation-name': { values: 'letters, digits, _ and -', default: "ConfigMap opentelemetry-operation-name, else the location's path", description: "The span's name. Read only with enable-opentelemetry \"true\" on the Ingress." },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const enable = r.read('enable-opentelemetry', bool);
    const enabled = enable.state === 'ok' ? enable.value : null;
    if (enabled !== true) {
      // As ingress-nginx: the Ingress's trust and name are read only where it turns tracing on.
      for (const k of ['opentelemetry-trust-incoming-span', 'opentelemetry-operation-name'] as const) {
        if (r.has(k)) r.warn(k, 'ignored: it applies only with enable-opentelemetry "true" on the same Ingress (as ingress-nginx)');
      }
      return { opentelemetry: enabled === null ? null : { enable: enabled, trust: null, operationName: '' } };
    }
    const trust = r.read('opentelemetry-trust-incoming-span', bool);
    return {
      opentelemetry: {
        enable: true,
        trust: trust.state === 'ok' ? trust.value : null,
        operationName: r.get('opentelemetry-operation-name', operationName, ''),
      },
    };
  },
};
