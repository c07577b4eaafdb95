// Table tests for every annotation group: valid values, defaults from the ConfigMap settings,
// invalid values → warning + default (or denied), risk level and word blocklist.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOTATION_GROUPS, ANNOTATION_REFERENCES, defaultAnnotations, locationTemplate, parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { makeLocation } from '../../../../src/model/ingress/fragments.js';
import { splitPrefixLocations } from '../../../../src/model/core/paths.js';
import type { ParsedAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { Ingress, Service } from '../../../../src/store/kube-types.js';
import type { StoreReader } from '../../../../src/store/types.js';

const P = 'nginx.ingress.kubernetes.io';

function storeWith(services: string[] = []): StoreReader {
  return {
    getService: (key: string) => (services.includes(key) ? ({ metadata: { name: key.split('/')[1] ?? '' }, spec: {} } as Service) : undefined),
    getSecret: () => undefined,
    getConfigMap: () => undefined,
  } as unknown as StoreReader;
}

function ingress(ann: Record<string, string>, prefix = P): Ingress {
  const annotations = Object.fromEntries(Object.entries(ann).map(([k, v]) => [`${prefix}/${k}`, v]));
  return { metadata: { name: 'web', namespace: 'shop', annotations }, spec: {} };
}

function parse(ann: Record<string, string>, settings: Partial<NginxSettings> = {}, store = storeWith()) {
  return parseAnnotations(ingress(ann), { prefix: P, settings: { ...defaultSettings(), ...settings }, store });
}

interface Case {
  name: string;
  ann: Record<string, string>;
  settings?: Partial<NginxSettings>;
  pick: (v: ParsedAnnotations) => unknown;
  want: unknown;
  /** Keys expected to be warned about (default: none). */
  warn?: string[];
  /** Expected denied reason (default: null). */
  denied?: RegExp;
}

const cases: Case[] = [
  // rewrite
  { name: 'rewrite-target with capture', ann: { 'rewrite-target': '/$2' }, pick: (v) => v.rewrite.target, want: '/$2' },
  { name: 'rewrite-target with query', ann: { 'rewrite-target': '/app/$1?x=1&y=2' }, pick: (v) => v.rewrite.target, want: '/app/$1?x=1&y=2' },
  { name: 'rewrite-target with variable', ann: { 'rewrite-target': '/$host' }, pick: (v) => v.rewrite.target, want: '', warn: ['rewrite-target'] },
  { name: 'rewrite-target with space', ann: { 'rewrite-target': '/a b' }, pick: (v) => v.rewrite.target, want: '', warn: ['rewrite-target'] },
  { name: 'use-regex', ann: { 'use-regex': 'true' }, pick: (v) => v.rewrite.useRegex, want: true },
  { name: 'use-regex invalid', ann: { 'use-regex': 'yes' }, pick: (v) => v.rewrite.useRegex, want: false, warn: ['use-regex'] },
  { name: 'app-root', ann: { 'app-root': '/app1' }, pick: (v) => v.rewrite.appRoot, want: '/app1' },
  { name: 'app-root relative', ann: { 'app-root': 'app1' }, pick: (v) => v.rewrite.appRoot, want: '', warn: ['app-root'] },
  { name: 'ssl-redirect default from settings', ann: {}, settings: { sslRedirect: false }, pick: (v) => v.rewrite.sslRedirect, want: false },
  { name: 'ssl-redirect false', ann: { 'ssl-redirect': 'false' }, pick: (v) => v.rewrite.sslRedirect, want: false },
  { name: 'ssl-redirect invalid keeps settings', ann: { 'ssl-redirect': 'nope' }, pick: (v) => v.rewrite.sslRedirect, want: true, warn: ['ssl-redirect'] },
  { name: 'force-ssl-redirect', ann: { 'force-ssl-redirect': 'true' }, pick: (v) => v.rewrite.forceSSLRedirect, want: true },
  { name: 'force-ssl-redirect default from settings', ann: {}, settings: { forceSSLRedirect: true }, pick: (v) => v.rewrite.forceSSLRedirect, want: true },
  { name: 'preserve-trailing-slash', ann: { 'preserve-trailing-slash': 'true' }, pick: (v) => v.rewrite.preserveTrailingSlash, want: true },
  { name: 'x-forwarded-prefix', ann: { 'x-forwarded-prefix': '/api' }, pick: (v) => v.rewrite.xForwardedPrefix, want: '/api' },
  { name: 'x-forwarded-prefix invalid', ann: { 'x-forwarded-prefix': '/a"b' }, pick: (v) => v.rewrite.xForwardedPrefix, want: '', warn: ['x-forwarded-prefix'] },

  // redirect
  { name: 'permanent-redirect', ann: { 'permanent-redirect': 'https://example.com/new' }, pick: (v) => v.redirect, want: { url: 'https://example.com/new', code: 301 } },
  { name: 'permanent-redirect with variable', ann: { 'permanent-redirect': 'https://example.com$request_uri' }, pick: (v) => v.redirect, want: { url: 'https://example.com$request_uri', code: 301 } },
  { name: 'permanent-redirect-code', ann: { 'permanent-redirect': 'https://e.com/', 'permanent-redirect-code': '308' }, pick: (v) => v.redirect?.code, want: 308 },
  { name: 'permanent-redirect-code out of range', ann: { 'permanent-redirect': 'https://e.com/', 'permanent-redirect-code': '200' }, pick: (v) => v.redirect?.code, want: 301, warn: ['permanent-redirect-code'] },
  { name: 'temporal wins over permanent', ann: { 'permanent-redirect': 'https://a.com/', 'temporal-redirect': 'https://b.com/' }, pick: (v) => v.redirect, want: { url: 'https://b.com/', code: 302 } },
  { name: 'temporal-redirect-code', ann: { 'temporal-redirect': 'http://b.com/', 'temporal-redirect-code': '307' }, pick: (v) => v.redirect?.code, want: 307 },
  { name: 'redirect ftp refused', ann: { 'permanent-redirect': 'ftp://a.com/' }, pick: (v) => v.redirect, want: null, warn: ['permanent-redirect'] },
  { name: 'redirect javascript refused', ann: { 'temporal-redirect': 'javascript:alert(1)' }, pick: (v) => v.redirect, want: null, warn: ['temporal-redirect'] },
  { name: 'from-to-www-redirect', ann: { 'from-to-www-redirect': 'true' }, pick: (v) => v.fromToWWWRedirect, want: true },

  // server alias
  { name: 'server-alias', ann: { 'server-alias': 'a.example.com, *.b.example.com,a.example.com' }, pick: (v) => v.serverAliases, want: ['a.example.com', '*.b.example.com'] },
  { name: 'server-alias invalid', ann: { 'server-alias': 'a.com,b_c.com' }, pick: (v) => v.serverAliases, want: [], warn: ['server-alias'] },
  { name: 'server-alias above risk limit', ann: { 'server-alias': 'a.com' }, settings: { annotationsRiskLevel: 'Medium' }, pick: (v) => v.serverAliases, want: [], warn: ['server-alias'] },

  // canary
  { name: 'canary weight', ann: { canary: 'true', 'canary-weight': '20' }, pick: (v) => [v.canary.enabled, v.canary.weight, v.canary.weightTotal], want: [true, 20, 100] },
  { name: 'canary weight above total', ann: { canary: 'true', 'canary-weight': '120' }, pick: (v) => v.canary.weight, want: 0, warn: ['canary-weight'] },
  { name: 'canary weight-total', ann: { canary: 'true', 'canary-weight': '120', 'canary-weight-total': '1000' }, pick: (v) => [v.canary.weight, v.canary.weightTotal], want: [120, 1000] },
  { name: 'canary header', ann: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-value': 'v2' }, pick: (v) => [v.canary.header, v.canary.headerValue], want: ['X-Canary', 'v2'] },
  { name: 'canary header pattern', ann: { canary: 'true', 'canary-by-header': 'X-C', 'canary-by-header-pattern': '^(v2|v3)$' }, pick: (v) => v.canary.headerPattern, want: '^(v2|v3)$' },
  { name: 'canary header pattern does not compile', ann: { canary: 'true', 'canary-by-header-pattern': '(v2' }, pick: (v) => [v.canary.headerPattern, v.canary.headerPatternInvalid], want: ['', true], warn: ['canary-by-header-pattern'] },
  { name: 'canary header pattern with brace', ann: { canary: 'true', 'canary-by-header-pattern': 'a{2}' }, pick: (v) => v.canary.headerPattern, want: '', warn: ['canary-by-header-pattern'] },
  { name: 'canary header name invalid', ann: { canary: 'true', 'canary-by-header': 'X Canary' }, pick: (v) => v.canary.header, want: '', warn: ['canary-by-header'] },
  { name: 'canary cookie', ann: { canary: 'true', 'canary-by-cookie': 'use_canary' }, pick: (v) => v.canary.cookie, want: 'use_canary' },
  { name: 'canary cookie invalid', ann: { canary: 'true', 'canary-by-cookie': 'a;b' }, pick: (v) => v.canary.cookie, want: '', warn: ['canary-by-cookie'] },
  { name: 'canary annotations without canary', ann: { 'canary-weight': '10' }, pick: (v) => v.canary.enabled, want: false, warn: ['canary'] },

  // affinity
  { name: 'affinity cookie defaults', ann: { affinity: 'cookie' }, pick: (v) => [v.affinity.type, v.affinity.mode, v.affinity.canaryBehavior, v.affinity.cookie.name], want: ['cookie', '', 'sticky', 'INGRESSCOOKIE'] },
  { name: 'affinity invalid type', ann: { affinity: 'ip' }, pick: (v) => v.affinity.type, want: '', warn: ['affinity'] },
  { name: 'affinity-mode persistent', ann: { affinity: 'cookie', 'affinity-mode': 'persistent' }, pick: (v) => v.affinity.mode, want: 'persistent' },
  { name: 'affinity-canary-behavior legacy', ann: { 'affinity-canary-behavior': 'legacy' }, pick: (v) => v.affinity.canaryBehavior, want: 'legacy' },
  {
    name: 'session cookie attributes',
    ann: {
      affinity: 'cookie', 'session-cookie-name': 'route', 'session-cookie-path': '/app', 'session-cookie-domain': '.example.com',
      'session-cookie-expires': '172800', 'session-cookie-max-age': '3600', 'session-cookie-secure': 'true',
      'session-cookie-samesite': 'Strict', 'session-cookie-conditional-samesite-none': 'true', 'session-cookie-change-on-failure': 'true',
    },
    pick: (v) => v.affinity.cookie,
    want: { name: 'route', path: '/app', domain: '.example.com', expires: '172800', maxage: '3600', secure: true, samesite: 'Strict', conditional_samesite_none: true, changeonfailure: true },
  },
  { name: 'session cookie name invalid', ann: { 'session-cookie-name': 'a b' }, pick: (v) => v.affinity.cookie.name, want: 'INGRESSCOOKIE', warn: ['session-cookie-name'] },
  { name: 'session cookie path invalid', ann: { 'session-cookie-path': '/a;b' }, pick: (v) => v.affinity.cookie.path, want: '', warn: ['session-cookie-path'] },
  { name: 'session cookie domain invalid', ann: { 'session-cookie-domain': 'a b.com' }, pick: (v) => v.affinity.cookie.domain, want: '', warn: ['session-cookie-domain'] },
  { name: 'session cookie expires invalid', ann: { 'session-cookie-expires': '1d' }, pick: (v) => v.affinity.cookie.expires, want: '', warn: ['session-cookie-expires'] },
  { name: 'session cookie samesite invalid', ann: { 'session-cookie-samesite': 'Sometimes' }, pick: (v) => v.affinity.cookie.samesite, want: '', warn: ['session-cookie-samesite'] },

  // load balancing, hashing, service upstream
  { name: 'load-balance default from settings', ann: {}, settings: { loadBalance: 'ewma' }, pick: (v) => v.loadBalance, want: 'ewma' },
  { name: 'load-balance ewma', ann: { 'load-balance': 'ewma' }, pick: (v) => v.loadBalance, want: 'ewma' },
  { name: 'load-balance invalid', ann: { 'load-balance': 'random' }, pick: (v) => v.loadBalance, want: 'round_robin', warn: ['load-balance'] },
  { name: 'upstream-hash-by', ann: { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true', 'upstream-hash-by-subset-size': '5' }, pick: (v) => v.upstreamHashBy, want: { hashBy: '$request_uri', subset: true, subsetSize: 5 } },
  { name: 'upstream-hash-by combined variables', ann: { 'upstream-hash-by': '$binary_remote_addr$http_x_user' }, pick: (v) => v.upstreamHashBy.hashBy, want: '$binary_remote_addr$http_x_user' },
  { name: 'upstream-hash-by invalid', ann: { 'upstream-hash-by': '$a b' }, pick: (v) => v.upstreamHashBy.hashBy, want: '', warn: ['upstream-hash-by'] },
  { name: 'upstream-hash-by-subset-size invalid', ann: { 'upstream-hash-by-subset-size': '0' }, pick: (v) => v.upstreamHashBy.subsetSize, want: 3, warn: ['upstream-hash-by-subset-size'] },
  { name: 'service-upstream', ann: { 'service-upstream': 'true' }, pick: (v) => v.serviceUpstream, want: true },

  // backend protocol, vhost, connection, default backend, custom errors
  { name: 'backend-protocol', ann: { 'backend-protocol': 'grpcs' }, pick: (v) => v.backendProtocol, want: 'GRPCS', warn: ['backend-protocol'] },
  { name: 'backend-protocol https', ann: { 'backend-protocol': 'HTTPS' }, pick: (v) => v.backendProtocol, want: 'HTTPS' },
  { name: 'backend-protocol invalid', ann: { 'backend-protocol': 'AJP' }, pick: (v) => v.backendProtocol, want: 'HTTP', warn: ['backend-protocol'] },
  { name: 'upstream-vhost', ann: { 'upstream-vhost': 'Internal.Example.com:8080' }, pick: (v) => v.upstreamVhost, want: 'internal.example.com:8080' },
  { name: 'upstream-vhost variable', ann: { 'upstream-vhost': '$host' }, pick: (v) => v.upstreamVhost, want: '$host' },
  { name: 'upstream-vhost invalid', ann: { 'upstream-vhost': 'a b' }, pick: (v) => v.upstreamVhost, want: '', warn: ['upstream-vhost'] },
  { name: 'satisfy any', ann: { satisfy: 'any' }, pick: (v) => v.satisfy, want: 'any' },
  { name: 'satisfy all, spaces trimmed', ann: { satisfy: ' all ' }, pick: (v) => v.satisfy, want: 'all' },
  { name: 'satisfy unset', ann: {}, pick: (v) => v.satisfy, want: '' },
  // ingress-nginx compares case-sensitively and drops any other value.
  { name: 'satisfy invalid', ann: { satisfy: 'ANY' }, pick: (v) => v.satisfy, want: '', warn: ['satisfy'] },
  // Linkerd's documented dashboard setup; ingress-nginx accepts host characters and variables.
  { name: 'upstream-vhost template', ann: { 'upstream-vhost': '$service_name.$namespace.svc.cluster.local:8084' }, pick: (v) => v.upstreamVhost, want: '$service_name.$namespace.svc.cluster.local:8084' },
  { name: 'upstream-vhost braced', ann: { 'upstream-vhost': '${http_x_tenant}.internal' }, pick: (v) => v.upstreamVhost, want: '${http_x_tenant}.internal' },
  { name: 'upstream-vhost unknown variable', ann: { 'upstream-vhost': '$nope.example' }, pick: (v) => v.upstreamVhost, want: '', warn: ['upstream-vhost'] },
  { name: 'upstream-vhost injection', ann: { 'upstream-vhost': '$host";proxy_pass http://evil' }, pick: (v) => v.upstreamVhost, want: '', warn: ['upstream-vhost'] },
  { name: 'upstream-vhost capture', ann: { 'upstream-vhost': '$1.example' }, pick: (v) => v.upstreamVhost, want: '', warn: ['upstream-vhost'] },
  { name: 'connection-proxy-header', ann: { 'connection-proxy-header': 'keep-alive' }, pick: (v) => v.connectionHeader, want: 'keep-alive' },
  { name: 'connection-proxy-header invalid', ann: { 'connection-proxy-header': 'close"' }, pick: (v) => v.connectionHeader, want: '', warn: ['connection-proxy-header'] },
  { name: 'default-backend found', ann: { 'default-backend': 'errors' }, pick: (v) => [v.defaultBackendService, v.defaultBackend], want: ['shop/errors', 'custom-default-backend-shop-errors'] },
  { name: 'default-backend missing service', ann: { 'default-backend': 'nothere' }, pick: (v) => v.defaultBackendService, want: null, warn: ['default-backend'] },
  { name: 'default-backend invalid name', ann: { 'default-backend': 'other/errors' }, pick: (v) => v.defaultBackendService, want: null, warn: ['default-backend'] },
  { name: 'custom-http-errors', ann: { 'custom-http-errors': '404, 503' }, pick: (v) => v.customHttpErrors, want: [404, 503] },
  { name: 'custom-http-errors default from settings', ann: {}, settings: { customHttpErrors: [500] }, pick: (v) => v.customHttpErrors, want: [500] },
  { name: 'custom-http-errors invalid', ann: { 'custom-http-errors': '404,abc' }, settings: { customHttpErrors: [502] }, pick: (v) => v.customHttpErrors, want: [502], warn: ['custom-http-errors'] },

  // proxy
  {
    name: 'proxy defaults from settings',
    ann: {},
    settings: { proxyConnectTimeout: 7, proxyBodySize: '8m', proxyBuffering: 'on', proxyNextUpstream: ['error'], proxyHttpVersion: '1.0', clientBodyBufferSize: '16k' },
    pick: (v) => [v.proxy.connectTimeout, v.proxy.bodySize, v.proxy.buffering, v.proxy.nextUpstream, v.proxy.httpVersion, v.proxy.clientBodyBufferSize],
    want: [7, '8m', 'on', ['error'], '1.0', '16k'],
  },
  {
    name: 'proxy values',
    ann: {
      'proxy-body-size': '10m', 'proxy-connect-timeout': '15', 'proxy-read-timeout': '120', 'proxy-send-timeout': '30',
      'proxy-buffer-size': '16k', 'proxy-buffers-number': '8', 'proxy-buffering': 'on', 'proxy-request-buffering': 'off',
      'proxy-next-upstream': 'error timeout http_502', 'proxy-next-upstream-timeout': '10', 'proxy-next-upstream-tries': '5',
      'proxy-http-version': '1.0', 'client-body-buffer-size': '1M',
      'proxy-busy-buffers-size': '32k', 'proxy-max-temp-file-size': '0', 'proxy-cookie-domain': 'backend.local example.com',
      'proxy-cookie-path': '/app/ /', 'proxy-redirect-from': 'http://backend:8080/', 'proxy-redirect-to': '/',
    },
    pick: (v) => v.proxy,
    want: {
      bodySize: '10m', connectTimeout: 15, readTimeout: 120, sendTimeout: 30, bufferSize: '16k', buffersNumber: 8,
      buffering: 'on', requestBuffering: 'off', nextUpstream: ['error', 'timeout', 'http_502'], nextUpstreamTimeout: 10,
      nextUpstreamTries: 5, httpVersion: '1.0', clientBodyBufferSize: '1M',
      busyBuffersSize: '32k', maxTempFileSize: '0', cookieDomain: 'backend.local example.com', cookiePath: '/app/ /',
      redirectFrom: 'http://backend:8080/', redirectTo: '/',
    },
  },
  { name: 'proxy-body-size invalid', ann: { 'proxy-body-size': '10 m' }, pick: (v) => v.proxy.bodySize, want: '1m', warn: ['proxy-body-size'] },
  // ingress-nginx's e2e settings/proxy_next_upstream.go sets these; NGINX takes them.
  { name: 'proxy-next-upstream bounds as large as ingress-nginx takes', ann: { 'proxy-next-upstream-timeout': '999999', 'proxy-next-upstream-tries': '888888', 'proxy-read-timeout': '100000' }, pick: (v) => [v.proxy.nextUpstreamTimeout, v.proxy.nextUpstreamTries, v.proxy.readTimeout], want: [999999, 888888, 100000] },
  { name: 'proxy-read-timeout invalid', ann: { 'proxy-read-timeout': '60s' }, pick: (v) => v.proxy.readTimeout, want: 60, warn: ['proxy-read-timeout'] },
  { name: 'proxy-next-upstream invalid', ann: { 'proxy-next-upstream': 'error always' }, pick: (v) => v.proxy.nextUpstream, want: ['error', 'timeout'], warn: ['proxy-next-upstream'] },
  { name: 'proxy-http-version invalid', ann: { 'proxy-http-version': '2' }, pick: (v) => v.proxy.httpVersion, want: '1.1', warn: ['proxy-http-version'] },
  { name: 'proxy-buffering invalid', ann: { 'proxy-buffering': 'true' }, pick: (v) => v.proxy.buffering, want: 'off', warn: ['proxy-buffering'] },
  { name: 'proxy-body-size above risk limit', ann: { 'proxy-body-size': '5m' }, settings: { annotationsRiskLevel: 'Low' }, pick: (v) => v.proxy.bodySize, want: '1m', warn: ['proxy-body-size'] },

  // cors
  { name: 'cors off by default', ann: { 'cors-allow-origin': 'https://a.com' }, pick: (v) => v.cors, want: null },
  {
    name: 'cors defaults',
    ann: { 'enable-cors': 'true' },
    pick: (v) => v.cors,
    want: {
      enabled: true, allowOrigin: ['*'], allowMethods: 'GET, PUT, POST, DELETE, PATCH, OPTIONS',
      allowHeaders: 'DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization',
      exposeHeaders: '', allowCredentials: true, maxAge: 1728000,
    },
  },
  {
    name: 'cors values',
    ann: {
      'enable-cors': 'true', 'cors-allow-origin': 'https://a.com, https://*.b.com:8443', 'cors-allow-methods': 'get,POST',
      'cors-allow-headers': 'X-A, X-B', 'cors-expose-headers': 'X-Total', 'cors-allow-credentials': 'false', 'cors-max-age': '60',
    },
    pick: (v) => v.cors,
    want: { enabled: true, allowOrigin: ['https://a.com', 'https://*.b.com:8443'], allowMethods: 'get,POST', allowHeaders: 'X-A, X-B', exposeHeaders: 'X-Total', allowCredentials: false, maxAge: 60 },
  },
  { name: 'cors invalid origin dropped', ann: { 'enable-cors': 'true', 'cors-allow-origin': 'https://a.com, a b, http://c.org:8080' }, pick: (v) => v.cors?.allowOrigin, want: ['https://a.com', 'http://c.org:8080'], warn: ['cors-allow-origin'] },
  { name: 'cors origin invalid', ann: { 'enable-cors': 'true', 'cors-allow-origin': 'https://a.com/path' }, pick: (v) => v.cors?.allowOrigin, want: ['*'], warn: ['cors-allow-origin'] },
  // Any method token, as ingress-nginx (WebDAV's PROPFIND), sent as written: not punctuation.
  { name: 'cors method token', ann: { 'enable-cors': 'true', 'cors-allow-methods': 'get, PROPFIND' }, pick: (v) => v.cors?.allowMethods, want: 'get, PROPFIND' },
  { name: 'cors null origin and any expose header', ann: { 'enable-cors': 'true', 'cors-allow-origin': 'null, https://a.com', 'cors-expose-headers': '*' }, pick: (v) => [v.cors?.allowOrigin, v.cors?.exposeHeaders], want: [['null', 'https://a.com'], '*'] },
  { name: 'cors method invalid', ann: { 'enable-cors': 'true', 'cors-allow-methods': 'GET, X-Y' }, pick: (v) => v.cors?.allowMethods, want: 'GET, PUT, POST, DELETE, PATCH, OPTIONS', warn: ['cors-allow-methods'] },
  { name: 'cors lists sent as written, but a tab or line break is refused', ann: { 'enable-cors': 'true', 'cors-allow-headers': 'X-A,\tX-B', 'cors-allow-methods': 'GET,\nPOST' }, pick: (v) => [v.cors?.allowHeaders.startsWith('DNT'), v.cors?.allowMethods], want: [true, 'GET, PUT, POST, DELETE, PATCH, OPTIONS'], warn: ['cors-allow-headers', 'cors-allow-methods'] },
  { name: 'cors header invalid', ann: { 'enable-cors': 'true', 'cors-allow-headers': 'X_A' }, pick: (v) => v.cors?.allowHeaders.startsWith('DNT'), want: true, warn: ['cors-allow-headers'] },
  { name: 'cors max-age invalid', ann: { 'enable-cors': 'true', 'cors-max-age': '-1' }, pick: (v) => v.cors?.maxAge, want: 1728000, warn: ['cors-max-age'] },

  // allow/deny lists
  { name: 'allowlist', ann: { 'allowlist-source-range': '10.0.0.0/8, 192.168.1.1, 2001:db8::/32' }, pick: (v) => v.allowlist, want: ['10.0.0.0/8', '192.168.1.1', '2001:db8::/32'] },
  { name: 'allowlist alias whitelist', ann: { 'whitelist-source-range': '10.0.0.0/8' }, pick: (v) => v.allowlist, want: ['10.0.0.0/8'] },
  { name: 'allowlist wins over whitelist', ann: { 'allowlist-source-range': '10.0.0.0/8', 'whitelist-source-range': '1.1.1.1' }, pick: (v) => v.allowlist, want: ['10.0.0.0/8'] },
  { name: 'allowlist default from settings', ann: {}, settings: { whitelistSourceRange: ['10.1.0.0/16'] }, pick: (v) => v.allowlist, want: ['10.1.0.0/16'] },
  { name: 'allowlist invalid CIDR denies', ann: { 'allowlist-source-range': '10.0.0.0/33' }, pick: (v) => v.allowlist, want: [], warn: ['allowlist-source-range'], denied: /allowlist-source-range/ },
  { name: 'allowlist host name denies', ann: { 'allowlist-source-range': 'example.com' }, pick: (v) => v.allowlist, want: [], warn: ['allowlist-source-range'], denied: /allowlist-source-range/ },
  { name: 'denylist', ann: { 'denylist-source-range': '1.2.3.0/24' }, pick: (v) => v.denylist, want: ['1.2.3.0/24'] },
  { name: 'denylist default from settings', ann: {}, settings: { denylistSourceRange: ['1.2.3.4'] }, pick: (v) => v.denylist, want: ['1.2.3.4'] },
  { name: 'denylist invalid denies', ann: { 'denylist-source-range': '1.2.3' }, pick: (v) => v.denylist, want: [], warn: ['denylist-source-range'], denied: /denylist-source-range/ },

  // rate limit
  { name: 'rate limit off by default', ann: {}, pick: (v) => v.rateLimit, want: null },
  {
    name: 'rate limit values',
    ann: { 'limit-rps': '10', 'limit-rpm': '300', 'limit-connections': '5', 'limit-burst-multiplier': '3', 'limit-rate': '100', 'limit-rate-after': '1024', 'limit-allowlist': '10.0.0.0/8' },
    pick: (v) => v.rateLimit,
    want: { rps: 10, rpm: 300, connections: 5, burstMultiplier: 3, limitRate: 100, limitRateAfter: 1024, allowlist: ['10.0.0.0/8'] },
  },
  { name: 'rate limit invalid rps', ann: { 'limit-rps': 'ten', 'limit-rpm': '60' }, pick: (v) => [v.rateLimit?.rps, v.rateLimit?.rpm], want: [0, 60], warn: ['limit-rps'] },
  { name: 'rate limit invalid burst', ann: { 'limit-rps': '1', 'limit-burst-multiplier': '0' }, pick: (v) => v.rateLimit?.burstMultiplier, want: 5, warn: ['limit-burst-multiplier'] },
  { name: 'rate limit invalid allowlist', ann: { 'limit-rps': '1', 'limit-allowlist': 'x' }, pick: (v) => v.rateLimit?.allowlist, want: [], warn: ['limit-allowlist'] },

  // logs, passthrough
  { name: 'enable-access-log', ann: { 'enable-access-log': 'false' }, pick: (v) => v.accessLog, want: false },
  { name: 'access log default from settings', ann: {}, settings: { enableAccessLog: false }, pick: (v) => v.accessLog, want: false },
  { name: 'ssl-passthrough', ann: { 'ssl-passthrough': 'true' }, pick: (v) => v.sslPassthrough, want: true },

  // snippets
  { name: 'snippet refused by default', ann: { 'configuration-snippet': 'more_set_headers "X: y";' }, pick: (v) => v.configurationSnippet, want: '', warn: ['configuration-snippet'] },
  { name: 'snippet refused when allowed but risk High', ann: { 'server-snippet': 'return 200;' }, settings: { allowSnippetAnnotations: true }, pick: (v) => v.serverSnippet, want: '', warn: ['server-snippet'] },
  { name: 'snippet refused at Critical when not allowed', ann: { 'server-snippet': 'return 200;' }, settings: { annotationsRiskLevel: 'Critical' }, pick: (v) => v.serverSnippet, want: '', warn: ['server-snippet'] },
  { name: 'snippet accepted when allowed and Critical', ann: { 'configuration-snippet': 'more_set_headers "X: {y}";', 'server-snippet': 'location /x { return 200; }' }, settings: { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' }, pick: (v) => [v.configurationSnippet, v.serverSnippet], want: ['more_set_headers "X: {y}";', 'location /x { return 200; }'] },
  { name: 'snippet that closes its block refused', ann: { 'configuration-snippet': '} server { listen 81; ' }, settings: { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' }, pick: (v) => v.configurationSnippet, want: '', warn: ['configuration-snippet'] },
  { name: 'snippet with NUL refused', ann: { 'configuration-snippet': 'return 200;\u0000' }, settings: { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' }, pick: (v) => v.configurationSnippet, want: '', warn: ['configuration-snippet'] },

  // opentelemetry
  { name: 'enable-opentelemetry over the ConfigMap', ann: { 'enable-opentelemetry': 'false' }, settings: { enableOpentelemetry: true }, pick: (v) => v.opentelemetry, want: { enable: false, trust: null, operationName: '' } },
  { name: 'enable-opentelemetry with trust and name', ann: { 'enable-opentelemetry': 'true', 'opentelemetry-trust-incoming-span': 'false', 'opentelemetry-operation-name': 'checkout-v2' }, pick: (v) => v.opentelemetry, want: { enable: true, trust: false, operationName: 'checkout-v2' } },
  // As ingress-nginx, which reads them only after enable-opentelemetry "true"; here with a warning.
  { name: 'opentelemetry trust and name without enable-opentelemetry "true" are ignored', ann: { 'opentelemetry-trust-incoming-span': 'false', 'opentelemetry-operation-name': 'checkout-v2' }, settings: { enableOpentelemetry: true }, pick: (v) => v.opentelemetry, want: null, warn: ['opentelemetry-trust-incoming-span', 'opentelemetry-operation-name'] },
  { name: 'enable-opentelemetry invalid', ann: { 'enable-opentelemetry': 'on' }, pick: (v) => v.opentelemetry, want: null, warn: ['enable-opentelemetry'] },
  // A tenant's span name reaches Lua: no quotes, no $variables (the ConfigMap may use them), nothing huge.
  { name: 'opentelemetry-operation-name breaking out of its Lua string', ann: { 'enable-opentelemetry': 'true', 'opentelemetry-operation-name': 'x") os.execute("id' }, pick: (v) => v.opentelemetry?.operationName, want: '', warn: ['opentelemetry-operation-name'] },
  { name: 'opentelemetry-operation-name reading a variable', ann: { 'enable-opentelemetry': 'true', 'opentelemetry-operation-name': '$http_authorization' }, pick: (v) => v.opentelemetry?.operationName, want: '', warn: ['opentelemetry-operation-name'] },
  { name: 'opentelemetry-operation-name huge', ann: { 'enable-opentelemetry': 'true', 'opentelemetry-operation-name': 'a'.repeat(300) }, pick: (v) => v.opentelemetry?.operationName, want: '', warn: ['opentelemetry-operation-name'] },

  // word blocklist
  { name: 'blocked word rejects value', ann: { 'rewrite-target': '/location/$1' }, settings: { annotationValueWordBlocklist: ['location'] }, pick: (v) => v.rewrite.target, want: '', warn: ['rewrite-target'] },
  { name: 'blocked word is case-insensitive', ann: { 'x-forwarded-prefix': '/ROOT' }, settings: { annotationValueWordBlocklist: ['root'] }, pick: (v) => v.rewrite.xForwardedPrefix, want: '', warn: ['x-forwarded-prefix'] },
  { name: 'blocked word in allowlist denies', ann: { 'allowlist-source-range': '10.0.0.0/8' }, settings: { annotationValueWordBlocklist: ['10.'] }, pick: (v) => v.allowlist, want: [], warn: ['allowlist-source-range'], denied: /annotation-value-word-blocklist/ },

  // unknown keys
  { name: 'unsupported annotation warns', ann: { 'no-such-annotation': 'x' }, pick: (v) => v.rewrite.target, want: '', warn: ['no-such-annotation'] },
];

for (const c of cases) {
  test(c.name, () => {
    const store = storeWith(['shop/errors']);
    const { value, warnings } = parse(c.ann, c.settings, store);
    assert.equal(c.pick(value), c.want);
    const warnedKeys = warnings.map((w) => w.field.replace(`metadata.annotations["${P}/`, '').replace('"]', ''));
    assert.equal([...new Set(warnedKeys)].sort(), [...(c.warn ?? [])].sort(), `warnings: ${JSON.stringify(warnings)}`);
    for (const w of warnings) assert.is(w.object, 'Ingress shop/web');
    if (c.denied) assert.match(value.denied ?? '', c.denied);
    else assert.is(value.denied, null);
  });
}

test('an Ingress without annotations gets the defaults', () => {
  const settings = defaultSettings();
  const { value, warnings } = parseAnnotations(ingress({}), { prefix: P, settings, store: storeWith() });
  assert.equal(value, defaultAnnotations(settings));
  assert.equal(warnings, []);
});

test('defaults: every field, with the values of ingress-nginx', () => {
  const d = defaultAnnotations(defaultSettings());
  assert.equal(Object.keys(d).sort(), [
    'accessLog', 'affinity', 'allowlist', 'authTLS', 'backendProtocol', 'basicAuth', 'canary', 'configurationSnippet', 'connectionHeader',
    'cors', 'customHeaders', 'customHttpErrors', 'defaultBackend', 'defaultBackendService', 'denied', 'denylist', 'disableProxyInterceptErrors',
    'externalAuth', 'fastcgi', 'fromToWWWRedirect', 'http2PushPreload', 'loadBalance', 'mirror', 'modsecurity', 'opentelemetry', 'proxy', 'proxySSL', 'rateLimit',
    'redirect', 'relativeRedirects', 'rewrite', 'rewriteLog', 'satisfy', 'serverAliases', 'serverSnippet', 'serviceUpstream', 'sslCiphers', 'sslPassthrough',
    'sslPreferServerCiphers', 'streamSnippet', 'upstreamHashBy', 'upstreamVhost',
  ]);
  assert.equal(d.rewrite, { target: '', useRegex: false, appRoot: '', sslRedirect: true, forceSSLRedirect: false, preserveTrailingSlash: false, xForwardedPrefix: '', usePortInRedirects: false });
  assert.equal(d.canary, { enabled: false, weight: 0, weightTotal: 100, header: '', headerValue: '', headerPattern: '', headerPatternInvalid: false, cookie: '' });
  assert.equal([d.affinity.type, d.affinity.mode, d.affinity.canaryBehavior, d.affinity.cookie.name], ['', '', 'sticky', 'INGRESSCOOKIE']);
  assert.equal(d.upstreamHashBy, { hashBy: '', subset: false, subsetSize: 3 });
  assert.equal([d.backendProtocol, d.loadBalance, d.accessLog, d.redirect, d.cors, d.rateLimit, d.denied, d.defaultBackend, d.mirror, d.modsecurity, d.opentelemetry, d.fastcgi], ['HTTP', 'round_robin', true, null, null, null, null, null, null, null, null, null]);
  assert.equal([d.customHeaders, d.disableProxyInterceptErrors, d.http2PushPreload, d.relativeRedirects, d.rewriteLog, d.streamSnippet], [null, false, false, false, false, '']);
  assert.equal([d.proxy.cookieDomain, d.proxy.cookiePath, d.proxy.redirectFrom, d.proxy.redirectTo, d.proxy.busyBuffersSize, d.proxy.maxTempFileSize], ['off', 'off', 'off', 'off', '', '1024m']);
  assert.equal([d.authTLS, d.proxySSL, d.sslCiphers, d.sslPreferServerCiphers], [null, null, '', null]);
  assert.is(d.satisfy, '', 'no satisfy directive: NGINX\'s own all');
});

test('defaults follow the settings the same way parsing does', () => {
  const settings = { ...defaultSettings(), limitRate: 100 };
  const withoutAnnotations = defaultAnnotations(settings);
  const withUnrelated = parse({ 'use-regex': 'false' }, { limitRate: 100 }).value;
  assert.equal(withoutAnnotations.rateLimit?.limitRate, 100);
  assert.equal(withoutAnnotations, withUnrelated);
});

test('unquoted booleans and numbers from hand-written manifests are read; objects are rejected', () => {
  const ing = { metadata: { name: 'web', namespace: 'shop', annotations: { [`${P}/ssl-redirect`]: false, [`${P}/proxy-read-timeout`]: 90, [`${P}/server-alias`]: { a: 1 } } }, spec: {} } as unknown as Ingress;
  const { value, warnings } = parseAnnotations(ing, { prefix: P, settings: defaultSettings(), store: storeWith() });
  assert.equal([value.rewrite.sslRedirect, value.proxy.readTimeout, value.serverAliases], [false, 90, []]);
  assert.equal(warnings.map((w) => w.field), [`metadata.annotations["${P}/server-alias"]`]);
});

test('the prefix comes from the context', () => {
  const ing = ingress({ 'rewrite-target': '/x', 'use-regex': 'true' }, 'custom.io');
  const { value, warnings } = parseAnnotations(ing, { prefix: 'custom.io', settings: defaultSettings(), store: storeWith() });
  assert.is(value.rewrite.target, '/x');
  assert.is(value.rewrite.useRegex, true);
  assert.equal(warnings, []);
  const other = parseAnnotations(ing, { prefix: P, settings: defaultSettings(), store: storeWith() });
  assert.is(other.value.rewrite.target, '');
});

test('warnings name the object and the prefixed annotation', () => {
  const { warnings } = parse({ 'proxy-read-timeout': 'soon' });
  assert.equal(warnings.length, 1);
  assert.is(warnings[0]!.object, 'Ingress shop/web');
  assert.is(warnings[0]!.field, `metadata.annotations["${P}/proxy-read-timeout"]`);
  assert.match(warnings[0]!.message, /integer/);
});

test('every key of every group is declared once, with a risk and docs', () => {
  const seen = new Set<string>();
  for (const g of ANNOTATION_GROUPS) {
    for (const [k, risk] of Object.entries(g.keys)) {
      assert.not.ok(seen.has(k), `duplicate key ${k}`);
      seen.add(k);
      assert.ok(['Low', 'Medium', 'High', 'Critical'].includes(risk));
      assert.ok(g.docs?.[k], `no docs for ${k}`);
    }
  }
});

test('the full key list of the issue is covered', () => {
  const wanted = `rewrite-target use-regex app-root ssl-redirect force-ssl-redirect preserve-trailing-slash permanent-redirect
    permanent-redirect-code temporal-redirect temporal-redirect-code from-to-www-redirect server-alias canary canary-by-header
    canary-by-header-value canary-by-header-pattern canary-by-cookie canary-weight canary-weight-total affinity affinity-mode
    affinity-canary-behavior session-cookie-name session-cookie-path session-cookie-domain session-cookie-expires
    session-cookie-max-age session-cookie-secure session-cookie-samesite session-cookie-conditional-samesite-none
    session-cookie-change-on-failure load-balance upstream-hash-by upstream-hash-by-subset upstream-hash-by-subset-size
    service-upstream backend-protocol upstream-vhost x-forwarded-prefix connection-proxy-header default-backend
    custom-http-errors proxy-body-size proxy-connect-timeout proxy-read-timeout proxy-send-timeout proxy-buffer-size
    proxy-buffers-number proxy-buffering proxy-request-buffering proxy-next-upstream proxy-next-upstream-timeout
    proxy-next-upstream-tries proxy-http-version client-body-buffer-size enable-cors cors-allow-origin cors-allow-methods
    cors-allow-headers cors-expose-headers cors-allow-credentials cors-max-age allowlist-source-range whitelist-source-range
    denylist-source-range limit-rps limit-rpm limit-connections limit-burst-multiplier limit-rate limit-rate-after
    limit-allowlist auth-type auth-secret auth-secret-type auth-realm auth-url auth-signin auth-signin-redirect-param
    auth-response-headers auth-method auth-cache-key auth-cache-duration ssl-passthrough enable-access-log
    configuration-snippet server-snippet`.split(/\s+/).filter(Boolean);
  const declared = new Set(ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)));
  for (const k of wanted) assert.ok(declared.has(k), `missing ${k}`);
  assert.is(wanted.length, 87);
});

test('risk levels follow ingress-nginx for the sensitive keys', () => {
  const risk = Object.fromEntries(ANNOTATION_GROUPS.flatMap((g) => Object.entries(g.keys)));
  assert.equal(
    ['configuration-snippet', 'server-snippet', 'auth-url', 'auth-signin', 'server-alias', 'upstream-hash-by', 'rewrite-target', 'ssl-redirect'].map((k) => risk[k]),
    ['Critical', 'Critical', 'High', 'High', 'High', 'High', 'Medium', 'Low'],
  );
});

test('the first group to deny names the reason', () => {
  const { value } = parse({ 'allowlist-source-range': 'bad', 'denylist-source-range': 'bad too' });
  assert.match(value.denied ?? '', /^annotation allowlist-source-range/);
});

test('a group reads only its own keys: any other annotation leaves it at its default', () => {
  const settings = defaultSettings();
  const ctx = { prefix: P, settings, store: storeWith(['shop/other']) };
  const empty = ingress({});
  const values = ['true', 'false', '10', '10m', 'cookie', 'other', '/x', '10.0.0.0/8', 'GET', ''];
  for (const owner of ANNOTATION_GROUPS) {
    for (const key of Object.keys(owner.keys)) {
      for (const value of values) {
        const ing = ingress({ [key]: value });
        for (const group of ANNOTATION_GROUPS) {
          if (group === owner) continue;
          const warnings: string[] = [];
          const got = group.parse(ing, ctx, (k, m) => warnings.push(`${k}: ${m}`));
          assert.equal(got, group.parse(empty, ctx, () => undefined), `${group.name} with ${key}=${JSON.stringify(value)}`);
          assert.equal(warnings, [], `${group.name} warned about ${key}`);
        }
      }
    }
  }
});

test('groups an Ingress does not set are the shared default objects; no annotations → the defaults object itself', () => {
  const settings = defaultSettings();
  const ctx = { prefix: P, settings, store: storeWith() };
  const defaults = defaultAnnotations(settings);
  assert.ok(Object.isFrozen(defaults) && Object.isFrozen(defaults.proxy), 'defaults are frozen');
  assert.is(parseAnnotations(ingress({}), ctx).value, defaults);
  assert.is(parseAnnotations(ingress({ 'unknown-key': 'x' }), ctx).value, defaults);
  const some = parseAnnotations(ingress({ 'proxy-body-size': '8m', 'enable-cors': 'true' }), ctx).value;
  assert.is(some.proxy.bodySize, '8m');
  assert.ok(some.cors?.enabled);
  assert.is.not(some.proxy, defaults.proxy);
  for (const field of ['rewrite', 'redirect', 'basicAuth', 'externalAuth', 'allowlist', 'canary', 'affinity', 'upstreamHashBy'] as const) {
    assert.is(some[field], defaults[field], field);
  }
  // The first denying group still names the reason when others are defaults.
  const denied = parseAnnotations(ingress({ 'auth-type': 'basic' }), ctx).value;
  assert.match(denied.denied ?? '', /auth-secret/);
  assert.is(defaults.denied, null);
});

// ---- What each group declares: its fields and their scope, per-location adjustments, Secrets

test('each group declares exactly the fields it fills, each with a scope', () => {
  const settings = defaultSettings();
  const ctx = { prefix: P, settings, store: storeWith() };
  const seen = new Map<string, string>();
  for (const g of ANNOTATION_GROUPS) {
    const filled = Object.keys(g.parse(ingress({}), ctx, () => undefined)).filter((f) => f !== 'denied').sort();
    assert.equal(Object.keys(g.fields).sort(), filled, `${g.name}: fields`);
    for (const [field, scope] of Object.entries(g.fields)) {
      assert.ok(['location', 'server', 'backend'].includes(scope), `${g.name}.${field}: ${scope}`);
      assert.is(seen.get(field), undefined, `${field} is filled by ${seen.get(field)} and ${g.name}`);
      seen.set(field, g.name);
    }
  }
});

test('a Location carries its own fields and settings with every location-scoped field of every group, as parsed, and no other', () => {
  const settings = defaultSettings();
  const parsed = parse({ 'enable-cors': 'true', 'proxy-read-timeout': '90', 'custom-http-errors': '404', 'default-backend': 'errors' }, {}, storeWith(['shop/errors'])).value;
  const loc = makeLocation('/shop', 'Prefix', { namespace: 'shop', name: 'web' }, null, 'shop-web-80', locationTemplate(parsed), settings, false);
  const declared = ANNOTATION_GROUPS.flatMap((g) => Object.entries(g.fields).filter(([, scope]) => scope === 'location').map(([f]) => f));
  const own = ['path', 'pathType', 'isDefBackend', 'ingress', 'service', 'backend', 'denied', 'settings', 'ingressPath'];
  assert.equal(Object.keys(loc).sort(), own.sort());
  assert.equal(Object.keys(loc.settings).sort(), declared.sort());
  assert.is(loc.ingressPath, undefined, 'set by the Prefix split only');
  for (const f of declared) assert.is((loc.settings as unknown as Record<string, unknown>)[f], (parsed as unknown as Record<string, unknown>)[f], f);
  assert.is(loc.settings.defaultBackend, 'custom-default-backend-shop-errors');
  assert.is(loc.settings.proxy.readTimeout, 90);
});

test('locations of one parsed annotation set share one frozen settings object; backend-scoped annotations alone share the defaults\'', () => {
  const settings = defaultSettings();
  const defaults = defaultAnnotations(settings);
  const parsedWith = (ann: Record<string, string>) => parseAnnotations(ingress(ann), { prefix: P, settings, store: storeWith() }).value;
  const parsed = parsedWith({ 'enable-cors': 'true' });
  const at = (path: string, p: ParsedAnnotations) => makeLocation(path, 'Prefix', { namespace: 'shop', name: 'web' }, null, 'b', locationTemplate(p, defaults), settings, false);
  const [a, b] = [at('/a', parsed), at('/b', parsed)];
  assert.ok(a.settings === b.settings);
  assert.ok(Object.isFrozen(a.settings));
  assert.throws(() => { (a.settings as unknown as Record<string, unknown>).cors = null; });
  const [split, twin] = splitPrefixLocations([a]);
  assert.ok(split!.settings === a.settings && twin!.settings === a.settings, 'the Prefix split copies identity fields only');
  const affinityOnly = parsedWith({ affinity: 'cookie' });
  assert.ok(affinityOnly !== defaults);
  assert.ok(at('/c', affinityOnly).settings === at('/d', defaults).settings, 'a backend-scoped annotation leaves the location settings the defaults\'');
  assert.ok(at('/e', parsed).settings !== at('/f', defaults).settings);
});

test('the Prefix split adds no field a Location lacks, and keeps its order (V8 then shares one layout among them)', () => {
  const settings = defaultSettings();
  const at = (path: string) => makeLocation(path, 'Prefix', { namespace: 'shop', name: 'web' }, null, 'b', locationTemplate(defaultAnnotations(settings)), settings, false);
  const split = splitPrefixLocations([at('/'), at('/api'), at('/docs/')]);
  assert.equal(split.map((l) => `${l.pathType} ${l.path} ${l.ingressPath ?? '-'}`), ['Prefix / -', 'Prefix /api/ /api', 'Exact /api /api', 'Prefix /docs/ -', 'Exact /docs /docs/']);
  for (const l of split) assert.equal(Object.keys(l), Object.keys(at('/x')), `${l.pathType} ${l.path}`);
});

test('per-location adjustments: no-tls-redirect-locations lifts the redirect, no-auth-locations the auth, below their paths only', () => {
  const settings = { ...defaultSettings(), noTLSRedirectLocations: ['/.well-known/acme-challenge'], noAuthLocations: ['/public'] };
  const store = storeWith();
  (store as { getSecret: StoreReader['getSecret'] }).getSecret = () => ({ metadata: { name: 'auth', namespace: 'shop' }, data: { auth: Buffer.from('bob:$apr1$x$y').toString('base64') } });
  const parsed = parseAnnotations(ingress({ 'force-ssl-redirect': 'true', 'auth-type': 'basic', 'auth-secret': 'auth' }), { prefix: P, settings, store }).value;
  const at = (path: string) => makeLocation(path, 'Prefix', { namespace: 'shop', name: 'web' }, null, 'b', locationTemplate(parsed), settings, false);
  assert.equal([at('/.well-known/acme-challenge/x').settings.rewrite.forceSSLRedirect, at('/.well-known/acme-challenged').settings.rewrite.forceSSLRedirect], [false, true]);
  assert.is(at('/').settings.rewrite, parsed.rewrite, 'an unadjusted value is the parsed object itself');
  assert.equal([at('/public').settings.basicAuth, at('/public/x').settings.basicAuth, at('/publication').settings.basicAuth?.secret], [null, null, 'shop/auth']);
});

test('the annotations that name Secrets come from the groups, each one of its own keys', () => {
  assert.ok(ANNOTATION_REFERENCES.secretAnnotations.includes('auth-secret'));
  assert.equal([...ANNOTATION_REFERENCES.secretAnnotations].sort(), ANNOTATION_GROUPS.flatMap((g) => g.secrets ?? []).sort());
  for (const g of ANNOTATION_GROUPS) for (const key of g.secrets ?? []) assert.ok(key in g.keys, `${g.name}: ${key}`);
});

test('an unknown annotation is warned about plainly', () => {
  const { warnings } = parse({ satisfy: 'any', 'no-such-annotation': 'x' });
  assert.not.ok(warnings.some((w) => /satisfy/.test(w.field)));
  assert.is(warnings.find((w) => /no-such-annotation/.test(w.field))!.message, 'annotation is not supported by ingress-rx; ignored');
});

test.run();
