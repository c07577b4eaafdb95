// The table of ingress-nginx's e2e suite in docs/fidelity.md is what scripts/gen-conformance.ts
// computes from the ported tests and the dispositions, and the registrations are consistent:
// every id is an It of the catalogue, none is ported twice or both ported and set aside, and a
// deliberate difference names a heading of docs/differences.md.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { portedTests, registrationProblems, renderDoc } from '../../scripts/gen-conformance.js';
import { CATALOGUE, portedName } from '../conformance/ingress-nginx/port.js';
import { DISPOSITIONS } from '../conformance/ingress-nginx/dispositions.js';

const root = new URL('../../', import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root), 'utf8');

test('the catalogue holds the 455 Its of ingress-nginx v1.15.1, each id once', () => {
  assert.is(CATALOGUE.length, 455);
  assert.is(new Set(CATALOGUE.map((e) => e.id)).size, 455);
});

test('a ported name carries the id, the contexts and the It text; an unknown id is refused', () => {
  const e = CATALOGUE.find((x) => x.context.length > 0)!;
  assert.is(portedName(e.id), [e.id, ...e.context, e.it].join(' › '));
  assert.throws(() => portedName('annotations/none.go:1'), /not an It/);
});

test('registrations: known ids, none twice, none both ported and set aside', () => {
  assert.equal(registrationProblems(portedTests()), []);
});

test('every HTTP/1.1-only, HTTP/2-only or client-less port says why, in words (a constant is read)', () => {
  const unexplained = portedTests().filter((p) => /\((undefined|[A-Z_]+)\)$/.test(p.protocols)).map((p) => `${p.id}: ${p.protocols}`);
  assert.equal(unexplained, []);
});

test('a deliberate difference names a heading of docs/differences.md', () => {
  const headings = new Set([...read('docs/differences.md').matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.trim()));
  for (const [id, d] of Object.entries(DISPOSITIONS)) {
    if (d.kind === 'differs on purpose') assert.ok(headings.has(d.differences), `${id}: docs/differences.md has no heading "${d.differences}"`);
  }
});

test('docs/fidelity.md holds the generated table (node --import tsx scripts/gen-conformance.ts)', () => {
  const doc = read('docs/fidelity.md');
  assert.is(renderDoc(doc), doc);
});

test.run();
