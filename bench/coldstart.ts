// Cold start to ready in local mode: N generated Ingresses already in the manifests directory
// (their endpoints all point at one local echo server), `ingress-rx local` spawned, and the
// clock stopped when a request for one of the last Ingresses' hosts is served by the endpoint.
// Quick mode 1k Ingresses, full mode 10k. Runs from source under tsx (startup included).
//   node --import tsx bench/coldstart.ts [--full] [--n N]
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../test/support/ports.js';
import { sendRequest } from '../test/support/local-harness.js';
import { REPO_ROOT, hostOf, writeManifests } from './gen.js';
import { arg, attempt, childPids, emitFigures, isFull, loadAverage, nginxCpuSeconds, printTable, processCpuSeconds, round, verdict, type Row } from './lib.js';

/** SIGKILL skips the controller's own cleanup: take its NGINX (own process group) down with it. */
function killHard(child: ChildProcess): void {
  const masters = childPids(child.pid!);
  child.kill('SIGKILL');
  for (const m of masters) try { process.kill(-m, 'SIGKILL'); } catch { /* not a group leader, or gone */ }
}

async function coldStart(n: number, timeoutMs: number): Promise<{ s: number; healthyS: number | null; cpuS: number; reapedS: number; nginxS: number }> {
  const echo = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ready'); });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const port = (echo.address() as AddressInfo).port;
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-cold-'));
  const manifests = join(dir, 'manifests');
  const workdir = join(dir, 'work');
  chmodSync(dir, 0o711); // as root, NGINX's workers (nobody) must enter the workdir's parent
  writeManifests(manifests, { n, endpoints: () => [{ address: '127.0.0.1', port }] }, 10);
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  let child: ChildProcess | null = null;
  try {
    const t0 = performance.now();
    child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test', 'support', 'cli-entry.ts'), 'local',
      '--manifests', manifests, '--workdir', workdir, '--http-port', String(http), '--https-port', String(https),
      '--status-port', String(status), '--stream-port', String(stream), '--healthz-port', String(healthz),
      '--default-server-port', String(def), '--log-level', 'warn'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => { err += d; });
    let exited = false;
    child.on('exit', () => { exited = true; });
    // A host from the end of the list, without the allowlist or canary annotations.
    const probe = hostOf(n - 2);
    let healthyS: number | null = null;
    const health = (async () => {
      while (healthyS === null && !exited && performance.now() - t0 < timeoutMs) {
        const h = await sendRequest(healthz!, '127.0.0.1', '/healthz').catch(() => null);
        if (h?.status === 200) healthyS = (performance.now() - t0) / 1000;
        else await new Promise((res) => setTimeout(res, 50));
      }
    })();
    for (;;) {
      if (exited) throw new Error(`ingress-rx local exited: ${err.slice(-300)}`);
      const r = await sendRequest(http!, probe, '/').catch(() => null);
      if (r?.status === 200 && r.body === 'ready') break;
      if (performance.now() - t0 > timeoutMs) throw new Error(`not ready after ${timeoutMs / 1000} s`);
      await new Promise((res) => setTimeout(res, 50));
    }
    const s = (performance.now() - t0) / 1000;
    const cpu = processCpuSeconds(child.pid!);
    const nginxS = nginxCpuSeconds(child.pid!);
    await health;
    const done = new Promise((res) => child!.once('exit', res));
    child.kill('SIGTERM');
    const killer = setTimeout(() => killHard(child!), 15_000);
    await done;
    clearTimeout(killer);
    return { s, healthyS, cpuS: cpu.own, reapedS: cpu.reaped, nginxS };
  } finally {
    if (child && child.exitCode === null && child.signalCode === null) killHard(child);
    echo.closeAllConnections();
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const full = isFull();
  const n = Number(arg('--n') ?? (full ? 10_000 : 1000));
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { cold_start_1k_s: null, cold_start_10k_s: null };
  await attempt(rows, `cold start ${n}`, async () => {
    const r = await coldStart(n, full ? 300_000 : 120_000);
    const key = n === 10_000 ? 'cold_start_10k_s' : n === 1000 ? 'cold_start_1k_s' : null;
    if (key) fig[key] = round(r.s, 1);
    rows.push({
      figure: `cold start to ready, ${n} Ingresses (local mode)`, value: `${r.s.toFixed(1)} s`,
      target: n === 10_000 ? '≤ 30 s' : '', status: n === 10_000 ? verdict(r.s, 30) : '',
      note: `healthz 200 after ${r.healthyS?.toFixed(1) ?? '?'} s; CPU till ready: controller ${r.cpuS.toFixed(1)} s, NGINX master+workers ${r.nginxS.toFixed(1)} s, reaped children (nginx -t, openssl) ${r.reapedS.toFixed(1)} s; from source under tsx, NGINX start and nginx -t included`,
    });
  });
  if (!full) rows.push({ figure: 'cold start to ready, 10k Ingresses', value: 'skipped', status: 'n/a', note: 'full mode only' });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('cold start', rows);
  emitFigures(fig);
}

await main();
