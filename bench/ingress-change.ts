// The sync after one Ingress changed at 10k (as bench/model.ts's, render included), by kind of
// Ingress: a plain one, a canary's primary (bench/gen.ts: every 20th Ingress is a canary of the
// one before), a canary. Each change is a new proxy-body-size (a reload). Prints the CPU of the
// build and of the whole sync per change, and the load average.
//   node --import tsx bench/ingress-change.ts [--rounds N]
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
function change(i: number): { build: number; total: number; decision: string } {
  const ing = ingressObject(i, opts, version);
  ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${10 + (version++ % 50)}m` };
  const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
  store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
  const c0 = cpuMs();
  config = builder.build(store, [{ kind: 'Ingress', key }]).config;
  const build = cpuMs() - c0;
  const next = snapshot(config);
  const d = decide(snap, next);
  snap = next;
  if (d.kind === 'reload') renderer.render(config, runtime);
  return { build, total: cpuMs() - c0, decision: d.kind };
}

const kinds: Record<string, (k: number) => number> = {
  plain: (k) => 101 + k * 997 + (((101 + k * 997) % 20) >= 18 ? 3 : 0),
  'canary primary': (k) => 1098 + k * 1000,
  canary: (k) => 1099 + k * 1000,
};
console.log(`load average before: ${loadAverage()}`);
const results: Record<string, { build: number[]; total: number[]; decisions: Set<string> }> = {};
for (let r = 0; r < rounds; r++) {
  for (const [kind, at] of Object.entries(kinds)) {
    const res = (results[kind] ??= { build: [], total: [], decisions: new Set() });
    const x = change(at(r % 9));
    res.build.push(x.build);
    res.total.push(x.total);
    res.decisions.add(x.decision);
  }
}
for (const [kind, r] of Object.entries(results)) {
  console.log(`${kind.padEnd(15)} build CPU median ${median(r.build).toFixed(1)} ms (max ${Math.max(...r.build).toFixed(1)}), sync CPU median ${median(r.total).toFixed(1)} ms (max ${Math.max(...r.total).toFixed(1)}); ${r.total.length} changes; decisions ${[...r.decisions].join(',')}`);
}
console.log(`load average after: ${loadAverage()}`);
