// Metric families whose samples we compute ourselves (aggregated request series, /proc,
// stub_status), registered in a prom-client registry next to its own counters and gauges.
import type { Registry } from 'prom-client';

export type Labels = Record<string, string>;

export interface Sample {
  /** The sample's name when it is not the family's (`_bucket`, `_sum`, `_count`). */
  metricName?: string;
  labels?: Labels;
  /** Labels shared by many samples (a series' labels): prom-client formats them once per object. */
  sharedLabels?: Labels;
  value: number;
}

export interface FamilySpec {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary';
  samples(): Sample[] | Promise<Sample[]>;
}

/** Registers a family computed at scrape time. */
export function registerFamily(registry: Registry, spec: FamilySpec): void {
  const metric = {
    name: spec.name,
    help: spec.help,
    type: spec.type,
    aggregator: 'sum',
    async get() {
      return { name: spec.name, help: spec.help, type: spec.type, aggregator: 'sum', values: await spec.samples() };
    },
    reset() {},
  };
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}

/**
 * A bucket bound as Go's client prints it (strconv 'g', shortest): 0.005, 2.5, 100000, 1e+06.
 * Dashboards and recording rules may match `le` values as strings.
 */
export function goFloat(v: number): string {
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(v)));
  if (exp < -4 || exp >= 6) {
    const [mantissa, e] = v.toExponential().split('e') as [string, string];
    const sign = e.startsWith('-') ? '-' : '+';
    const digits = e.replace(/^[+-]/, '');
    return `${mantissa}e${sign}${digits.padStart(2, '0')}`;
  }
  return String(v);
}
