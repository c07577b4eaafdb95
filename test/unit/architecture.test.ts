// The layering rule of docs/architecture.md, checked on the source: a module imports only from
// its own layer or the layers below it, and no import chain comes back to where it started.
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
  assert.ok(graph.get(sync)!.includes(join(SRC, 'model', 'decide.ts')), 'actors/sync.ts imports model/decide.ts');
  assert.ok(files.length > 100);
});

test.run();
