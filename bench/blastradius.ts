// Blast radius at 1k Ingresses (local mode, real NGINX): one bad Ingress that NGINX refuses
// arrives together with a good change (a new Ingress); the clock stops when the good change is
// served. Compared with the same good change alone. Two bad Ingresses: one whose error line
// names its location (an unknown directive), one whose error names no line (found while merging,
// so narrowed by probes). Goal: one sync plus one reload (here: the refused nginx -t, the
// narrowing, the accepted one and the reload).
//   node --import tsx bench/blastradius.ts [--n N]
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, createWriteStream, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../test/support/ports.js';
import { sendRequest } from '../test/support/local-harness.js';
import { REPO_ROOT, hostOf, namespaceOf, serviceOf, writeManifests } from './gen.js';
import { arg, attempt, emitFigures, loadAverage, median, printTable, round, type Row } from './lib.js';

const A = 'nginx.ingress.kubernetes.io';

function ingress(name: string, host: string, service: string, ns: string, annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: ns, annotations },
    spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }] } }] },
  };
}

function write(dir: string, file: string, items: object[]): void {
  const p = join(dir, file);
  writeFileSync(`${p}.tmp`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  renameSync(`${p}.tmp`, p);
}

async function until(port: number, host: string, ok: (status: number) => boolean, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const r = await sendRequest(port, host, '/').catch(() => null);
    if (r && ok(r.status)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`${host} not served after ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function run(n: number): Promise<Record<string, number>> {
  const echo = createServer((_req, res) => { res.writeHead(200); res.end('ok'); });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const port = (echo.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-blast-'));
  chmodSync(dir, 0o711); // as root, NGINX's workers (nobody) must enter the workdir's parent
  const manifests = join(dir, 'manifests');
  writeManifests(manifests, { n, endpoints: () => [{ address: '127.0.0.1', port }] }, 10);
  write(manifests, 'cm.json', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } }]);
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  let child: ChildProcess | null = null;
  const ns = namespaceOf(0);
  const svc = serviceOf(0);
  try {
    child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test', 'support', 'cli-entry.ts'), 'local',
      '--manifests', manifests, '--workdir', join(dir, 'work'), '--configmap', 'ingress/nginx', '--sync-rate-limit', '20',
      '--http-port', String(http), '--https-port', String(https), '--status-port', String(status), '--stream-port', String(stream),
      '--healthz-port', String(healthz), '--default-server-port', String(def), '--log-level', process.env.BENCH_LOG ? 'info' : 'warn'], { cwd: REPO_ROOT, stdio: ['ignore', process.env.BENCH_LOG ? 'pipe' : 'ignore', 'pipe'] });
    if (process.env.BENCH_LOG) child.stdout!.pipe(createWriteStream(process.env.BENCH_LOG));
    child.stderr!.resume();
    await until(http!, hostOf(n - 2), (s) => s === 200, 120_000);
    const out: Record<string, number[]> = { alone: [], located: [], merge: [] };
    for (let round = 0; round < 3; round++) {
      for (const kind of ['alone', 'located', 'merge'] as const) {
        const good = `good-${kind}-${round}.bench.example`;
        const items: object[] = [ingress(`good-${kind}-${round}`, good, svc, ns)];
        if (kind === 'located') items.push(ingress(`bad-${kind}-${round}`, `bad-${kind}-${round}.bench.example`, svc, ns, { [`${A}/configuration-snippet`]: 'no_such_directive on;' }));
        if (kind === 'merge') items.push(ingress(`bad-${kind}-${round}`, `bad-${kind}-${round}.bench.example`, svc, ns, { [`${A}/configuration-snippet`]: 'proxy_buffers 1 4k;' }));
        // Let the token bucket refill, so that the change is synced at once.
        await new Promise((res) => setTimeout(res, 300));
        const t0 = performance.now();
        write(manifests, `change-${kind}-${round}.json`, items);
        await until(http!, good, (s) => s === 200, 60_000);
        out[kind]!.push(performance.now() - t0);
      }
    }
    return { alone: median(out.alone!), located: median(out.located!), merge: median(out.merge!) };
  } finally {
    if (child && child.exitCode === null) {
      const done = new Promise((res) => child!.once('exit', res));
      child.kill('SIGTERM');
      await done;
    }
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(arg('--n') ?? 1000);
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { blast_radius_alone_ms_1k: null, blast_radius_located_ms_1k: null, blast_radius_merge_ms_1k: null };
  await attempt(rows, `blast radius ${n}`, async () => {
    const r = await run(n);
    if (n === 1000) {
      fig.blast_radius_alone_ms_1k = round(r.alone, 0);
      fig.blast_radius_located_ms_1k = round(r.located, 0);
      fig.blast_radius_merge_ms_1k = round(r.merge, 0);
    }
    rows.push({ figure: `good change alone served, ${n} Ingresses`, value: `${r.alone.toFixed(0)} ms`, note: 'one sync, one nginx -t, one reload (median of 3)' });
    rows.push({ figure: 'with a bad Ingress whose error names its line', value: `${r.located.toFixed(0)} ms`, note: `× ${(r.located / r.alone).toFixed(2)} of alone: a refused nginx -t, then the accepted one and the reload, in the same sync` });
    rows.push({ figure: 'with a bad Ingress whose error names no line', value: `${r.merge.toFixed(0)} ms`, note: `× ${(r.merge / r.alone).toFixed(2)} of alone: probes of the changed Ingresses in small configurations narrow it` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('blast radius', rows);
  emitFigures(fig);
}

await main();
