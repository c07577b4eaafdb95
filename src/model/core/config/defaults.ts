// ingress-nginx's defaults for the main ConfigMap, as typed NginxSettings.
import type { NginxSettings } from './settings.js';

export const DEFAULT_SSL_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
  'DHE-RSA-AES256-GCM-SHA384', 'DHE-RSA-AES128-GCM-SHA256',
].join(':');

export const DEFAULT_COMPRESSION_TYPES = [
  'application/atom+xml', 'application/javascript', 'application/x-javascript', 'application/json',
  'application/rss+xml', 'application/vnd.ms-fontobject', 'application/x-font-ttf',
  'application/x-web-app-manifest+json', 'application/xhtml+xml', 'application/xml', 'font/opentype',
  'image/svg+xml', 'image/x-icon', 'text/css', 'text/javascript', 'text/plain', 'text/x-component',
];

/** ingress-nginx's brotli-types: the gzip types and application/xml+rss first. */
export const DEFAULT_BROTLI_TYPES = ['application/xml+rss', ...DEFAULT_COMPRESSION_TYPES];

export const DEFAULT_LOG_FORMAT_UPSTREAM =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" ' +
  '"$http_user_agent" $request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] ' +
  '$upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id';

export const DEFAULT_LOG_FORMAT_STREAM = '[$remote_addr] [$time_local] $protocol $status $bytes_sent $bytes_received $session_time';

/** A fresh copy of the defaults (callers may mutate it). */
export function defaultSettings(): NginxSettings {
  return {
    sslRedirect: true,
    forceSSLRedirect: false,
    httpRedirectCode: 308,
    hsts: true,
    hstsMaxAge: 31536000,
    hstsIncludeSubdomains: true,
    hstsPreload: false,
    sslProtocols: ['TLSv1.2', 'TLSv1.3'],
    sslCiphers: DEFAULT_SSL_CIPHERS,

    proxyConnectTimeout: 5,
    proxyReadTimeout: 60,
    proxySendTimeout: 60,
    proxyBodySize: '1m',
    proxyBufferSize: '4k',
    proxyBuffersNumber: 4,
    proxyBuffering: 'off',
    proxyRequestBuffering: 'on',
    proxyNextUpstream: ['error', 'timeout'],
    proxyNextUpstreamTimeout: 0,
    proxyNextUpstreamTries: 3,
    proxyHttpVersion: '1.1',
    clientBodyBufferSize: '8k',

    loadBalance: 'round_robin',
    upstreamKeepaliveConnections: 320,
    upstreamKeepaliveTimeout: 60,
    upstreamKeepaliveRequests: 10000,

    useForwardedHeaders: false,
    computeFullForwardedFor: false,
    forwardedForHeader: 'X-Forwarded-For',
    addHeaders: {},
    proxySetHeaders: {},

    blockCidrs: [],
    blockUserAgents: [],
    blockReferers: [],

    allowSnippetAnnotations: false,
    annotationsRiskLevel: 'High',
    annotationValueWordBlocklist: [],
    allowCrossNamespaceResources: false,
    strictValidatePathType: true,

    workerProcesses: 'auto',
    workerConnections: 16384,
    enableAccessLog: true,
    useGeoip2: false,
    customHttpErrors: [],
    serverNamesHashBucketSize: 64,
    serverNamesHashMaxSize: 1024,
    variablesHashBucketSize: 256,
    variablesHashMaxSize: 2048,
    keepAlive: 75,
    keepAliveRequests: 1000,
    useHttp2: true,

    sslSessionCache: true,
    sslSessionCacheSize: '10m',
    sslSessionTimeout: '10m',
    sslSessionTickets: false,
    sslBufferSize: '4k',
    sslEcdhCurve: 'auto',
    sslPreferServerCiphers: true,
    sslEarlyData: false,
    sslRejectHandshake: false,
    sslDHParam: null,
    sslSessionTicketKey: '',
    enableOCSP: false,
    proxySSLLocationOnly: false,
    noTLSRedirectLocations: ['/.well-known/acme-challenge'],
    noAuthLocations: ['/.well-known/acme-challenge'],

    clientHeaderBufferSize: '1k',
    largeClientHeaderBuffers: '4 8k',
    clientHeaderTimeout: 60,
    clientBodyTimeout: 60,
    enableUnderscoresInHeaders: false,
    ignoreInvalidHeaders: true,
    http2MaxConcurrentStreams: 128,

    proxyHeadersHashMaxSize: 512,
    proxyHeadersHashBucketSize: 64,
    proxyAddOriginalUriHeader: false,
    retryNonIdempotent: false,
    allowBackendServerHeader: false,
    hideHeaders: [],
    upstreamKeepaliveTime: '1h',
    limitRate: 0,
    limitRateAfter: 0,
    limitReqStatusCode: 503,
    limitConnStatusCode: 503,

    enableRealIp: false,
    proxyRealIpCidr: ['0.0.0.0/0'],
    useProxyProtocol: false,
    proxyProtocolHeaderTimeout: 5,

    whitelistSourceRange: [],
    denylistSourceRange: [],

    useGzip: false,
    gzipLevel: 1,
    gzipMinLength: 256,
    gzipTypes: [...DEFAULT_COMPRESSION_TYPES],
    enableBrotli: false,
    brotliLevel: 4,
    brotliMinLength: 20,
    brotliTypes: [...DEFAULT_BROTLI_TYPES],

    enableModsecurity: false,
    enableOwaspModsecurityCrs: false,
    modsecuritySnippet: [],

    enableOpentelemetry: false,
    opentelemetryTrustIncomingSpan: true,
    opentelemetryOperationName: '',
    otlpCollectorHost: '',
    // OTLP/HTTP's port (ingress-nginx: 4317, OTLP/gRPC's; ingress-rx exports OTLP/HTTP).
    otlpCollectorPort: 4318,
    otelServiceName: 'nginx',
    otelSampler: 'AlwaysOn',
    otelSamplerRatio: 0.01,
    otelSamplerParentBased: true,
    otelMaxQueuesize: 2048,
    otelScheduleDelayMillis: 5000,
    otelMaxExportBatchSize: 512,

    logFormatUpstream: DEFAULT_LOG_FORMAT_UPSTREAM,
    logFormatEscapeJson: false,
    logFormatEscapeNone: false,
    skipAccessLogUrls: [],
    enableAccessLogForDefaultBackend: false,
    enableAuthAccessLog: false,
    accessLogPath: '',
    httpAccessLogPath: '',
    streamAccessLogPath: '',
    errorLogPath: '',
    disableHttpAccessLog: false,
    disableStreamAccessLog: false,
    errorLogLevel: 'notice',
    serverTokens: false,

    globalAuthUrl: '',
    globalAuthMethod: '',
    globalAuthSignin: '',
    globalAuthSigninRedirectParam: '',
    globalAuthResponseHeaders: [],
    globalAuthRequestRedirect: '',
    globalAuthSnippet: '',
    globalAuthCacheKey: '',
    globalAuthCacheDuration: ['200 202 401 5m'],
    globalAuthAlwaysSetCookie: false,

    maxWorkerOpenFiles: 0,
    workerShutdownTimeout: '240s',
    reusePort: true,
    mapHashBucketSize: 64,

    proxyCookieDomain: 'off',
    proxyCookiePath: 'off',
    proxyRedirectFrom: 'off',
    proxyRedirectTo: 'off',
    proxyBusyBuffersSize: '',
    proxyMaxTempFileSize: '1024m',
    relativeRedirects: false,
    usePortInRedirects: false,
    preserveTrailingSlash: false,
    disableProxyInterceptErrors: false,
    upstreamHashBy: '',
    upstreamHashBySubset: false,
    upstreamHashBySubsetSize: 3,
    serviceUpstream: false,
    globalAllowedResponseHeaders: [],
    generateRequestId: true,
    forwardedHostHeader: 'X-Forwarded-Host',
    forwardedForProxyProtocolHeader: 'X-Forwarded-For-Proxy-Protocol',
    gzipDisable: '',
    defaultType: 'text/html',
    limitConnZoneVariable: '$binary_remote_addr',

    logFormatStream: DEFAULT_LOG_FORMAT_STREAM,
    proxyStreamTimeout: '600s',
    proxyStreamNextUpstream: true,
    proxyStreamNextUpstreamTimeout: '600s',
    proxyStreamNextUpstreamTries: 3,
    proxyStreamResponses: 1,

    accessLogParams: '',
    enableSyslog: false,
    syslogHost: '',
    syslogPort: 514,
    debugConnections: [],

    bindAddress: [],
    disableIpv6: false,
    disableIpv6Dns: false,
    workerCpuAffinity: '',
    enableMultiAccept: true,
    enableAioWrite: true,
    luaSharedDicts: {},

    mainSnippet: '',
    httpSnippet: '',
    serverSnippet: '',
    locationSnippet: '',
    streamSnippet: '',
  };
}
