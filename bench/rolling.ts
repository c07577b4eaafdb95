// A rolling update under load (local mode, real NGINX, the default sync rate limit 0.3/s): a
// Service of 10 pods, each its own small NGINX (`return 200`), replaced one by one as a
// Deployment does — the new pod ready in the EndpointSlice, the old one marked terminating while
// it gets SIGQUIT (a graceful stop: it refuses new connections, finishes what it has, exits),
// then dropped from the slice — while wrk keeps 32 connections busy. `rolling_update_failed_requests`
// counts wrk's non-2xx answers and socket errors (goal 0).
//   node --import tsx bench/rolling.ts [--step-ms 1000]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from '../test/support/ports.js';
import { ensureWrk, wrk } from './nginx-tools.js';
import { startLocalMode } from './local-mode.js';
import { arg, attempt, emitFigures, loadAverage, printTable, type Row } from './lib.js';

const HOST = 'rolling.bench.example';
const PODS = 10;

interface Pod { address: string; name: string; child: ChildProcess; ready: boolean; terminating: boolean }

function startPod(dir: string, address: string, port: number, name: string): Promise<Pod> {
  const conf = join(dir, `${name}.conf`);
  writeFileSync(conf, `daemon off;
master_process on;
worker_processes 1;
pid ${dir}/${name}.pid;
error_log ${dir}/${name}.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp; proxy_temp_path ${dir}/tmp; fastcgi_temp_path ${dir}/tmp; uwsgi_temp_path ${dir}/tmp; scgi_temp_path ${dir}/tmp;
  keepalive_requests 1000000;
  server { listen ${address}:${port}; location / { add_header x-pod ${name}; return 200 "ok\\n"; } }
}
`);
  const child = spawn('/usr/sbin/nginx', ['-p', `${dir}/`, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d; });
  const listening = () => new Promise<boolean>((res) => {
    const s = connect({ host: address, port }, () => { s.destroy(); res(true); });
    s.on('error', () => res(false));
  });
  return (async () => {
    const t0 = performance.now();
    while (!(await listening())) {
      if (child.exitCode !== null) throw new Error(`pod ${name} did not start: ${err.trim()}`);
      if (performance.now() - t0 > 10_000) throw new Error(`pod ${name} did not listen`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { address, name, child, ready: true, terminating: false };
  })();
}

/** SIGQUIT: NGINX closes its listeners, finishes the requests it has, closes idle connections, exits. */
function stopPod(pod: Pod): Promise<void> {
  if (pod.child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => pod.child.once('exit', () => r()));
  pod.child.kill('SIGQUIT');
  return exited;
}

function manifests(pods: Pod[], port: number): object[] {
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
    {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
      metadata: { name: 'web-abcde', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
      ports: [{ name: 'http', port, protocol: 'TCP' }],
      endpoints: pods.map((p) => ({ addresses: [p.address], conditions: { ready: p.ready, serving: p.ready, terminating: p.terminating } })),
    },
    {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'app', namespace: 'default' },
      spec: { ingressClassName: 'nginx', rules: [{ host: HOST, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
    },
  ];
}

async function run(stepMs: number): Promise<{ requests: number; failed: number; refused: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-rolling-pods-'));
  const all: Pod[] = [];
  let local: Awaited<ReturnType<typeof startLocalMode>> | null = null;
  try {
    const port = await freePort('127.0.0.20');
    for (let i = 0; i < PODS; i++) all.push(await startPod(dir, `127.0.0.${20 + i}`, port, `old-${i}`));
    const pods = [...all];
    local = await startLocalMode({ prefix: 'irx-bench-rolling-', fill: () => undefined });
    local.write('app.json', manifests(pods, port));
    await local.until(HOST, (s) => s === 200, 30_000);
    const seconds = Math.ceil((PODS * stepMs) / 1000) + 6;
    const load = wrk(local.ports.http, HOST, seconds);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < PODS; i++) {
      await new Promise((r) => setTimeout(r, Math.max(0, t0 + 1000 + i * stepMs - performance.now())));
      const fresh = await startPod(dir, `127.0.0.${30 + i}`, port, `new-${i}`);
      all.push(fresh);
      pods.push(fresh);
      local.write('app.json', manifests(pods, port));
      const leaving = pods[0]!;
      leaving.ready = false;
      leaving.terminating = true;
      local.write('app.json', manifests(pods, port));
      await stopPod(leaving);
      pods.shift();
      local.write('app.json', manifests(pods, port));
    }
    const r = await load;
    const log = readFileSync(join(local.workdir, 'logs', 'error.log'), 'utf8');
    const refused = (log.match(/connect\(\) failed \(111: Connection refused\) while connecting to upstream/g) ?? []).length;
    return { requests: r.requests, failed: r.errors, refused, seconds };
  } finally {
    await local?.stop();
    await Promise.all(all.map(stopPod));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const stepMs = Number(arg('--step-ms') ?? 1000);
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { rolling_update_failed_requests: null };
  ensureWrk();
  await attempt(rows, 'rolling update', async () => {
    const r = await run(stepMs);
    fig.rolling_update_failed_requests = r.failed;
    rows.push({
      figure: `rolling update of ${PODS} pods, one every ${stepMs} ms, default sync rate limit: failed requests`, value: String(r.failed), target: '0',
      status: r.failed === 0 ? 'met' : 'MISSED',
      note: `of ${r.requests} (wrk -t2 -c32, ${r.seconds} s); NGINX met ${r.refused} refused connections (pods that had stopped before the sync removed them)`,
    });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('rolling update', rows);
  emitFigures(fig);
}

await main();
