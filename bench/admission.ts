// Admission webhook figures at 1k and 10k Ingresses: the round trip of reviews over real HTTPS
// with 50 in flight at once (the client in a worker thread, its own event loop), a mix of updates
// of existing Ingresses, new hosts and refused host/path thefts; the in-process review time; and
// the first review after a store change (an Ingress changed, an Ingress added).
// The server's own CPU per review is read from the kernel for its thread alone (the client's
// thread shares the process); `--profile` writes the server thread's CPU profile of the measured
// reviews to .bench/prof and prints its hottest functions.
//   node --import tsx bench/admission.ts [--full] [--sizes 10000] [--profile] [--warmup 3000]
import { Session } from 'node:inspector/promises';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PerformanceObserver, monitorEventLoopDelay, type PerformanceEntry } from 'node:perf_hooks';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import type { Ingress } from '../src/store/kube-types.js';
import { silentLogger } from '../src/log.js';
import { createReviewer, type Reviewer } from '../src/admission/review.js';
import { startWebhookServer } from '../src/admission/server.js';
import { BENCH_DOMAIN, CACHE_DIR, benchCertificate, generateEvents, hostOf, ingressObject } from './gen.js';
import { hotSpots } from './profile.js';
import { arg, attempt, emitFigures, isFull, loadAverage, median, percentile, printTable, round, verdict, type Figures, type Row } from './lib.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';

const CONCURRENCY = 50;
/**
 * Reviews sent before the measured ones, by default: enough for V8 to have optimised what a review
 * runs, as in a webhook that has run a while (after 100, its compiler threads still took ~0.45 ms
 * of CPU per review from the 2 cores; after 3,000, ~0.07–0.16). `--warmup N` sets another.
 */
const DEFAULT_WARMUP = 3000;
const warmupReviews = (): number => Number(arg('--warmup') ?? DEFAULT_WARMUP);
const PREFIX = 'nginx.ingress.kubernetes.io';

/** The candidates: an update of Ingress i, a new Ingress on a new host, or a new one on Ingress i's host and path (refused). */
function candidate(k: number, n: number): Ingress {
  const i = (k * 7919) % n;
  const base = ingressObject(i);
  switch (k % 3) {
    case 0: return { ...base, metadata: { ...base.metadata, annotations: { ...base.metadata.annotations, [`${PREFIX}/proxy-read-timeout`]: String(30 + (k % 60)) } } };
    case 1: {
      const ing = ingressObject(n + k);
      return { ...ing, metadata: { ...ing.metadata, name: `new-${k}`, creationTimestamp: undefined } };
    }
    default: return { ...base, metadata: { ...base.metadata, name: `thief-${k}`, uid: `thief-${k}`, creationTimestamp: undefined } };
  }
}

function reviewBody(ing: Ingress, k: number): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: `bench-${k}`, kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      name: ing.metadata.name, namespace: ing.metadata.namespace, operation: k % 3 === 0 ? 'UPDATE' : 'CREATE',
      userInfo: { username: 'bench' }, object: ing, oldObject: null, dryRun: false,
    },
  });
}

// The load client, plain JS for the worker: keeps CONCURRENCY requests in flight, first through the
// warm-up bodies, then through the measured ones on the same kept-alive connections (as the API
// server holds its connections to a webhook), so the measured figure is of reviews, not of the 50
// TLS handshakes of a new connection pool.
const CLIENT = `
const { workerData, parentPort } = require('node:worker_threads');
const https = require('node:https');
const { port, warmup, bodies, concurrency, ca, servername } = workerData;
const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency });
function run(list) {
  return new Promise((resolve) => {
    const latencies = new Array(list.length);
    let allowed = 0, next = 0, done = 0;
    const one = (k) => {
      const t0 = performance.now();
      const req = https.request({ host: '127.0.0.1', port, method: 'POST', path: '/networking/v1/ingresses', agent, ca, servername,
        headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => {
          latencies[k] = performance.now() - t0;
          if (JSON.parse(text).response.allowed) allowed++;
          finish();
        });
      });
      req.on('error', (err) => { latencies[k] = NaN; parentPort.postMessage({ error: String(err) }); finish(); });
      req.end(list[k]);
    };
    const finish = () => {
      done++;
      if (next < list.length) one(next++);
      else if (done === list.length) resolve({ latencies, allowed });
    };
    for (; next < Math.min(concurrency, list.length); next++) one(next);
  });
}
(async () => {
  const first = await run(warmup);
  // Its thread id, so that the bench can read this thread's CPU time from the kernel.
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  parentPort.postMessage({ phase: 'warm', latencies: first.latencies, tid });
  await new Promise((resolve) => parentPort.once('message', resolve));
  const measured = await run(bodies);
  agent.destroy();
  parentPort.postMessage({ phase: 'measured', ...measured });
})();
`;

interface LoadResult { latencies: number[]; allowed: number }

/** Starts the client on the warm-up bodies; `measure()` then runs the measured ones on the same connections. */
function startLoad(port: number, warmup: string[], bodies: string[], ca: string): Promise<{ warm: number[]; tid: number; measure: () => Promise<LoadResult> }> {
  return new Promise((resolveWarm, reject) => {
    const w = new Worker(CLIENT, { eval: true, workerData: { port, warmup, bodies, concurrency: CONCURRENCY, ca, servername: `webhook.${BENCH_DOMAIN}` } });
    let resolveMeasured: (r: LoadResult) => void = () => {};
    let rejectMeasured: (e: unknown) => void = reject;
    w.on('message', (m: { error?: string; phase?: string; latencies?: number[]; allowed?: number; tid?: number }) => {
      if (m.error) rejectMeasured(new Error(m.error));
      else if (m.phase === 'warm') {
        resolveWarm({
          warm: m.latencies!, tid: m.tid!,
          measure: () => new Promise<LoadResult>((res, rej) => { resolveMeasured = res; rejectMeasured = rej; w.postMessage('go'); }),
        });
      } else resolveMeasured({ latencies: m.latencies!, allowed: m.allowed! });
    });
    w.on('error', (e) => rejectMeasured(e));
  });
}

/** CPU time (ms) of each of this process's threads, by thread id. */
function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
    } catch { /* the thread ended meanwhile */ }
  }
  return out;
}

/** CPU time of one of this process's threads (by default the main thread, the server's), from the kernel's scheduler statistics. */
function serverThreadCpuMs(tid = process.pid): number {
  return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

async function measure(n: number, requests: number, profile: boolean, fig: Figures, rows: Row[]): Promise<void> {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181 });
  // Events go through the reviewer, as in the webhook's thread.
  for (const e of generateEvents({ n })) reviewer.apply(e);
  // As the webhook's thread does once its store holds the cluster.
  reviewer.warm();
  const size = `${n / 1000}k`;

  // The first review after a change, ten times each: an Ingress replaced in place, and a new one
  // (the store's order changes). Wall and CPU time (the process's: only this thread runs now; the
  // scheduler's per-thread figure is brought up to date at its ticks, too coarse for one review).
  const firsts = { changed: { wall: [] as number[], cpu: [] as number[] }, added: { wall: [] as number[], cpu: [] as number[] } };
  const timedReview = (into: { wall: number[]; cpu: number[] }, ing: Ingress) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    reviewer.review(ing);
    into.wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    into.cpu.push((c.user + c.system) / 1000);
  };
  for (let r = 0; r < 10; r++) {
    const changed = ingressObject(1 + r * 101, { n }, 2 + r);
    reviewer.apply({ kind: 'Ingress', type: 'update', key: `${changed.metadata.namespace}/${changed.metadata.name}`, object: changed });
    timedReview(firsts.changed, candidate(3 * r + 1, n));
    const added = ingressObject(n + 100_000 + r);
    reviewer.apply({ kind: 'Ingress', type: 'add', key: `${added.metadata.namespace}/${added.metadata.name}`, object: added });
    timedReview(firsts.added, candidate(3 * r + 2, n));
  }
  const inProcess: number[] = [];
  for (let k = 0; k < 300; k++) {
    const t0 = performance.now();
    reviewer.review(candidate(k, n));
    inProcess.push(performance.now() - t0);
  }
  fig[`admission_review_ms_${size}`] = round(median(inProcess), 2);
  const worst = Math.max(median(firsts.changed.wall), median(firsts.added.wall));
  fig[`admission_first_review_ms_${size}`] = round(worst, 2);
  fig[`admission_first_review_cpu_ms_${size}`] = round(Math.max(median(firsts.changed.cpu), median(firsts.added.cpu)), 2);
  const firstNote = (f: { wall: number[]; cpu: number[] }) => `${median(f.wall).toFixed(2)} ms (max ${Math.max(...f.wall).toFixed(1)}; CPU ${median(f.cpu).toFixed(2)} ms)`;
  rows.push({ figure: `review in process, ${size}`, value: `${median(inProcess).toFixed(2)} ms`, note: `median of 300; p99 ${percentile(inProcess, 99).toFixed(2)} ms` });
  rows.push({
    figure: `first review after a store change, ${size}`, value: `${worst.toFixed(2)} ms`, target: n === 10_000 ? '≤ 10 ms' : '', status: n === 10_000 ? verdict(worst, 10) : '',
    note: `median of 10 each: after an Ingress changed ${firstNote(firsts.changed)}, after an Ingress added ${firstNote(firsts.added)}`,
  });

  // The same load against a reviewer that answers one fixed verdict: the server thread's CPU for
  // HTTP, TLS, reading the AdmissionReview and writing the answer, without the review itself.
  const fixed = reviewer.review(candidate(0, n));
  const transport = await serve({ ...reviewer, review: () => fixed }, n, requests, false);
  fig[`admission_transport_cpu_ms_per_review_${size}`] = round(transport.cpuMs, 3);

  const measured = await serve(reviewer, n, requests, profile, size);
  const { latencies, allowed, cpuMs, busyMs, seconds, coldP99, gc, loopMaxMs, rssMb, heapMb, processCpuMs, clientCpuMs, others } = measured;
  fig[`admission_rss_mb_${size}`] = round(rssMb, 1);
  fig[`admission_server_ms_per_review_${size}`] = round(busyMs, 2);
  fig[`admission_server_cpu_ms_per_review_${size}`] = round(cpuMs, 3);
  const p99 = percentile(latencies, 99);
  fig[`admission_review_p99_ms_${size}`] = round(p99, 1);
  rows.push({
    figure: `review round trip p99, ${size}, ${CONCURRENCY} in flight`, value: `${p99.toFixed(1)} ms`,
    target: n === 10_000 ? '≤ 20 ms' : '', status: n === 10_000 ? verdict(p99, 20) : '',
    note: `p50 ${median(latencies).toFixed(1)} ms; after a warm-up of ${warmupReviews()} reviews${arg('--warmup') ? ' (--warmup)' : ' (the default: code optimised, as in a webhook that has run a while)'}; kept-alive connections (the first ${CONCURRENCY}, each with its TLS handshake: p99 ${coldP99.toFixed(0)} ms); ${requests} reviews (${allowed} allowed) in ${seconds.toFixed(1)} s = ${(requests / seconds).toFixed(0)}/s; server thread CPU ${cpuMs.toFixed(3)} ms per review (its loop busy ${busyMs.toFixed(2)} ms of wall time per review)`,
  });
  rows.push({
    figure: `what else the round trips waited for, ${size}`, value: `GC ${gc.ms.toFixed(0)} ms`,
    note: `the server thread during the measured reviews: ${gc.count} GC pauses, ${gc.ms.toFixed(1)} ms in all, the longest ${gc.maxMs.toFixed(1)} ms; its event loop's longest stall ${loopMaxMs.toFixed(1)} ms; round trip p90 ${percentile(latencies, 90).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms; process RSS ${rssMb.toFixed(0)} MB (the load client's thread included)${Number.isNaN(heapMb) ? '' : `, the server thread's heap after a full GC ${heapMb.toFixed(1)} MB`}; the process's CPU per review ${processCpuMs.toFixed(3)} ms: the server thread ${cpuMs.toFixed(3)}, the load client's ${clientCpuMs.toFixed(3)}, the ${others.length} other threads (V8's helpers, libuv's) ${(processCpuMs - cpuMs - clientCpuMs).toFixed(3)} ms, the busiest ${others.slice(0, 4).map((ms) => ms.toFixed(3)).join(' / ')} ms`,
  });
  rows.push({
    figure: `server thread CPU per review, ${size}`, value: `${cpuMs.toFixed(3)} ms`, target: n === 10_000 ? '≤ 0.4 ms' : '', status: n === 10_000 ? verdict(cpuMs, 0.4) : '',
    note: `of which HTTP, TLS and the AdmissionReview (the same load, a fixed verdict) ${transport.cpuMs.toFixed(3)} ms; the review ${(cpuMs - transport.cpuMs).toFixed(3)} ms`,
  });
}

interface Served {
  latencies: number[]; allowed: number; cpuMs: number; busyMs: number; seconds: number; coldP99: number;
  /** The server thread's GC pauses during the measured reviews. */
  gc: { count: number; ms: number; maxMs: number };
  /** The longest the server thread's event loop was held at once (a review, a GC pause, or waiting for a core). */
  loopMaxMs: number;
  rssMb: number;
  /** The server thread's heap after a full collection (NaN without --expose-gc). */
  heapMb: number;
  /** The whole process's CPU per review: the server thread, the load client's and V8's helper threads. */
  processCpuMs: number;
  /** The load client's thread's CPU per review. */
  clientCpuMs: number;
  /** Every other thread's CPU per review, busiest first. */
  others: number[];
}

/** The webhook's HTTPS server over `reviewer`, CONCURRENCY reviews in flight from a client thread; the server thread's CPU per review. */
async function serve(reviewer: Reviewer, n: number, requests: number, profile: boolean, size = ''): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-webhook-'));
  const { cert, key } = benchCertificate();
  writeFileSync(join(dir, 'tls.crt'), cert);
  writeFileSync(join(dir, 'tls.key'), key);
  const server = await startWebhookServer({
    address: '127.0.0.1:0', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: silentLogger(), reviewer,
  });
  try {
    // Past the first hundred, candidates the measured ones, from k = 1000 on, do not repeat.
    const warmup = Array.from({ length: warmupReviews() }, (_, k) => reviewBody(candidate(k < 2 * CONCURRENCY ? k : k + 10_000, n), k));
    const bodies = Array.from({ length: requests }, (_, k) => reviewBody(candidate(k + 1000, n), k));
    const client = await startLoad(server.port, warmup, bodies, cert);
    const coldP99 = percentile(client.warm.slice(0, CONCURRENCY), 99);
    const session = profile ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    // A PerformanceObserver sees its own thread's GC only: the server's, not the client's.
    const gc = { count: 0, ms: 0, maxMs: 0 };
    const countGC = (entries: readonly PerformanceEntry[]) => {
      for (const e of entries) {
        gc.count++;
        gc.ms += e.duration;
        gc.maxMs = Math.max(gc.maxMs, e.duration);
      }
    };
    const gcObserver = new PerformanceObserver((list) => countGC(list.getEntries()));
    gcObserver.observe({ entryTypes: ['gc'] });
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = serverThreadCpuMs();
    const client0 = serverThreadCpuMs(client.tid);
    const process0 = process.cpuUsage();
    const threads0 = threadCpuMs();
    const { latencies, allowed } = await client.measure();
    const threads1 = threadCpuMs();
    // The other threads (V8's GC and compiler helpers of both isolates, libuv's), busiest first.
    const others = [...threads1].filter(([tid]) => tid !== process.pid && tid !== client.tid)
      .map(([tid, ms]) => (ms - (threads0.get(tid) ?? 0)) / requests).sort((a, b) => b - a);
    const cpuMs = (serverThreadCpuMs() - cpu0) / requests;
    const clientCpuMs = (serverThreadCpuMs(client.tid) - client0) / requests;
    const processUsage = process.cpuUsage(process0);
    const processCpuMs = (processUsage.user + processUsage.system) / 1000 / requests;
    loop.disable();
    countGC(gcObserver.takeRecords());
    gcObserver.disconnect();
    const rssMb = process.memoryUsage().rss / 1e6;
    // Under `node --expose-gc`: the server thread's heap still used after a full collection.
    const collect = (globalThis as { gc?: () => void }).gc;
    let heapMb = NaN;
    if (collect) {
      collect();
      heapMb = process.memoryUsage().heapUsed / 1e6;
    }
    const seconds = (performance.now() - started) / 1000;
    // The event loop's busy wall time per review includes waiting for a core on a loaded machine;
    // the thread's CPU time per review does not.
    const busyMs = performance.eventLoopUtilization(elu0).active / requests;
    if (session) {
      const { profile: prof } = await session.post('Profiler.stop') as unknown as { profile: Parameters<typeof hotSpots>[0] };
      session.disconnect();
      const outDir = join(CACHE_DIR, 'prof');
      mkdirSync(outDir, { recursive: true });
      writeFileSync(join(outDir, `admission-${size}.cpuprofile`), JSON.stringify(prof));
      process.stdout.write(`\n## the server thread during the measured reviews, ${size} (.bench/prof/admission-${size}.cpuprofile)\n`);
      for (const h of hotSpots(prof, 25)) process.stdout.write(`${(h.share * 100).toFixed(1).padStart(5)}%  ${h.ms.toFixed(0).padStart(6)} ms  ${h.fn}  ${h.where}\n`);
    }
    return { latencies, allowed, cpuMs, busyMs, seconds, coldP99, gc, loopMaxMs: loop.max / 1e6, rssMb, heapMb, processCpuMs, clientCpuMs, others };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const full = isFull();
  const fig: Figures = {};
  const rows: Row[] = [];
  const sizes = (arg('--sizes') ?? '1000,10000').split(',').map(Number);
  const profile = process.argv.includes('--profile');
  for (const n of sizes) await attempt(rows, `admission ${n / 1000}k`, () => measure(n, full ? 5000 : 1000, profile, fig, rows));
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: `hosts like ${hostOf(0)}; client and server share the machine's 2 cores` });
  printTable('admission webhook', rows);
  emitFigures(fig);
}

await main();
