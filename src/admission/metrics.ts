// The webhook's Prometheus families, with ingress-nginx's names (its admission collector and the
// check counters of its controller collector), on the controller's registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReviewResult } from './review.js';

/** What the metrics read of a review; the config size is asked for at a scrape, of the last accepted review only. */
export interface ObservedReview extends Pick<ReviewResult, 'served' | 'allowed' | 'tested' | 'viewMs' | 'buildMs'> {
  configBytes(): number | Promise<number>;
}

export interface AdmissionMetrics {
  /** One review done; `roundtripMs` from the request's first byte to the answer. */
  observe(ns: string, name: string, r: ObservedReview, roundtripMs: number): void;
}

/** Series of the per-Ingress check counters before new Ingresses share one: the webhook port takes unauthenticated requests. */
export const MAX_CHECK_SERIES = 5000;
export const OVERFLOW_LABEL = '<other>';

export function createAdmissionMetrics(registry: Registry, maxSeries = MAX_CHECK_SERIES): AdmissionMetrics {
  const gauge = (name: string, help: string) => new Gauge({ name: `nginx_ingress_controller_${name}`, help, registers: [registry] });
  const testedIngresses = gauge('admission_tested_ingresses', 'The length of ingresses processed by the admission controller');
  const testedDuration = gauge('admission_tested_duration', 'The processing duration of the admission controller tests (float seconds)');
  const renderIngresses = gauge('admission_render_ingresses', 'The length of ingresses rendered by the admission controller');
  const renderDuration = gauge('admission_render_duration', 'The processing duration of ingresses rendering by the admission controller (float seconds)');
  let lastAccepted: ObservedReview | null = null;
  new Gauge({
    name: 'nginx_ingress_controller_admission_config_size', help: 'The size of the tested configuration', registers: [registry],
    async collect() {
      if (lastAccepted) this.set(await lastAccepted.configBytes());
    },
  });
  const roundtrip = gauge('admission_roundtrip_duration', 'The complete duration of the admission controller at the time to process a new event (float seconds)');
  const labelNames = ['namespace', 'ingress'] as const;
  const checks = new Counter({ name: 'nginx_ingress_controller_check_success', help: 'Cumulative number of Ingress controller syntax check operations', labelNames, registers: [registry] });
  const errors = new Counter({ name: 'nginx_ingress_controller_check_errors', help: 'Cumulative number of Ingress controller errors during syntax check operations', labelNames, registers: [registry] });
  const series = new Set<string>();

  function labels(namespace: string, ingress: string): { namespace: string; ingress: string } {
    const key = `${namespace}/${ingress}`;
    if (!series.has(key)) {
      if (series.size >= maxSeries) return { namespace: OVERFLOW_LABEL, ingress: OVERFLOW_LABEL };
      series.add(key);
    }
    return { namespace, ingress };
  }

  return {
    observe(ns, name, r, roundtripMs) {
      if (!r.served) return;
      (r.allowed ? checks : errors).inc(labels(ns, name));
      // As ingress-nginx: the gauges describe the last review that passed.
      if (!r.allowed) return;
      testedIngresses.set(r.tested);
      testedDuration.set(r.buildMs / 1000);
      renderIngresses.set(r.tested);
      renderDuration.set(r.viewMs / 1000);
      lastAccepted = r;
      roundtrip.set(roundtripMs / 1000);
    },
  };
}
