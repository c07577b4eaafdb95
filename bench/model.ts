// Model and render figures, in process: full sync with cold caches (1k/5k/10k), sync after one
// Ingress or one EndpointSlice changed at 10k, the backends payload size, nginx.conf bytes per
// simple Ingress, `nginx -t` time; in child processes, the first sync of a fresh process and the
// controller's RSS after it. A fixed CPU workload timed first shows how fast the machine was.
//   node --import tsx bench/model.ts [--full]
// The first sync and the RSS run in bench/rss-child.mjs, from the compiled dist/ (npm run build).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import type { Store } from '../src/store/types.js';
import { createModelBuilder, type ModelBuilder, type StoreChanges } from '../src/model/build.js';
import { snapshot, type ModelSnapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { backendsPayload, createBackendsSerialiser, serversPayload } from '../src/model/core/payload.js';
import type { Backend, Configuration } from '../src/model/core/types.js';
import { auxiliaryFiles, createRenderer, type Renderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, preparePrefix, type NginxRuntime } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/render/fallback-cert.js';
import { silentLogger } from '../src/log.js';
import type { SourceEvent } from '../src/store/events.js';
import { generateEvents, ingressObject, sliceObject, type GenOptions } from './gen.js';
import { arg, attempt, cpuMs, emitFigures, isFull, loadAverage, mainThreadCpuMs, median, ms, now, printTable, round, verdict, type Row } from './lib.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';

const run = promisify(execFile);
const logger = silentLogger();
const SCRIPT = fileURLToPath(import.meta.url);

function loadStore(events: SourceEvent[]): Store {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
  for (const e of events) store.apply(e);
  return store;
}

function benchRuntime(prefix: string): NginxRuntime {
  return defaultRuntime({
    prefix, listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246, streamPort: 20247,
    defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
  });
}

interface Synced {
  builder: ModelBuilder;
  renderer: Renderer;
  config: Configuration;
  snap: ModelSnapshot;
  conf: string;
  backendsBytes: number;
  /** The dynamic-config actor's serialisation of the backends payload, each POST taken as accepted: the whole list first, then what changed. */
  serialiseBackends: (backends: readonly Backend[]) => readonly string[];
  phases: { build: number; snapshot: number; render: number; payloads: number };
  cpu: number;
  /** The main thread's CPU per phase (bench/ab.ts's figures are process CPU: the GC's helper threads too). */
  threadCpu: { build: number; payloads: number; render: number };
}

/** What the sync actor does on a first sync: build, snapshot, decide, payloads, render. */
function fullSync(store: Store, runtime: NginxRuntime): Synced {
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: runtime.defaultServerPort, logger });
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
  const cpu0 = cpuMs();
  let thread = mainThreadCpuMs();
  let t = now();
  const { config } = builder.build(store);
  const build = ms(t);
  const buildThread = mainThreadCpuMs() - thread;
  t = now();
  const snap = snapshot(config);
  decide(null, snap);
  const snapMs = ms(t);
  thread = mainThreadCpuMs();
  t = now();
  const backendsSerialiser = createBackendsSerialiser();
  const serialiseBackends = (list: readonly Backend[]) => { const post = backendsSerialiser.post(list); post.accepted(); return post.body; };
  const backendsBytes = chunksLength(serialiseBackends(backendsPayload(config)));
  JSON.stringify(serversPayload(config));
  const payloads = ms(t);
  const payloadsThread = mainThreadCpuMs() - thread;
  thread = mainThreadCpuMs();
  t = now();
  const conf = renderer.render(config, runtime);
  const render = ms(t);
  const threadCpu = { build: buildThread, payloads: payloadsThread, render: mainThreadCpuMs() - thread };
  return { builder, renderer, config, snap, conf, backendsBytes, serialiseBackends, phases: { build, snapshot: snapMs, render, payloads }, cpu: cpuMs() - cpu0, threadCpu };
}

/** Characters of a chunked body (bytes: the payload is ASCII JSON here). */
const chunksLength = (chunks: readonly string[]) => chunks.reduce((n, c) => n + c.length, 0);

const total = (p: Synced['phases']) => p.build + p.snapshot + p.render + p.payloads;

/** A later sync: build, snapshot, decide, then render on reload or payloads on a dynamic update. */
/** `changes`: the objects changed, as the pipeline's sync batch tells the builder. */
function incrementalSync(
  s: Synced, store: Store, runtime: NginxRuntime, changes?: StoreChanges,
): { ms: number; cpu: number; decision: string; payloadBytes: number } {
  const cpu0 = cpuMs();
  const t = now();
  const { config } = s.builder.build(store, changes);
  const snap = snapshot(config);
  const d = decide(s.snap, snap);
  let payloadBytes = 0;
  if (d.kind === 'reload') s.conf = s.renderer.render(config, runtime);
  if (d.backendsChanged) payloadBytes = chunksLength(s.serialiseBackends(backendsPayload(config)));
  if (d.serversChanged) JSON.stringify(serversPayload(config));
  const elapsed = ms(t);
  s.config = config;
  s.snap = snap;
  return { ms: elapsed, cpu: cpuMs() - cpu0, decision: d.kind, payloadBytes };
}

const RSS_CHILD = join(dirname(SCRIPT), 'rss-child.mjs');
const ROOT = join(dirname(SCRIPT), '..');

interface RssReport {
  first_sync_ms: number; first_sync_cpu_ms: number; phases: Synced['phases']; rss_mb: number; rss_before_idle_gc_mb: number; heap_mb: number; heap_total_mb: number;
  new_space_mb: number; external_mb: number; base_rss_mb: number; store_rss_mb: number; sync_rss_mb: number; conf_mb: number;
}

/** Whether dist/ was built after the last change to src/ (as test/support/cli-command.ts decides). */
function distCurrent(): boolean {
  const newest = (dir: string): number => readdirSync(dir, { withFileTypes: true })
    .reduce((m, e) => Math.max(m, e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs), 0);
  try { return statSync(join(ROOT, 'dist', '.build-stamp')).mtimeMs > newest(join(ROOT, 'src')); } catch { return false; }
}

/**
 * The first sync and the RSS of a fresh process over the events in `file`: as production runs
 * (the compiled dist/ under plain node, as bin/ingress-rx starts it, then its idle collection), or
 * from source under tsx.
 */
async function measureRss(file: string, from: 'dist' | 'src'): Promise<RssReport> {
  // Read 3 s after the idle collection: its compaction holds the evacuated pages for a moment.
  const args = (from === 'dist' ? ['--expose-gc', RSS_CHILD, '--dist', file] : ['--expose-gc', '--import', 'tsx', RSS_CHILD, '--src', file]).concat('--idle-gc', '--settle', '3000');
  const { stdout } = await run(process.execPath, args, { cwd: ROOT, timeout: 180_000, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as RssReport;
}

async function nginxTest(conf: string, config: Configuration, runtime: NginxRuntime): Promise<number> {
  preparePrefix(runtime);
  for (const f of auxiliaryFiles(config, runtime)) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.content);
  }
  writeFileSync(runtime.confPath, conf);
  const t = now();
  try {
    execFileSync('/usr/sbin/nginx', ['-t', '-q', '-p', runtime.prefix, '-c', runtime.confPath], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
  } catch (err) {
    throw new Error(`nginx -t failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim().split('\n').slice(-2).join(' ')}`);
  }
  return ms(t);
}

/** Milliseconds for a fixed piece of work like the model's (objects, strings, a sort, JSON). */
function machineCheck(): number {
  const t = now();
  let chars = 0;
  for (let r = 0; r < 5; r++) {
    const xs: Array<{ k: string; v: number }> = [];
    for (let i = 0; i < 200_000; i++) xs.push({ k: `key-${(i * 7919) % 200_000}`, v: i });
    xs.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    chars += JSON.stringify(xs.slice(0, 50_000)).length;
  }
  if (chars === 0) throw new Error('unreachable');
  return ms(t);
}

async function main(): Promise<void> {
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = {
    full_sync_ms_1k: null, full_sync_ms_5k: null, full_sync_ms_10k: null, ingress_change_sync_ms_10k: null,
    endpoint_change_sync_ms_10k: null, payload_bytes_10k: null, conf_bytes_per_ingress: null, nginx_t_ms_1k: null,
    nginx_t_ms_10k: null, rss_mb_1k: null, rss_mb_10k: null, rss_mb_10k_listed: null, first_sync_ms_10k: null, machine_check_ms: null,
  };
  const check = machineCheck();
  fig.machine_check_ms = round(check, 0);
  rows.push({ figure: 'machine check (fixed CPU workload)', value: `${check.toFixed(0)} ms`,
    note: 'the same work each run: build, sort and serialise 200k small objects, 5 times; larger means a slower machine at that moment' });
  const prefix = mkdtempSync(join(tmpdir(), 'irx-bench-model-'));
  const runtime = benchRuntime(prefix);
  runtime.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
  try {
    // 1. Full sync, cold caches, at 1k / 5k / 10k (best of 2 in full mode).
    let synced10k: { s: Synced; store: Store; opts: GenOptions } | null = null;
    let synced1k: Synced | null = null;
    for (const n of full ? [1000, 5000, 10_000] : [1000, 10_000]) {
      await attempt(rows, `full sync ${n / 1000}k`, () => {
        const opts: GenOptions = { n };
        const events = generateEvents(opts);
        let t = now();
        const store = loadStore(events);
        const storeMs = ms(t);
        const runs: Synced[] = [];
        for (let r = 0; r < (full ? 2 : 1); r++) runs.push(fullSync(store, runtime));
        const best = runs.reduce((a, b) => (total(a.phases) <= total(b.phases) ? a : b));
        const value = total(best.phases);
        const p = best.phases;
        rows.push({
          figure: `full sync ${n / 1000}k Ingresses`, value: `${value.toFixed(0)} ms`,
          target: n === 10_000 ? '≤ 400 ms' : '', status: n === 10_000 ? verdict(value, 400) : '',
          note: `build ${p.build.toFixed(0)}, snapshot+decide ${p.snapshot.toFixed(0)}, payloads ${p.payloads.toFixed(0)}, render ${p.render.toFixed(0)} ms; ` +
            `${best.config.servers.length} servers, ${best.config.backends.length} backends; CPU ${best.cpu.toFixed(0)} ms ` +
            `(main thread: build ${best.threadCpu.build.toFixed(0)}, payloads ${best.threadCpu.payloads.toFixed(0)}, render ${best.threadCpu.render.toFixed(0)}); store load ${storeMs.toFixed(0)} ms (not counted); ` +
            `in this process after the smaller sizes${full ? ', best of 2' : ''}`,
        });
        fig[`full_sync_ms_${n / 1000}k`] = round(value, 0);
        if (n === 1000) synced1k = best;
        if (n === 10_000) synced10k = { s: best, store, opts };
      });
    }

    // 2. One Ingress changed / one EndpointSlice changed at 10k.
    if (synced10k) {
      const { s, store, opts } = synced10k as { s: Synced; store: Store; opts: GenOptions };
      await attempt(rows, 'ingress change 10k', () => {
        const times: number[] = [];
        const cpu: number[] = [];
        const decisions = new Set<string>();
        for (let k = 0; k < (full ? 9 : 3); k++) {
          const i = 101 + k * 997;
          const ing = ingressObject(i, opts, 2);
          ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${10 + k}m` };
          const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
          store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
          const r = incrementalSync(s, store, runtime, [{ kind: 'Ingress', key }]);
          times.push(r.ms);
          cpu.push(r.cpu);
          decisions.add(r.decision);
        }
        const v = median(times);
        fig.ingress_change_sync_ms_10k = round(v, 1);
        rows.push({ figure: 'sync after 1 Ingress changed (10k, render incl.)', value: `${v.toFixed(1)} ms`, target: '≤ 25 ms', status: verdict(v, 25),
          note: `median of ${times.length}; max ${Math.max(...times).toFixed(1)} ms; CPU median ${median(cpu).toFixed(1)} ms; decisions: ${[...decisions].join(',')}` });
      });
      await attempt(rows, 'endpoint change 10k', () => {
        const times: number[] = [];
        const cpu: number[] = [];
        const decisions = new Set<string>();
        let bytes = 0;
        for (let k = 0; k < (full ? 21 : 5); k++) {
          const i = 57 + k * 461;
          const slice = sliceObject(i, [0, 1, 2].map((e) => ({ address: `10.200.${k}.${e + 1}`, port: 8080 })), opts, 2 + k);
          const key = `${slice.metadata.namespace}/${slice.metadata.name}`;
          store.apply({ kind: 'EndpointSlice', type: 'update', key, object: slice });
          const r = incrementalSync(s, store, runtime, [{ kind: 'EndpointSlice', key }]);
          times.push(r.ms);
          cpu.push(r.cpu);
          decisions.add(r.decision);
          bytes = r.payloadBytes;
        }
        const v = median(times);
        fig.endpoint_change_sync_ms_10k = round(v, 1);
        fig.payload_bytes_10k = bytes;
        rows.push({ figure: 'sync after 1 EndpointSlice changed (10k, no render)', value: `${v.toFixed(1)} ms`, target: '≤ 20 ms', status: verdict(v, 20),
          note: `median of ${times.length}, max ${Math.max(...times).toFixed(1)} ms; CPU median ${median(cpu).toFixed(1)} ms; decisions: ${[...decisions].join(',')}` });
        rows.push({ figure: 'backends payload POSTed (10k)', value: `${(bytes / 2 ** 20).toFixed(2)} MiB`, note: `${bytes} bytes, whole backends list` });
      });
    }

    // 3. nginx.conf bytes per simple Ingress (difference of two plain clusters), nginx -t.
    await attempt(rows, 'conf bytes per Ingress', () => {
      const size = (n: number) => fullSync(loadStore(generateEvents({ n, plain: true, tlsFraction: 0 })), runtime).conf.length;
      const [a, b] = full ? [1000, 2000] : [200, 400];
      const perIngress = (size(b) - size(a)) / (b - a);
      fig.conf_bytes_per_ingress = round(perIngress, 0);
      const mixed = synced1k ? (synced1k as Synced).conf.length / 1000 : null;
      rows.push({ figure: 'nginx.conf bytes per simple Ingress', value: `${perIngress.toFixed(0)} B`, target: '≤ 4096 B', status: verdict(perIngress, 4096),
        note: `1 host, 2 paths, no annotations; the annotated mix averages ${mixed?.toFixed(0) ?? '?'} B/Ingress` });
    });
    for (const n of full ? [1000, 10_000] : [1000]) {
      await attempt(rows, `nginx -t ${n / 1000}k`, async () => {
        const s = n === 1000 && synced1k ? synced1k as Synced : synced10k ? (synced10k as { s: Synced }).s : null;
        if (!s) throw new Error('no synced model');
        const testPrefix = mkdtempSync(join(tmpdir(), 'irx-bench-nginx-t-'));
        try {
          const rt = { ...benchRuntime(testPrefix), fallbackCert: runtime.fallbackCert };
          const conf = s.renderer.render(s.config, rt);
          const v = await nginxTest(conf, s.config, rt);
          fig[`nginx_t_ms_${n / 1000}k`] = round(v, 0);
          rows.push({ figure: `nginx -t at ${n / 1000}k Ingresses`, value: `${v.toFixed(0)} ms`, note: `${(conf.length / 2 ** 20).toFixed(1)} MiB nginx.conf` });
        } finally {
          rmSync(testPrefix, { recursive: true, force: true });
        }
      });
    }
    if (!full) rows.push({ figure: 'nginx -t at 10k Ingresses', value: 'skipped', status: 'n/a', note: 'full mode only' });

    // 4. In fresh child processes: the first sync (nothing compiled or warmed yet, as in a
    // controller that just listed its cluster) and the RSS after it and the idle collection, as
    // production runs (dist/, plain node); once from source under tsx for comparison.
    synced10k = null;
    synced1k = null;
    for (const n of [1000, 10_000]) {
      await attempt(rows, `rss ${n / 1000}k`, async () => {
        if (!distCurrent()) throw new Error('dist/ is older than src/: run `npm run build` (and touch dist/.build-stamp) to measure what production runs');
        const file = join(prefix, `events-${n}.json`);
        writeFileSync(file, JSON.stringify(generateEvents({ n })));
        const reports: RssReport[] = [];
        for (let k = 0; k < (n === 10_000 ? (full ? 5 : 3) : 1); k++) reports.push(await measureRss(file, 'dist'));
        const tsx = n === 10_000 ? await measureRss(file, 'src') : null;
        const r = reports[0]!;
        const v = r.rss_mb;
        fig[`rss_mb_${n / 1000}k`] = round(v, 0);
        if (n === 10_000) {
          const syncs = reports.map((x) => x.first_sync_ms);
          const m = median(syncs);
          const mid = reports.find((x) => x.first_sync_ms === m)!;
          fig.first_sync_ms_10k = round(m, 0);
          rows.push({ figure: 'first sync of a fresh process, 10k', value: `${m.toFixed(0)} ms`, target: '≤ 800 ms', status: verdict(m, 800),
            note: `dist/ under plain node, median of ${syncs.length} processes (${syncs.map((x) => x.toFixed(0)).join(', ')} ms); that run: build ${mid.phases.build.toFixed(0)}, snapshot+decide ${mid.phases.snapshot.toFixed(0)}, payloads ${mid.phases.payloads.toFixed(0)}, render ${mid.phases.render.toFixed(0)} ms, CPU ${mid.first_sync_cpu_ms.toFixed(0)} ms; from source under tsx: ${tsx!.first_sync_ms.toFixed(0)} ms (CPU ${tsx!.first_sync_cpu_ms.toFixed(0)})` });
        }
        rows.push({ figure: `controller RSS after initial sync, ${n / 1000}k`, value: `${v.toFixed(0)} MB`,
          target: n === 10_000 ? '≤ 200 MB' : '', status: n === 10_000 ? verdict(v, 200) : '',
          note: `dist/ under plain node, after the idle collection (${r.rss_before_idle_gc_mb.toFixed(0)} MB before it): node alone ${r.base_rss_mb} MB, + store ${r.store_rss_mb} MB, + sync ${r.sync_rss_mb} MB (nginx.conf ${r.conf_mb} MB); heap used ${r.heap_mb} of ${r.heap_total_mb} MB (young generation ${r.new_space_mb} MB), external ${r.external_mb} MB${tsx ? `; from source under tsx: ${tsx.rss_mb.toFixed(0)} MB (${tsx.rss_before_idle_gc_mb.toFixed(0)} before the collection)` : ''}` });
        if (n !== 10_000) return;
        // The same cluster as a real API server lists it (managedFields, last-applied, Helm's labels, …).
        writeFileSync(file, JSON.stringify(generateEvents({ n, asListed: true })));
        const listed = await measureRss(file, 'dist');
        fig.rss_mb_10k_listed = round(listed.rss_mb, 0);
        rows.push({ figure: 'controller RSS, 10k as a cluster lists them', value: `${listed.rss_mb.toFixed(0)} MB`,
          note: `bench/gen.ts --as-listed, dist/, after the idle collection (${listed.rss_before_idle_gc_mb.toFixed(0)} MB before it); heap used ${listed.heap_mb} of ${listed.heap_total_mb} MB` });
      });
    }
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: 'wall times above include waiting for the CPU when this is over 2' });
  printTable('model and render', rows);
  emitFigures(fig);
}

await main();
