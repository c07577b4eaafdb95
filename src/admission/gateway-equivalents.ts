// Could an Ingress be an HTTPRoute with no loss? Each ingress-nginx annotation against the Gateway
// API (gateway.networking.k8s.io v1; experimental features are said to be), as `migrate-report` tells it: `full` when an HTTPRoute (or its Gateway) says the same,
// `partial` when it says only part of it, `none` when nothing in the Gateway API does (an
// implementation's policy or extension would). Written from the Gateway API specification
// (HTTPRoute, Gateway, BackendTLSPolicy, GRPCRoute, TLSRoute); an annotation not listed has no
// equivalent.
import type { Ingress } from '../store/kube-types.js';

export type Fit = 'full' | 'partial' | 'none';

export interface Equivalent {
  fit: Fit;
  /** The Gateway API field or feature, and what is lost when `partial`. */
  equivalent: string;
}

const full = (equivalent: string): Equivalent => ({ fit: 'full', equivalent });
const partial = (equivalent: string): Equivalent => ({ fit: 'partial', equivalent });
const none = (why: string): Equivalent => ({ fit: 'none', equivalent: why });

const REDIRECT = 'a rule with a RequestRedirect filter';
const CANARY = 'weighted backendRefs, or a rule with a header match, on the primary route';
const NO_AUTH = 'no authentication filter in the standard channel (ExternalAuth is experimental; an implementation policy otherwise)';
const NO_LIMITS = 'no rate or connection limit in the Gateway API (an implementation policy)';
const NO_SOURCE = 'no client address match in the Gateway API (an implementation policy)';
const NO_PROXY = 'proxy buffering and sizes are the implementation\'s, not the Gateway API\'s';
const NO_SNIPPET = 'no configuration text in the Gateway API';
const AFFINITY = 'sessionPersistence on a rule (experimental: cookie or header based); its cookie attributes are partly expressible';
const BACKEND_TLS = 'a BackendTLSPolicy on the Service (CA certificates and SNI hostname; no client certificate, ciphers or protocols)';

const table: Record<string, Equivalent> = {
  'app-root': full(`${REDIRECT} on the Exact path / (ReplaceFullPath, statusCode 302)`),
  'ssl-redirect': full(`${REDIRECT} (scheme https, statusCode 301) on a route attached to the HTTP listener`),
  'force-ssl-redirect': full(`${REDIRECT} (scheme https) on a route attached to the HTTP listener`),
  'permanent-redirect': full(`${REDIRECT} (hostname, path ReplaceFullPath, statusCode 301)`),
  'permanent-redirect-code': partial(`${REDIRECT}: statusCode 301 or 302 (other codes only where an implementation supports them)`),
  'temporal-redirect': full(`${REDIRECT} (statusCode 302)`),
  'temporal-redirect-code': partial(`${REDIRECT}: statusCode 301 or 302 (other codes only where an implementation supports them)`),
  'from-to-www-redirect': full(`a second route for the other host with ${REDIRECT} (hostname)`),
  'use-port-in-redirects': full('RequestRedirect port'),
  'relative-redirects': none('RequestRedirect always writes an absolute Location'),
  'rewrite-target': partial('a URLRewrite filter, path ReplacePrefixMatch or ReplaceFullPath: no regular expression captures ($1)'),
  'use-regex': partial('RegularExpression path matches (extended; their dialect is the implementation\'s)'),
  'upstream-vhost': full('a URLRewrite filter with hostname'),
  'x-forwarded-prefix': full('a RequestHeaderModifier filter setting X-Forwarded-Prefix (a fixed value)'),
  'server-alias': full('more hostnames on the route'),
  'preserve-trailing-slash': none('PathPrefix matching is on path elements; no trailing-slash setting'),
  'canary': full(CANARY),
  'canary-weight': full('backendRefs weights'),
  'canary-weight-total': full('backendRefs weights (any total)'),
  'canary-by-header': full('a rule with a header match (Exact) sending to the canary Service'),
  'canary-by-header-value': full('a rule with a header match (Exact) on that value'),
  'canary-by-header-pattern': partial('a rule with a header match of type RegularExpression (extended)'),
  'canary-by-cookie': none('no cookie match in the Gateway API (a header match on Cookie matches the whole header)'),
  'affinity-canary-behavior': none('no canary stickiness in the Gateway API'),
  'enable-cors': partial('a CORS filter on the rule (an extended feature)'),
  'cors-allow-origin': partial('CORS filter allowOrigins'),
  'cors-allow-methods': partial('CORS filter allowMethods'),
  'cors-allow-headers': partial('CORS filter allowHeaders'),
  'cors-expose-headers': partial('CORS filter exposeHeaders'),
  'cors-allow-credentials': partial('CORS filter allowCredentials'),
  'cors-max-age': partial('CORS filter maxAge'),
  'custom-headers': partial('a ResponseHeaderModifier filter with the ConfigMap\'s headers written in the route (no ConfigMap reference)'),
  'mirror-target': partial('a RequestMirror filter to a Service backendRef (no URL; percent or fraction in the extended feature)'),
  'mirror-host': partial('the mirrored request keeps the original Host; no other one'),
  'mirror-request-body': none('a RequestMirror always sends the body'),
  'proxy-connect-timeout': none('HTTPRoute timeouts are request and backendRequest only'),
  'proxy-read-timeout': partial('rule timeouts.backendRequest (a whole-request bound, not one between two reads)'),
  'proxy-send-timeout': partial('rule timeouts.backendRequest (a whole-request bound, not one between two writes)'),
  'proxy-next-upstream': partial('a rule\'s retry (experimental: codes and attempts; no error classes)'),
  'proxy-next-upstream-tries': partial('a rule\'s retry attempts (experimental)'),
  'proxy-next-upstream-timeout': partial('a rule\'s retry backoff (experimental)'),
  'backend-protocol': partial('HTTPS: a BackendTLSPolicy; GRPC/GRPCS: a GRPCRoute; h2c: the Service port\'s appProtocol; FCGI and AUTO_HTTP: none'),
  'proxy-ssl-secret': none('BackendTLSPolicy has no client certificate'),
  'proxy-ssl-verify': partial(BACKEND_TLS),
  'proxy-ssl-name': full('BackendTLSPolicy validation.hostname'),
  'proxy-ssl-server-name': full('BackendTLSPolicy validation.hostname (sent as SNI)'),
  'proxy-ssl-verify-depth': none(BACKEND_TLS),
  'proxy-ssl-ciphers': none(BACKEND_TLS),
  'proxy-ssl-protocols': none(BACKEND_TLS),
  'ssl-passthrough': none('a TLSRoute on a listener with tls.mode Passthrough: another kind of route, not an HTTPRoute'),
  'ssl-ciphers': none('Gateway listener tls.options are implementation-specific'),
  'ssl-prefer-server-ciphers': none('Gateway listener tls.options are implementation-specific'),
  'auth-tls-secret': partial('the Gateway\'s frontend TLS client certificate validation, caCertificateRefs (per Gateway or port, not per host)'),
  'auth-tls-verify-client': partial('the Gateway\'s frontend TLS validation mode (only valid certificates, or insecure fallback)'),
  'auth-tls-verify-depth': none('no verification depth in the Gateway API'),
  'auth-tls-error-page': none('no error page in the Gateway API'),
  'auth-tls-pass-certificate-to-upstream': none('no client certificate forwarding in the Gateway API'),
  'auth-tls-match-cn': none('no subject match in the Gateway API'),
  'affinity': partial(AFFINITY),
  'affinity-mode': none('no balanced or persistent mode in the Gateway API'),
  'session-cookie-name': partial(AFFINITY),
  'session-cookie-max-age': partial(AFFINITY),
  'session-cookie-expires': partial(AFFINITY),
  'session-cookie-path': none('sessionPersistence cookie attributes do not include Path'),
  'session-cookie-domain': none('sessionPersistence cookie attributes do not include Domain'),
  'session-cookie-samesite': none('sessionPersistence cookie attributes do not include SameSite'),
  'session-cookie-conditional-samesite-none': none('sessionPersistence cookie attributes do not include SameSite'),
  'session-cookie-secure': none('sessionPersistence cookie attributes do not include Secure'),
  'session-cookie-change-on-failure': none('no re-pinning setting in the Gateway API'),
  'load-balance': none('the balancing algorithm is the implementation\'s'),
  'upstream-hash-by': none('no hash balancing in the Gateway API (sessionPersistence pins by cookie or header only)'),
  'upstream-hash-by-subset': none('no hash balancing in the Gateway API'),
  'upstream-hash-by-subset-size': none('no hash balancing in the Gateway API'),
  'service-upstream': none('whether the Service address or its endpoints are used is the implementation\'s'),
  'default-backend': none('a route has no per-route fallback Service for unavailable backends'),
  'custom-http-errors': none('no error pages in the Gateway API'),
  'disable-proxy-intercept-errors': none('no error pages in the Gateway API'),
  'enable-access-log': none('access logging is the implementation\'s'),
  'enable-rewrite-log': none('rewrite logging is the implementation\'s'),
  'enable-modsecurity': none('no web application firewall in the Gateway API'),
  'enable-owasp-core-rules': none('no web application firewall in the Gateway API'),
  'modsecurity-transaction-id': none('no web application firewall in the Gateway API'),
  'enable-opentelemetry': none('tracing is the implementation\'s'),
  'opentelemetry-operation-name': none('tracing is the implementation\'s'),
  'opentelemetry-trust-incoming-span': none('tracing is the implementation\'s'),
  'fastcgi-index': none('backendRefs speak HTTP (or gRPC through a GRPCRoute), not FastCGI'),
  'fastcgi-params-configmap': none('backendRefs speak HTTP (or gRPC through a GRPCRoute), not FastCGI'),
  'http2-push-preload': none('no server push in the Gateway API'),
  'connection-proxy-header': none('Connection is a hop-by-hop header: header filters do not set it'),
};

// Keys that are settings of one implementation, or of NGINX, rather than of a route.
for (const key of [
  'auth-url', 'auth-type', 'auth-secret', 'auth-secret-type', 'auth-realm', 'auth-method', 'auth-signin', 'auth-signin-redirect-param',
  'auth-request-redirect', 'auth-response-headers', 'auth-proxy-set-headers', 'auth-snippet', 'auth-cache-key', 'auth-cache-duration',
  'auth-always-set-cookie', 'auth-keepalive', 'auth-keepalive-requests', 'auth-keepalive-share-vars', 'auth-keepalive-timeout', 'enable-global-auth', 'satisfy',
]) table[key] = none(NO_AUTH);
for (const key of ['limit-rps', 'limit-rpm', 'limit-connections', 'limit-burst-multiplier', 'limit-rate', 'limit-rate-after', 'limit-allowlist', 'limit-whitelist']) {
  table[key] = none(NO_LIMITS);
}
for (const key of ['allowlist-source-range', 'whitelist-source-range', 'denylist-source-range']) table[key] = none(NO_SOURCE);
for (const key of [
  'proxy-body-size', 'client-body-buffer-size', 'proxy-buffering', 'proxy-buffer-size', 'proxy-buffers-number', 'proxy-busy-buffers-size',
  'proxy-max-temp-file-size', 'proxy-request-buffering', 'proxy-http-version', 'proxy-cookie-domain', 'proxy-cookie-path', 'proxy-redirect-from', 'proxy-redirect-to',
]) table[key] = none(NO_PROXY);
for (const key of ['configuration-snippet', 'server-snippet', 'stream-snippet', 'modsecurity-snippet']) table[key] = none(NO_SNIPPET);

/** Annotation (without prefix) → its Gateway API equivalent. */
export const GATEWAY_EQUIVALENTS: Readonly<Record<string, Equivalent>> = Object.freeze(table);

export function equivalentOf(annotation: string): Equivalent {
  return GATEWAY_EQUIVALENTS[annotation] ?? none('no Gateway API equivalent (a setting of the controller)');
}

/** What moving one Ingress to an HTTPRoute keeps and what it loses. */
export interface HTTPRouteFit {
  /** Every annotation and field has a full equivalent. */
  lossless: boolean;
  /** Annotations and fields with a partial equivalent or none: `key` is the annotation (without prefix) or the field. */
  gaps: Array<{ key: string; fit: Exclude<Fit, 'full'>; equivalent: string }>;
}

/** The Ingress's annotations (those under `prefix/`) and spec against the Gateway API. */
export function httpRouteFit(ing: Ingress, prefix: string): HTTPRouteFit {
  const gaps: HTTPRouteFit['gaps'] = [];
  const start = `${prefix}/`;
  for (const k of Object.keys(ing.metadata.annotations ?? {}).sort()) {
    if (!k.startsWith(start)) continue;
    const key = k.slice(start.length);
    const e = equivalentOf(key);
    if (e.fit !== 'full') gaps.push({ key, fit: e.fit, equivalent: e.equivalent });
  }
  const seen = new Set<string>();
  const gap = (key: string, fit: Exclude<Fit, 'full'>, equivalent: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    gaps.push({ key, fit, equivalent });
  };
  const backends = [ing.spec?.defaultBackend, ...(ing.spec?.rules ?? []).flatMap((r) => (r.http?.paths ?? []).map((p) => p.backend))];
  for (const b of backends) {
    if (b?.resource) gap('backend.resource', 'none', 'backendRefs name Services (other kinds only as an implementation\'s extension)');
    if (b?.service?.port?.name !== undefined) gap('backend.service.port.name', 'partial', 'backendRefs take the port number, not its name');
  }
  for (const r of ing.spec?.rules ?? []) {
    for (const p of r.http?.paths ?? []) {
      if (p.pathType === 'ImplementationSpecific') gap('pathType: ImplementationSpecific', 'partial', 'an Exact or PathPrefix match, or a RegularExpression one (extended) for regular expressions');
    }
  }
  return { lossless: gaps.length === 0, gaps };
}
