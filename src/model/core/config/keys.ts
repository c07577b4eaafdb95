// The main ConfigMap's keys: for each, the NginxSettings field it sets, the check its value
// must pass, and what it does (docs/configmap.md is generated from this table).
import type { Secret } from '../../../store/kube-types.js';
import { isIP } from 'node:net';
import type { StoreReader } from '../../../store/types.js';
import {
  bool, boundedSize, cidrList, commaList, errorPageCode, float, headerName, hostname, httpMethod, int, InvalidValue, limitStatusCode, MAX_VALUE_LENGTH,
  nextUpstream, offset, onOff, oneOf, pcreRegex, preview, proxyBufferSize, proxyBuffersNumber, safeStringWithVariables, size, spaceList, timeMsec, timeSec, uriPath,
  type Check,
} from '../../checks/validate.js';
import type { NginxSettings } from './settings.js';
import { opensslAcceptsCiphers, opensslAcceptsCurves } from '../../checks/openssl.js';
import { authUrl, cacheDurations, cacheKey, headerNames, httpUrl, paramName, requestRedirect } from '../../ingress/annotations/authexternal.js';
import { snippet } from '../../ingress/annotations/snippets.js';
import { hashExpression } from '../../ingress/annotations/upstreamhash.js';
import { cookieDomainRewrite, cookiePathRewrite, optionalSize, redirectFrom, redirectTo } from '../../checks/proxy-details.js';
import {
  accessLogParams, cidrs, customErrorCodes, gzipDisable, ipAddressList, luaSharedDicts, mimeType, operatorSnippet, syslogHost, variablesKey, workerCpuAffinity,
} from './checks.js';
import { dhParamFromSecret, sessionTicketKey } from './tls.js';
import { RulesProblem, rulesChunks, unquoteNginx } from '../../checks/seclang.js';

type Field = keyof NginxSettings;

export interface ConfigMapValueKey {
  kind: 'value';
  key: string;
  field: Field;
  check: Check<unknown>;
  /** Accepted values, for the docs. */
  values: string;
  description: string;
  /** The default as written in the ConfigMap, when it is not the field's default as is. */
  defaultText?: string;
}

export type HeaderMapKey = 'add-headers' | 'proxy-set-headers';

export interface ConfigMapHeadersKey {
  kind: 'headers';
  key: HeaderMapKey;
  field: 'addHeaders' | 'proxySetHeaders';
  values: string;
  description: string;
}

/** A key naming a Secret (`namespace/name`) whose content fills the field. */
export interface ConfigMapSecretKey {
  kind: 'secret';
  key: string;
  field: Field;
  /** The field's value from the Secret; throws InvalidValue. */
  read: (secret: Secret, ref: string) => unknown;
  values: string;
  description: string;
  defaultText: string;
}

export type ConfigMapKey = ConfigMapValueKey | ConfigMapHeadersKey | ConfigMapSecretKey;

function key<F extends Field>(k: string, field: F, check: Check<NginxSettings[F]>, values: string, description: string): ConfigMapValueKey {
  return { kind: 'value', key: k, field, check: check as Check<unknown>, values, description };
}

const BOOL = '"true" or "false"';
// Whole seconds up to 2^31 - 1, which NGINX's millisecond times hold (ingress-nginx takes any integer).
const seconds = int(0, 2 ** 31 - 1);
const positive = int(1, 2 ** 31 - 1);

const riskLevel = oneOf(['Low', 'Medium', 'High', 'Critical'] as const);
const sslProtocols = (raw: string) => {
  const list = spaceList(oneOf(['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const))(raw);
  if (list.length === 0) throw new InvalidValue('at least one protocol is needed');
  return list;
};
const token = (what: string, re: RegExp): Check<string> => (raw) => {
  const v = raw.trim();
  if (v.length > MAX_VALUE_LENGTH || !re.test(v)) throw new InvalidValue(`"${preview(v)}" is not ${what}`);
  return v;
};
/** Checked by the system OpenSSL that NGINX links, as ssl_ciphers / ssl_ecdh_curve apply it. */
const accepted = (check: Check<string>, accepts: (v: string) => boolean, what: string): Check<string> => (raw) => {
  const v = check(raw);
  if (!accepts(v)) throw new InvalidValue(`"${preview(v)}" is refused by the local OpenSSL (${what})`);
  return v;
};
const sslCiphers = accepted(token('an OpenSSL cipher list', /^[A-Za-z0-9!+:@._=-]+$/), opensslAcceptsCiphers, 'no cipher matches');
const ecdhCurve = accepted(token('a curve list', /^[A-Za-z0-9:_-]+$/), opensslAcceptsCurves, 'an unknown curve');
const workerProcesses = token('"auto" or a number', /^(auto|[1-9]\d{0,3})$/);
/** `number size`; the size at least connection_pool_size (512 bytes on 64-bit), as NGINX checks. */
const largeBuffers: Check<string> = (raw) => {
  const v = token('`number size` (e.g. 4 8k)', /^[1-9]\d{0,3}\s+\d{1,6}[kKmM]?$/)(raw);
  boundedSize(512n)(v.split(/\s+/)[1]!);
  return v;
};
/** ngx_hash_init refuses buckets over 65536 less a cache line. */
const bucketSize = int(1, 65_536 - 64);
const mimeTypes = spaceList(token('a MIME type', /^[A-Za-z0-9.+*/-]{1,128}$/));
const httpRedirectCode = (raw: string) => Number(oneOf(['301', '302', '307', '308'] as const)(raw));
const loadBalance = oneOf(['round_robin', 'ewma'] as const);
const wordList = (raw: string) => raw.split(',').map((w) => w.trim()).filter((w) => w !== '').map((w) => {
  if (w.length > 256) throw new InvalidValue('a blocklist word is longer than 256 characters');
  return w;
});

/** A `map` pattern (exact string or `~regex`): no quotes, `;`, braces, control characters, and
 *  no trailing backslash (which would escape the closing quote). */
const mapPattern: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 1024) throw new InvalidValue('pattern is longer than 1024 characters');
  if (/["';{}]|[\u0000-\u001f\u007f]/.test(v) || /(^|[^\\])(\\\\)*\\$/.test(v)) {
    throw new InvalidValue(`"${preview(v)}" contains quotes, ';', braces, control characters or a trailing backslash`);
  }
  if (v.startsWith('~')) pcreRegex({ caseless: v.startsWith('~*') })(v.replace(/^~\*?/, ''));
  return v;
};

/** A log file: an absolute path of plain characters (NGINX's master opens it, as root in a cluster). */
const logPath: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 1024 || !/^\/[A-Za-z0-9._/-]*$/.test(v) || /(^|\/)\.\.(\/|$)/.test(v)) {
    throw new InvalidValue(`"${preview(v)}" is not an absolute path of letters, digits, '.', '_', '-' and '/' (without '..')`);
  }
  return v;
};

/** The operator's modsecurity-snippet: any SecLang, but it must stay inside its NGINX quoted string. */
const operatorRules: Check<string[]> = (raw) => {
  if (raw.length > 256 * 1024) throw new InvalidValue(`snippet is ${raw.length} characters long (at most ${256 * 1024})`);
  try {
    const text = unquoteNginx(raw);
    // NGINX turns \r into a carriage return, which ModSecurity's reader does not take.
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text)) throw new InvalidValue('control characters other than tab and newline (after NGINX unescapes \\r)');
    return rulesChunks(text);
  } catch (err) {
    if (err instanceof RulesProblem) throw new InvalidValue(err.message);
    throw err;
  }
};

/** A span name: text and `$variables` (Lua expands them per request). */
const operationName: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 256 || !/^([A-Za-z0-9_./: -]|\$[A-Za-z_][A-Za-z0-9_]*)*$/.test(v)) throw new InvalidValue(`"${preview(v)}" is not letters, digits, -_./:, spaces and $variables`);
  return v;
};
const collectorHost: Check<string> = (raw) => {
  const v = raw.trim();
  if (v === '' || isIP(v) !== 0) return v;
  return hostname()(v);
};
const serviceName = token('a service name', /^[A-Za-z0-9_.:/ -]{1,256}$/);

/** log-format-upstream is rendered inside single quotes: no `'`, backslash or control characters. */
export const logFormat: Check<string> = (raw) => {
  if (raw.length > MAX_VALUE_LENGTH) throw new InvalidValue(`value is ${raw.length} characters long (at most ${MAX_VALUE_LENGTH})`);
  if (/['\\]|[\u0000-\u001f\u007f]/.test(raw)) throw new InvalidValue("log format must not contain ', backslash or control characters");
  if (raw.trim() === '') throw new InvalidValue('log format is empty');
  return raw;
};

export const CONFIGMAP_KEYS: ConfigMapKey[] = [
  // SSL and redirects
  key('ssl-redirect', 'sslRedirect', bool, BOOL, 'Redirect HTTP to HTTPS for hosts with TLS (annotation ssl-redirect overrides).'),
  key('force-ssl-redirect', 'forceSSLRedirect', bool, BOOL, 'Redirect HTTP to HTTPS even for hosts without TLS.'),
  key('http-redirect-code', 'httpRedirectCode', httpRedirectCode, '301, 302, 307 or 308', 'Status code of the HTTP → HTTPS redirect.'),
  key('hsts', 'hsts', bool, BOOL, 'Send Strict-Transport-Security.'),
  key('hsts-max-age', 'hstsMaxAge', int(0, 2 ** 31 - 1), 'seconds', 'max-age of the HSTS header.'),
  key('hsts-include-subdomains', 'hstsIncludeSubdomains', bool, BOOL, 'includeSubDomains in the HSTS header.'),
  key('hsts-preload', 'hstsPreload', bool, BOOL, 'preload in the HSTS header.'),
  key('ssl-protocols', 'sslProtocols', sslProtocols, 'space-separated: TLSv1 TLSv1.1 TLSv1.2 TLSv1.3', 'ssl_protocols.'),
  key('ssl-ciphers', 'sslCiphers', sslCiphers, 'OpenSSL cipher list', 'ssl_ciphers.'),
  key('ssl-prefer-server-ciphers', 'sslPreferServerCiphers', bool, BOOL, 'ssl_prefer_server_ciphers.'),
  key('ssl-ecdh-curve', 'sslEcdhCurve', ecdhCurve, 'curve list or "auto"', 'ssl_ecdh_curve.'),
  key('ssl-session-cache', 'sslSessionCache', bool, BOOL, 'Use a shared SSL session cache.'),
  key('ssl-session-cache-size', 'sslSessionCacheSize', boundedSize(8n * 4096n, 1024n ** 3n), 'size, 32k (8 pages) to 1g (nginx -t maps the zone)', 'Size of the shared SSL session cache.'),
  key('ssl-session-timeout', 'sslSessionTimeout', timeSec, 'NGINX time (e.g. 10m)', 'ssl_session_timeout.'),
  key('ssl-session-tickets', 'sslSessionTickets', bool, BOOL, 'ssl_session_tickets.'),
  key('ssl-buffer-size', 'sslBufferSize', size, 'size', 'ssl_buffer_size.'),
  key('ssl-early-data', 'sslEarlyData', bool, BOOL, 'ssl_early_data (TLS 1.3 0-RTT).'),
  key('ssl-reject-handshake', 'sslRejectHandshake', bool, BOOL, 'Refuse the TLS handshake of a client that names no host or a host no server has (ssl_reject_handshake in the default server), instead of showing the default certificate.'),
  { ...key('ssl-session-ticket-key', 'sslSessionTicketKey', sessionTicketKey, 'base64 of 48 or 80 bytes (`openssl rand 80 | openssl enc -A -base64`)', 'ssl_session_ticket_key: the key that encrypts session tickets, so that replicas and reloads keep accepting them (with ssl-session-tickets).'), defaultText: "'' (NGINX's own key, new at each start and reload)" },
  {
    kind: 'secret', key: 'ssl-dh-param', field: 'sslDHParam', read: dhParamFromSecret, defaultText: "''",
    values: '`namespace/name` of a Secret with `dhparam.pem` (PEM "DH PARAMETERS" the system OpenSSL accepts: 2048 bits or more)',
    description: 'ssl_dhparam: Diffie-Hellman parameters for DHE cipher suites.',
  },
  key('enable-ocsp', 'enableOCSP', bool, BOOL, "OCSP stapling: the certificate's responder (its AIA URL, http only) is asked in the background and its answer stapled to handshakes; the address policy of upstreams applies to the responder."),
  key('proxy-ssl-location-only', 'proxySSLLocationOnly', bool, BOOL, "proxy-ssl-* annotations apply to their Ingress's locations only, not to the whole server of the host."),
  key('no-tls-redirect-locations', 'noTLSRedirectLocations', commaList(uriPath), 'comma-separated paths', 'Paths never redirected to HTTPS (ACME challenges).'),
  key('no-auth-locations', 'noAuthLocations', commaList(uriPath), 'comma-separated paths', 'Paths exempt from authentication.'),

  // proxy
  key('proxy-connect-timeout', 'proxyConnectTimeout', seconds, 'seconds', 'proxy_connect_timeout (annotation default).'),
  key('proxy-read-timeout', 'proxyReadTimeout', seconds, 'seconds', 'proxy_read_timeout (annotation default).'),
  key('proxy-send-timeout', 'proxySendTimeout', seconds, 'seconds', 'proxy_send_timeout (annotation default).'),
  key('proxy-body-size', 'proxyBodySize', offset, 'size, k/m/g (0 = unlimited)', 'client_max_body_size (annotation default).'),
  key('proxy-buffer-size', 'proxyBufferSize', proxyBufferSize, 'size, 1 byte to 1g', 'proxy_buffer_size (annotation default).'),
  key('proxy-buffers-number', 'proxyBuffersNumber', proxyBuffersNumber, 'integer 3..1024', 'Number of proxy_buffers (annotation default).'),
  key('proxy-buffering', 'proxyBuffering', onOff, '"on" or "off"', 'proxy_buffering (annotation default).'),
  key('proxy-request-buffering', 'proxyRequestBuffering', onOff, '"on" or "off"', 'proxy_request_buffering (annotation default).'),
  key('proxy-next-upstream', 'proxyNextUpstream', nextUpstream, 'space-separated conditions', 'proxy_next_upstream (annotation default).'),
  key('proxy-next-upstream-timeout', 'proxyNextUpstreamTimeout', seconds, 'seconds (0 = no limit)', 'proxy_next_upstream_timeout (annotation default).'),
  key('proxy-next-upstream-tries', 'proxyNextUpstreamTries', int(0, 2 ** 31 - 1), 'integer (0 = no limit)', 'proxy_next_upstream_tries (annotation default).'),
  key('proxy-http-version', 'proxyHttpVersion', oneOf(['1.0', '1.1'] as const), '"1.0" or "1.1"', 'proxy_http_version (annotation default).'),
  key('client-body-buffer-size', 'clientBodyBufferSize', size, 'size', 'client_body_buffer_size (annotation default).'),
  key('proxy-headers-hash-max-size', 'proxyHeadersHashMaxSize', positive, 'integer', 'proxy_headers_hash_max_size.'),
  key('proxy-headers-hash-bucket-size', 'proxyHeadersHashBucketSize', bucketSize, 'integer up to 65472', 'proxy_headers_hash_bucket_size.'),
  key('proxy-add-original-uri-header', 'proxyAddOriginalUriHeader', bool, BOOL, 'Send X-Original-Uri upstream.'),
  key('retry-non-idempotent', 'retryNonIdempotent', bool, BOOL, 'Retry POST, LOCK, PATCH on the next upstream.'),
  key('allow-backend-server-header', 'allowBackendServerHeader', bool, BOOL, "Pass the backend's Server header to the client."),
  key('hide-headers', 'hideHeaders', commaList(headerName), 'comma-separated header names', 'Response headers hidden from clients.'),
  key('limit-rate', 'limitRate', int(0, 1_000_000_000), 'KB/s', 'Default response rate limit per connection (annotation default).'),
  key('limit-rate-after', 'limitRateAfter', int(0, 1_000_000_000), 'KB', 'Amount sent before limit-rate applies (annotation default).'),
  key('limit-req-status-code', 'limitReqStatusCode', limitStatusCode, 'status code 400..599', 'Status of requests refused by limit-rps/limit-rpm.'),
  key('limit-conn-status-code', 'limitConnStatusCode', limitStatusCode, 'status code 400..599', 'Status of requests refused by limit-connections.'),
  key('custom-http-errors', 'customHttpErrors', customErrorCodes, 'comma-separated status codes 300..599', 'Codes answered by the default backend (annotation default); a code that is not one is left out with a warning, the others apply.'),
  key('disable-proxy-intercept-errors', 'disableProxyInterceptErrors', bool, BOOL, 'With custom-http-errors, pass upstream errors through instead of asking the default backend (annotation default).'),
  key('proxy-cookie-domain', 'proxyCookieDomain', cookieDomainRewrite, '"off" or "domain replacement"', 'proxy_cookie_domain: rewrite the Domain of Set-Cookie (annotation default).'),
  key('proxy-cookie-path', 'proxyCookiePath', cookiePathRewrite, '"off" or "path replacement"', 'proxy_cookie_path: rewrite the Path of Set-Cookie (annotation default).'),
  key('proxy-redirect-from', 'proxyRedirectFrom', redirectFrom, '"off", "default" or the text to replace', "proxy_redirect's first parameter: rewrite Location and Refresh (annotation default)."),
  key('proxy-redirect-to', 'proxyRedirectTo', redirectTo, '"off" or the replacement', "proxy_redirect's second parameter (annotation default)."),
  { ...key('proxy-busy-buffers-size', 'proxyBusyBuffersSize', optionalSize, 'size between proxy-buffer-size and all proxy buffers but one', 'proxy_busy_buffers_size (annotation default).'), defaultText: "'' (twice proxy-buffer-size)" },
  key('proxy-max-temp-file-size', 'proxyMaxTempFileSize', size, 'size: 0, or at least proxy-buffer-size', 'proxy_max_temp_file_size (annotation default).'),
  key('relative-redirects', 'relativeRedirects', bool, BOOL, 'Redirects NGINX issues keep a relative Location (absolute_redirect off; annotation default).'),
  key('use-port-in-redirects', 'usePortInRedirects', bool, BOOL, 'Redirects NGINX issues name the port (port_in_redirect; annotation default).'),
  key('preserve-trailing-slash', 'preserveTrailingSlash', bool, BOOL, 'The SSL redirect keeps a trailing slash (annotation default).'),
  key('global-allowed-response-headers', 'globalAllowedResponseHeaders', commaList(headerName), 'comma-separated header names', 'Response headers the custom-headers annotation may set.'),
  key('generate-request-id', 'generateRequestId', bool, BOOL, 'A request without X-Request-ID gets a random $req_id.'),
  key('default-type', 'defaultType', mimeType, 'MIME type', 'default_type: the Content-Type of responses NGINX makes without one.'),
  key('gzip-disable', 'gzipDisable', gzipDisable, '"msie6", "degradation" or a regular expression', 'gzip_disable: User-Agents never gzipped.'),
  key('limit-conn-zone-variable', 'limitConnZoneVariable', variablesKey, 'NGINX variables', 'The key limit-connections, limit-rps and limit-rpm count by.'),

  // upstreams
  key('load-balance', 'loadBalance', loadBalance, '"round_robin" or "ewma"', 'Load-balancing algorithm (annotation default).'),
  key('upstream-keepalive-connections', 'upstreamKeepaliveConnections', int(0, 1_000_000), 'integer (0 = no keepalive)', 'Idle keepalive connections to upstreams per worker.'),
  key('upstream-keepalive-timeout', 'upstreamKeepaliveTimeout', seconds, 'seconds', 'Idle keepalive timeout to upstreams.'),
  key('upstream-keepalive-requests', 'upstreamKeepaliveRequests', int(0, 1_000_000_000), 'integer', 'Requests per upstream keepalive connection.'),
  key('upstream-keepalive-time', 'upstreamKeepaliveTime', timeMsec, 'NGINX time', 'Maximum life of an upstream keepalive connection.'),
  key('upstream-hash-by', 'upstreamHashBy', hashExpression, 'NGINX variable expression', 'Consistent hashing key of every backend (annotation default).'),
  key('upstream-hash-by-subset', 'upstreamHashBySubset', bool, BOOL, 'Hash onto subsets of endpoints (annotation default).'),
  key('service-upstream', 'serviceUpstream', bool, BOOL, 'Proxy to the Service address instead of its endpoints (annotation default).'),
  key('upstream-hash-by-subset-size', 'upstreamHashBySubsetSize', int(1, 1_000_000), 'integer ≥ 1', 'Size of each subset (annotation default).'),

  // headers and real IP
  key('use-forwarded-headers', 'useForwardedHeaders', bool, BOOL, 'Trust X-Forwarded-* from the client (behind another proxy).'),
  key('compute-full-forwarded-for', 'computeFullForwardedFor', bool, BOOL, 'Append the client address to X-Forwarded-For.'),
  key('forwarded-for-header', 'forwardedForHeader', headerName, 'header name', 'Header carrying the client address.'),
  key('forwarded-host-header', 'forwardedHostHeader', headerName, 'header name', 'The header X-Original-Forwarded-Host is sent from (as ingress-nginx\'s code; with use-forwarded-headers the Host comes from the first X-Forwarded-Host).'),
  key('forwarded-for-proxy-protocol-header', 'forwardedForProxyProtocolHeader', headerName, 'header name', 'With use-forwarded-headers and use-proxy-protocol: the request header the client address is read from (forwarded-for-header of a PROXY peer in proxy-real-ip-cidr, else the PROXY address).'),
  key('enable-real-ip', 'enableRealIp', bool, BOOL, 'Take the client address from forwarded-for-header; in the stream context, from the PROXY header of a TCP service decoding it, when the peer is in proxy-real-ip-cidr.'),
  key('proxy-real-ip-cidr', 'proxyRealIpCidr', cidrList, 'comma-separated CIDRs', 'Trusted proxies for the real IP.'),
  key('use-proxy-protocol', 'useProxyProtocol', bool, BOOL, 'Expect the PROXY protocol on the listeners.'),
  key('proxy-protocol-header-timeout', 'proxyProtocolHeaderTimeout', (raw) => seconds(raw.trim().replace(/s$/, '')), 'seconds (e.g. 5 or 5s)', 'Time to receive the PROXY protocol header on the ssl-passthrough listener (as ingress-nginx; HTTP listeners use client-header-timeout).'),
  { kind: 'headers', key: 'add-headers', field: 'addHeaders', values: '`namespace/name` of a ConfigMap', description: 'Response headers (ConfigMap data: header → value) added to every response.' },
  { kind: 'headers', key: 'proxy-set-headers', field: 'proxySetHeaders', values: '`namespace/name` of a ConfigMap', description: 'Request headers (ConfigMap data: header → value) sent to every upstream.' },

  // blocking and global allow/deny
  key('block-cidrs', 'blockCidrs', cidrList, 'comma-separated CIDRs', 'Client networks refused everywhere.'),
  key('block-user-agents', 'blockUserAgents', commaList(mapPattern), 'comma-separated strings or ~regexes', 'User-Agents refused everywhere.'),
  key('block-referers', 'blockReferers', commaList(mapPattern), 'comma-separated strings or ~regexes', 'Referers refused everywhere.'),
  key('whitelist-source-range', 'whitelistSourceRange', cidrList, 'comma-separated CIDRs', 'Default allowlist of every location (annotation default).'),
  key('denylist-source-range', 'denylistSourceRange', cidrList, 'comma-separated CIDRs', 'Default denylist of every location (annotation default).'),

  // snippets and risk
  key('allow-snippet-annotations', 'allowSnippetAnnotations', bool, BOOL, 'Allow configuration-snippet and server-snippet (also needs annotations-risk-level Critical).'),
  key('annotations-risk-level', 'annotationsRiskLevel', riskLevel, 'Low, Medium, High or Critical', 'Annotations above this risk are ignored.'),
  key('annotation-value-word-blocklist', 'annotationValueWordBlocklist', wordList, 'comma-separated words', 'Annotation values containing one of these are rejected.'),
  key('allow-cross-namespace-resources', 'allowCrossNamespaceResources', bool, BOOL, 'Let annotations (auth-secret) name Secrets in other namespaces.'),
  key('strict-validate-path-type', 'strictValidatePathType', bool, BOOL, 'Reject Exact/Prefix paths with characters outside the allowed set.'),
  { ...key('main-snippet', 'mainSnippet', operatorSnippet('main'), 'NGINX directives', 'Directives in the main context (Critical: only with annotations-risk-level Critical).'), defaultText: "''" },
  { ...key('http-snippet', 'httpSnippet', operatorSnippet('http'), 'NGINX directives', 'Directives in the http block (Critical: only with annotations-risk-level Critical).'), defaultText: "''" },
  { ...key('server-snippet', 'serverSnippet', operatorSnippet('server'), 'NGINX directives', 'Directives in every server (Critical: only with annotations-risk-level Critical).'), defaultText: "''" },
  { ...key('location-snippet', 'locationSnippet', operatorSnippet('location'), 'NGINX directives', 'Directives in every location (Critical: only with annotations-risk-level Critical).'), defaultText: "''" },
  { ...key('stream-snippet', 'streamSnippet', operatorSnippet('stream'), 'NGINX directives', 'Directives in the stream block (Critical: only with annotations-risk-level Critical).'), defaultText: "''" },

  // workers and client connections
  key('worker-processes', 'workerProcesses', workerProcesses, '"auto" or a number', 'worker_processes. `auto` (the default) is written as the controller\'s CPU count, as ingress-nginx writes it: the CPU limit of its cgroup (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max), rounded up, else the CPUs the process may run on.'),
  key('max-worker-connections', 'workerConnections', int(0, 1_000_000), 'integer (0 = 3/4 of max-worker-open-files)', 'worker_connections.'),
  key('max-worker-open-files', 'maxWorkerOpenFiles', int(0, 10_000_000), 'integer (0 = the hard open-files limit less 1024, at least 1024)', 'worker_rlimit_nofile.'),
  key('worker-shutdown-timeout', 'workerShutdownTimeout', timeMsec, 'NGINX time', 'worker_shutdown_timeout: how long requests in flight may run on after a reload, and at shutdown before NGINX closes them and exits.'),
  key('reuse-port', 'reusePort', bool, BOOL, 'reuseport on the listeners.'),
  key('bind-address', 'bindAddress', ipAddressList, 'comma-separated IPv4/IPv6 addresses', 'Addresses the HTTP, HTTPS, default and TCP/UDP listeners bind to (by family; empty: all).'),
  key('disable-ipv6', 'disableIpv6', bool, BOOL, 'No IPv6 listeners.'),
  key('disable-ipv6-dns', 'disableIpv6Dns', bool, BOOL, 'The resolver asks for IPv4 addresses only (ipv6=off).'),
  key('worker-cpu-affinity', 'workerCpuAffinity', workerCpuAffinity, '"auto", "auto <mask>" or CPU masks', 'worker_cpu_affinity.'),
  key('enable-multi-accept', 'enableMultiAccept', bool, BOOL, 'multi_accept: a worker accepts every pending connection at once.'),
  key('enable-aio-write', 'enableAioWrite', bool, BOOL, 'aio_write: temporary files are written with threads.'),
  key('lua-shared-dicts', 'luaSharedDicts', luaSharedDicts, '`name: size` list (MB, or with k/m; at most 200m)', 'Sizes of the Lua shared dictionaries, and dictionaries of your own; an entry that is not one is left out with a warning, the others apply. A reload that resizes a dictionary posts Lua its data again.'),
  key('keep-alive', 'keepAlive', seconds, 'seconds', 'keepalive_timeout.'),
  key('keep-alive-requests', 'keepAliveRequests', int(0, 1_000_000_000), 'integer', 'keepalive_requests.'),
  key('use-http2', 'useHttp2', bool, BOOL, 'HTTP/2 on the HTTPS listener.'),
  key('http2-max-concurrent-streams', 'http2MaxConcurrentStreams', positive, 'integer', 'http2_max_concurrent_streams.'),
  key('client-header-buffer-size', 'clientHeaderBufferSize', size, 'size', 'client_header_buffer_size.'),
  key('large-client-header-buffers', 'largeClientHeaderBuffers', largeBuffers, '`number size` (e.g. 4 8k)', 'large_client_header_buffers.'),
  key('client-header-timeout', 'clientHeaderTimeout', seconds, 'seconds', 'client_header_timeout.'),
  key('client-body-timeout', 'clientBodyTimeout', seconds, 'seconds', 'client_body_timeout.'),
  key('enable-underscores-in-headers', 'enableUnderscoresInHeaders', bool, BOOL, 'underscores_in_headers.'),
  key('ignore-invalid-headers', 'ignoreInvalidHeaders', bool, BOOL, 'ignore_invalid_headers.'),
  key('server-name-hash-bucket-size', 'serverNamesHashBucketSize', bucketSize, 'integer up to 65472', 'server_names_hash_bucket_size.'),
  key('server-name-hash-max-size', 'serverNamesHashMaxSize', positive, 'integer', 'server_names_hash_max_size.'),
  key('variables-hash-bucket-size', 'variablesHashBucketSize', bucketSize, 'integer up to 65472', 'variables_hash_bucket_size.'),
  key('variables-hash-max-size', 'variablesHashMaxSize', positive, 'integer', 'variables_hash_max_size.'),
  key('map-hash-bucket-size', 'mapHashBucketSize', bucketSize, 'integer up to 65472', 'map_hash_bucket_size.'),
  key('server-tokens', 'serverTokens', bool, BOOL, 'Send the NGINX version in Server and error pages.'),

  // compression
  key('use-gzip', 'useGzip', bool, BOOL, 'gzip responses.'),
  key('gzip-level', 'gzipLevel', int(1, 9), 'integer 1..9', 'gzip_comp_level.'),
  key('grpc-buffer-size-kb', 'grpcBufferSizeKb', int(0, 1_048_576), 'kilobytes (0: NGINX\'s default)', 'grpc_buffer_size: the buffer a gRPC backend\'s response is read into.'),
  key('gzip-min-length', 'gzipMinLength', int(0, 2 ** 31 - 1), 'bytes', 'gzip_min_length.'),
  key('gzip-types', 'gzipTypes', mimeTypes, 'space-separated MIME types', 'gzip_types.'),
  key('enable-brotli', 'enableBrotli', bool, BOOL, 'brotli responses (loads the brotli filter module).'),
  key('brotli-level', 'brotliLevel', int(1, 11), 'integer 1..11', 'brotli_comp_level.'),
  key('brotli-min-length', 'brotliMinLength', int(0, 2 ** 31 - 1), 'bytes', 'brotli_min_length.'),
  key('brotli-types', 'brotliTypes', mimeTypes, 'space-separated MIME types', 'brotli_types.'),

  // ModSecurity
  key('enable-modsecurity', 'enableModsecurity', bool, BOOL, 'ModSecurity for every server (loads the module and the base configuration, detection only, as ingress-nginx); the annotation enable-modsecurity overrides it per Ingress.'),
  key('enable-owasp-modsecurity-crs', 'enableOwaspModsecurityCrs', bool, BOOL, "The OWASP Core Rule Set (Debian's modsecurity-crs) for every server, with enable-modsecurity."),
  { ...key('modsecurity-snippet', 'modsecuritySnippet', operatorRules, 'ModSecurity directives, written as for ingress-nginx', "The operator's ModSecurity configuration at http level, with enable-modsecurity; replaces the base configuration (as ingress-nginx). Unlike the annotation, any directive is allowed."), defaultText: "''" },

  // OpenTelemetry: spans made in Lua and exported as OTLP/HTTP JSON (lua/opentelemetry.lua)
  key('enable-opentelemetry', 'enableOpentelemetry', bool, BOOL, 'A server span for every request, the W3C trace context passed upstream, spans exported to otlp-collector-host (annotation enable-opentelemetry overrides per Ingress).'),
  key('opentelemetry-trust-incoming-span', 'opentelemetryTrustIncomingSpan', bool, BOOL, "Continue the client's trace (its traceparent) instead of starting a new one."),
  key('opentelemetry-operation-name', 'opentelemetryOperationName', operationName, 'letters, digits, -_./:, spaces and NGINX variables', "The span's name (default: the location's path)."),
  key('otlp-collector-host', 'otlpCollectorHost', collectorHost, 'host name or IP address', 'Where spans are exported (OTLP/HTTP, JSON, POST /v1/traces).'),
  key('otlp-collector-port', 'otlpCollectorPort', int(1, 65_535), 'port', "The collector's OTLP/HTTP port (ingress-nginx: 4317, OTLP/gRPC's)."),
  key('otel-service-name', 'otelServiceName', serviceName, 'text', 'The service.name of the spans.'),
  key('otel-sampler', 'otelSampler', oneOf(['AlwaysOn', 'AlwaysOff', 'TraceIdRatioBased'] as const), 'AlwaysOn, AlwaysOff or TraceIdRatioBased', 'Which new traces are sampled.'),
  key('otel-sampler-ratio', 'otelSamplerRatio', float(0, 1), 'number 0..1', 'The share of traces TraceIdRatioBased samples.'),
  key('otel-sampler-parent-based', 'otelSamplerParentBased', bool, BOOL, "Follow the sampled flag of the client's trace when there is one."),
  key('otel-max-queuesize', 'otelMaxQueuesize', int(1, 1_000_000), 'integer', 'Spans a worker keeps waiting for export; more are dropped (counted in the log).'),
  key('otel-schedule-delay-millis', 'otelScheduleDelayMillis', int(10, 3_600_000), 'milliseconds', 'How often a worker exports its spans.'),
  key('otel-max-export-batch-size', 'otelMaxExportBatchSize', int(1, 1_000_000), 'integer', 'Spans per export request; a full batch is exported at once.'),

  // logs
  { ...key('disable-access-log', 'enableAccessLog', (raw) => !bool(raw), BOOL, 'Turn the access log off (annotation enable-access-log overrides per location).'), defaultText: 'false' },
  key('enable-access-log-for-default-backend', 'enableAccessLogForDefaultBackend', bool, BOOL, 'Log requests answered by the default backend.'),
  key('enable-auth-access-log', 'enableAuthAccessLog', bool, BOOL, 'Log the subrequests of external authentication (auth-url).'),

  // global external auth: the auth-url of every location whose Ingress has none (unless enable-global-auth is false)
  key('global-auth-url', 'globalAuthUrl', authUrl, 'http(s) URL (the host a name or `$host`)', 'External authentication for every location without auth-url of its own, except no-auth-locations and Ingresses with enable-global-auth "false".'),
  key('global-auth-method', 'globalAuthMethod', httpMethod, 'HTTP method', 'Method of the global auth subrequest (default GET).'),
  key('global-auth-signin', 'globalAuthSignin', httpUrl, 'http(s) URL (NGINX variables allowed)', 'Where the global auth sends the client on 401.'),
  { ...key('global-auth-signin-redirect-param', 'globalAuthSigninRedirectParam', paramName, 'URL parameter name', 'Parameter of global-auth-signin carrying the original URL.'), defaultText: 'rd' },
  key('global-auth-response-headers', 'globalAuthResponseHeaders', headerNames, 'comma-separated header names', 'Headers of the global auth answer passed to the upstream.'),
  { ...key('global-auth-request-redirect', 'globalAuthRequestRedirect', requestRedirect, 'URL or path (NGINX variables allowed)', 'X-Auth-Request-Redirect sent to the global auth service.'), defaultText: '(the request URI)' },
  key('global-auth-snippet', 'globalAuthSnippet', snippet, 'NGINX directives', 'Directives added to the global auth subrequest location (structure-checked as snippet annotations are).'),
  key('global-auth-cache-key', 'globalAuthCacheKey', cacheKey, 'NGINX variable expression', 'Cache global auth answers under this key.'),
  key('global-auth-cache-duration', 'globalAuthCacheDuration', cacheDurations, 'comma-separated `[codes] time`', 'How long global auth answers are cached, per status.'),
  key('global-auth-always-set-cookie', 'globalAuthAlwaysSetCookie', bool, BOOL, "Pass the global auth service's Set-Cookie on every answer, errors included."),
  key('log-format-upstream', 'logFormatUpstream', logFormat, "NGINX log format without ', backslash or control characters", 'Access log format.'),
  key('log-format-escape-json', 'logFormatEscapeJson', bool, BOOL, 'escape=json in the log format.'),
  key('log-format-escape-none', 'logFormatEscapeNone', bool, BOOL, 'escape=none in the log format.'),
  key('skip-access-log-urls', 'skipAccessLogUrls', commaList(uriPath), 'comma-separated paths', 'Paths not logged.'),
  key('access-log-path', 'accessLogPath', logPath, 'absolute path', 'Access log of the http and stream contexts (default: logs/access.log under the NGINX prefix).'),
  key('http-access-log-path', 'httpAccessLogPath', logPath, 'absolute path', 'Access log of the http context; overrides access-log-path.'),
  key('stream-access-log-path', 'streamAccessLogPath', logPath, 'absolute path', 'Access log of the stream context (TCP/UDP services); overrides access-log-path.'),
  key('error-log-path', 'errorLogPath', logPath, 'absolute path', 'Error log (default: logs/error.log under the NGINX prefix).'),
  key('disable-http-access-log', 'disableHttpAccessLog', bool, BOOL, 'Turn the access log of the http context off.'),
  key('disable-stream-access-log', 'disableStreamAccessLog', bool, BOOL, 'Turn the access log of the stream context off.'),
  key('error-log-level', 'errorLogLevel', oneOf(['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg'] as const), 'debug … emerg', 'error_log level.'),
  key('use-geoip2', 'useGeoip2', bool, BOOL, 'Load the GeoIP2 module and databases.'),
  key('access-log-params', 'accessLogParams', accessLogParams, 'buffer=<size>, gzip[=1..9], flush=<time>', 'Parameters of the access logs (http and stream).'),
  key('log-format-stream', 'logFormatStream', logFormat, "NGINX log format without ', backslash or control characters", 'Access log format of the stream context.'),
  key('enable-syslog', 'enableSyslog', bool, BOOL, 'Send the access and error logs to syslog-host (UDP).'),
  key('syslog-host', 'syslogHost', syslogHost, 'IPv4 or IPv6 address', 'The syslog server (an address: NGINX resolves a name only at load).'),
  key('syslog-port', 'syslogPort', int(1, 65_535), 'port', 'The syslog server port.'),
  key('debug-connections', 'debugConnections', cidrs, 'comma-separated addresses or CIDRs', 'Clients whose connections NGINX logs at debug level (debug_connection).'),

  // TCP/UDP services (the stream block)
  key('proxy-stream-timeout', 'proxyStreamTimeout', timeMsec, 'NGINX time', 'proxy_timeout of TCP/UDP services.'),
  key('proxy-stream-next-upstream', 'proxyStreamNextUpstream', bool, BOOL, 'Try the next endpoint when one cannot be connected.'),
  key('proxy-stream-next-upstream-timeout', 'proxyStreamNextUpstreamTimeout', timeMsec, 'NGINX time (0 = no limit)', 'Time limit for trying the next endpoint.'),
  key('proxy-stream-next-upstream-tries', 'proxyStreamNextUpstreamTries', int(0, 1000), 'integer (0 = no limit)', 'Attempts at the next endpoint.'),
  key('proxy-stream-responses', 'proxyStreamResponses', int(0, 1_000_000), 'integer', 'proxy_responses: datagrams a UDP service answers each request with.'),
];

/**
 * Reads the header map of add-headers / proxy-set-headers from the ConfigMap `namespace/name`
 * the value names. Invalid headers are reported and left out; the rest are kept.
 */
export function headersFromConfigMap(
  raw: string,
  store: StoreReader | undefined,
  warn: (message: string) => void,
): Record<string, string> {
  const ref = raw.trim();
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(ref)) {
    warn(`"${preview(ref)}" is not namespace/name of a ConfigMap; no headers`);
    return {};
  }
  const cm = store?.getConfigMap(ref);
  if (cm === undefined) {
    warn(`ConfigMap ${ref} not found; no headers`);
    return {};
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(cm.data ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    try {
      headers[headerName(name)] = safeStringWithVariables(value);
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      warn(`ConfigMap ${ref} header "${preview(name)}": ${err.message}; header left out`);
    }
  }
  return headers;
}
