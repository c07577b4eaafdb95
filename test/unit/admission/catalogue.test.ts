// The catalogue of ingress-nginx's keys (src/admission/ingress-nginx-keys.ts, generated from its
// parsers by scripts/gen-ingress-nginx-keys.ts) and ingress-rx's registries agree, and so do the
// docs' claims about them: a key ingress-rx reads is one ingress-nginx reads or is declared
// ingress-rx's own (the report says ingress-nginx ignored it); every key ingress-nginx reads is
// supported or refused with what to use instead; the lists of unsupported keys in the docs are
// exactly those.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { ANNOTATION_GROUPS } from '../../../src/model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS } from '../../../src/model/core/config/parse.js';
import { INGRESS_NGINX_ANNOTATIONS, INGRESS_NGINX_CONFIGMAP_KEYS, INGRESS_NGINX_REF } from '../../../src/admission/ingress-nginx-keys.js';
import { INGRESS_RX_ONLY_ANNOTATIONS, INGRESS_RX_ONLY_CONFIGMAP_KEYS, annotationVerdict, configMapVerdict } from '../../../src/admission/catalogue.js';

const doc = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const OURS = new Set(ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)));
const OURS_CM = new Set(CONFIGMAP_KEYS.map((k) => k.key));

test('the catalogue is ingress-nginx v1.15.1\'s, read from its parsers', () => {
  assert.is(INGRESS_NGINX_REF, 'controller-v1.15.1');
  // Spot checks of what a hand-kept list got wrong: the FastCGI annotations, the unused app-root key.
  for (const k of ['fastcgi-index', 'fastcgi-params-configmap', 'whitelist-source-range', 'limit-whitelist']) assert.ok(INGRESS_NGINX_ANNOTATIONS.includes(k), k);
  assert.ok(INGRESS_NGINX_CONFIGMAP_KEYS.includes('app-root'));
  assert.not.ok(INGRESS_NGINX_CONFIGMAP_KEYS.includes('ssl-prefer-server-ciphers'));
});

test('a key ingress-rx reads and ingress-nginx does not is declared, and the report says ingress-nginx ignored it', () => {
  for (const key of OURS) if (!INGRESS_NGINX_ANNOTATIONS.includes(key)) assert.ok(INGRESS_RX_ONLY_ANNOTATIONS[key], `annotation ${key}: declare it in INGRESS_RX_ONLY_ANNOTATIONS`);
  for (const key of OURS_CM) if (!INGRESS_NGINX_CONFIGMAP_KEYS.includes(key)) assert.ok(INGRESS_RX_ONLY_CONFIGMAP_KEYS[key], `ConfigMap key ${key}: declare it in INGRESS_RX_ONLY_CONFIGMAP_KEYS`);
  for (const key of Object.keys(INGRESS_RX_ONLY_CONFIGMAP_KEYS)) assert.ok(OURS_CM.has(key) && !INGRESS_NGINX_CONFIGMAP_KEYS.includes(key), key);
  const v = configMapVerdict('ssl-prefer-server-ciphers');
  assert.is(v.status, 'different');
  assert.match(v.note!, /ingress-nginx has no such ConfigMap key/);
  assert.equal(configMapVerdict('app-root'), { status: 'refused', note: 'the app-root annotation (ingress-nginx reads this ConfigMap key but uses it nowhere)' });
  assert.is(annotationVerdict('fastcgi-index').status, 'identical');
});

test('docs/fidelity.md names exactly the ingress-nginx annotations ingress-rx does not support', () => {
  const unsupported = INGRESS_NGINX_ANNOTATIONS.filter((k) => !OURS.has(k));
  if (unsupported.length === 0) {
    assert.match(doc('docs/fidelity.md'), 'Every annotation of ingress-nginx is supported; an unknown one is reported with a warning');
    return;
  }
  const m = /Annotations of ingress-nginx that ingress-rx does not support are reported with a warning and\nignored: (.*)\./.exec(doc('docs/fidelity.md'));
  assert.ok(m, 'the sentence is there');
  assert.equal([...m![1]!.matchAll(/`([a-z0-9-]+)`/g)].map((x) => x[1]), unsupported);
});

test('docs/differences.md\'s refused keys are exactly the ingress-nginx keys ingress-rx does not read, and no supported key is called unimplemented', () => {
  const d = doc('docs/differences.md');
  const section = d.slice(d.indexOf('- **Refused keys.**'), d.indexOf('\n- Every annotation value'));
  // The keys an entry is about: those right before its colon (`jaeger-*`: …; `a`, `b`: …).
  const named = new Set([...section.matchAll(/((?:`[a-z0-9*-]+`(?:,\s*)?)+):/g)].flatMap((x) => [...x[1]!.matchAll(/`([a-z0-9*-]+)`/g)].map((y) => y[1]!)));
  const matches = (key: string) => [...named].some((n) => (n.endsWith('-*') ? key.startsWith(n.slice(0, -1)) : n === key));
  for (const key of INGRESS_NGINX_ANNOTATIONS.filter((k) => !OURS.has(k))) assert.ok(matches(key), `annotation ${key} is refused: list it`);
  for (const key of INGRESS_NGINX_CONFIGMAP_KEYS.filter((k) => !OURS_CM.has(k))) assert.ok(matches(key), `ConfigMap key ${key} is refused: list it`);
  for (const n of named) {
    const key = n.endsWith('-*') ? `${n.slice(0, -1)}x` : n;
    assert.ok(annotationVerdict(key).status === 'refused' || configMapVerdict(key).status === 'refused', `${n} is listed as refused but is not`);
  }
  // A supported group named as not implemented (it said `auth-tls-*`).
  for (const m of d.matchAll(/does not (?:implement|support)(?:e\.g\.|i\.e\.|[^.])*?`([a-z0-9-]+)\*?`/g)) {
    const prefix = m[1]!.replace(/\*$/, '');
    assert.not.ok([...OURS].some((k) => k.startsWith(prefix)), `differences.md calls ${m[1]} unimplemented`);
  }
});

test.run();
