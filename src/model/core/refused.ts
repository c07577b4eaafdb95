// ingress-nginx annotations and ConfigMap keys ingress-rx refuses, each with why and what to use
// instead: the parsers' warnings say it, and the migration report's catalogue reads it from here.

/** What to use instead of an annotation ingress-rx refuses; the first matching pattern wins. */
export const REFUSED_ANNOTATIONS: ReadonlyArray<readonly [RegExp, string]> = [];

/** What to use instead of a ConfigMap key ingress-rx refuses. */
export const REFUSED_CONFIGMAP_KEYS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^jaeger-/, 'enable-opentelemetry with otlp-collector-host (Jaeger takes OTLP/HTTP on port 4318)'],
  [/^opentelemetry-config$/, 'none needed: the otel-* and otlp-* keys configure the tracer (there is no module configuration file)'],
  [/^use-geoip$/, 'use-geoip2 (the legacy GeoIP databases are not provided)'],
  [/^geoip2-autoreload-in-minutes$/, 'none needed: --geoip-dir is watched and a changed database reloads NGINX'],
  [/^nginx-status-ipv[46]-whitelist$/, 'none needed: the status server is a unix socket only the controller can open, and every request needs its token'],
  [/^enable-serial-reloads$/, 'not implemented: a reload does not wait for the previous reload\'s workers to exit; worker-shutdown-timeout bounds how long they linger'],
  [/^http2-max-(field-size|header-size|requests)$/, 'none: obsolete directives since NGINX 1.19.7 (large-client-header-buffers and keep-alive-requests apply)'],
  [/^app-root$/, 'the app-root annotation (ingress-nginx reads this ConfigMap key but uses it nowhere)'],
  [/^bind-address-ipv[46]$/, 'bind-address (ingress-nginx fills these two from it)'],
];

/** Why a key is refused and what to use instead, or undefined when it is not one ingress-rx refuses on purpose. */
export function refusal(table: ReadonlyArray<readonly [RegExp, string]>, key: string): string | undefined {
  return table.find(([re]) => re.test(key))?.[1];
}

/** The parsers' warning for an annotation ingress-rx does not support (the webhook only warns on it). */
export function unsupportedAnnotationMessage(key: string): string {
  const why = refusal(REFUSED_ANNOTATIONS, key);
  return why ? `annotation is not supported by ingress-rx (${why}); ignored` : 'annotation is not supported by ingress-rx; ignored';
}

/** The parsers' warning for a ConfigMap key ingress-rx does not support. */
export function unsupportedConfigMapKeyMessage(key: string): string {
  const why = refusal(REFUSED_CONFIGMAP_KEYS, key);
  return why ? `not supported by ingress-rx (${why}); ignored` : 'unknown key (not supported by ingress-rx); ignored';
}

export const UNSUPPORTED_ANNOTATION = /^annotation is not supported by ingress-rx( \(.+\))?; ignored$/;
export const UNSUPPORTED_CONFIGMAP_KEY = /^(unknown key \(not supported by ingress-rx\)|not supported by ingress-rx \(.+\)); ignored$/;
