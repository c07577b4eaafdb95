// The RSS of `ingress-rx controller` itself (issue 29, part rss11): the production binary (`dist/`
// under plain node, bin/ingress-rx) against the in-process fake API server over HTTPS with a
// bearer token, holding the generated cluster as a cluster lists it (bench/gen.ts --as-listed).
// Everything a controller does runs: informers (list, then watch), leader election (a Lease),
// Events, and the status writer at its default pace (every Ingress's status, 10k at 100/s). The figure
// is the controller process's RSS (/proc/PID/status, NGINX not counted) after its idle
// collection, which comes once the status echoes have stopped; a second reading 10 s later.
//   node --import tsx bench/controller-rss.ts [--full] [--n 10000] [--runs 3] [--generated]
// Quick: 2k, one run (`rss_mb_2k_controller`); full: 10k, three runs (`rss_mb_10k_controller`).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer, type FakeObject } from '../test/support/fake-apiserver.js';
import { makeCertificate } from '../test/support/pod-cluster.js';
import { cliArgs } from '../test/support/cli-command.js';
import { startController } from '../test/support/local-harness.js';
import { generateEvents } from './gen.js';
import { arg, emitFigures, isFull, loadAverage, median, printTable, processCpuSeconds, round, verdict, type Row } from './lib.js';

const full = isFull();
const n = Number(arg('--n') ?? (full ? 10_000 : 2_000));
const runs = Number(arg('--runs') ?? (full ? 3 : 1));
const asListed = !process.argv.includes('--generated');
const TOKEN = 'bench-controller-token';
/** Not the address the listed Ingresses hold (bench/gen.ts asListed: 192.0.2.10): every status is written. */
const STATUS_ADDRESS = '192.0.2.20';
const STATUS_PATH = /\/ingresses\/[^/]+\/status$/;

interface Reading {
  /** After the first idle collection, which follows the last status echo. */
  rssMb: number;
  /** 10 s later: leases renewed, nothing else. */
  laterMb: number;
  /** The highest RSS the process reached (the initial list and sync). */
  peakMb: number;
  /** V8's heap, used and total, and memory outside it (Buffers), from the controller's /metrics after the reading. */
  heapMb: { used: number; total: number; external: number };
  /** After that collection, as the controller logged it; null when none came. */
  idleGcLogMb: number | null;
  statusWrites: number;
  events: number;
  leases: number;
  cpuS: number;
  readyS: number;
}

function statusMbOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) / 1024;
}
const rssMbOf = (pid: number) => statusMbOf(pid, 'VmRSS');

function seed(fake: FakeApiServer): number {
  let ingresses = 0;
  for (const e of generateEvents({ n, asListed })) {
    const o = structuredClone(e.object) as unknown as FakeObject;
    delete (o.metadata as Record<string, unknown>).resourceVersion;
    fake.create(o);
    if (e.kind === 'Ingress') ingresses++;
  }
  return ingresses;
}

async function measure(): Promise<Reading> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-ctl-rss-'));
  const tls = makeCertificate(dir, 'api', 'kube-apiserver', ['127.0.0.1']);
  const fake = await startFakeApiServer({ tls: { cert: tls.cert, key: tls.key }, tokens: { [TOKEN]: 'system:serviceaccount:ingress:ingress-rx' } });
  let ctl: Awaited<ReturnType<typeof startController>> | undefined;
  try {
    const ingresses = seed(fake);
    const kubeconfig = join(dir, 'kubeconfig');
    // The cluster's CA and a bearer token, as a controller outside the cluster runs.
    writeFileSync(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'fake',
      clusters: [{ name: 'fake', cluster: { server: fake.url, 'certificate-authority-data': Buffer.from(tls.ca).toString('base64') } }],
      users: [{ name: 'fake', user: { token: TOKEN } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake' } }],
    }));
    const t0 = performance.now();
    ctl = await startController({
      kubeconfig, untilHealthy: false,
      args: ['--sync-rate-limit=0.3', `--publish-status-address=${STATUS_ADDRESS}`, '--log-level=info'],
      env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
    });
    const c = ctl;
    const pid = c.child.pid!;
    const until = async (what: string, timeoutMs: number, check: () => boolean): Promise<boolean> => {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        if (c.child.exitCode !== null) throw new Error(`ingress-rx controller exited while waiting for ${what}: ${c.output().slice(-3000)}`);
        if (check()) return true;
        if (performance.now() > deadline) return false;
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    // Counted from the requests: listing 10k objects from the fake server every poll would take the bench's CPU.
    const statusWritten = () => fake.requests.filter((q) => q.verb === 'update' && q.status === 200 && STATUS_PATH.test(q.path)).length;
    if (!await until('the status writes', 900_000, () => statusWritten() >= ingresses)) throw new Error(`${statusWritten()} of ${ingresses} Ingresses' status written in 900 s`);
    const held = fake.list('networking.k8s.io/v1', 'Ingress')
      .filter((o) => (o.status as { loadBalancer?: { ingress?: Array<{ ip?: string }> } } | undefined)?.loadBalancer?.ingress?.[0]?.ip === STATUS_ADDRESS).length;
    if (held !== ingresses) throw new Error(`${held} of ${ingresses} Ingresses hold ${STATUS_ADDRESS}`);
    const readyS = (performance.now() - t0) / 1000;
    const idleLines = () => c.output().split('\n').filter((l) => l.includes('"idle: garbage collected"'));
    const linesAtStatus = idleLines().length;
    // The idle collection comes 5 s after the last input (here the last status echo), if the RSS
    // grew by 16 MB since the last one; otherwise the reading is taken without it (the table says so).
    const collected = await until('the idle collection', 30_000, () => idleLines().length > linesAtStatus);
    const rssMb = rssMbOf(pid);
    const last = idleLines().pop();
    const idleGcLogMb = last ? (JSON.parse(last) as { rssMb?: number }).rssMb ?? null : null;
    // A reading 10 s on: the leases renewed meanwhile, nothing else happened.
    await until('10 s to pass', 10_000, () => false);
    const laterMb = rssMbOf(pid);
    const mb = async (metric: string) => (await c.metric(metric)) / 2 ** 20;
    const heapMb = { used: await mb('nodejs_heap_size_used_bytes'), total: await mb('nodejs_heap_size_total_bytes'), external: await mb('nodejs_external_memory_bytes') };
    return {
      heapMb,
      rssMb, laterMb, peakMb: statusMbOf(pid, 'VmHWM'), idleGcLogMb: collected ? idleGcLogMb : null, readyS,
      statusWrites: fake.count({ verb: 'update', path: STATUS_PATH }),
      events: fake.count({ verb: 'create', path: /\/events$/ }),
      leases: fake.count({ path: /\/leases/ }),
      cpuS: processCpuSeconds(pid).own,
    };
  } finally {
    await ctl?.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function requireFreshDist(): void {
  const entry = cliArgs();
  if (entry[0]?.endsWith('bin/ingress-rx') !== true) throw new Error('dist/ is older than src/: build it first (tsc -p tsconfig.json && touch dist/.build-stamp)');
  statSync(entry[0]);
}

async function main(): Promise<void> {
  requireFreshDist();
  const rows: Row[] = [];
  const readings: Reading[] = [];
  const size = n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n);
  for (let i = 0; i < runs; i++) {
    const load0 = loadAverage();
    const r = await measure();
    readings.push(r);
    rows.push({
      figure: `controller RSS, ${size} ${asListed ? 'as listed' : 'generated'}, run ${i + 1}`,
      value: `${r.rssMb.toFixed(0)} MB`,
      note: `after the idle collection ${r.idleGcLogMb === null ? '(none came in 30 s: read without it)' : `(logged ${r.idleGcLogMb} MB)`}; 10 s later ${r.laterMb.toFixed(0)} MB; peak ${r.peakMb.toFixed(0)} MB; heap used ${r.heapMb.used.toFixed(0)} of ${r.heapMb.total.toFixed(0)} MB, external ${r.heapMb.external.toFixed(0)} MB; `
        + `all status written ${r.readyS.toFixed(0)} s after start (${r.statusWrites} writes, ${r.events} events, ${r.leases} lease requests); CPU ${r.cpuS.toFixed(1)} s; load ${load0} → ${loadAverage()}`,
    });
  }
  const mid = median(readings.map((r) => r.rssMb));
  rows.push({ figure: `controller RSS, ${size}, median of ${runs}`, value: `${mid.toFixed(0)} MB`, target: n === 10_000 ? '≤ 200 MB' : undefined, status: n === 10_000 ? verdict(mid, 200) : undefined });
  printTable(`ingress-rx controller RSS (dist/, fake API server over HTTPS, ${asListed ? 'objects as listed' : 'generated objects'})`, rows);
  const key = `rss_mb_${size}_controller${asListed ? '' : '_generated'}`;
  emitFigures({ [key]: round(mid, 0) });
}

await main();
