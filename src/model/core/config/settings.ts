// Typed settings from the main ConfigMap (--configmap), with ingress-nginx's defaults.
// The parser in ./parse.ts fills these from ConfigMap data; the renderer reads only these.
// Starter set: the ConfigMap-parser work extends this interface (keep names stable).

export interface NginxSettings {
  // SSL / redirects
  sslRedirect: boolean;
  forceSSLRedirect: boolean;
  httpRedirectCode: number;
  hsts: boolean;
  hstsMaxAge: number;
  hstsIncludeSubdomains: boolean;
  hstsPreload: boolean;
  sslProtocols: string[];
  sslCiphers: string;

  // proxy defaults (annotations default from these)
  proxyConnectTimeout: number;
  proxyReadTimeout: number;
  proxySendTimeout: number;
  proxyBodySize: string;
  proxyBufferSize: string;
  proxyBuffersNumber: number;
  proxyBuffering: 'on' | 'off';
  proxyRequestBuffering: 'on' | 'off';
  proxyNextUpstream: string[];
  proxyNextUpstreamTimeout: number;
  proxyNextUpstreamTries: number;
  proxyHttpVersion: '1.0' | '1.1';
  clientBodyBufferSize: string;

  // upstreams
  loadBalance: string;
  upstreamKeepaliveConnections: number;
  upstreamKeepaliveTimeout: number;
  upstreamKeepaliveRequests: number;

  // headers
  useForwardedHeaders: boolean;
  computeFullForwardedFor: boolean;
  forwardedForHeader: string;
  /** header name → value, from the ConfigMap named by `add-headers`. */
  addHeaders: Record<string, string>;
  /** header name → value, from the ConfigMap named by `proxy-set-headers`. */
  proxySetHeaders: Record<string, string>;

  // blocking
  blockCidrs: string[];
  blockUserAgents: string[];
  blockReferers: string[];

  // snippets and risk
  allowSnippetAnnotations: boolean;
  annotationsRiskLevel: 'Low' | 'Medium' | 'High' | 'Critical';
  annotationValueWordBlocklist: string[];
  /** allow-cross-namespace-resources: annotations may name Secrets in other namespaces. */
  allowCrossNamespaceResources: boolean;
  strictValidatePathType: boolean;

  // workers, logs, misc
  workerProcesses: string;
  workerConnections: number;
  enableAccessLog: boolean;
  useGeoip2: boolean;
  customHttpErrors: number[];
  serverNamesHashBucketSize: number;
  serverNamesHashMaxSize: number;
  variablesHashBucketSize: number;
  variablesHashMaxSize: number;
  keepAlive: number;
  keepAliveRequests: number;
  useHttp2: boolean;
  enableCors?: never; // CORS is per-Ingress only

  // ---- added by the ConfigMap parser (src/model/core/config/parse.ts); names follow the keys.
  // SSL
  sslSessionCache: boolean;
  sslSessionCacheSize: string;
  sslSessionTimeout: string;
  sslSessionTickets: boolean;
  sslBufferSize: string;
  sslEcdhCurve: string;
  sslPreferServerCiphers: boolean;
  sslEarlyData: boolean;
  /** ssl_reject_handshake in the default server: no TLS for a name no server has (or no name). */
  sslRejectHandshake: boolean;
  /** ssl-dh-param: the DH parameters (PEM) read from `dhparam.pem` of the Secret the key names, or null. */
  sslDHParam: { readonly secret: string; readonly pem: string } | null;
  /** ssl-session-ticket-key: base64 of 48 or 80 bytes, '' for NGINX's own keys (new at each start and reload). */
  sslSessionTicketKey: string;
  /** enable-ocsp: staple OCSP responses fetched (by Lua) from each certificate's responder. */
  enableOCSP: boolean;
  /** proxy-ssl-location-only: proxy-ssl-* only in the locations of the Ingress, not in the server block. */
  proxySSLLocationOnly: boolean;
  /** Paths exempt from the SSL redirect (ACME challenges). */
  noTLSRedirectLocations: string[];
  /** Paths exempt from external auth. */
  noAuthLocations: string[];

  // client side
  clientHeaderBufferSize: string;
  /** `number size`, e.g. `4 8k`. */
  largeClientHeaderBuffers: string;
  clientHeaderTimeout: number;
  clientBodyTimeout: number;
  enableUnderscoresInHeaders: boolean;
  ignoreInvalidHeaders: boolean;
  http2MaxConcurrentStreams: number;

  // proxy extras
  proxyHeadersHashMaxSize: number;
  proxyHeadersHashBucketSize: number;
  proxyAddOriginalUriHeader: boolean;
  retryNonIdempotent: boolean;
  allowBackendServerHeader: boolean;
  /** Response header names hidden from clients (proxy_hide_header). */
  hideHeaders: string[];
  upstreamKeepaliveTime: string;
  limitRate: number;
  limitRateAfter: number;
  limitReqStatusCode: number;
  limitConnStatusCode: number;

  // real IP / proxy protocol
  enableRealIp: boolean;
  proxyRealIpCidr: string[];
  useProxyProtocol: boolean;
  proxyProtocolHeaderTimeout: number;

  // global allow/deny lists (annotations default from these)
  whitelistSourceRange: string[];
  denylistSourceRange: string[];

  /** grpc-buffer-size-kb: grpc_buffer_size in KB; 0 leaves NGINX's. */
  grpcBufferSizeKb: number;

  // compression
  useGzip: boolean;
  gzipLevel: number;
  gzipMinLength: number;
  gzipTypes: string[];
  enableBrotli: boolean;
  brotliLevel: number;
  brotliMinLength: number;
  brotliTypes: string[];

  // ModSecurity (annotations enable-modsecurity, enable-owasp-core-rules override per Ingress)
  enableModsecurity: boolean;
  enableOwaspModsecurityCrs: boolean;
  /** modsecurity-snippet as ModSecurity reads it, in pieces NGINX takes as one parameter each. */
  modsecuritySnippet: string[];

  // OpenTelemetry (annotations enable-opentelemetry, opentelemetry-* override per Ingress)
  enableOpentelemetry: boolean;
  opentelemetryTrustIncomingSpan: boolean;
  /** The span name; '' names a span after its location. Letters, digits, `-_./:`, spaces and `$variables`. */
  opentelemetryOperationName: string;
  /** Host name or address of the OTLP/HTTP receiver; '' exports nothing. */
  otlpCollectorHost: string;
  otlpCollectorPort: number;
  otelServiceName: string;
  otelSampler: 'AlwaysOn' | 'AlwaysOff' | 'TraceIdRatioBased';
  otelSamplerRatio: number;
  otelSamplerParentBased: boolean;
  otelMaxQueuesize: number;
  otelScheduleDelayMillis: number;
  otelMaxExportBatchSize: number;

  // logs
  /** Validated: no `'`, backslash or control characters (rendered inside single quotes). */
  logFormatUpstream: string;
  logFormatEscapeJson: boolean;
  logFormatEscapeNone: boolean;
  skipAccessLogUrls: string[];
  enableAccessLogForDefaultBackend: boolean;
  enableAuthAccessLog: boolean;
  /** Log files; '' means the runtime's (under the NGINX prefix). http/stream paths override accessLogPath. */
  accessLogPath: string;
  httpAccessLogPath: string;
  streamAccessLogPath: string;
  errorLogPath: string;
  disableHttpAccessLog: boolean;
  disableStreamAccessLog: boolean;
  errorLogLevel: 'debug' | 'info' | 'notice' | 'warn' | 'error' | 'crit' | 'alert' | 'emerg';
  serverTokens: boolean;

  // global external auth (global-auth-*): every location without auth-url, unless enable-global-auth is false
  /** '' when unset (no global auth); validated as auth-url is. */
  globalAuthUrl: string;
  globalAuthMethod: string;
  globalAuthSignin: string;
  /** '' is `rd`. */
  globalAuthSigninRedirectParam: string;
  globalAuthResponseHeaders: string[];
  globalAuthRequestRedirect: string;
  /** Directives of the global auth location, structure-checked as snippets are. */
  globalAuthSnippet: string;
  globalAuthCacheKey: string;
  globalAuthCacheDuration: string[];
  globalAuthAlwaysSetCookie: boolean;

  // workers
  maxWorkerOpenFiles: number;
  workerShutdownTimeout: string;
  reusePort: boolean;
  mapHashBucketSize: number;

  // proxy details (annotation defaults from these)
  /** `off` or `domain replacement` (proxy_cookie_domain). */
  proxyCookieDomain: string;
  /** `off` or `path replacement` (proxy_cookie_path). */
  proxyCookiePath: string;
  /** `off`, `default` or the text to replace in Location/Refresh (proxy_redirect's first parameter). */
  proxyRedirectFrom: string;
  /** The replacement, or `off` (proxy_redirect's second parameter). */
  proxyRedirectTo: string;
  /** proxy_busy_buffers_size; '' is NGINX's own (twice proxy-buffer-size). */
  proxyBusyBuffersSize: string;
  proxyMaxTempFileSize: string;
  relativeRedirects: boolean;
  usePortInRedirects: boolean;
  preserveTrailingSlash: boolean;
  disableProxyInterceptErrors: boolean;
  upstreamHashBy: string;
  upstreamHashBySubset: boolean;
  upstreamHashBySubsetSize: number;
  serviceUpstream: boolean;
  /** Response headers the custom-headers annotation may set (global-allowed-response-headers). */
  globalAllowedResponseHeaders: string[];
  generateRequestId: boolean;
  forwardedHostHeader: string;
  forwardedForProxyProtocolHeader: string;
  /** A PCRE regex of User-Agents not gzipped; '' = none. */
  gzipDisable: string;
  defaultType: string;
  /** The key of limit-connections / limit-rps / limit-rpm zones: NGINX variables. */
  limitConnZoneVariable: string;

  // L4 (the stream block)
  /** Validated as log-format-upstream is (rendered inside single quotes). */
  logFormatStream: string;
  proxyStreamTimeout: string;
  proxyStreamNextUpstream: boolean;
  proxyStreamNextUpstreamTimeout: string;
  proxyStreamNextUpstreamTries: number;
  proxyStreamResponses: number;

  // logs
  /** access_log parameters (buffer=, flush=, gzip); '' = none. */
  accessLogParams: string;
  enableSyslog: boolean;
  /** A host name or IP address ('' with enable-syslog: syslog is not used, with a warning). */
  syslogHost: string;
  syslogPort: number;
  /** Addresses or CIDRs whose connections log at debug level. */
  debugConnections: string[];

  // server and process
  /** Addresses the listeners bind to (IPv4 and IPv6 mixed); empty = the runtime's. */
  bindAddress: string[];
  disableIpv6: boolean;
  disableIpv6Dns: boolean;
  /** worker_cpu_affinity: `auto`, `auto <mask>` or one bit mask per worker; '' = none. */
  workerCpuAffinity: string;
  enableMultiAccept: boolean;
  enableAioWrite: boolean;
  /** Lua shared dictionaries by name, in KB: sizes for ours, or dictionaries of the operator's own. */
  luaSharedDicts: Record<string, number>;

  // the operator's snippets (Critical: kept only when annotations-risk-level is Critical)
  mainSnippet: string;
  httpSnippet: string;
  serverSnippet: string;
  locationSnippet: string;
  streamSnippet: string;
}
