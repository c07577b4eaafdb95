// What holds a heap snapshot's memory: self size by node type and constructor, strings whose
// content appears more than once (the bytes a shared copy would save), and the retained size of
// objects reached from the roots by a named property path (dominator tree).
//   node --import tsx bench/gen.ts --n 10000 --events /tmp/ev.json
//   node --expose-gc bench/rss-child.mjs --dist /tmp/ev.json --idle-gc --heap-snapshot /tmp/s.heapsnapshot
//   node --max-old-space-size=6000 --import tsx bench/heap-summary.ts /tmp/s.heapsnapshot [--top N]
import { readFileSync } from 'node:fs';
import { arg } from './lib.js';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] }; node_count: number };
  nodes: number[];
  edges: number[];
  strings: string[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: heap-summary.ts FILE.heapsnapshot [--top N]');
const top = Number(arg('--top') ?? 30);
const s = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const { meta } = s.snapshot;
const NF = meta.node_fields.length;
const EF = meta.edge_fields.length;
const nType = meta.node_fields.indexOf('type');
const nName = meta.node_fields.indexOf('name');
const nSize = meta.node_fields.indexOf('self_size');
const nEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const nodeTypes = meta.node_types[0];
const edgeTypes = meta.edge_types[0];
const count = s.nodes.length / NF;
const mb = (b: number) => (b / 2 ** 20).toFixed(1);

// First edge index of every node.
const firstEdge = new Uint32Array(count + 1);
for (let i = 0, e = 0; i < count; i++) { firstEdge[i] = e; e += s.nodes[i * NF + nEdges] * EF; firstEdge[i + 1] = e; }
const typeOf = (i: number) => nodeTypes[s.nodes[i * NF + nType]];
const nameOf = (i: number) => s.strings[s.nodes[i * NF + nName]];
const sizeOf = (i: number) => s.nodes[i * NF + nSize];

// 1. Self size by type and constructor name.
const groups = new Map<string, { n: number; bytes: number }>();
let total = 0;
for (let i = 0; i < count; i++) {
  const t = typeOf(i);
  const key = t === 'object' || t === 'closure' || t === 'native' ? `${t} ${nameOf(i)}` : t;
  const g = groups.get(key) ?? { n: 0, bytes: 0 };
  g.n++; g.bytes += sizeOf(i); total += sizeOf(i);
  groups.set(key, g);
}
console.log(`${count} nodes, ${mb(total)} MB self size`);
console.log('\n# self size by type / constructor');
for (const [k, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) console.log(`${mb(g.bytes).padStart(8)} MB ${String(g.n).padStart(9)}  ${k}`);

// 2. Duplicated string contents (flat strings only; the name is the content, cut at 1 KB by V8).
const strings = new Map<string, { n: number; bytes: number }>();
for (let i = 0; i < count; i++) {
  if (typeOf(i) !== 'string') continue;
  const name = nameOf(i);
  const g = strings.get(name) ?? { n: 0, bytes: 0 };
  g.n++; g.bytes += sizeOf(i);
  strings.set(name, g);
}
let waste = 0;
for (const g of strings.values()) if (g.n > 1) waste += g.bytes - g.bytes / g.n;
console.log(`\n# strings: ${strings.size} distinct contents; copies beyond the first hold ${mb(waste)} MB`);
for (const [k, g] of [...strings].filter(([, g]) => g.n > 1).sort((a, b) => (b[1].bytes - b[1].bytes / b[1].n) - (a[1].bytes - a[1].bytes / a[1].n)).slice(0, top)) {
  console.log(`${mb(g.bytes - g.bytes / g.n).padStart(8)} MB ${String(g.n).padStart(8)}×  ${JSON.stringify(k.slice(0, 90))}`);
}

// 3. Dominator tree (Cooper–Harvey–Kennedy over a reverse postorder from the root, node 0),
// skipping weak edges as V8's own tools do; retained size = own size + dominated nodes' sizes.
const weak = edgeTypes.indexOf('weak');
const shortcut = edgeTypes.indexOf('shortcut');
const order = new Int32Array(count).fill(-1); // postorder number
const post: number[] = [];
{
  const stack: number[] = [0]; const edgeAt: number[] = [firstEdge[0]];
  order[0] = -2;
  while (stack.length) {
    const at = stack.length - 1; const n = stack[at]!; let e = edgeAt[at]!;
    let pushed = false;
    for (; e < firstEdge[n + 1]; e += EF) {
      const t = s.edges[e + eType];
      if (t === weak || t === shortcut) continue;
      const to = s.edges[e + eTo] / NF;
      if (order[to] !== -1) continue;
      order[to] = -2; edgeAt[at] = e + EF; stack.push(to); edgeAt.push(firstEdge[to]); pushed = true; break;
    }
    if (!pushed) { order[n] = post.length; post.push(n); stack.pop(); edgeAt.pop(); }
  }
}
const preds: number[][] = Array.from({ length: count }, () => []);
for (let n = 0; n < count; n++) {
  if (order[n] < 0) continue;
  for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += EF) {
    const t = s.edges[e + eType];
    if (t === weak || t === shortcut) continue;
    preds[s.edges[e + eTo] / NF].push(n);
  }
}
const idom = new Int32Array(count).fill(-1);
idom[0] = 0;
const intersect = (a: number, b: number) => {
  while (a !== b) { while (order[a] < order[b]) a = idom[a]; while (order[b] < order[a]) b = idom[b]; }
  return a;
};
for (let changed = true; changed;) {
  changed = false;
  for (let k = post.length - 2; k >= 0; k--) {
    const n = post[k];
    let d = -1;
    for (const p of preds[n]) if (idom[p] !== -1) d = d === -1 ? p : intersect(p, d);
    if (d !== -1 && idom[n] !== d) { idom[n] = d; changed = true; }
  }
}
const retained = new Float64Array(count);
for (const n of post) { retained[n] += sizeOf(n); if (n !== 0 && idom[n] >= 0) retained[idom[n]] += retained[n]; }
const edgeName = (from: number, to: number) => {
  for (let e = firstEdge[from]; e < firstEdge[from + 1]; e += EF) {
    if (s.edges[e + eTo] / NF !== to) continue;
    const t = edgeTypes[s.edges[e + eType]]; const nm = s.edges[e + eName];
    return t === 'element' || t === 'hidden' ? `[${nm}]` : s.strings[nm];
  }
  return '?';
};
const children = new Map<number, number[]>();
for (const n of post) if (n !== 0) { const d = idom[n]; if (!children.has(d)) children.set(d, []); children.get(d)!.push(n); }
const edgeFromDominator = (n: number) => edgeName(idom[n], n);
// Every node dominated directly by a root, then two levels below those ≥ 256 KB.
const show = (n: number, depth: number) => {
  console.log(`${'  '.repeat(depth)}${mb(retained[n]).padStart(8)} MB  ${edgeFromDominator(n)}: ${typeOf(n)} ${nameOf(n).slice(0, 50).replace(/\n/g, ' ')}`);
  if (depth >= 5) return;
  const small = new Map<string, { n: number; bytes: number }>();
  for (const c of (children.get(n) ?? []).sort((a, b) => retained[b] - retained[a])) {
    if (retained[c] >= 2 ** 18) { show(c, depth + 1); continue; }
    const key = `${typeOf(c)} ${typeOf(c) === 'object' ? nameOf(c) : ''}`;
    const g = small.get(key) ?? { n: 0, bytes: 0 };
    g.n++; g.bytes += retained[c]; small.set(key, g);
  }
  for (const [k, g] of [...small].sort((a, b) => b[1].bytes - a[1].bytes)) {
    if (g.bytes >= 2 ** 19) console.log(`${'  '.repeat(depth + 1)}${mb(g.bytes).padStart(8)} MB  ${g.n} smaller: ${k}`);
  }
};
console.log('\n# dominator tree, nodes retaining ≥ 256 KB');
show(0, 0);
console.log(`\n# largest retained sizes (objects retaining ≥ 1 MB, with the edge that reaches them from their dominator)`);
const big = post.filter((n) => retained[n] >= 2 ** 20 && n !== 0).sort((a, b) => retained[b] - retained[a]).slice(0, top * 2);
for (const n of big) {
  const path: string[] = []; let x = n;
  for (let k = 0; k < 6 && x !== 0; k++) { path.unshift(`${edgeName(idom[x], x)}`); x = idom[x]; }
  console.log(`${mb(retained[n]).padStart(8)} MB  ${typeOf(n)} ${nameOf(n).slice(0, 40).replace(/\n/g, ' ')}  ← ${path.join('.')}`);
}
