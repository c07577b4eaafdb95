// Every annotation key and every ConfigMap key, with how it reaches a request of a dynamic host
// (docs/dynamic-routes.md): applied by the Lua router, by the Lua balancer, inherited from the
// http level, or keeping the host static. A key nobody decided for could silently do nothing on a
// dynamic host (enable-rewrite-log did): test/unit/model/dynamic-keys.test.ts fails while a key
// has no entry here, and checks each entry against ingressStaticReason.

/** How an annotation reaches a dynamic host's request. */
export type AnnotationRouting =
  /** The router applies it per request; its group's `perRequest` keeps the Ingress static for the values it cannot. */
  | { readonly router: string }
  /** A backend policy: the Lua balancer applies it from the backends payload, whatever serves the route. */
  | { readonly balancer: string }
  /** Setting it keeps the Ingress's host static (a server block of its own): the reason. */
  | { readonly static: string };

const router = (how: string): AnnotationRouting => ({ router: how });
const balancer = (how: string): AnnotationRouting => ({ balancer: how });
const keepsStatic = (why: string): AnnotationRouting => ({ static: why });

const AUTH_SUBREQUEST = keepsStatic('external authentication is an NGINX subrequest');
const BASIC_AUTH = keepsStatic("NGINX's auth_basic");
const CLIENT_CERTS = keepsStatic('client certificates are verified by the server block');
const RATE_LIMITS = keepsStatic('limit_req, limit_conn and limit_rate zones');
const MIRROR = keepsStatic("NGINX's mirror subrequest");
const MODSECURITY = keepsStatic('modsecurity directives in the location');
const OTEL = keepsStatic('the span is opened in the location');
const UPSTREAM_TLS = keepsStatic('proxy_ssl_* directives');
const CORS = router('the preflight and Access-Control-* headers (lua/route_cors.lua), unless the ConfigMap\'s add-headers sets one of them');
const PROXY_AT_HTTP = router('while equal to the ConfigMap\'s (the http level\'s); another value needs the directive in a location');
const TIMEOUT = router('ngx.balancer.set_timeouts, unless 0');
const REDIRECT = router('lua/route_redirect.lua, for 301, 302, 303, 307, 308 without a regex capture or $escaped_request_uri');
const SSL_REDIRECT = router('lua_ingress.rewrite, as in a location');
const CANARY = balancer('traffic shaping of the canary backend');
const AFFINITY = balancer('cookie affinity of the backend');
const HASH = balancer('consistent hashing of the backend');

export const ANNOTATION_ROUTING: Readonly<Record<string, AnnotationRouting>> = {
  // rewrite
  'rewrite-target': router('lua/route_rewrite.lua, unless the target is a URL or uses $0'),
  'use-regex': router('the router matches PCRE2 regexes in NGINX\'s order'),
  'app-root': router('lua/route_redirect.lua'),
  'ssl-redirect': SSL_REDIRECT,
  'force-ssl-redirect': SSL_REDIRECT,
  'preserve-trailing-slash': SSL_REDIRECT,
  'use-port-in-redirects': SSL_REDIRECT,
  'x-forwarded-prefix': router('lua/route_upstream_headers.lua, unless it names a capture or a variable'),
  // redirect
  'permanent-redirect': REDIRECT,
  'permanent-redirect-code': REDIRECT,
  'temporal-redirect': REDIRECT,
  'temporal-redirect-code': REDIRECT,
  'relative-redirects': REDIRECT,
  'from-to-www-redirect': keepsStatic('the other name needs a server block'),
  'server-alias': keepsStatic('server_name in a server block'),
  'ssl-passthrough': keepsStatic('the SNI stream server'),
  'ssl-ciphers': keepsStatic('ssl_ciphers in the server block'),
  'ssl-prefer-server-ciphers': keepsStatic('ssl_prefer_server_ciphers in the server block'),
  // snippets
  'configuration-snippet': keepsStatic('NGINX configuration in the location'),
  'server-snippet': keepsStatic('NGINX configuration in the server block'),
  'stream-snippet': router('goes into the stream block, whichever way the host is served'),
  // basic auth
  'auth-type': BASIC_AUTH,
  'auth-secret': BASIC_AUTH,
  'auth-secret-type': BASIC_AUTH,
  'auth-realm': BASIC_AUTH,
  // external auth
  'auth-url': AUTH_SUBREQUEST,
  'auth-signin': AUTH_SUBREQUEST,
  'auth-signin-redirect-param': AUTH_SUBREQUEST,
  'auth-response-headers': AUTH_SUBREQUEST,
  'auth-method': AUTH_SUBREQUEST,
  'auth-cache-key': AUTH_SUBREQUEST,
  'auth-cache-duration': AUTH_SUBREQUEST,
  'auth-keepalive': AUTH_SUBREQUEST,
  'auth-keepalive-requests': AUTH_SUBREQUEST,
  'auth-keepalive-timeout': AUTH_SUBREQUEST,
  'auth-keepalive-share-vars': AUTH_SUBREQUEST,
  'auth-proxy-set-headers': AUTH_SUBREQUEST,
  'auth-request-redirect': AUTH_SUBREQUEST,
  'auth-always-set-cookie': AUTH_SUBREQUEST,
  'auth-snippet': AUTH_SUBREQUEST,
  'enable-global-auth': router('only turns the ConfigMap\'s global-auth-url off: "false" leaves nothing to apply'),
  // client certificates
  'auth-tls-secret': CLIENT_CERTS,
  'auth-tls-verify-client': CLIENT_CERTS,
  'auth-tls-verify-depth': CLIENT_CERTS,
  'auth-tls-error-page': CLIENT_CERTS,
  'auth-tls-pass-certificate-to-upstream': CLIENT_CERTS,
  'auth-tls-match-cn': CLIENT_CERTS,
  // source ranges
  'allowlist-source-range': router('lua/route_access.lua, unless a network has a zone index or a list more than 5,000 networks'),
  'whitelist-source-range': router('lua/route_access.lua, as allowlist-source-range'),
  'denylist-source-range': router('lua/route_access.lua, as allowlist-source-range'),
  // rate limits
  'limit-rps': RATE_LIMITS,
  'limit-rpm': RATE_LIMITS,
  'limit-connections': RATE_LIMITS,
  'limit-burst-multiplier': RATE_LIMITS,
  'limit-rate': RATE_LIMITS,
  'limit-rate-after': RATE_LIMITS,
  'limit-allowlist': RATE_LIMITS,
  'limit-whitelist': RATE_LIMITS,
  // cors
  'enable-cors': CORS,
  'cors-allow-origin': CORS,
  'cors-allow-methods': CORS,
  'cors-allow-headers': CORS,
  'cors-expose-headers': CORS,
  'cors-allow-credentials': CORS,
  'cors-max-age': CORS,
  // proxy
  'proxy-connect-timeout': TIMEOUT,
  'proxy-read-timeout': TIMEOUT,
  'proxy-send-timeout': TIMEOUT,
  'proxy-next-upstream-tries': router('fewer tries from the balancer, while at most the ConfigMap\'s'),
  'proxy-body-size': PROXY_AT_HTTP,
  'proxy-buffer-size': PROXY_AT_HTTP,
  'proxy-buffers-number': PROXY_AT_HTTP,
  'proxy-buffering': PROXY_AT_HTTP,
  'proxy-request-buffering': PROXY_AT_HTTP,
  'proxy-next-upstream': PROXY_AT_HTTP,
  'proxy-next-upstream-timeout': PROXY_AT_HTTP,
  'proxy-http-version': PROXY_AT_HTTP,
  'client-body-buffer-size': PROXY_AT_HTTP,
  'proxy-busy-buffers-size': PROXY_AT_HTTP,
  'proxy-max-temp-file-size': PROXY_AT_HTTP,
  'proxy-cookie-domain': PROXY_AT_HTTP,
  'proxy-cookie-path': PROXY_AT_HTTP,
  'proxy-redirect-from': PROXY_AT_HTTP,
  'proxy-redirect-to': PROXY_AT_HTTP,
  // upstream TLS
  'proxy-ssl-secret': UPSTREAM_TLS,
  'proxy-ssl-verify': UPSTREAM_TLS,
  'proxy-ssl-verify-depth': UPSTREAM_TLS,
  'proxy-ssl-ciphers': UPSTREAM_TLS,
  'proxy-ssl-protocols': UPSTREAM_TLS,
  'proxy-ssl-name': UPSTREAM_TLS,
  'proxy-ssl-server-name': UPSTREAM_TLS,
  'upstream-vhost': router('lua/route_upstream_headers.lua: its variables evaluated per request, the location\'s ($service_name, …) as the route\'s'),
  'backend-protocol': router('HTTP only; the others need grpc_pass, proxy_ssl or fastcgi_pass in a location'),
  'connection-proxy-header': router('lua/route_upstream_headers.lua'),
  'fastcgi-index': keepsStatic('fastcgi_index in the location'),
  'fastcgi-params-configmap': keepsStatic('fastcgi_param in the location'),
  'custom-http-errors': keepsStatic('error_page and internal locations'),
  'disable-proxy-intercept-errors': router('does nothing without custom-http-errors, which keeps the host static'),
  'default-backend': balancer('the fallback while the backend has no endpoint'),
  'enable-access-log': router('unless "false" where the http level logs: access_log off needs a location'),
  'enable-rewrite-log': keepsStatic('rewrite_log in the location'),
  satisfy: keepsStatic('"any": NGINX\'s satisfy over auth_basic, auth_request and allow/deny in the location'),
  'mirror-target': MIRROR,
  'mirror-host': MIRROR,
  'mirror-request-body': MIRROR,
  'custom-headers': router('lua/route_headers.lua, unless a header NGINX sets itself or add-headers sets too'),
  'http2-push-preload': keepsStatic('http2_push_preload in the location'),
  'enable-modsecurity': MODSECURITY,
  'enable-owasp-core-rules': MODSECURITY,
  'modsecurity-transaction-id': MODSECURITY,
  'modsecurity-snippet': MODSECURITY,
  'enable-opentelemetry': OTEL,
  'opentelemetry-trust-incoming-span': OTEL,
  'opentelemetry-operation-name': OTEL,
  // backend policies
  canary: CANARY,
  'canary-by-header': CANARY,
  'canary-by-header-value': CANARY,
  'canary-by-header-pattern': CANARY,
  'canary-by-cookie': CANARY,
  'canary-weight': CANARY,
  'canary-weight-total': CANARY,
  affinity: AFFINITY,
  'affinity-mode': AFFINITY,
  'affinity-canary-behavior': AFFINITY,
  'session-cookie-name': AFFINITY,
  'session-cookie-path': AFFINITY,
  'session-cookie-domain': AFFINITY,
  'session-cookie-expires': AFFINITY,
  'session-cookie-max-age': AFFINITY,
  'session-cookie-secure': AFFINITY,
  'session-cookie-samesite': AFFINITY,
  'session-cookie-conditional-samesite-none': AFFINITY,
  'session-cookie-change-on-failure': AFFINITY,
  'load-balance': balancer('the backend\'s balancer'),
  'upstream-hash-by': HASH,
  'upstream-hash-by-subset': HASH,
  'upstream-hash-by-subset-size': HASH,
  'service-upstream': balancer('the backend\'s one endpoint, the Service\'s address'),
};

/** How a ConfigMap key reaches a dynamic host's request. */
export type ConfigMapRouting =
  /** Printed at the main, events, http or stream level (or in every server): the router's location inherits it as every location does. */
  | { readonly http: string }
  /** The default of these annotations: their decision applies to every Ingress that does not set them. */
  | { readonly annotations: readonly string[] }
  /** The router's location, or the Lua it runs, repeats what a static location prints. */
  | { readonly router: string }
  /** While set, every host is static: the reason. */
  | { readonly static: string }
  /** Read by the controller only (parsing, the model, the files it writes): nothing per request. */
  | { readonly controller: string };

const http = (what: string): ConfigMapRouting => ({ http: what });
const defaultOf = (...annotations: string[]): ConfigMapRouting => ({ annotations });
const controller = (what: string): ConfigMapRouting => ({ controller: what });

const TLS = http('the TLS settings of every HTTPS listener');
const HTTP = http('a directive of the http level');
const MAIN = http('a directive of the main or events level');
const STREAM = http('the stream block (TCP/UDP services, ssl-passthrough)');
const LOG = http('the access or error log of the http level, which the router\'s location repeats');
const GLOBAL_AUTH = defaultOf('auth-url');
const OTEL_SETTING = defaultOf('enable-opentelemetry');
const MODSEC_SETTING = defaultOf('enable-modsecurity');

export const CONFIGMAP_ROUTING: Readonly<Record<string, ConfigMapRouting>> = {
  'ssl-redirect': defaultOf('ssl-redirect'),
  'force-ssl-redirect': defaultOf('force-ssl-redirect'),
  'http-redirect-code': http('lua_ingress\'s configuration (init_by_lua), the same for every request'),
  hsts: http('lua_ingress.header() in every header filter, the router\'s location\'s too'),
  'hsts-max-age': http('as hsts'),
  'hsts-include-subdomains': http('as hsts'),
  'hsts-preload': http('as hsts'),
  'ssl-protocols': TLS,
  'ssl-ciphers': TLS,
  'ssl-prefer-server-ciphers': TLS,
  'ssl-ecdh-curve': TLS,
  'ssl-session-cache': TLS,
  'ssl-session-cache-size': TLS,
  'ssl-session-timeout': TLS,
  'ssl-session-tickets': TLS,
  'ssl-buffer-size': TLS,
  'ssl-early-data': TLS,
  'ssl-session-ticket-key': TLS,
  'ssl-dh-param': TLS,
  'enable-ocsp': TLS,
  'ssl-reject-handshake': { static: 'the default server refuses every handshake: a host without a server block would get no TLS' },
  'proxy-ssl-location-only': defaultOf('proxy-ssl-secret'),
  'no-tls-redirect-locations': defaultOf('ssl-redirect', 'force-ssl-redirect'),
  'no-auth-locations': defaultOf('auth-url', 'auth-type'),
  'proxy-connect-timeout': defaultOf('proxy-connect-timeout'),
  'proxy-read-timeout': defaultOf('proxy-read-timeout'),
  'proxy-send-timeout': defaultOf('proxy-send-timeout'),
  'proxy-body-size': defaultOf('proxy-body-size'),
  'proxy-buffer-size': defaultOf('proxy-buffer-size'),
  'proxy-buffers-number': defaultOf('proxy-buffers-number'),
  'proxy-buffering': defaultOf('proxy-buffering'),
  'proxy-request-buffering': defaultOf('proxy-request-buffering'),
  'proxy-next-upstream': defaultOf('proxy-next-upstream'),
  'proxy-next-upstream-timeout': defaultOf('proxy-next-upstream-timeout'),
  'proxy-next-upstream-tries': defaultOf('proxy-next-upstream-tries'),
  'proxy-http-version': defaultOf('proxy-http-version'),
  'client-body-buffer-size': defaultOf('client-body-buffer-size'),
  'proxy-headers-hash-max-size': HTTP,
  'proxy-headers-hash-bucket-size': HTTP,
  'proxy-add-original-uri-header': { router: 'the standard proxy headers, which the router\'s location prints as a location does' },
  'retry-non-idempotent': HTTP,
  'allow-backend-server-header': HTTP,
  'hide-headers': HTTP,
  'limit-rate': defaultOf('limit-rate'),
  'limit-rate-after': defaultOf('limit-rate-after'),
  'limit-req-status-code': HTTP,
  'limit-conn-status-code': HTTP,
  'custom-http-errors': defaultOf('custom-http-errors'),
  'disable-proxy-intercept-errors': defaultOf('disable-proxy-intercept-errors'),
  'proxy-cookie-domain': defaultOf('proxy-cookie-domain'),
  'proxy-cookie-path': defaultOf('proxy-cookie-path'),
  'proxy-redirect-from': defaultOf('proxy-redirect-from'),
  'proxy-redirect-to': defaultOf('proxy-redirect-to'),
  'proxy-busy-buffers-size': defaultOf('proxy-busy-buffers-size'),
  'proxy-max-temp-file-size': defaultOf('proxy-max-temp-file-size'),
  'relative-redirects': defaultOf('relative-redirects'),
  'use-port-in-redirects': defaultOf('use-port-in-redirects'),
  'preserve-trailing-slash': defaultOf('preserve-trailing-slash'),
  'global-allowed-response-headers': defaultOf('custom-headers'),
  'generate-request-id': HTTP,
  'default-type': HTTP,
  'gzip-disable': HTTP,
  'limit-conn-zone-variable': defaultOf('limit-connections'),
  'load-balance': defaultOf('load-balance'),
  'upstream-keepalive-connections': HTTP,
  'upstream-keepalive-timeout': HTTP,
  'upstream-keepalive-requests': HTTP,
  'upstream-keepalive-time': HTTP,
  'upstream-hash-by': defaultOf('upstream-hash-by'),
  'upstream-hash-by-subset': defaultOf('upstream-hash-by-subset'),
  'service-upstream': defaultOf('service-upstream'),
  'upstream-hash-by-subset-size': defaultOf('upstream-hash-by-subset-size'),
  'use-forwarded-headers': http('the maps of $pass_access_scheme, $pass_server_port and $best_http_host, and real-IP'),
  'compute-full-forwarded-for': http('the map of $full_x_forwarded_for'),
  'forwarded-for-header': { router: 'real-IP at the http level, and the standard proxy headers the router\'s location prints' },
  'forwarded-host-header': http('X-Original-Forwarded-Host of the standard proxy headers'),
  'forwarded-for-proxy-protocol-header': HTTP,
  'enable-real-ip': HTTP,
  'proxy-real-ip-cidr': HTTP,
  'use-proxy-protocol': http('every listener, the default server\'s among them'),
  'proxy-protocol-header-timeout': STREAM,
  'add-headers': http('more_set_headers at the http level; a route\'s own headers that name the same keep the Ingress static'),
  'proxy-set-headers': { router: 'the standard proxy headers, which the router\'s location prints as a location does' },
  'block-cidrs': http('a guard in every server, the default server among them'),
  'block-user-agents': http('as block-cidrs'),
  'block-referers': http('as block-cidrs'),
  'whitelist-source-range': defaultOf('allowlist-source-range'),
  'denylist-source-range': defaultOf('denylist-source-range'),
  'allow-snippet-annotations': defaultOf('configuration-snippet', 'server-snippet'),
  'annotations-risk-level': controller('which annotations are read'),
  'annotation-value-word-blocklist': controller('which annotation values are read'),
  'allow-cross-namespace-resources': controller('which Secrets and ConfigMaps annotations may name'),
  'strict-validate-path-type': controller('which paths are accepted'),
  'main-snippet': MAIN,
  'http-snippet': http('the http level; the router writes the location variables when it reads them'),
  'server-snippet': { static: 'it goes into every server block: a routed request leaves the default server\'s locations before NGINX would match theirs' },
  'location-snippet': { static: 'it goes into every location, which the router\'s location is not' },
  'stream-snippet': STREAM,
  'worker-processes': MAIN,
  'max-worker-connections': MAIN,
  'max-worker-open-files': MAIN,
  'worker-shutdown-timeout': MAIN,
  'reuse-port': http('the listeners of the default server'),
  'bind-address': http('every listener'),
  'disable-ipv6': http('every listener'),
  'disable-ipv6-dns': HTTP,
  'worker-cpu-affinity': MAIN,
  'enable-multi-accept': MAIN,
  'enable-aio-write': HTTP,
  'lua-shared-dicts': HTTP,
  'keep-alive': HTTP,
  'keep-alive-requests': HTTP,
  'use-http2': http('every HTTPS listener, the default server\'s among them'),
  'http2-max-concurrent-streams': HTTP,
  'client-header-buffer-size': HTTP,
  'large-client-header-buffers': HTTP,
  'client-header-timeout': HTTP,
  'client-body-timeout': HTTP,
  'enable-underscores-in-headers': HTTP,
  'ignore-invalid-headers': HTTP,
  'server-name-hash-bucket-size': HTTP,
  'server-name-hash-max-size': HTTP,
  'variables-hash-bucket-size': HTTP,
  'variables-hash-max-size': HTTP,
  'map-hash-bucket-size': HTTP,
  'server-tokens': HTTP,
  'use-gzip': HTTP,
  'gzip-level': HTTP,
  'grpc-buffer-size-kb': HTTP,
  'gzip-min-length': HTTP,
  'gzip-types': HTTP,
  'enable-brotli': HTTP,
  'brotli-level': HTTP,
  'brotli-min-length': HTTP,
  'brotli-types': HTTP,
  'enable-modsecurity': MODSEC_SETTING,
  'enable-owasp-modsecurity-crs': MODSEC_SETTING,
  'modsecurity-snippet': MODSEC_SETTING,
  'enable-opentelemetry': OTEL_SETTING,
  'opentelemetry-trust-incoming-span': OTEL_SETTING,
  'opentelemetry-operation-name': OTEL_SETTING,
  'otlp-collector-host': OTEL_SETTING,
  'otlp-collector-port': OTEL_SETTING,
  'otel-service-name': OTEL_SETTING,
  'otel-sampler': OTEL_SETTING,
  'otel-sampler-ratio': OTEL_SETTING,
  'otel-sampler-parent-based': OTEL_SETTING,
  'otel-max-queuesize': OTEL_SETTING,
  'otel-schedule-delay-millis': OTEL_SETTING,
  'otel-max-export-batch-size': OTEL_SETTING,
  'disable-access-log': defaultOf('enable-access-log'),
  'enable-access-log-for-default-backend': controller('the default backend\'s location, which is static'),
  'enable-auth-access-log': GLOBAL_AUTH,
  'global-auth-url': GLOBAL_AUTH,
  'global-auth-method': GLOBAL_AUTH,
  'global-auth-signin': GLOBAL_AUTH,
  'global-auth-signin-redirect-param': GLOBAL_AUTH,
  'global-auth-response-headers': GLOBAL_AUTH,
  'global-auth-request-redirect': GLOBAL_AUTH,
  'global-auth-snippet': GLOBAL_AUTH,
  'global-auth-cache-key': GLOBAL_AUTH,
  'global-auth-cache-duration': GLOBAL_AUTH,
  'global-auth-always-set-cookie': GLOBAL_AUTH,
  'log-format-upstream': LOG,
  'log-format-escape-json': LOG,
  'log-format-escape-none': LOG,
  'skip-access-log-urls': LOG,
  'access-log-path': LOG,
  'http-access-log-path': LOG,
  'stream-access-log-path': STREAM,
  'error-log-path': LOG,
  'disable-http-access-log': LOG,
  'disable-stream-access-log': STREAM,
  'error-log-level': LOG,
  'use-geoip2': HTTP,
  'access-log-params': LOG,
  'log-format-stream': STREAM,
  'enable-syslog': LOG,
  'syslog-host': LOG,
  'syslog-port': LOG,
  'debug-connections': MAIN,
  'proxy-stream-timeout': STREAM,
  'proxy-stream-next-upstream': STREAM,
  'proxy-stream-next-upstream-timeout': STREAM,
  'proxy-stream-next-upstream-tries': STREAM,
  'proxy-stream-responses': STREAM,
};

/** The decision as one line of the generated docs. */
export function routingText(r: AnnotationRouting | ConfigMapRouting): string {
  if ('router' in r) return `router: ${r.router}`;
  if ('balancer' in r) return `balancer: ${r.balancer}`;
  if ('static' in r) return `static: ${r.static}`;
  if ('http' in r) return `http level: ${r.http}`;
  if ('annotations' in r) return `as ${r.annotations.map((a) => `\`${a}\``).join(', ')}`;
  return `controller: ${r.controller}`;
}
