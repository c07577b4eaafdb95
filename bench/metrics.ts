// Request metrics' cost. Data plane: two NGINX from the production template for one Ingress,
// identical but for --enable-metrics (the metrics log), driven by wrk in turns (on off off on …)
// so drift in the machine's load cancels out; requests/s and NGINX CPU per request of each. The
// controller's side runs in this process (the metrics-log reader and the request families, as in
// `ingress-rx`): its CPU during the "on" turns, and, synthetic, the CPU of reading 20k lines a
// second spread over 1 to 1,000 label sets.
//   node --import tsx bench/metrics.ts [--full]
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { backendsPayload } from '../src/model/payload.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, preparePrefix, type NginxRuntime } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/render/fallback-cert.js';
import { metricsLogPath } from '../src/render/metrics-log.js';
import { createRequestMetrics, defaultRequestMetricsConfig } from '../src/observability/request-metrics.js';
import { definedHosts, startNginxMetrics, type NginxMetrics } from '../src/observability/nginx-metrics.js';
import { fetchStubStatus } from '../src/observability/nginx-process-metrics.js';
import { silentLogger } from '../src/log.js';
import { freePorts } from '../test/support/ports.js';
import { waitFor } from '../test/support/wait.js';
import { generateEvents, hostOf } from './gen.js';
import { attempt, cpuMs, emitFigures, isFull, loadAverage, median, printTable, round, verdict, type Row } from './lib.js';
import { averageTurns, ensureWrk, failure, get, measuredTurn, startNginx, stopNginx, upstreamConf, wrk, type WrkResult } from './nginx-tools.js';
import { controlChannel, writeControlToken } from '../src/render/control.js';
import { controlRequest } from '../src/actors/control-client.js';
import { ANNOTATION_REFERENCES } from '../src/model/annotations/index.js';

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
    const upstreamPrefix = join(root, 'upstream');
    preparePrefix(defaultRuntime({ prefix: upstreamPrefix }));
    writeFileSync(join(upstreamPrefix, 'nginx.conf'), upstreamConf(upstreamPrefix, up));
    children.push(startNginx(upstreamPrefix, join(upstreamPrefix, 'nginx.conf')));

    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
    for (const e of generateEvents({ n: 1, plain: true, tlsFraction: 0, endpoints: () => up.map((p) => ({ address: '127.0.0.1', port: p })) })) store.apply(e);
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
    const runtimes = {} as Record<Variant, NginxRuntime>;
    const masters = {} as Record<Variant, ChildProcess>;
    for (const [i, v] of (['on', 'off'] as const).entries()) {
      const prefix = join(root, v);
      const [http, https, status, stream, def] = ports.slice(i * 5, i * 5 + 5);
      const rt = defaultRuntime({
        prefix, listenAddresses: ['127.0.0.1'], httpPort: http!, httpsPort: https!, statusPort: status!, streamPort: stream!,
        defaultServerPort: def!, resolvers: ['127.0.0.1'],
        ...(v === 'on' ? { metricsLog: metricsLogPath(prefix) } : {}),
      });
      preparePrefix(rt);
      writeControlToken(rt);
      rt.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
      runtimes[v] = rt;
      const { config } = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: def!, logger: silentLogger() }).build(store);
      if (rt.metricsLog) {
        metrics = startNginxMetrics({
          registry, constLabels: {}, logPath: rt.metricsLog, requests: defaultRequestMetricsConfig(),
          masterPid: () => masters.on?.pid ?? null, stubStatus: () => fetchStubStatus(controlChannel(rt)),
        });
        metrics.configApplied(config);
      }
      writeFileSync(rt.confPath, renderer.render(config, rt));
      masters[v] = startNginx(prefix, rt.confPath);
      children.push(masters[v]);
      await waitFor(async () => {
        const r = await controlRequest(controlChannel(rt), 'POST', '/configuration/backends', { body: JSON.stringify(backendsPayload(config)), timeoutMs: 10_000 }).catch(() => null);
        return r?.status === 201;
      }, { timeoutMs: 15_000, what: `the ${v} backends POST` }).catch(failure(masters[v], `NGINX (${v})`));
      await waitFor(async () => (await get(http!, hostOf(0), '/')).status === 200, { timeoutMs: 10_000, what: `the ${v} host` });
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
    const ratio = d.on.rps / d.off.rps;
    const cpuCost = d.on.cpuUsPerRequest! / d.off.cpuUsPerRequest! - 1;
    fig.metrics_rps_ratio = round(ratio, 3);
    fig.metrics_cpu_ratio = round(d.off.cpuUsPerRequest! / d.on.cpuUsPerRequest!, 3);
    fig.metrics_controller_cpu_ms_per_s = round(d.controllerCpuMsPerS, 1);
    const how = `wrk -t2 -c32 -d${d.seconds}s, ${d.rounds} turns each (on off off on), 3 endpoints (NGINX return 200); CPU: the median turn`;
    rows.push({ figure: 'requests/s, metrics on', value: d.on.rps.toFixed(0), note: `p50 ${d.on.p50.toFixed(2)} ms, p99 ${d.on.p99.toFixed(2)} ms, errors ${d.on.errors}; NGINX CPU ${d.on.cpuUsPerRequest!.toFixed(1)} µs/request` });
    rows.push({ figure: 'requests/s, metrics off', value: d.off.rps.toFixed(0), note: `p50 ${d.off.p50.toFixed(2)} ms, p99 ${d.off.p99.toFixed(2)} ms, errors ${d.off.errors}; NGINX CPU ${d.off.cpuUsPerRequest!.toFixed(1)} µs/request` });
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
