// Every annotation key gets every hostile value (alone and after a valid value): whatever the
// parsers keep must be safe to render into nginx.conf, or the key must be rejected.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOTATION_GROUPS, parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { snippet } from '../../../../src/model/ingress/annotations/snippets.js';
import type { ParsedAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { Ingress, Service } from '../../../../src/store/kube-types.js';
import type { StoreReader } from '../../../../src/store/types.js';
import { HOSTILE_VALUES, isNginxSafe, stringsIn } from '../../../support/hostile.js';

const P = 'nginx.ingress.kubernetes.io';
const store = {
  getService: (k: string) => ({ metadata: { name: k }, spec: {} }) as Service,
  getSecret: () => undefined,
  getConfigMap: () => undefined,
} as unknown as StoreReader;

/** A valid value per key, so `valid + hostile` probes parsers that only check a prefix. */
const VALID: Record<string, string> = {
  'rewrite-target': '/$1', 'app-root': '/app', 'x-forwarded-prefix': '/p', 'permanent-redirect': 'https://a.com/',
  'temporal-redirect': 'https://a.com/', 'server-alias': 'a.com', 'canary-by-header': 'X-C', 'canary-by-header-value': 'v',
  'canary-by-header-pattern': '^v$', 'canary-by-cookie': 'c', 'session-cookie-name': 'c', 'session-cookie-path': '/',
  'session-cookie-domain': 'a.com', 'upstream-hash-by': '$request_uri', 'upstream-vhost': 'a.com', 'connection-proxy-header': 'close',
  'default-backend': 'svc', 'cors-allow-origin': 'https://a.com', 'cors-allow-methods': 'GET', 'cors-allow-headers': 'X-A',
  'cors-expose-headers': 'X-A', 'allowlist-source-range': '10.0.0.0/8', 'whitelist-source-range': '10.0.0.0/8',
  'denylist-source-range': '10.0.0.0/8', 'limit-allowlist': '10.0.0.0/8', 'auth-realm': 'r', 'auth-secret': 's',
  'auth-url': 'https://a.com/', 'auth-signin': 'https://a.com/', 'auth-signin-redirect-param': 'rd',
  'auth-response-headers': 'X-A', 'auth-cache-key': '$remote_user', 'auth-cache-duration': '200 5m',
  'proxy-next-upstream': 'error', 'custom-http-errors': '404', 'proxy-body-size': '1m', 'affinity': 'cookie',
};

/** Fields whose strings are regular expressions (backslash escapes and `$` anchors allowed). */
const REGEX_PATHS = new Set(['$.canary.headerPattern']);

function parseOne(key: string, value: string, settings: Partial<NginxSettings>) {
  const annotations: Record<string, string> = { [`${P}/${key}`]: value, [`${P}/canary`]: 'true', [`${P}/enable-cors`]: 'true' };
  if (key.startsWith('auth-') && key !== 'auth-url') annotations[`${P}/auth-url`] = 'https://auth.example.com/';
  if (key.startsWith('limit-')) annotations[`${P}/limit-rps`] = '1';
  const ing: Ingress = { metadata: { name: 'evil', namespace: 'shop', annotations }, spec: {} };
  return parseAnnotations(ing, { prefix: P, settings: { ...defaultSettings(), ...settings }, store });
}

function unsafeStrings(value: ParsedAnnotations): string[] {
  const { denied: _reason, basicAuth: _users, configurationSnippet: _c, serverSnippet: _s, ...rendered } = value;
  return stringsIn(rendered)
    .filter(({ path, value: s }) => !isNginxSafe(s, { regex: REGEX_PATHS.has(path) }))
    .map(({ path, value: s }) => `${path} = ${JSON.stringify(s.slice(0, 80))}`);
}

const keys = ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys));

test('no hostile value survives into a typed annotation value', () => {
  let probes = 0;
  for (const key of keys) {
    for (const h of HOSTILE_VALUES) {
      for (const raw of [h.value, `${VALID[key] ?? 'true'}${h.value}`]) {
        const { value, warnings } = parseOne(key, raw, { annotationsRiskLevel: 'Critical' });
        probes++;
        assert.equal(unsafeStrings(value), [], `${key} ← ${h.name}`);
        const warned = warnings.some((w) => w.field === `metadata.annotations["${P}/${key}"]`);
        // A hostile value is never silently accepted: either it was rejected with a warning on
        // its key, or what was kept is safe (checked above) and equal to a plain value.
        if (!warned) {
          const strings = stringsIn(value).map((s) => s.value);
          assert.not.ok(strings.includes(raw) && !isNginxSafe(raw, { regex: key === 'canary-by-header-pattern' }), `${key} kept ${h.name} without a warning`);
        }
      }
    }
  }
  assert.ok(probes > 2 * keys.length * 20);
});

test('hostile values are refused as snippets unless snippets are allowed', () => {
  for (const key of ['configuration-snippet', 'server-snippet']) {
    for (const h of HOSTILE_VALUES) {
      const { value, warnings } = parseOne(key, h.value, { annotationsRiskLevel: 'Critical' });
      assert.is(value.configurationSnippet, '');
      assert.is(value.serverSnippet, '');
      assert.ok(warnings.some((w) => w.field.includes(key)), `${key} ← ${h.name}: no warning`);
    }
  }
});

test('allowed snippets never hold NUL, unbalanced braces or oversize text', () => {
  for (const h of HOSTILE_VALUES) {
    const { value } = parseOne('configuration-snippet', h.value, { annotationsRiskLevel: 'Critical', allowSnippetAnnotations: true });
    if (value.configurationSnippet !== '') {
      assert.not.throws(() => snippet(value.configurationSnippet));
      assert.not.ok(value.configurationSnippet.includes('\u0000'));
    }
  }
  const escape = parseOne('configuration-snippet', HOSTILE_VALUES.find((h) => h.name === 'block escape')!.value,
    { annotationsRiskLevel: 'Critical', allowSnippetAnnotations: true });
  assert.is(escape.value.configurationSnippet, '');
});

test('denied reasons and warnings stay bounded for very long values', () => {
  const long = HOSTILE_VALUES.find((h) => h.name === 'very long')!.value;
  for (const key of keys) {
    const { value, warnings } = parseOne(key, long, { annotationsRiskLevel: 'Critical' });
    for (const w of warnings) assert.ok(w.message.length < 1000, `${key}: warning of ${w.message.length} chars`);
    assert.ok((value.denied ?? '').length < 1000);
  }
});

test.run();
