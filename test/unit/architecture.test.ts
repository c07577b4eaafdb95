// The layering rule of docs/architecture.md, checked on the source: a module imports only from
// its own layer or the layers below it, and no import chain comes back to where it started. Inside
// the model: the shared checks import nothing else of the model, the core imports no front end,
// and a front end never imports another.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** Bottom to top; `.` is the shared base (log, version). */
export const LAYERS = ['.', 'store', 'streams', 'model', 'render', 'actors', 'observability', 'admission', 'pipeline', 'cli'];

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function layerOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes('/') ? rel.split('/')[0]! : '.';
}

/** Relative imports of a file (type-only ones included: they are still a dependency on a contract). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  }
  return out;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

test('every source file is in a known layer', () => {
  const unknown = files.filter((f) => !LAYERS.includes(layerOf(f))).map((f) => relative(SRC, f));
  assert.equal(unknown, [], 'add the folder to LAYERS and to docs/architecture.md');
});

test('no module imports from a layer above its own', () => {
  const upward: string[] = [];
  for (const [file, deps] of graph) {
    const own = LAYERS.indexOf(layerOf(file));
    for (const dep of deps) {
      if (LAYERS.indexOf(layerOf(dep)) > own) upward.push(`${relative(SRC, file)} -> ${relative(SRC, dep)}`);
    }
  }
  assert.equal(upward, []);
});

test('no import cycles', () => {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]): void => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'open') {
      cycles.push([...path.slice(path.indexOf(f)), f].map((x) => relative(SRC, x)).join(' -> '));
      return;
    }
    state.set(f, 'open');
    for (const d of graph.get(f) ?? []) visit(d, [...path, f]);
    state.set(f, 'done');
  };
  for (const f of files) visit(f, []);
  assert.equal(cycles, []);
});

test('the check sees the imports it judges (a known downward import is found)', () => {
  const sync = join(SRC, 'actors', 'sync.ts');
  assert.ok(graph.get(sync)!.includes(join(SRC, 'model', 'core', 'decide.ts')), 'actors/sync.ts imports model/core/decide.ts');
  assert.ok(files.length > 100);
});

// The model's folders, bottom to top: the shared checks, the front-end-neutral core, the front
// ends (each a translator from its own objects into the core), and the model's entry, which runs
// them all.
const MODEL = join(SRC, 'model');
const CHECKS = 'checks';
const CORE = 'core';
const FRONT_ENDS = ['ingress', 'gateway'];
/** The files of the model's entry, at the top of src/model. */
const MODEL_ENTRY = ['build.ts'];

/**
 * What the core still takes from the Ingress front end (docs/architecture.md): a Location's
 * settings are the annotation groups' values, and the ConfigMap's defaults of annotations are
 * checked by the annotations' own checks. The list may only shrink: a new entry is a new
 * dependency of the core on a front end, and an entry no longer imported must be taken out.
 */
const CORE_DEBTS = [
  'core/types.ts -> ingress/annotations/affinity.ts',
  'core/types.ts -> ingress/annotations/authtls.ts',
  'core/types.ts -> ingress/annotations/index.ts',
  'core/types.ts -> ingress/annotations/proxyssl.ts',
  'core/route-settings.ts -> ingress/annotations/cors.ts',
  'core/route-settings.ts -> ingress/annotations/proxy.ts',
  'core/config/keys.ts -> ingress/annotations/authexternal.ts',
  'core/config/keys.ts -> ingress/annotations/snippets.ts',
  'core/config/keys.ts -> ingress/annotations/upstreamhash.ts',
];

/** The model folder of a file of src/model (its first folder), or '' for the model's entry. */
function modelPart(file: string): string {
  const rel = relative(MODEL, file);
  return rel.includes('/') ? rel.split('/')[0]! : '';
}

/** Imports from one model file to another, as `from -> to` relative to src/model. */
const modelEdges: Array<{ from: string; to: string; edge: string }> = [];
for (const [file, deps] of graph) {
  if (layerOf(file) !== 'model') continue;
  for (const dep of deps) {
    if (layerOf(dep) === 'model') modelEdges.push({ from: file, to: dep, edge: `${relative(MODEL, file)} -> ${relative(MODEL, dep)}` });
  }
}

test('every model file is in one of the model folders, or is the model\'s entry', () => {
  const known = [CHECKS, CORE, ...FRONT_ENDS];
  const stray = files.filter((f) => layerOf(f) === 'model')
    .filter((f) => modelPart(f) === '' ? !MODEL_ENTRY.includes(relative(MODEL, f)) : !known.includes(modelPart(f)))
    .map((f) => relative(SRC, f));
  assert.equal(stray, [], 'put it in checks/, core/ or a front end, and say so in docs/architecture.md');
});

test('the shared checks import nothing else of the model', () => {
  const out = modelEdges.filter((e) => modelPart(e.from) === CHECKS && modelPart(e.to) !== CHECKS).map((e) => e.edge);
  assert.equal(out, []);
});

test('the core imports no front end (but for the listed debts) and not the model\'s entry', () => {
  const out = modelEdges.filter((e) => modelPart(e.from) === CORE && ![CORE, CHECKS].includes(modelPart(e.to))).map((e) => e.edge);
  assert.equal(out.filter((e) => !CORE_DEBTS.includes(e)), [], 'the core must not depend on a front end');
  assert.equal(CORE_DEBTS.filter((e) => !out.includes(e)), [], 'a debt paid: take it out of CORE_DEBTS and docs/architecture.md');
});

test('a front end never imports another front end, nor the model\'s entry', () => {
  const out = modelEdges.filter((e) => FRONT_ENDS.includes(modelPart(e.from)) && modelPart(e.to) !== modelPart(e.from)
    && ![CORE, CHECKS].includes(modelPart(e.to))).map((e) => e.edge);
  assert.equal(out, []);
});

test('the model checks see the imports they judge (known edges between the folders are found)', () => {
  const edges = new Set(modelEdges.map((e) => e.edge));
  for (const known of ['ingress/fragments.ts -> core/types.ts', 'core/paths.ts -> checks/pcre.ts', 'build.ts -> ingress/fragments.ts']) {
    assert.ok(edges.has(known), known);
  }
  for (const part of [CHECKS, CORE, ...FRONT_ENDS]) assert.ok(files.some((f) => layerOf(f) === 'model' && modelPart(f) === part), `src/model/${part}/ has files`);
});

test.run();
