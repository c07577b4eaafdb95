// A/B of the model build and render between two source trees (e.g. `git archive` of a commit
// before a refactor, and the working tree), for changes that must not cost speed. Each round runs
// one fresh process per tree, A then B, and each process measures its own CPU time (user + sys),
// which load from other processes disturbs far less than wall time: on a shared 2-core machine
// wall figures moved 8x between runs while CPU figures moved ~10%. Figures at 10k Ingresses: the
// first build and first render of a fresh process (code not yet optimised), the median of three
// more of each with new builders and renderers (warm), and the median sync of 25 one-Ingress changes.
//   node --import tsx bench/ab.ts <treeA> <treeB> [--rounds 8] [--a-flags F] [--b-flags F]
// --a-flags / --b-flags: node flags for that side's processes (space-separated), e.g. the same
// tree twice with `--b-flags --max-semi-space-size=2` to A/B a flag of bin/ingress-rx.
//   node --import tsx bench/ab.ts --child <tree>   (internal; the tree needs node_modules and build/)
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { arg, loadAverage, median, printTable, type Row } from './lib.js';

const run = promisify(execFile);
const N = 10_000;
const PREFIX = 'nginx.ingress.kubernetes.io';
type Phases = Record<'first_build' | 'first_render' | 'warm_build' | 'warm_render' | 'ingress_change', number>;

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

/** One process's figures for `tree`, loaded through dynamic imports so both trees run the same measurement. */
async function child(tree: string): Promise<Phases> {
  const load = (path: string) => import(`${tree}/${path}`);
  // Trees from before issue 28 have one flat src/model/ (core/ and ingress/ came after).
  const modelPath = (path: string) => (existsSync(`${tree}/src/model/${path}`) ? `src/model/${path}` : `src/model/${path.replace(/^(core|ingress)\//, '')}`);
  const { createStore, defaultStoreOptions } = await load('src/store/store.ts');
  const { createModelBuilder } = await load('src/model/build.ts');
  const { snapshot } = await load(modelPath('core/hash.ts'));
  const { decide } = await load(modelPath('core/decide.ts'));
  const { createRenderer } = await load('src/render/engine.ts');
  const { DEFAULT_TEMPLATE_DIR, defaultRuntime } = await load('src/render/runtime.ts');
  const { generateEvents, ingressObject } = await load('bench/gen.ts');
  const { silentLogger } = await load('src/log.ts');
  const logger = silentLogger();
  // Trees from before issue 21 take no annotation references (the store found Secret annotations itself).
  const references = await load(modelPath('ingress/annotations/index.ts')).then((m) => m.ANNOTATION_REFERENCES, () => undefined);
  const options = { ...defaultStoreOptions(), watchIngressWithoutClass: true };
  const store = references ? createStore(options, references, logger) : createStore(options, logger);
  for (const e of generateEvents({ n: N })) store.apply(e);
  const runtime = defaultRuntime({
    prefix: '/nonexistent', listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246, streamPort: 20247,
    defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
  });
  const builds: number[] = [];
  const renders: number[] = [];
  let builder;
  let renderer;
  let config;
  for (let r = 0; r < 4; r++) {
    builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 18181, logger });
    renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    let c = cpu();
    config = builder.build(store).config;
    builds.push(cpu() - c);
    c = cpu();
    renderer.render(config, runtime);
    renders.push(cpu() - c);
  }
  let snap = snapshot(config);
  decide(null, snap);
  const changes: number[] = [];
  for (let k = 0; k < 25; k++) {
    const ing = ingressObject((k * 331) % N, { n: N }, 2 + k);
    const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
    store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
    const c = cpu();
    const next = builder.build(store, [{ kind: 'Ingress', key }]).config;
    const s = snapshot(next);
    if (decide(snap, s).kind === 'reload') renderer.render(next, runtime);
    changes.push(cpu() - c);
    snap = s;
  }
  return {
    first_build: builds[0]!, first_render: renders[0]!,
    warm_build: median(builds.slice(1)), warm_render: median(renders.slice(1)), ingress_change: median(changes),
  };
}

async function main(): Promise<void> {
  const childTree = arg('--child');
  if (childTree) {
    process.stdout.write(`${JSON.stringify(await child(resolve(childTree)))}\n`);
    return;
  }
  const values = ['--rounds', '--a-flags', '--b-flags'].map((f) => arg(f));
  const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--') && !values.includes(x));
  if (!a || !b) throw new Error('usage: bench/ab.ts <treeA> <treeB> [--rounds N] [--a-flags F] [--b-flags F]');
  const rounds = Number(arg('--rounds') ?? 8);
  const flags = (side: string) => (arg(side) ?? '').split(' ').filter(Boolean);
  const results: { a: Phases; b: Phases }[] = [];
  const one = async (tree: string, nodeFlags: string[]): Promise<Phases> => {
    const { stdout } = await run(process.execPath, [...nodeFlags, '--import', 'tsx', import.meta.filename, '--child', resolve(tree)], {
      cwd: resolve(tree), timeout: 300_000, maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Phases;
  };
  for (let r = 0; r < rounds; r++) results.push({ a: await one(a, flags('--a-flags')), b: await one(b, flags('--b-flags')) });
  const rows: Row[] = (Object.keys(results[0]!.a) as (keyof Phases)[]).map((k) => {
    const ratios = results.map((x) => x.b[k] / x.a[k]);
    return {
      figure: `${k.replace('_', ' ')} CPU ms, 10k`,
      value: `${median(results.map((x) => x.a[k])).toFixed(0)} → ${median(results.map((x) => x.b[k])).toFixed(0)}`,
      note: `B/A median ${median(ratios).toFixed(3)}; pairs ${ratios.map((x) => x.toFixed(2)).join(' ')}`,
    };
  });
  rows.push({ figure: 'load average at the end', value: loadAverage(), note: `${rounds} rounds, A then B each` });
  const side = (tree: string, f: string) => `${tree}${arg(f) ? ` (node ${arg(f)})` : ''}`;
  printTable(`A/B: A = ${side(a, '--a-flags')}, B = ${side(b, '--b-flags')}`, rows);
}

await main();
