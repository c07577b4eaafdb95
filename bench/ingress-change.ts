// The sync after one Ingress changed at 10k (as bench/model.ts's, render included), by kind of
// Ingress: a plain one, a canary's primary (bench/gen.ts: every 20th Ingress is a canary of the
// one before), a canary. Each change is a new proxy-body-size (a reload). Prints the CPU of the
// build, the render and the whole sync per change, and the load average. --gc-before: a full
// collection before each change (as after the controller's idle collection; not counted).
//   node --import tsx bench/ingress-change.ts [--rounds N] [--only plain] [--gc-before [--settle MS]]   (--gc-before needs node --expose-gc)
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import type { Store } from '../src/store/types.js';
import { createModelBuilder } from '../src/model/build.js';
import { snapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../src/render/runtime.js';
import { silentLogger } from '../src/log.js';
import { generateEvents, ingressObject, type GenOptions } from './gen.js';
import { arg, cpuMs, loadAverage, median } from './lib.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const logger = silentLogger();
const rounds = Number(arg('--rounds') ?? 5);
const opts: GenOptions = { n: 10_000 };
const store: Store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
for (const e of generateEvents(opts)) store.apply(e);
const runtime = defaultRuntime({
  prefix: mkdtempSync(join(tmpdir(), 'irx-bench-chg-')), listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246,
  streamPort: 20247, defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
});
const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: runtime.defaultServerPort, logger });
const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
let config = builder.build(store).config;
let snap = snapshot(config);
decide(null, snap);
renderer.render(config, runtime);

let version = 2;
const gcBefore = process.argv.includes('--gc-before');
const settleMs = Number(arg('--settle') ?? 0);
const minorFaults = () => process.resourceUsage().minorPageFault;
function change(i: number): { build: number; render: number; total: number; faults: number; decision: string } {
  const ing = ingressObject(i, opts, version);
  ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${10 + (version++ % 50)}m` };
  const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
  store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
  if (gcBefore) {
    (globalThis as { gc?: () => void }).gc!();
    // --settle MS: the main thread waits, so the collector's background threads can finish first.
    if (settleMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, settleMs);
  }
  const f0 = minorFaults();
  const c0 = cpuMs();
  config = builder.build(store, [{ kind: 'Ingress', key }]).config;
  const build = cpuMs() - c0;
  const next = snapshot(config);
  const d = decide(snap, next);
  snap = next;
  const r0 = cpuMs();
  if (d.kind === 'reload') renderer.render(config, runtime);
  const end = cpuMs();
  return { build, render: end - r0, total: end - c0, faults: minorFaults() - f0, decision: d.kind };
}

const allKinds: Record<string, (k: number) => number> = {
  plain: (k) => 101 + k * 997 + (((101 + k * 997) % 20) >= 18 ? 3 : 0),
  'canary primary': (k) => 1098 + k * 1000,
  canary: (k) => 1099 + k * 1000,
};
const only = arg('--only');
const kinds = Object.fromEntries(Object.entries(allKinds).filter(([k]) => !only || only.split(',').includes(k)));
console.log(`${gcBefore ? `a full collection before each change${settleMs > 0 ? `, then ${settleMs} ms idle` : ''}; ` : ''}${process.execArgv.filter((a) => a !== '--import' && a !== 'tsx').join(' ')}`);
console.log(`load average before: ${loadAverage()}`);
const results: Record<string, { build: number[]; render: number[]; total: number[]; faults: number[]; decisions: Set<string> }> = {};
for (let r = 0; r < rounds; r++) {
  for (const [kind, at] of Object.entries(kinds)) {
    const res = (results[kind] ??= { build: [], render: [], total: [], faults: [], decisions: new Set() });
    const x = change(at(r % 9));
    res.build.push(x.build);
    res.render.push(x.render);
    res.total.push(x.total);
    res.faults.push(x.faults);
    res.decisions.add(x.decision);
  }
}
for (const [kind, r] of Object.entries(results)) {
  console.log(`${kind.padEnd(15)} build CPU median ${median(r.build).toFixed(1)} ms (max ${Math.max(...r.build).toFixed(1)}), render CPU median ${median(r.render).toFixed(1)} ms, sync CPU median ${median(r.total).toFixed(1)} ms (max ${Math.max(...r.total).toFixed(1)}); minor page faults median ${median(r.faults)}; ${r.total.length} changes; decisions ${[...r.decisions].join(',')}`);
}
console.log(`load average after: ${loadAverage()}`);
