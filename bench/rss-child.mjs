// The controller's memory after its first sync, in a process of its own (bench/model.ts starts
// it). Plain JavaScript so that it runs as production does: `node <bin/ingress-rx's node flags>
// bench/rss-child.mjs --dist EVENTS` loads the compiled dist/ under plain node; under
// `node --import tsx … --src` it loads the sources, for comparison. EVENTS is a JSON file of the
// generated cluster's SourceEvents (the store reads parsed JSON in production too), each object
// projected as the kube source projects what the API server lists before the store gets it.
// Prints one JSON line: the first sync's phases, then the RSS with the synced state kept alive.
//   [--heap-snapshot FILE] [--idle-gc]   (--idle-gc: what the controller's idle collection does)
//   [--settle MS]   the RSS (and heap) read MS after the idle collection instead of at once
//   [--again]   then the same sync with a fresh builder and renderer in this now warm process: what
//               the first sync spends beyond the build and render proper (compiling, first-time set-up)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const fromSrc = argv.includes('--src');
const load = (path) => import(join(root, fromSrc ? 'src' : 'dist', `${path}.js`));

const { createStore, defaultStoreOptions } = await load('store/store');
const { createModelBuilder } = await load('model/build');
const { snapshot } = await load('model/core/hash');
const { decide } = await load('model/core/decide');
const { backendsPayload, createBackendsSerialiser, serversPayload } = await load('model/core/payload');
const { createRenderer } = await load('render/engine');
const { DEFAULT_TEMPLATE_DIR, defaultRuntime } = await load('render/runtime');
const { silentLogger } = await load('log');
const { ANNOTATION_REFERENCES } = await load('model/ingress/annotations/index');
const { collectGarbage } = await load('pipeline/idle-gc');
const { projectObject } = await load('streams/kube-project');

const now = () => process.hrtime.bigint();
const ms = (t) => Number(now() - t) / 1e6;
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
// The main thread's CPU alone (process CPU adds the GC's helper threads on the other core).
const threadCpuMs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
const toMb = (x) => Math.round(x / 2 ** 20);
const gc = globalThis.gc;
const settle = () => { gc?.(); gc?.(); return process.memoryUsage(); };

const prefix = mkdtempSync(join(tmpdir(), 'irx-bench-rss-'));
try {
  const logger = silentLogger();
  const base = settle();
  const events = JSON.parse(readFileSync(flag(fromSrc ? '--src' : '--dist'), 'utf8'));
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
  for (const e of events) store.apply({ ...e, object: projectObject(e.kind, e.object) });
  events.length = 0;
  const afterStore = settle();
  const runtime = defaultRuntime({
    prefix, listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246, streamPort: 20247,
    defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
  });
  // What the sync actor does on a first sync: build, snapshot, decide, payloads, render.
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, logger });
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
  const cpu0 = cpuMs();
  let th = threadCpuMs();
  const thread = {};
  const lap = (phase) => { const x = threadCpuMs(); thread[phase] = x - th; th = x; };
  let t = now();
  const { config } = builder.build(store);
  const build = ms(t);
  lap('build');
  const buildCpu = cpuMs() - cpu0;
  t = now();
  const snap = snapshot(config);
  decide(null, snap);
  const snapMs = ms(t);
  lap('snapshot');
  t = now();
  // Kept alive as the dynamic-config actor keeps it: its cache of each backend's JSON is state.
  const backendsSerialiser = createBackendsSerialiser();
  backendsSerialiser.post(backendsPayload(config)).accepted();
  JSON.stringify(serversPayload(config));
  const payloads = ms(t);
  lap('payloads');
  t = now();
  const cpuRender = cpuMs();
  const conf = renderer.render(config, runtime);
  const render = ms(t);
  lap('render');
  const syncCpu = cpuMs() - cpu0;
  const renderCpu = cpuMs() - cpuRender;
  let again;
  if (argv.includes('--again')) {
    const b2 = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, logger });
    const r2 = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    const phase = (f) => { const c = cpuMs(); const out = f(); return [out, cpuMs() - c]; };
    const [built, buildCpu] = phase(() => b2.build(store).config);
    const [, snapCpu] = phase(() => decide(null, snapshot(built)));
    const [, payloadsCpu] = phase(() => { createBackendsSerialiser().post(backendsPayload(built)).accepted(); JSON.stringify(serversPayload(built)); });
    const [, renderCpu] = phase(() => r2.render(built, runtime));
    again = { build: buildCpu, snapshot: snapCpu, payloads: payloadsCpu, render: renderCpu };
  }
  const afterSync = settle();
  let m = afterSync;
  let idleGcCpu = 0;
  if (argv.includes('--idle-gc')) {
    // The controller's idle collection (src/pipeline/idle-gc.ts), after its idle wait.
    await new Promise((r) => setTimeout(r, 5000));
    const c = cpuMs();
    collectGarbage();
    idleGcCpu = cpuMs() - c;
    m = process.memoryUsage();
  }
  // --settle MS: the RSS read MS after the collection, once V8 has unmapped the pages it freed
  // (a compacting collection holds the pages it evacuated for a moment: +60-120 MB at 10k).
  const settleMs = Number(flag('--settle') ?? 0);
  const rightAfter = m.rss / 2 ** 20;
  if (settleMs > 0) m = await new Promise((r) => setTimeout(() => r(process.memoryUsage()), settleMs));
  const heapFile = flag('--heap-snapshot');
  if (heapFile) writeHeapSnapshot(heapFile);
  // V8 keeps the young generation's pages after a gc(): resident, empty, part of the RSS.
  const newSpace = getHeapSpaceStatistics().find((sp) => sp.space_name === 'new_space');
  process.stdout.write(`${JSON.stringify({
    first_sync_ms: build + snapMs + payloads + render, first_sync_cpu_ms: syncCpu, phases: { build, snapshot: snapMs, render, payloads }, thread_cpu_ms: thread,
    first_cpu: { build: buildCpu, render: renderCpu }, ...(again ? { again_cpu: again } : {}),
    rss_mb: m.rss / 2 ** 20, rss_right_after_idle_gc_mb: rightAfter, rss_before_idle_gc_mb: afterSync.rss / 2 ** 20, idle_gc_cpu_ms: idleGcCpu,
    heap_mb: toMb(m.heapUsed), heap_total_mb: toMb(m.heapTotal), new_space_mb: toMb(newSpace?.physical_space_size ?? 0), external_mb: toMb(m.external),
    base_rss_mb: toMb(base.rss), store_rss_mb: toMb(afterStore.rss - base.rss), sync_rss_mb: toMb(afterSync.rss - afterStore.rss), conf_mb: toMb(conf.length),
    servers: config.servers.length, gc: gc !== undefined, alive: [store, builder, renderer, snap, backendsSerialiser].length,
  })}\n`);
} finally {
  rmSync(prefix, { recursive: true, force: true });
}
