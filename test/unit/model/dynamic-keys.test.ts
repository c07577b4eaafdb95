// Every annotation and ConfigMap key has a decision for dynamic hosts (src/model/ingress/dynamic-keys.ts),
// and each decision holds: a key that keeps the host static does so for a value that takes
// effect, a key the router or balancer applies leaves the Ingress dynamic. A new key without a
// decision, or a sample here, fails this file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANNOTATION_GROUPS } from '../../../src/model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS, defaultSettings } from '../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../src/model/core/config/settings.js';
import { ANNOTATION_ROUTING, CONFIGMAP_ROUTING } from '../../../src/model/ingress/dynamic-keys.js';
import { ingressStaticReason } from '../../../src/model/ingress/dynamic-routes.js';
import type { ConfigMap } from '../../../src/store/kube-types.js';
import { parseAnnotations } from '../../../src/model/ingress/annotations/index.js';
import type { Ingress, Service } from '../../../src/store/kube-types.js';
import type { StoreReader } from '../../../src/store/types.js';
import { P, secret, storeWith } from '../../support/annotation-parse.js';

const dir = mkdtempSync(join(tmpdir(), 'irx-dynkeys-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=ca'], { cwd: dir, stdio: 'ignore' });
const CA = readFileSync(join(dir, 'c.pem'), 'utf8');
const KEY = readFileSync(join(dir, 'k.pem'), 'utf8');
rmSync(dir, { recursive: true, force: true });

const SECRETS = [
  secret('ca', { 'ca.crt': CA, 'tls.crt': CA, 'tls.key': KEY }),
  secret('users', { auth: 'bob:$apr1$abcdefgh$0123456789abcdefghijkl\n' }),
];
const CONFIG_MAPS: ConfigMap[] = [
  { metadata: { name: 'headers', namespace: 'shop' }, data: { 'X-Custom': 'yes' } },
  { metadata: { name: 'fcgi', namespace: 'shop' }, data: { SCRIPT_FILENAME: '/var/www/html/index.php' } },
];
const WEB: Service = { metadata: { name: 'web', namespace: 'shop' }, spec: { ports: [{ port: 80 }] } };
const STORE: StoreReader = { ...storeWith(SECRETS, CONFIG_MAPS), getService: (key: string) => (key === 'shop/web' ? WEB : undefined) } as StoreReader;
const ALLOW_HEADERS: Partial<NginxSettings> = { globalAllowedResponseHeaders: ['X-Custom'] };
const SNIPPETS: Partial<NginxSettings> = { allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' };
const AUTH = { 'auth-url': 'http://auth.example.com/check' };
const BASIC = { 'auth-type': 'basic', 'auth-secret': 'users' };
const TLS = { 'auth-tls-secret': 'shop/ca' };
const UPSTREAM_TLS = { 'proxy-ssl-secret': 'shop/ca' };
const MIRROR = { 'mirror-target': 'https://mirror.example.com/' };
const MODSEC = { 'enable-modsecurity': 'true' };
const OTEL = { 'enable-opentelemetry': 'true' };

/** Per key: annotations (unprefixed) that make it take effect, and settings it needs. */
const SAMPLES: Record<string, { ann: Record<string, string>; settings?: Partial<NginxSettings> }> = {
  'rewrite-target': { ann: { 'rewrite-target': '/x' } },
  'use-regex': { ann: { 'use-regex': 'true' } },
  'app-root': { ann: { 'app-root': '/app' } },
  'ssl-redirect': { ann: { 'ssl-redirect': 'false' } },
  'force-ssl-redirect': { ann: { 'force-ssl-redirect': 'true' } },
  'preserve-trailing-slash': { ann: { 'preserve-trailing-slash': 'true' } },
  'use-port-in-redirects': { ann: { 'use-port-in-redirects': 'true' } },
  'x-forwarded-prefix': { ann: { 'x-forwarded-prefix': '/p' } },
  'permanent-redirect': { ann: { 'permanent-redirect': 'https://example.com/' } },
  'permanent-redirect-code': { ann: { 'permanent-redirect': 'https://example.com/', 'permanent-redirect-code': '308' } },
  'temporal-redirect': { ann: { 'temporal-redirect': 'https://example.com/' } },
  'temporal-redirect-code': { ann: { 'temporal-redirect': 'https://example.com/', 'temporal-redirect-code': '307' } },
  'relative-redirects': { ann: { 'permanent-redirect': '/x', 'relative-redirects': 'true' } },
  'from-to-www-redirect': { ann: { 'from-to-www-redirect': 'true' } },
  'server-alias': { ann: { 'server-alias': 'alias.example.com' } },
  'ssl-passthrough': { ann: { 'ssl-passthrough': 'true' } },
  'ssl-ciphers': { ann: { 'ssl-ciphers': 'HIGH:!aNULL' } },
  'ssl-prefer-server-ciphers': { ann: { 'ssl-prefer-server-ciphers': 'false' } },
  'configuration-snippet': { ann: { 'configuration-snippet': 'more_set_headers "A: b";' }, settings: SNIPPETS },
  'server-snippet': { ann: { 'server-snippet': 'set $a b;' }, settings: SNIPPETS },
  'stream-snippet': { ann: { 'stream-snippet': 'server { listen 127.0.0.1:9999; return x; }' }, settings: SNIPPETS },
  'auth-type': { ann: BASIC },
  'auth-secret': { ann: BASIC },
  'auth-secret-type': { ann: { ...BASIC, 'auth-secret-type': 'auth-file' } },
  'auth-realm': { ann: { ...BASIC, 'auth-realm': 'members' } },
  'auth-url': { ann: AUTH },
  'auth-signin': { ann: { ...AUTH, 'auth-signin': 'https://auth.example.com/start' } },
  'auth-signin-redirect-param': { ann: { ...AUTH, 'auth-signin': 'https://auth.example.com/start', 'auth-signin-redirect-param': 'return' } },
  'auth-response-headers': { ann: { ...AUTH, 'auth-response-headers': 'X-User' } },
  'auth-method': { ann: { ...AUTH, 'auth-method': 'POST' } },
  'auth-cache-key': { ann: { ...AUTH, 'auth-cache-key': '$remote_user' } },
  'auth-cache-duration': { ann: { ...AUTH, 'auth-cache-key': '$remote_user', 'auth-cache-duration': '200 1m' } },
  'auth-keepalive': { ann: { ...AUTH, 'auth-keepalive': '10' } },
  'auth-keepalive-requests': { ann: { ...AUTH, 'auth-keepalive': '10', 'auth-keepalive-requests': '100' } },
  'auth-keepalive-timeout': { ann: { ...AUTH, 'auth-keepalive': '10', 'auth-keepalive-timeout': '30' } },
  'auth-keepalive-share-vars': { ann: { ...AUTH, 'auth-keepalive': '10', 'auth-keepalive-share-vars': 'true' } },
  'auth-proxy-set-headers': { ann: { ...AUTH, 'auth-proxy-set-headers': 'headers' } },
  'auth-request-redirect': { ann: { ...AUTH, 'auth-request-redirect': '/x' } },
  'auth-always-set-cookie': { ann: { ...AUTH, 'auth-always-set-cookie': 'true' } },
  'auth-snippet': { ann: { ...AUTH, 'auth-snippet': 'proxy_set_header A b;' }, settings: SNIPPETS },
  'enable-global-auth': { ann: { 'enable-global-auth': 'false' }, settings: { globalAuthUrl: 'http://auth.example.com/check' } },
  'auth-tls-secret': { ann: TLS },
  'auth-tls-verify-client': { ann: { ...TLS, 'auth-tls-verify-client': 'optional' } },
  'auth-tls-verify-depth': { ann: { ...TLS, 'auth-tls-verify-depth': '2' } },
  'auth-tls-error-page': { ann: { ...TLS, 'auth-tls-error-page': 'https://example.com/error' } },
  'auth-tls-pass-certificate-to-upstream': { ann: { ...TLS, 'auth-tls-pass-certificate-to-upstream': 'true' } },
  'auth-tls-match-cn': { ann: { ...TLS, 'auth-tls-match-cn': 'CN=client' } },
  'allowlist-source-range': { ann: { 'allowlist-source-range': '10.0.0.0/8' } },
  'whitelist-source-range': { ann: { 'whitelist-source-range': '10.0.0.0/8' } },
  'denylist-source-range': { ann: { 'denylist-source-range': '10.0.0.0/8' } },
  'limit-rps': { ann: { 'limit-rps': '5' } },
  'limit-rpm': { ann: { 'limit-rpm': '300' } },
  'limit-connections': { ann: { 'limit-connections': '5' } },
  'limit-burst-multiplier': { ann: { 'limit-rps': '5', 'limit-burst-multiplier': '2' } },
  'limit-rate': { ann: { 'limit-rate': '100' } },
  'limit-rate-after': { ann: { 'limit-rate': '100', 'limit-rate-after': '1000' } },
  'limit-allowlist': { ann: { 'limit-rps': '5', 'limit-allowlist': '10.0.0.0/8' } },
  'limit-whitelist': { ann: { 'limit-rps': '5', 'limit-whitelist': '10.0.0.0/8' } },
  'enable-cors': { ann: { 'enable-cors': 'true' } },
  'cors-allow-origin': { ann: { 'enable-cors': 'true', 'cors-allow-origin': 'https://a.example.com' } },
  'cors-allow-methods': { ann: { 'enable-cors': 'true', 'cors-allow-methods': 'GET' } },
  'cors-allow-headers': { ann: { 'enable-cors': 'true', 'cors-allow-headers': 'X-A' } },
  'cors-expose-headers': { ann: { 'enable-cors': 'true', 'cors-expose-headers': 'X-B' } },
  'cors-allow-credentials': { ann: { 'enable-cors': 'true', 'cors-allow-credentials': 'false' } },
  'cors-max-age': { ann: { 'enable-cors': 'true', 'cors-max-age': '60' } },
  'proxy-connect-timeout': { ann: { 'proxy-connect-timeout': '7' } },
  'proxy-read-timeout': { ann: { 'proxy-read-timeout': '7' } },
  'proxy-send-timeout': { ann: { 'proxy-send-timeout': '7' } },
  'proxy-next-upstream-tries': { ann: { 'proxy-next-upstream-tries': '1' }, settings: { proxyNextUpstreamTries: 3 } },
  'proxy-body-size': { ann: { 'proxy-body-size': '1m' } },
  'proxy-buffer-size': { ann: { 'proxy-buffer-size': '4k' } },
  'proxy-buffers-number': { ann: { 'proxy-buffers-number': '4' } },
  'proxy-buffering': { ann: { 'proxy-buffering': 'off' } },
  'proxy-request-buffering': { ann: { 'proxy-request-buffering': 'on' } },
  'proxy-next-upstream': { ann: { 'proxy-next-upstream': 'error timeout' } },
  'proxy-next-upstream-timeout': { ann: { 'proxy-next-upstream-timeout': '0' } },
  'proxy-http-version': { ann: { 'proxy-http-version': '1.1' } },
  'client-body-buffer-size': { ann: { 'client-body-buffer-size': '16k' }, settings: { clientBodyBufferSize: '16k' } },
  'proxy-busy-buffers-size': { ann: { 'proxy-busy-buffers-size': '8k' }, settings: { proxyBusyBuffersSize: '8k' } },
  'proxy-max-temp-file-size': { ann: { 'proxy-max-temp-file-size': '1024m' } },
  'proxy-cookie-domain': { ann: { 'proxy-cookie-domain': 'off' } },
  'proxy-cookie-path': { ann: { 'proxy-cookie-path': 'off' } },
  'proxy-redirect-from': { ann: { 'proxy-redirect-from': 'off' } },
  'proxy-redirect-to': { ann: { 'proxy-redirect-to': 'off' } },
  'proxy-ssl-secret': { ann: UPSTREAM_TLS },
  'proxy-ssl-verify': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-verify': 'on' } },
  'proxy-ssl-verify-depth': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-verify-depth': '2' } },
  'proxy-ssl-ciphers': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-ciphers': 'HIGH' } },
  'proxy-ssl-protocols': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-protocols': 'TLSv1.3' } },
  'proxy-ssl-name': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-name': 'backend.internal' } },
  'proxy-ssl-server-name': { ann: { ...UPSTREAM_TLS, 'proxy-ssl-server-name': 'on' } },
  'upstream-vhost': { ann: { 'upstream-vhost': '$service_name.$namespace.svc.cluster.local:8084' } },
  'backend-protocol': { ann: { 'backend-protocol': 'HTTP' } },
  'connection-proxy-header': { ann: { 'connection-proxy-header': 'keep-alive' } },
  'fastcgi-index': { ann: { 'backend-protocol': 'FCGI', 'fastcgi-index': 'index.php' } },
  'fastcgi-params-configmap': { ann: { 'backend-protocol': 'FCGI', 'fastcgi-params-configmap': 'fcgi' } },
  'custom-http-errors': { ann: { 'custom-http-errors': '404' } },
  'disable-proxy-intercept-errors': { ann: { 'disable-proxy-intercept-errors': 'true' } },
  'default-backend': { ann: { 'default-backend': 'web' } },
  'enable-access-log': { ann: { 'enable-access-log': 'true' } },
  'enable-rewrite-log': { ann: { 'enable-rewrite-log': 'true' } },
  satisfy: { ann: { satisfy: 'any' } },
  'mirror-target': { ann: MIRROR },
  'mirror-host': { ann: { ...MIRROR, 'mirror-host': 'copy.example.com' } },
  'mirror-request-body': { ann: { ...MIRROR, 'mirror-request-body': 'off' } },
  'custom-headers': { ann: { 'custom-headers': 'headers' }, settings: ALLOW_HEADERS },
  'http2-push-preload': { ann: { 'http2-push-preload': 'true' } },
  'enable-modsecurity': { ann: MODSEC },
  'enable-owasp-core-rules': { ann: { ...MODSEC, 'enable-owasp-core-rules': 'true' } },
  'modsecurity-transaction-id': { ann: { ...MODSEC, 'modsecurity-transaction-id': '$request_id' } },
  'modsecurity-snippet': { ann: { ...MODSEC, 'modsecurity-snippet': 'SecRuleEngine On' }, settings: SNIPPETS },
  'enable-opentelemetry': { ann: OTEL },
  'opentelemetry-trust-incoming-span': { ann: { ...OTEL, 'opentelemetry-trust-incoming-span': 'false' } },
  'opentelemetry-operation-name': { ann: { ...OTEL, 'opentelemetry-operation-name': 'op' } },
  canary: { ann: { canary: 'true' } },
  'canary-by-header': { ann: { canary: 'true', 'canary-by-header': 'X-Canary' } },
  'canary-by-header-value': { ann: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-value': 'yes' } },
  'canary-by-header-pattern': { ann: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-pattern': '^y' } },
  'canary-by-cookie': { ann: { canary: 'true', 'canary-by-cookie': 'c' } },
  'canary-weight': { ann: { canary: 'true', 'canary-weight': '10' } },
  'canary-weight-total': { ann: { canary: 'true', 'canary-weight': '10', 'canary-weight-total': '1000' } },
  affinity: { ann: { affinity: 'cookie' } },
  'affinity-mode': { ann: { affinity: 'cookie', 'affinity-mode': 'persistent' } },
  'affinity-canary-behavior': { ann: { affinity: 'cookie', 'affinity-canary-behavior': 'legacy' } },
  'session-cookie-name': { ann: { affinity: 'cookie', 'session-cookie-name': 'route' } },
  'session-cookie-path': { ann: { affinity: 'cookie', 'session-cookie-path': '/x' } },
  'session-cookie-domain': { ann: { affinity: 'cookie', 'session-cookie-domain': 'example.com' } },
  'session-cookie-expires': { ann: { affinity: 'cookie', 'session-cookie-expires': '60' } },
  'session-cookie-max-age': { ann: { affinity: 'cookie', 'session-cookie-max-age': '60' } },
  'session-cookie-secure': { ann: { affinity: 'cookie', 'session-cookie-secure': 'true' } },
  'session-cookie-samesite': { ann: { affinity: 'cookie', 'session-cookie-samesite': 'Lax' } },
  'session-cookie-conditional-samesite-none': { ann: { affinity: 'cookie', 'session-cookie-samesite': 'None', 'session-cookie-conditional-samesite-none': 'true' } },
  'session-cookie-change-on-failure': { ann: { affinity: 'cookie', 'session-cookie-change-on-failure': 'true' } },
  'load-balance': { ann: { 'load-balance': 'ewma' } },
  'upstream-hash-by': { ann: { 'upstream-hash-by': '$request_uri' } },
  'upstream-hash-by-subset': { ann: { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true' } },
  'upstream-hash-by-subset-size': { ann: { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true', 'upstream-hash-by-subset-size': '2' } },
  'service-upstream': { ann: { 'service-upstream': 'true' } },
};

const ANNOTATION_KEYS = ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)).sort();

function staticReason(sample: { ann: Record<string, string>; settings?: Partial<NginxSettings> }): { reason: string | null; warnings: string[] } {
  const settings = { ...defaultSettings(), ...sample.settings };
  const ing: Ingress = { metadata: { name: 'web', namespace: 'shop', annotations: Object.fromEntries(Object.entries(sample.ann).map(([k, v]) => [`${P}/${k}`, v])) }, spec: {} };
  const { value, warnings } = parseAnnotations(ing, { prefix: P, settings, store: STORE });
  return { reason: ingressStaticReason(value, settings), warnings: warnings.map((w) => `${w.field}: ${w.message}`) };
}

test('every annotation key has a decision for dynamic hosts, and nothing else has one', () => {
  assert.equal(Object.keys(ANNOTATION_ROUTING).sort(), ANNOTATION_KEYS);
});

test('every ConfigMap key has a decision for dynamic hosts, and nothing else has one', () => {
  assert.equal(Object.keys(CONFIGMAP_ROUTING).sort(), CONFIGMAP_KEYS.map((k) => k.key).sort());
});

test('each annotation decision holds for a value that takes effect', () => {
  assert.equal(Object.keys(SAMPLES).sort(), ANNOTATION_KEYS, 'a sample for every key');
  const wrong: string[] = [];
  for (const key of ANNOTATION_KEYS) {
    const { reason, warnings } = staticReason(SAMPLES[key]!);
    if (warnings.length > 0) wrong.push(`${key}: the sample is not valid: ${warnings.join('; ')}`);
    const decision = ANNOTATION_ROUTING[key]!;
    if ('static' in decision && reason === null) wrong.push(`${key}: decided static, but the Ingress stays dynamic`);
    if (!('static' in decision) && reason !== null) wrong.push(`${key}: decided dynamic, but: ${reason}`);
  }
  assert.equal(wrong, []);
});

test('enable-rewrite-log keeps the host static: the router has no rewrite_log', () => {
  assert.is(staticReason({ ann: { 'enable-rewrite-log': 'true' } }).reason, 'enable-rewrite-log needs rewrite_log in a location');
  assert.is(staticReason({ ann: { 'enable-rewrite-log': 'false' } }).reason, null);
});

test('a ConfigMap key that is an annotation\'s default names annotations that exist; one decided static keeps every host static', () => {
  const samples: Record<string, Partial<NginxSettings>> = {
    'ssl-reject-handshake': { sslRejectHandshake: true },
    'server-snippet': { serverSnippet: 'set $a b;' },
    'location-snippet': { locationSnippet: 'set $a b;' },
  };
  for (const [key, decision] of Object.entries(CONFIGMAP_ROUTING)) {
    if ('annotations' in decision) for (const a of decision.annotations) assert.ok(ANNOTATION_KEYS.includes(a), `${key} names ${a}`);
    if ('static' in decision) {
      assert.ok(samples[key], `a sample for ${key}`);
      assert.ok(staticReason({ ann: {}, settings: samples[key] }).reason, `${key} keeps a plain Ingress static`);
    }
  }
  // The defaults of annotations that keep a host static do so from the ConfigMap as well.
  assert.ok(staticReason({ ann: {}, settings: { customHttpErrors: [404] } }).reason);
  assert.ok(staticReason({ ann: {}, settings: { enableOpentelemetry: true } }).reason);
  assert.ok(staticReason({ ann: {}, settings: { globalAuthUrl: 'http://auth.example.com/' } }).reason);
});

test.run();
