// The committed docs/annotations.md and docs/configmap.md equal what scripts/gen-docs.ts
// generates from the parsers, so docs and behaviour cannot drift.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GENERATED_DOCS } from '../../scripts/gen-docs.js';
import { ANNOTATION_GROUPS } from '../../src/model/annotations/index.js';
import { CONFIGMAP_KEYS } from '../../src/model/config/parse.js';

const root = new URL('../../', import.meta.url);

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

test.run();
