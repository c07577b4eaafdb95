// Tests for the main ConfigMap parser: defaults, every key parsed, invalid values and unknown
// keys warned about by key, header ConfigMaps read from the store, hostile values refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONFIGMAP_KEYS, defaultSettings, parseConfigMap } from '../../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import { nginxUnescape } from '../../../../src/model/checks/nginx-escape.js';
import { quoteForNginx } from '../../../../src/model/checks/seclang.js';
import type { ConfigMap, Secret } from '../../../../src/store/kube-types.js';
import { execFileSync } from 'node:child_process';
import type { StoreReader } from '../../../../src/store/types.js';
import { HOSTILE_VALUES, isNginxSafe, stringsIn } from '../../../support/hostile.js';
import { snippetProblem } from '../../../../src/model/checks/snippet-check.js';

const OBJECT = 'ConfigMap ingress-nginx/ingress-nginx-controller';
const TICKET_KEY_80 = Buffer.alloc(80, 7).toString('base64');

function storeWith(configMaps: ConfigMap[], secrets: Secret[] = []): StoreReader {
  const byKey = new Map(configMaps.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
  const secretsByKey = new Map(secrets.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
  return { getConfigMap: (k: string) => byKey.get(k), getSecret: (k: string) => secretsByKey.get(k) } as unknown as StoreReader;
}

const parse = (data: Record<string, string>, store?: StoreReader) => parseConfigMap(data, { object: OBJECT, store });

test('defaults are ingress-nginx defaults', () => {
  const { settings, warnings } = parse({});
  assert.equal(warnings, []);
  const s = settings;
  assert.equal(
    [s.sslRedirect, s.forceSSLRedirect, s.httpRedirectCode, s.hsts, s.hstsMaxAge, s.hstsIncludeSubdomains, s.hstsPreload],
    [true, false, 308, true, 31536000, true, false],
  );
  assert.equal([s.proxyConnectTimeout, s.proxyReadTimeout, s.proxySendTimeout, s.proxyBodySize, s.proxyBufferSize, s.proxyBuffering], [5, 60, 60, '1m', '4k', 'off']);
  assert.equal([s.loadBalance, s.upstreamKeepaliveConnections, s.upstreamKeepaliveTimeout, s.upstreamKeepaliveRequests], ['round_robin', 320, 60, 10000]);
  assert.equal([s.useForwardedHeaders, s.allowSnippetAnnotations, s.annotationsRiskLevel, s.strictValidatePathType], [false, false, 'High', true]);
  assert.equal(s.sslProtocols, ['TLSv1.2', 'TLSv1.3']);
  assert.equal(s.proxyNextUpstream, ['error', 'timeout']);
  assert.equal(parseConfigMap(undefined, { object: OBJECT }).settings, defaultSettings());
});

test('defaultSettings returns a fresh object each time', () => {
  const a = defaultSettings();
  a.sslProtocols.push('TLSv1');
  assert.equal(defaultSettings().sslProtocols, ['TLSv1.2', 'TLSv1.3']);
});

/** key → [valid raw value, field, expected typed value]. */
const VALID: Record<string, [string, keyof NginxSettings, unknown]> = {
  'ssl-redirect': ['false', 'sslRedirect', false],
  'force-ssl-redirect': ['true', 'forceSSLRedirect', true],
  'http-redirect-code': ['301', 'httpRedirectCode', 301],
  hsts: ['false', 'hsts', false],
  'hsts-max-age': ['15724800', 'hstsMaxAge', 15724800],
  'hsts-include-subdomains': ['false', 'hstsIncludeSubdomains', false],
  'hsts-preload': ['true', 'hstsPreload', true],
  'ssl-protocols': ['TLSv1.3', 'sslProtocols', ['TLSv1.3']],
  'ssl-ciphers': ['ECDHE-RSA-AES128-GCM-SHA256:!aNULL', 'sslCiphers', 'ECDHE-RSA-AES128-GCM-SHA256:!aNULL'],
  'ssl-prefer-server-ciphers': ['false', 'sslPreferServerCiphers', false],
  'ssl-ecdh-curve': ['X25519:prime256v1', 'sslEcdhCurve', 'X25519:prime256v1'],
  'ssl-session-cache': ['false', 'sslSessionCache', false],
  'ssl-session-cache-size': ['20m', 'sslSessionCacheSize', '20m'],
  'ssl-session-timeout': ['1h', 'sslSessionTimeout', '1h'],
  'ssl-session-tickets': ['true', 'sslSessionTickets', true],
  'ssl-buffer-size': ['16k', 'sslBufferSize', '16k'],
  'ssl-early-data': ['true', 'sslEarlyData', true],
  'no-tls-redirect-locations': ['/.well-known/acme-challenge,/health', 'noTLSRedirectLocations', ['/.well-known/acme-challenge', '/health']],
  'no-auth-locations': ['/public', 'noAuthLocations', ['/public']],
  'proxy-connect-timeout': ['10', 'proxyConnectTimeout', 10],
  'proxy-read-timeout': ['600', 'proxyReadTimeout', 600],
  'proxy-send-timeout': ['30', 'proxySendTimeout', 30],
  'proxy-body-size': ['100m', 'proxyBodySize', '100m'],
  'proxy-buffer-size': ['8k', 'proxyBufferSize', '8k'],
  'proxy-buffers-number': ['8', 'proxyBuffersNumber', 8],
  'proxy-buffering': ['on', 'proxyBuffering', 'on'],
  'proxy-request-buffering': ['off', 'proxyRequestBuffering', 'off'],
  'proxy-next-upstream': ['error timeout http_503', 'proxyNextUpstream', ['error', 'timeout', 'http_503']],
  'proxy-next-upstream-timeout': ['999999', 'proxyNextUpstreamTimeout', 999999],
  'proxy-next-upstream-tries': ['888888', 'proxyNextUpstreamTries', 888888],
  'proxy-http-version': ['1.0', 'proxyHttpVersion', '1.0'],
  'client-body-buffer-size': ['16k', 'clientBodyBufferSize', '16k'],
  'proxy-headers-hash-max-size': ['1024', 'proxyHeadersHashMaxSize', 1024],
  'proxy-headers-hash-bucket-size': ['128', 'proxyHeadersHashBucketSize', 128],
  'proxy-add-original-uri-header': ['true', 'proxyAddOriginalUriHeader', true],
  'retry-non-idempotent': ['true', 'retryNonIdempotent', true],
  'allow-backend-server-header': ['true', 'allowBackendServerHeader', true],
  'hide-headers': ['X-Powered-By, Server', 'hideHeaders', ['X-Powered-By', 'Server']],
  'limit-rate': ['100', 'limitRate', 100],
  'limit-rate-after': ['500', 'limitRateAfter', 500],
  'limit-req-status-code': ['429', 'limitReqStatusCode', 429],
  'limit-conn-status-code': ['429', 'limitConnStatusCode', 429],
  'custom-http-errors': ['404,500,503', 'customHttpErrors', [404, 500, 503]],
  'load-balance': ['ewma', 'loadBalance', 'ewma'],
  'upstream-keepalive-connections': ['64', 'upstreamKeepaliveConnections', 64],
  'upstream-keepalive-timeout': ['30', 'upstreamKeepaliveTimeout', 30],
  'upstream-keepalive-requests': ['100', 'upstreamKeepaliveRequests', 100],
  'upstream-keepalive-time': ['30m', 'upstreamKeepaliveTime', '30m'],
  'use-forwarded-headers': ['true', 'useForwardedHeaders', true],
  'compute-full-forwarded-for': ['true', 'computeFullForwardedFor', true],
  'forwarded-for-header': ['X-Real-IP', 'forwardedForHeader', 'X-Real-IP'],
  'enable-real-ip': ['true', 'enableRealIp', true],
  'proxy-real-ip-cidr': ['10.0.0.0/8,192.168.0.0/16', 'proxyRealIpCidr', ['10.0.0.0/8', '192.168.0.0/16']],
  'use-proxy-protocol': ['true', 'useProxyProtocol', true],
  'proxy-protocol-header-timeout': ['10s', 'proxyProtocolHeaderTimeout', 10],
  'block-cidrs': ['1.2.3.4,5.6.0.0/16', 'blockCidrs', ['1.2.3.4', '5.6.0.0/16']],
  'block-user-agents': ['~*curl,BadBot/1.0', 'blockUserAgents', ['~*curl', 'BadBot/1.0']],
  'block-referers': ['~*spam\\.com', 'blockReferers', ['~*spam\\.com']],
  'whitelist-source-range': ['10.0.0.0/8', 'whitelistSourceRange', ['10.0.0.0/8']],
  'denylist-source-range': ['1.2.3.4', 'denylistSourceRange', ['1.2.3.4']],
  'allow-snippet-annotations': ['true', 'allowSnippetAnnotations', true],
  'annotations-risk-level': ['Critical', 'annotationsRiskLevel', 'Critical'],
  'annotation-value-word-blocklist': ['load_module, lua_package,_by_lua,{,}', 'annotationValueWordBlocklist', ['load_module', 'lua_package', '_by_lua', '{', '}']],
  'allow-cross-namespace-resources': ['true', 'allowCrossNamespaceResources', true],
  'strict-validate-path-type': ['false', 'strictValidatePathType', false],
  'worker-processes': ['4', 'workerProcesses', '4'],
  'max-worker-connections': ['65536', 'workerConnections', 65536],
  'max-worker-open-files': ['100000', 'maxWorkerOpenFiles', 100000],
  'worker-shutdown-timeout': ['10s', 'workerShutdownTimeout', '10s'],
  'reuse-port': ['false', 'reusePort', false],
  'keep-alive': ['30', 'keepAlive', 30],
  'keep-alive-requests': ['100', 'keepAliveRequests', 100],
  'use-http2': ['false', 'useHttp2', false],
  'http2-max-concurrent-streams': ['256', 'http2MaxConcurrentStreams', 256],
  'client-header-buffer-size': ['2k', 'clientHeaderBufferSize', '2k'],
  'large-client-header-buffers': ['8 16k', 'largeClientHeaderBuffers', '8 16k'],
  'client-header-timeout': ['10', 'clientHeaderTimeout', 10],
  'client-body-timeout': ['20', 'clientBodyTimeout', 20],
  'enable-underscores-in-headers': ['true', 'enableUnderscoresInHeaders', true],
  'ignore-invalid-headers': ['false', 'ignoreInvalidHeaders', false],
  'server-name-hash-bucket-size': ['128', 'serverNamesHashBucketSize', 128],
  'server-name-hash-max-size': ['4096', 'serverNamesHashMaxSize', 4096],
  'variables-hash-bucket-size': ['512', 'variablesHashBucketSize', 512],
  'variables-hash-max-size': ['4096', 'variablesHashMaxSize', 4096],
  'map-hash-bucket-size': ['128', 'mapHashBucketSize', 128],
  'server-tokens': ['true', 'serverTokens', true],
  'use-gzip': ['true', 'useGzip', true],
  'gzip-level': ['5', 'gzipLevel', 5],
  'grpc-buffer-size-kb': ['8', 'grpcBufferSizeKb', 8],
  'gzip-min-length': ['1000', 'gzipMinLength', 1000],
  'gzip-types': ['text/html application/json', 'gzipTypes', ['text/html', 'application/json']],
  'enable-brotli': ['true', 'enableBrotli', true],
  'brotli-level': ['6', 'brotliLevel', 6],
  'brotli-min-length': ['100', 'brotliMinLength', 100],
  'brotli-types': ['text/css', 'brotliTypes', ['text/css']],
  'enable-modsecurity': ['true', 'enableModsecurity', true],
  'enable-owasp-modsecurity-crs': ['true', 'enableOwaspModsecurityCrs', true],
  'modsecurity-snippet': ['SecRuleEngine On\nSecRule ARGS \\"@rx a\\" \\"id:1,msg:\\\'x\\\'\\"', 'modsecuritySnippet', ['SecRuleEngine On\nSecRule ARGS "@rx a" "id:1,msg:\'x\'"']],
  'disable-access-log': ['true', 'enableAccessLog', false],
  'enable-access-log-for-default-backend': ['true', 'enableAccessLogForDefaultBackend', true],
  'log-format-upstream': ['$remote_addr "$request" $status', 'logFormatUpstream', '$remote_addr "$request" $status'],
  'log-format-escape-json': ['true', 'logFormatEscapeJson', true],
  'log-format-escape-none': ['true', 'logFormatEscapeNone', true],
  'skip-access-log-urls': ['/health,/metrics', 'skipAccessLogUrls', ['/health', '/metrics']],
  'error-log-level': ['warn', 'errorLogLevel', 'warn'],
  'access-log-path': ['/var/log/nginx/access.log', 'accessLogPath', '/var/log/nginx/access.log'],
  'http-access-log-path': ['/dev/stdout', 'httpAccessLogPath', '/dev/stdout'],
  'stream-access-log-path': ['/var/log/nginx/stream.log', 'streamAccessLogPath', '/var/log/nginx/stream.log'],
  'error-log-path': ['/dev/stderr', 'errorLogPath', '/dev/stderr'],
  'disable-http-access-log': ['true', 'disableHttpAccessLog', true],
  'enable-auth-access-log': ['true', 'enableAuthAccessLog', true],
  'global-auth-url': ['http://auth.sso.svc:8080/check', 'globalAuthUrl', 'http://auth.sso.svc:8080/check'],
  'global-auth-method': ['POST', 'globalAuthMethod', 'POST'],
  'global-auth-signin': ['https://login.example.com/start', 'globalAuthSignin', 'https://login.example.com/start'],
  'global-auth-signin-redirect-param': ['orig', 'globalAuthSigninRedirectParam', 'orig'],
  'global-auth-response-headers': ['X-User, X-Email', 'globalAuthResponseHeaders', ['X-User', 'X-Email']],
  'global-auth-request-redirect': ['https://app.example.com$request_uri', 'globalAuthRequestRedirect', 'https://app.example.com$request_uri'],
  'global-auth-snippet': ['proxy_set_header X-Team a;', 'globalAuthSnippet', 'proxy_set_header X-Team a;'],
  'global-auth-cache-key': ['$cookie_session', 'globalAuthCacheKey', '$cookie_session'],
  'global-auth-cache-duration': ['200 202 10m, 401 1m', 'globalAuthCacheDuration', ['200 202 10m', '401 1m']],
  'global-auth-always-set-cookie': ['true', 'globalAuthAlwaysSetCookie', true],
  'disable-stream-access-log': ['true', 'disableStreamAccessLog', true],
  'use-geoip2': ['true', 'useGeoip2', true],
  'disable-proxy-intercept-errors': ['true', 'disableProxyInterceptErrors', true],
  'proxy-cookie-domain': ['backend.internal example.com', 'proxyCookieDomain', 'backend.internal example.com'],
  'proxy-cookie-path': ['/app/ /', 'proxyCookiePath', '/app/ /'],
  'proxy-redirect-from': ['http://backend/', 'proxyRedirectFrom', 'http://backend/'],
  'proxy-redirect-to': ['https://front/', 'proxyRedirectTo', 'https://front/'],
  'proxy-busy-buffers-size': ['8k', 'proxyBusyBuffersSize', '8k'],
  'proxy-max-temp-file-size': ['0', 'proxyMaxTempFileSize', '0'],
  'relative-redirects': ['true', 'relativeRedirects', true],
  'use-port-in-redirects': ['true', 'usePortInRedirects', true],
  'preserve-trailing-slash': ['true', 'preserveTrailingSlash', true],
  'global-allowed-response-headers': ['X-Frame-Options,X-Team', 'globalAllowedResponseHeaders', ['X-Frame-Options', 'X-Team']],
  'generate-request-id': ['false', 'generateRequestId', false],
  'default-type': ['application/octet-stream', 'defaultType', 'application/octet-stream'],
  'gzip-disable': ['msie6', 'gzipDisable', 'msie6'],
  'limit-conn-zone-variable': ['$binary_remote_addr$http_x_tenant', 'limitConnZoneVariable', '$binary_remote_addr$http_x_tenant'],
  'upstream-hash-by': ['$request_uri', 'upstreamHashBy', '$request_uri'],
  'upstream-hash-by-subset': ['true', 'upstreamHashBySubset', true],
  'upstream-hash-by-subset-size': ['5', 'upstreamHashBySubsetSize', 5],
  'service-upstream': ['true', 'serviceUpstream', true],
  'forwarded-for-proxy-protocol-header': ['X-Real-Client', 'forwardedForProxyProtocolHeader', 'X-Real-Client'],
  'forwarded-host-header': ['X-Original-Host', 'forwardedHostHeader', 'X-Original-Host'],
  'main-snippet': ['worker_priority 0;', 'mainSnippet', 'worker_priority 0;'],
  'http-snippet': ['map $uri $x { default 1; }', 'httpSnippet', 'map $uri $x { default 1; }'],
  'server-snippet': ['add_header X-A 1;', 'serverSnippet', 'add_header X-A 1;'],
  'location-snippet': ['add_header X-B 1;', 'locationSnippet', 'add_header X-B 1;'],
  'stream-snippet': ['server { listen 9999; return ok; }', 'streamSnippet', 'server { listen 9999; return ok; }'],
  'bind-address': ['10.0.0.1,fd00::1', 'bindAddress', ['10.0.0.1', 'fd00::1']],
  'disable-ipv6': ['true', 'disableIpv6', true],
  'disable-ipv6-dns': ['true', 'disableIpv6Dns', true],
  'worker-cpu-affinity': ['auto', 'workerCpuAffinity', 'auto'],
  'enable-multi-accept': ['false', 'enableMultiAccept', false],
  'enable-aio-write': ['false', 'enableAioWrite', false],
  'lua-shared-dicts': ['configuration_data: 40, my_dict: 512k', 'luaSharedDicts', { configuration_data: 40960, my_dict: 512 }],
  'access-log-params': ['buffer=16k flush=5s', 'accessLogParams', 'buffer=16k flush=5s'],
  'log-format-stream': ['$remote_addr $status', 'logFormatStream', '$remote_addr $status'],
  'enable-syslog': ['true', 'enableSyslog', true],
  'syslog-host': ['10.0.0.9', 'syslogHost', '10.0.0.9'],
  'syslog-port': ['1514', 'syslogPort', 1514],
  'debug-connections': ['10.0.0.0/8,127.0.0.1', 'debugConnections', ['10.0.0.0/8', '127.0.0.1']],
  'proxy-stream-timeout': ['30s', 'proxyStreamTimeout', '30s'],
  'proxy-stream-next-upstream': ['false', 'proxyStreamNextUpstream', false],
  'proxy-stream-next-upstream-timeout': ['5s', 'proxyStreamNextUpstreamTimeout', '5s'],
  'proxy-stream-next-upstream-tries': ['2', 'proxyStreamNextUpstreamTries', 2],
  'proxy-stream-responses': ['0', 'proxyStreamResponses', 0],
  'ssl-reject-handshake': ['true', 'sslRejectHandshake', true],
  'ssl-session-ticket-key': [TICKET_KEY_80, 'sslSessionTicketKey', TICKET_KEY_80],
  'enable-ocsp': ['true', 'enableOCSP', true],
  'proxy-ssl-location-only': ['true', 'proxySSLLocationOnly', true],
  'enable-opentelemetry': ['true', 'enableOpentelemetry', true],
  'opentelemetry-trust-incoming-span': ['false', 'opentelemetryTrustIncomingSpan', false],
  'opentelemetry-operation-name': ['HTTP $request_method', 'opentelemetryOperationName', 'HTTP $request_method'],
  'otlp-collector-host': ['otel-collector.monitoring.svc', 'otlpCollectorHost', 'otel-collector.monitoring.svc'],
  'otlp-collector-port': ['14318', 'otlpCollectorPort', 14318],
  'otel-service-name': ['edge-eu', 'otelServiceName', 'edge-eu'],
  'otel-sampler': ['TraceIdRatioBased', 'otelSampler', 'TraceIdRatioBased'],
  'otel-sampler-ratio': ['0.25', 'otelSamplerRatio', 0.25],
  'otel-sampler-parent-based': ['false', 'otelSamplerParentBased', false],
  'otel-max-queuesize': ['4096', 'otelMaxQueuesize', 4096],
  'otel-schedule-delay-millis': ['1000', 'otelScheduleDelayMillis', 1000],
  'otel-max-export-batch-size': ['256', 'otelMaxExportBatchSize', 256],
};

/** key → a value that must be rejected. */
const INVALID: Record<string, string> = {
  'modsecurity-snippet': "SecRuleEngine On';\n}\nserver { listen 9; }\n#",
  'ssl-redirect': 'yes', 'http-redirect-code': '302x', 'hsts-max-age': '-1', 'ssl-protocols': 'SSLv3', 'ssl-ciphers': 'A B',
  'ssl-ecdh-curve': 'a;b', 'ssl-session-cache-size': '10 m', 'ssl-session-timeout': 'ten', 'no-tls-redirect-locations': 'relative',
  'proxy-connect-timeout': '5s', 'proxy-body-size': '1t', 'proxy-buffers-number': '0', 'proxy-buffering': 'yes',
  'proxy-next-upstream': 'sometimes', 'proxy-next-upstream-tries': '-1', 'proxy-http-version': '2.0',
  'hide-headers': 'X_Bad', 'limit-req-status-code': '600', 'custom-http-errors': '200', 'load-balance': 'chash',
  'upstream-keepalive-time': '1 h', 'forwarded-for-header': 'X Forwarded', 'proxy-real-ip-cidr': '10.0.0.0/40',
  'block-cidrs': 'evil.com', 'block-user-agents': '~*(unclosed', 'block-referers': 'a"b', 'annotations-risk-level': 'Extreme',
  'worker-processes': 'many', 'max-worker-connections': '-5', 'large-client-header-buffers': '8k', 'gzip-level': '10', 'grpc-buffer-size-kb': '-1',
  'gzip-types': 'text/html;', 'disable-access-log': 'maybe', 'log-format-upstream': "$remote_addr 'x'", 'error-log-level': 'loud', 'access-log-path': 'relative/access.log', 'error-log-path': '/var/log/../../etc/passwd', 'http-access-log-path': 'syslog:server=10.0.0.1',
  'proxy-protocol-header-timeout': 'soon',
  'global-auth-url': 'http://unix:/var/run/x.sock:/check', 'global-auth-method': 'GET;', 'global-auth-signin': 'ftp://x',
  'global-auth-signin-redirect-param': 'a b', 'global-auth-response-headers': 'X User', 'global-auth-request-redirect': 'a b',
  'global-auth-snippet': 'proxy_pass http://x; }', 'global-auth-cache-duration': '200 forever', 'global-auth-always-set-cookie': 'sometimes',
  'proxy-cookie-domain': 'a b c', 'proxy-cookie-path': '/a "/b"', 'proxy-redirect-from': 'http://a/;b', 'proxy-redirect-to': 'x y',
  'proxy-busy-buffers-size': '8 k', 'default-type': 'text/html; charset=x', 'gzip-disable': '(unclosed', 'limit-conn-zone-variable': '$a b',
  'forwarded-host-header': 'X Host', 'bind-address': '10.0.0.0/8', 'worker-cpu-affinity': '0102', 'lua-shared-dicts': 'a: 1g',
  'access-log-params': 'if=$x', 'syslog-host': 'syslog.logging.svc', 'syslog-port': '70000', 'debug-connections': 'evil.com',
  'proxy-stream-timeout': 'ten', 'proxy-stream-next-upstream-tries': '-1', 'log-format-stream': "'$x'",
  'ssl-reject-handshake': 'on', 'enable-ocsp': 'yes', 'proxy-ssl-location-only': 'maybe',
  // NGINX takes a key file of exactly 48 or 80 bytes.
  'ssl-session-ticket-key': Buffer.alloc(32, 1).toString('base64'),
  'opentelemetry-operation-name': 'x") os.execute("id") --', 'otlp-collector-host': 'collector"; x', 'otlp-collector-port': '4318;',
  'otel-service-name': 'a"b', 'otel-sampler': 'Sometimes', 'otel-sampler-ratio': '1.5', 'otel-max-queuesize': '0',
  'otel-schedule-delay-millis': '5s', 'otel-max-export-batch-size': '-1',
};

test('every ConfigMap key has a valid-value case here', () => {
  for (const k of CONFIGMAP_KEYS) {
    if (k.kind === 'value') assert.ok(VALID[k.key], `no case for ${k.key}`);
  }
  assert.ok(CONFIGMAP_KEYS.length >= 60, `only ${CONFIGMAP_KEYS.length} keys`);
});

test('custom-http-errors: a code that is not one is left out with a warning, the others apply (as ingress-nginx)', () => {
  const { settings, warnings } = parse({ 'custom-http-errors': '404, x,200,503' });
  assert.equal(settings.customHttpErrors, [404, 503]);
  assert.is(warnings.length, 2);
  assert.ok(warnings.every((w) => w.field === 'data["custom-http-errors"]' && w.message.endsWith('; left out')), JSON.stringify(warnings));
});

test('lua-shared-dicts: a bad entry is left out with a warning, the others apply (as ingress-nginx)', () => {
  const { settings, warnings } = parse({ 'lua-shared-dicts': 'configuration_data:60,certificate_data:300, my_dict: 15 , invalid: 1a' });
  assert.equal(settings.luaSharedDicts, { configuration_data: 60 * 1024, my_dict: 15 * 1024 });
  assert.equal(warnings.map((w) => w.message), [
    'dictionary certificate_data: 300 is not between 1k and 200m; left out',
    '"invalid:1a" is not "name: size" (a name of letters, digits and _, a size in MB or with k/m); left out',
  ]);
});

/** Keys that apply only beside another: the snippets need annotations-risk-level Critical, syslog a host. */
const CRITICAL = { 'annotations-risk-level': 'Critical' };
const WITH: Record<string, Record<string, string>> = {
  'main-snippet': CRITICAL, 'http-snippet': CRITICAL, 'server-snippet': CRITICAL, 'location-snippet': CRITICAL, 'stream-snippet': CRITICAL,
  'enable-syslog': { 'syslog-host': '10.0.0.9' },
};

test('the operator\'s snippets need annotations-risk-level Critical, enable-syslog a syslog-host', () => {
  for (const key of ['main-snippet', 'http-snippet', 'server-snippet', 'location-snippet', 'stream-snippet']) {
    const { settings, warnings } = parse({ [key]: VALID[key]![0] });
    assert.is(settings[VALID[key]![1]], '', key);
    assert.match(warnings[0]!.message, /Critical/);
  }
  const { settings, warnings } = parse({ 'enable-syslog': 'true' });
  assert.is(settings.enableSyslog, false);
  assert.match(warnings[0]!.message, /syslog-host is not set/);
});

test('an operator snippet that leaves its block or opens one its context cannot hold is refused', () => {
  for (const [key, raw] of [['http-snippet', 'server { listen 1; } }'], ['server-snippet', 'server { }'], ['main-snippet', 'http { }'], ['location-snippet', 'upstream x { server a; }'], ['stream-snippet', 'location / { }'], ['http-snippet', 'x "unterminated;']]) {
    const { settings, warnings } = parse({ ...CRITICAL, [key!]: raw! });
    assert.is(settings[VALID[key!]![1]], '', `${key}: ${raw}`);
    assert.is(warnings.length, 1, `${key}: ${raw}`);
  }
});

test('proxy busy buffers and max temp file size are checked against the buffers, as NGINX checks them', () => {
  assert.is(parse({ 'proxy-busy-buffers-size': '2k' }).settings.proxyBusyBuffersSize, '', 'smaller than proxy-buffer-size 4k');
  assert.is(parse({ 'proxy-busy-buffers-size': '64k' }).settings.proxyBusyBuffersSize, '', 'larger than all buffers but one');
  assert.is(parse({ 'proxy-max-temp-file-size': '1k' }).settings.proxyMaxTempFileSize, '1024m');
  assert.is(parse({ 'proxy-buffer-size': '8k', 'proxy-busy-buffers-size': '16k' }).settings.proxyBusyBuffersSize, '16k');
});

for (const [key, [raw, field, want]] of Object.entries(VALID)) {
  test(`parses ${key}`, () => {
    const { settings, warnings } = parse({ ...WITH[key], [key]: raw });
    assert.equal(warnings, []);
    assert.equal(settings[field], want);
    assert.not.equal(defaultSettings()[field], want, `${key}: the case should differ from the default`);
  });
}

for (const [key, raw] of Object.entries(INVALID)) {
  test(`rejects invalid ${key}`, () => {
    const spec = CONFIGMAP_KEYS.find((k) => k.key === key);
    assert.ok(spec, `unknown key ${key}`);
    const { settings, warnings } = parse({ [key]: raw });
    assert.is(warnings.length, 1);
    assert.is(warnings[0]!.object, OBJECT);
    assert.is(warnings[0]!.field, `data["${key}"]`);
    // A list whose every entry is bad leaves each out (lua-shared-dicts): the default too.
    assert.match(warnings[0]!.message, /default|left out/);
    assert.equal(settings[spec!.field], defaultSettings()[spec!.field]);
  });
}

test('an unknown key is warned about and ignored', () => {
  const { settings, warnings } = parse({ 'proxy-read-timoeut': '9', 'proxy-read-timeout': '5' });
  assert.equal(warnings.map((w) => w.field), ['data["proxy-read-timoeut"]']);
  assert.match(warnings[0]!.message, /unknown key/);
  assert.is(settings.proxyReadTimeout, 5);
});

test('a key of ingress-nginx that ingress-rx refuses is warned about with why and what to use instead', () => {
  const { warnings } = parse({ 'enable-serial-reloads': 'true', 'jaeger-collector-host': 'jaeger' });
  assert.match(warnings.find((w) => w.field === 'data["enable-serial-reloads"]')!.message, /not supported by ingress-rx \(not implemented: .*worker-shutdown-timeout.*\); ignored/);
  assert.match(warnings.find((w) => w.field === 'data["jaeger-collector-host"]')!.message, /enable-opentelemetry with otlp-collector-host/);
});

test('unquoted numbers and booleans from hand-written manifests are read; objects are not', () => {
  const data = { 'proxy-read-timeout': 120, 'use-gzip': true, 'gzip-types': { a: 1 } } as unknown as Record<string, string>;
  const { settings, warnings } = parse(data);
  assert.equal([settings.proxyReadTimeout, settings.useGzip], [120, true]);
  assert.equal(warnings.map((w) => w.field), ['data["gzip-types"]']);
});

test('one bad key loses nothing else', () => {
  const { settings, warnings } = parse({ 'proxy-read-timeout': 'x', 'proxy-send-timeout': '9', 'use-gzip': 'true' });
  assert.is(warnings.length, 1);
  assert.equal([settings.proxyReadTimeout, settings.proxySendTimeout, settings.useGzip], [60, 9, true]);
});

test('add-headers and proxy-set-headers come from the named ConfigMaps', () => {
  const store = storeWith([
    { metadata: { name: 'resp', namespace: 'ingress' }, data: { 'X-Frame-Options': 'DENY', 'X-Served-By': '$hostname' } },
    { metadata: { name: 'req', namespace: 'ingress' }, data: { 'X-Client-IP': '$remote_addr', 'X Bad': 'v', 'X-Evil': 'a"; return 200 "x' } },
  ]);
  const { settings, warnings } = parse({ 'add-headers': 'ingress/resp', 'proxy-set-headers': 'ingress/req' }, store);
  assert.equal(settings.addHeaders, { 'X-Frame-Options': 'DENY', 'X-Served-By': '$hostname' });
  assert.equal(settings.proxySetHeaders, { 'X-Client-IP': '$remote_addr' });
  assert.equal(warnings.map((w) => w.field), ['data["proxy-set-headers"]', 'data["proxy-set-headers"]']);
  assert.match(warnings.map((w) => w.message).join('\n'), /X Bad[\s\S]*X-Evil/);
});

test('add-headers naming a missing or malformed ConfigMap warns and adds nothing', () => {
  const store = storeWith([]);
  const missing = parse({ 'add-headers': 'ingress/nothere' }, store);
  assert.equal(missing.settings.addHeaders, {});
  assert.match(missing.warnings[0]!.message, /not found/);
  const malformed = parse({ 'add-headers': 'no-namespace' }, store);
  assert.match(malformed.warnings[0]!.message, /namespace\/name/);
  const noStore = parse({ 'proxy-set-headers': 'ingress/req' });
  assert.equal(noStore.settings.proxySetHeaders, {});
  assert.is(noStore.warnings.length, 1);
});

test('no hostile header name or value survives from add-headers / proxy-set-headers', () => {
  for (const h of HOSTILE_VALUES) {
    const store = storeWith([{ metadata: { name: 'h', namespace: 'ingress' }, data: { 'X-Ok': h.value, [h.value]: 'v' } }]);
    const { settings } = parse({ 'add-headers': 'ingress/h', 'proxy-set-headers': 'ingress/h' }, store);
    for (const headers of [settings.addHeaders, settings.proxySetHeaders]) {
      for (const [name, value] of Object.entries(headers)) {
        assert.match(name, /^[A-Za-z0-9-]+$/, h.name);
        assert.ok(isNginxSafe(value), `${h.name}: ${JSON.stringify(value.slice(0, 60))}`);
      }
    }
  }
});

test('warnings stay short for very long values', () => {
  const long = HOSTILE_VALUES.find((h) => h.name === 'very long')!.value;
  for (const spec of CONFIGMAP_KEYS) {
    const { warnings } = parse({ [spec.key]: `~(${long}` }, storeWith([]));
    for (const w of warnings) assert.ok(w.message.length < 1000, `${spec.key}: ${w.message.length} chars`);
  }
});

test('no hostile value survives into the settings', () => {
  const defaults = defaultSettings();
  // Keys whose typed value is a `map` pattern (regex allowed) or the log format (double quotes
  // allowed; it is rendered inside single quotes).
  const regexFields = new Set(['blockUserAgents', 'blockReferers']);
  for (const spec of CONFIGMAP_KEYS) {
    if (spec.kind !== 'value') continue;
    for (const h of HOSTILE_VALUES) {
      for (const raw of [h.value, `${VALID[spec.key]![0]}${h.value}`]) {
        const { settings, warnings } = parse({ [spec.key]: raw });
        const value = settings[spec.field];
        if (spec.key === 'annotation-value-word-blocklist') continue; // never rendered
        for (const s of stringsIn(value)) {
          if (spec.key === 'modsecurity-snippet') {
            // Printed inside single quotes, escaped so that NGINX hands ModSecurity exactly this text.
            assert.not.match(s.value, /[\u0000-\u0008\u000b-\u001f\u007f]/, `${spec.key} ← ${h.name}`);
            assert.is(nginxUnescape(quoteForNginx(s.value)), s.value);
            continue;
          }
          if (spec.key === 'log-format-upstream' || spec.key === 'log-format-stream') {
            assert.not.match(s.value, /['\\\u0000-\u001f]/, `${spec.key} ← ${h.name}`);
            continue;
          }
          // A snippet is directives by nature: what holds it in its block is the snippet check.
          if (spec.key === 'global-auth-snippet') {
            assert.is(snippetProblem(s.value), null, `${spec.key} ← ${h.name}`);
            continue;
          }
          assert.ok(isNginxSafe(s.value, { regex: regexFields.has(spec.field) }) || s.value === (defaults[spec.field] as unknown),
            `${spec.key} ← ${h.name}: ${JSON.stringify(s.value.slice(0, 60))}`);
        }
        if (warnings.length === 0 && spec.key !== 'log-format-upstream' && spec.key !== 'log-format-stream' && spec.key !== 'modsecurity-snippet' && spec.key !== 'global-auth-snippet') assert.ok(stringsIn(value).every((s) => s.value !== raw) || isNginxSafe(raw, { regex: regexFields.has(spec.field) }), `${spec.key} kept ${h.name} without a warning`);
      }
    }
  }
});

test('ssl-dh-param reads dhparam.pem from the Secret it names; NGINX-refused or missing parameters keep the default', () => {
  const ffdhe2048 = execFileSync('openssl', ['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'dh_param:ffdhe2048']).toString();
  // 512-bit parameters: below the system OpenSSL's security level, so NGINX would not load them.
  const weak = execFileSync('openssl', ['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'dh_paramgen_prime_len:512']).toString();
  const secret = (name: string, pem: string): Secret => ({ metadata: { name, namespace: 'ingress' }, data: { 'dhparam.pem': Buffer.from(`junk before\n${pem}`).toString('base64') } } as Secret);
  const store = storeWith([], [secret('dh', ffdhe2048), secret('weak', weak), secret('broken', ffdhe2048.replace('MIIB', 'AAAA')), { metadata: { name: 'empty', namespace: 'ingress' }, data: {} } as Secret]);
  const ok = parse({ 'ssl-dh-param': 'ingress/dh' }, store);
  assert.equal(ok.warnings, []);
  assert.equal(ok.settings.sslDHParam, { secret: 'ingress/dh', pem: ffdhe2048 });
  for (const [ref, why] of [['ingress/weak', /refused by the local OpenSSL/], ['ingress/broken', /refused by the local OpenSSL/], ['ingress/empty', /no data\["dhparam.pem"\]/],
    ['ingress/none', /not found/], ['dh', /not namespace\/name/], ['ingress/dh;evil', /not namespace\/name/]] as const) {
    const r = parse({ 'ssl-dh-param': ref }, store);
    assert.is(r.settings.sslDHParam, null, ref);
    assert.equal(r.warnings.length, 1, ref);
    assert.match(r.warnings[0]!.message, why, ref);
  }
});

test.run();
