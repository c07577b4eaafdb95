// The committed docs/annotations.md and docs/configmap.md equal what scripts/gen-docs.ts
// generates from the parsers, so docs and behaviour cannot drift.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATED_DOCS } from '../../../../scripts/gen-docs.js';
import { ANNOTATION_GROUPS, DEFAULT_ANNOTATIONS_PREFIX, defaultAnnotations, parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS, defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { StoreReader } from '../../../../src/store/types.js';

const root = new URL('../../../../', import.meta.url);

for (const [path, render] of Object.entries(GENERATED_DOCS)) {
  test(`${path} is up to date (node --import tsx scripts/gen-docs.ts)`, () => {
    const committed = readFileSync(new URL(path, root), 'utf8');
    assert.ok(committed === render(), `${path} differs from the generated text; regenerate it`);
  });
}

test('every annotation key and ConfigMap key appears in the docs', () => {
  const annotations = readFileSync(new URL('docs/annotations.md', root), 'utf8');
  for (const g of ANNOTATION_GROUPS) for (const k of Object.keys(g.keys)) assert.ok(annotations.includes(`| \`${k}\` |`), k);
  const configmap = readFileSync(new URL('docs/configmap.md', root), 'utf8');
  for (const k of CONFIGMAP_KEYS) assert.ok(configmap.includes(`| \`${k.key}\` |`), k.key);
});

test('the "tested end to end" column names, for every key, the e2e test files docs/fidelity.md gives it', () => {
  const fidelity = readFileSync(new URL('docs/fidelity.md', root), 'utf8');
  const section = (heading: string) => fidelity.slice(fidelity.indexOf(`\n## ${heading}\n`)).split('\n## ')[1]!.split('\n');
  for (const [path, heading] of [['docs/annotations.md', 'Annotations'], ['docs/configmap.md', 'ConfigMap keys']] as const) {
    const fidelityRows = section(heading);
    const rows = readFileSync(new URL(path, root), 'utf8').split('\n').filter((l) => /^\| `[a-z0-9-]+` \|/.test(l));
    assert.ok(rows.length > 100, path);
    for (const row of rows) {
      const key = /^\| `([a-z0-9-]+)`/.exec(row)![1]!;
      const files = [...row.slice(row.lastIndexOf(' | ')).matchAll(/\[([a-z0-9.-]+)\]\(fidelity\.md\)/g)].map((m) => m[1]!);
      assert.ok(files.length > 0, `${path}: ${key} names no end-to-end test`);
      const fidelityRow = fidelityRows.find((l) => l.startsWith(`| \`${key}\` |`)) ?? '';
      for (const f of files) assert.ok(fidelityRow.includes(`\`${f}\`:`), `${path}: ${key} names ${f}, which docs/fidelity.md does not give it`);
    }
  }
});

test('annotation defaults that name a ConfigMap key name a real one, and follow it', () => {
  const known = new Set(CONFIGMAP_KEYS.map((k) => k.key));
  for (const g of ANNOTATION_GROUPS) {
    for (const [k, doc] of Object.entries(g.docs ?? {})) {
      const m = /^ConfigMap ([a-z0-9-]+)/.exec(doc.default);
      if (m) assert.ok(known.has(m[1]!), `${k}: default names unknown ConfigMap key ${m[1]}`);
    }
  }
});

test('documented literal defaults match what the parsers return for an Ingress without annotations', () => {
  const d = defaultAnnotations(defaultSettings());
  const doc = (key: string) => ANNOTATION_GROUPS.find((g) => key in g.keys)!.docs![key]!.default;
  const cases: Array<[string, unknown]> = [
    ['canary-weight-total', d.canary.weightTotal], ['canary-weight', d.canary.weight],
    ['affinity-mode', d.affinity.mode], ['affinity-canary-behavior', d.affinity.canaryBehavior],
    ['session-cookie-name', d.affinity.cookie.name], ['http2-push-preload', d.http2PushPreload],
    ['backend-protocol', d.backendProtocol], ['use-regex', d.rewrite.useRegex], ['ssl-passthrough', d.sslPassthrough],
    ['from-to-www-redirect', d.fromToWWWRedirect],
  ];
  // An empty default is written '' (as the docs of other keys write it).
  for (const [key, value] of cases) assert.is(doc(key), value === '' ? "''" : String(value), key);
  const cors = parseAnnotations(
    { metadata: { name: 'x', namespace: 'y', annotations: { [`${DEFAULT_ANNOTATIONS_PREFIX}/enable-cors`]: 'true' } }, spec: {} },
    { prefix: DEFAULT_ANNOTATIONS_PREFIX, settings: defaultSettings(), store: {} as StoreReader },
  ).value.cors!;
  assert.equal([doc('cors-allow-methods'), doc('cors-allow-headers'), doc('cors-max-age'), doc('cors-allow-credentials'), doc('cors-allow-origin')],
    [cors.allowMethods, cors.allowHeaders, String(cors.maxAge), String(cors.allowCredentials), cors.allowOrigin.join(',')]);
});

test.run();
