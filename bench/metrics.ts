// Request metrics' cost. Data plane: two NGINX from the production template for one Ingress,
// identical but for --enable-metrics (the metrics log), driven by wrk in turns (on off off on …)
// so drift in the machine's load cancels out; requests/s and NGINX CPU per request of each. The
// controller's side runs in this process (the metrics-log reader and the request families, as in
// `ingress-rx`): its CPU during the "on" turns, and, synthetic, the CPU of reading 20k lines a
// second spread over 1 to 1,000 label sets.
//   node --import tsx bench/metrics.ts [--full]
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, type NginxRuntime } from '../src/render/runtime.js';
import { metricsLogPath } from '../src/render/metrics-log.js';
import { createRequestMetrics, defaultRequestMetricsConfig } from '../src/observability/request-metrics.js';
import { definedHosts, startNginxMetrics, type NginxMetrics } from '../src/observability/nginx-metrics.js';
import { fetchStubStatus } from '../src/observability/nginx-process-metrics.js';
import { silentLogger } from '../src/log.js';
import { freePorts } from '../test/support/ports.js';
import { hostOf } from './gen.js';
import { compareTurns, oneIngressStore, startUpstream, startVariant, turnNote, turnsNote, variantConfig, variantRuntime } from './ab-nginx.js';
import { attempt, cpuMs, emitFigures, isFull, loadAverage, median, printTable, round, verdict, type Row } from './lib.js';
import { averageTurns, ensureWrk, measuredTurn, stopNginx, wrk, type WrkResult } from './nginx-tools.js';
import { controlChannel } from '../src/render/control.js';

type Variant = 'on' | 'off';

interface DataPlane { on: WrkResult; off: WrkResult; controllerCpuMsPerS: number; counted: number; sent: number; rounds: number; seconds: number }

async function dataPlane(seconds: number, rounds: number): Promise<DataPlane> {
  const root = mkdtempSync(join(tmpdir(), 'irx-bench-metrics-'));
  // A root master's workers (nobody) reopen the logs after a rotation: they must reach the prefix.
  chmodSync(root, 0o755);
  const children: ChildProcess[] = [];
  const registry = new Registry();
  let metrics: NginxMetrics | null = null;
  try {
    const ports = await freePorts(13);
    const up = ports.slice(10);
    startUpstream(root, up, children);

    const store = oneIngressStore(up);
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
    const runtimes = {} as Record<Variant, NginxRuntime>;
    const masters = {} as Record<Variant, ChildProcess>;
    for (const [i, v] of (['on', 'off'] as const).entries()) {
      const rt = await variantRuntime(root, v, ports.slice(i * 5, i * 5 + 5), v === 'on' ? { metricsLog: metricsLogPath(join(root, v)) } : {});
      runtimes[v] = rt;
      const config = variantConfig(store, rt);
      if (rt.metricsLog) {
        metrics = startNginxMetrics({
          registry, constLabels: {}, logPath: rt.metricsLog, requests: defaultRequestMetricsConfig(),
          masterPid: () => masters.on?.pid ?? null, stubStatus: () => fetchStubStatus(controlChannel(rt)),
        });
        metrics.configApplied(config);
      }
      masters[v] = await startVariant(renderer, config, rt, v, children);
    }

    for (const v of ['on', 'off'] as const) await wrk(runtimes[v].httpPort, hostOf(0), 1);
    const results: Record<Variant, WrkResult[]> = { on: [], off: [] };
    let onCpuMs = 0;
    let onMs = 0;
    for (let r = 0; r < rounds; r++) {
      for (const v of (r % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as Variant[]) {
        const cpu0 = cpuMs();
        const t0 = performance.now();
        results[v].push(await measuredTurn(masters[v].pid!, runtimes[v].httpPort, hostOf(0), seconds));
        // NGINX flushes the turn's last lines within a second; the reader takes them.
        if (v === 'on') { await new Promise((res) => setTimeout(res, 1200)); await metrics!.poll(); }
        if (v === 'on') { onCpuMs += cpuMs() - cpu0; onMs += performance.now() - t0; }
      }
    }
    // The median turn's CPU per request: one turn disturbed by other load does not move it.
    const avg = (xs: WrkResult[]): WrkResult => ({ ...averageTurns(xs), cpuUsPerRequest: median(xs.map((x) => x.cpuUsPerRequest!)) });
    const text = await registry.metrics();
    const counted = text.split('\n').filter((l) => l.startsWith('nginx_ingress_controller_requests{')).reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    return { on: avg(results.on), off: avg(results.off), controllerCpuMsPerS: onCpuMs / (onMs / 1000), counted, sent: results.on.reduce((a, x) => a + x.requests, 0), rounds, seconds };
  } finally {
    for (const c of children) await stopNginx(c);
    await (metrics as NginxMetrics | null)?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** One second of metrics-log lines at `rate` requests/s spread over `series` label sets. */
function syntheticLines(series: number, rate: number): string[] {
  return Array.from({ length: rate }, (_, i) => {
    const k = i % series;
    return [`ns-${k % 10}`, `ing-${k}`, `svc-${k}`, '/', '', 'GET', k % 7 === 0 ? '404' : '200', `host-${k}.example.com`,
      '80', '312', '0.012', '0.001', '0.010', '0.011'].join('\t');
  });
}

/** CPU ms the controller spends per second on 20k metrics-log lines a second. */
function controllerCpuAt20k(series: number): number {
  const registry = new Registry();
  const metrics = createRequestMetrics({ ...defaultRequestMetricsConfig(), registry, constLabels: {} });
  const lines = syntheticLines(series, 20_000);
  metrics.setHosts(new Set(Array.from({ length: series }, (_, k) => `host-${k}.example.com`)));
  const seconds = 10;
  const t0 = cpuMs();
  for (let s = 0; s < seconds; s++) {
    // As the reader does: split a chunk of the file into lines, then add each.
    for (const line of lines.join('\n').split('\n')) metrics.addLine(line);
  }
  return (cpuMs() - t0) / seconds;
}

async function main(): Promise<void> {
  ensureWrk();
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { metrics_rps_ratio: null, metrics_cpu_ratio: null, metrics_controller_cpu_ms_per_s: null, metrics_controller_cpu_ms_per_s_20k: null };
  await attempt(rows, 'data plane, metrics on / off', async () => {
    const d = await dataPlane(full ? 10 : 4, full ? 6 : 2);
    const { rpsRatio: ratio, cpuRatio, cpuCost } = compareTurns(d.on, d.off);
    fig.metrics_rps_ratio = round(ratio, 3);
    fig.metrics_cpu_ratio = round(cpuRatio, 3);
    fig.metrics_controller_cpu_ms_per_s = round(d.controllerCpuMsPerS, 1);
    const how = turnsNote(d.seconds, d.rounds);
    rows.push({ figure: 'requests/s, metrics on', value: d.on.rps.toFixed(0), note: turnNote(d.on) });
    rows.push({ figure: 'requests/s, metrics off', value: d.off.rps.toFixed(0), note: turnNote(d.off) });
    rows.push({ figure: 'requests/s cost of metrics', value: `${((1 - ratio) * 100).toFixed(1)} %`, target: '≤ 5 %', status: verdict((1 - ratio) * 100, 5), note: how });
    rows.push({ figure: 'NGINX CPU per request cost of metrics', value: `${(cpuCost * 100).toFixed(1)} %`, target: '≤ 5 %', status: verdict(cpuCost * 100, 5), note: 'robust to other load on the machine' });
    rows.push({ figure: 'controller CPU during the "on" turns', value: `${d.controllerCpuMsPerS.toFixed(1)} ms/s`, note: `at ${d.on.rps.toFixed(0)} requests/s; ${d.counted} requests counted, ${d.sent} sent in the measured turns (plus warm-up and probes)` });
  });
  for (const series of [1, 100, 1000]) {
    await attempt(rows, `controller CPU at 20k requests/s, ${series} series`, () => {
      const ms = controllerCpuAt20k(series);
      if (series === 100) fig.metrics_controller_cpu_ms_per_s_20k = round(ms, 1);
      rows.push({ figure: `controller CPU at 20k requests/s, ${series} label sets`, value: `${ms.toFixed(1)} ms/s`, note: `${(ms / 10).toFixed(1)} % of a core; synthetic lines, in process` });
    });
  }
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: 'other load shares the 2 cores with wrk and NGINX' });
  printTable('request metrics', rows);
  emitFigures(fig);
}

await main();
