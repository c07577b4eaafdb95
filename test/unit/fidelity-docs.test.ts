// docs/fidelity.md is checkable: every annotation and ConfigMap key the parsers support has
// exactly one row, no row names a key that is not supported, and every test a row names exists
// (an end-to-end test file under test/e2e holding a test of that name).
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANNOTATION_GROUPS } from '../../src/model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS } from '../../src/model/core/config/parse.js';

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/fidelity.md', root), 'utf8');

interface Row { key: string; behaviours: string; tests: string[] }

/** The rows of the table under `## <heading>`. */
function rows(heading: string): Row[] {
  const start = doc.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `docs/fidelity.md has a "## ${heading}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  const out: Row[] = [];
  for (const line of doc.slice(start, end < 0 ? undefined : end).split('\n')) {
    const m = /^\| `([a-z0-9-]+)` \| (.*?) \| (.*?) \| (.*?) \|$/.exec(line);
    if (m) out.push({ key: m[1]!, behaviours: m[2]!, tests: m[3]!.split('<br>').map((t) => t.trim()).filter(Boolean) });
  }
  return out;
}

/** Supported keys without a row, rows of keys not supported, keys with two rows. */
function keyProblems(documented: Row[], supported: string[]): { missing: string[]; unknown: string[]; twice: string[] } {
  const seen = new Map<string, number>();
  for (const r of documented) seen.set(r.key, (seen.get(r.key) ?? 0) + 1);
  return {
    missing: supported.filter((k) => !seen.has(k)),
    unknown: [...seen.keys()].filter((k) => !supported.includes(k)),
    twice: [...seen].filter(([, n]) => n > 1).map(([k]) => k),
  };
}

const sources = new Map<string, string>();

/** Whether `test/e2e/<file>.test.ts` has a test (or suite test) of this exact name. */
function testExists(file: string, title: string): boolean {
  const path = new URL(`test/e2e/${file}.test.ts`, root);
  if (!sources.has(file)) sources.set(file, existsSync(path) ? readFileSync(path, 'utf8') : '');
  const text = sources.get(file)!;
  return [`('${title.replace(/'/g, "\\'")}',`, `("${title}",`, `(\`${title}\`,`].some((c) => text.includes(c));
}

function checkTests(documented: Row[]): void {
  for (const r of documented) {
    assert.ok(r.behaviours.trim() !== '', `${r.key}: no behaviour named`);
    assert.ok(r.tests.length > 0, `${r.key}: no test named`);
    for (const ref of r.tests) {
      const m = /^`([a-z0-9-]+)`: (.+)$/.exec(ref);
      assert.ok(m, `${r.key}: a test is named as \`file\`: name, not ${JSON.stringify(ref)}`);
      assert.ok(testExists(m![1]!, m![2]!), `${r.key}: test/e2e/${m![1]}.test.ts has no test named ${JSON.stringify(m![2])}`);
    }
  }
}

const ANNOTATION_KEYS = ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys));

test('every supported annotation has one row, and no row names an unsupported one', () => {
  assert.equal(keyProblems(rows('Annotations'), ANNOTATION_KEYS), { missing: [], unknown: [], twice: [] });
});

test('every supported ConfigMap key has one row, and no row names an unsupported one', () => {
  assert.equal(keyProblems(rows('ConfigMap keys'), CONFIGMAP_KEYS.map((k) => k.key)), { missing: [], unknown: [], twice: [] });
});

test('every row names at least one end-to-end test, and each exists', () => {
  checkTests([...rows('Annotations'), ...rows('ConfigMap keys')]);
});

test('the check itself notices a missing test and a missing row', () => {
  assert.not.ok(testExists('fidelity-annotations', 'a test nobody wrote'));
  assert.not.ok(testExists('no-such-file', 'anything'));
  const rowsNow = rows('Annotations');
  assert.equal(keyProblems([...rowsNow.slice(1), rowsNow[2]!, { key: 'made-up', behaviours: 'x', tests: [] }], ANNOTATION_KEYS), {
    missing: [rowsNow[0]!.key], unknown: ['made-up'], twice: [rowsNow[2]!.key],
  });
});

test.run();
