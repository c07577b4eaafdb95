// OpenTelemetry's cost on the data plane: two NGINX from the production template for one Ingress,
// identical but for enable-opentelemetry (by default every request sampled and exported: the
// worst case; `--sampler AlwaysOff` prices the trace context alone, what an unsampled request pays),
// driven by wrk in turns (on off off on …) so drift in the machine's load cancels out;
// requests/s and NGINX CPU per request of each. The collector is a `return 200` NGINX (spans are
// POSTed to it and dropped); its CPU is not NGINX's. The spans it was sent are counted from the
// tracing NGINX's export requests.
//   node --import tsx bench/opentelemetry.ts [--full] [--sampler AlwaysOff]
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfigMap } from '../src/model/core/config/parse.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, type NginxRuntime } from '../src/render/runtime.js';
import { silentLogger } from '../src/log.js';
import { freePorts } from '../test/support/ports.js';
import { hostOf } from './gen.js';
import { compareTurns, oneIngressStore, startUpstream, startVariant, turnNote, turnsNote, variantConfig, variantRuntime } from './ab-nginx.js';
import { arg, attempt, emitFigures, isFull, loadAverage, median, printTable, round, type Row } from './lib.js';
import { averageTurns, ensureWrk, measuredTurn, stopNginx, wrk, type WrkResult } from './nginx-tools.js';

type Variant = 'on' | 'off';

interface Comparison { on: WrkResult; off: WrkResult; exports: number; rounds: number; seconds: number }

async function compare(seconds: number, rounds: number): Promise<Comparison> {
  const root = mkdtempSync(join(tmpdir(), 'irx-bench-otel-'));
  const children: ChildProcess[] = [];
  try {
    const ports = await freePorts(14);
    const up = ports.slice(10, 13);
    const collector = ports[13]!;
    // The upstream NGINX also answers the collector's port, logging each export request.
    const upstreamPrefix = startUpstream(root, up, children,
      `  log_format exports '$request_length';\n  server { listen 127.0.0.1:${collector}; access_log ${join(root, 'upstream', 'exports.log')} exports; location / { return 200 "{}"; } }`);

    const store = oneIngressStore(up);
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
    const runtimes = {} as Record<Variant, NginxRuntime>;
    const masters = {} as Record<Variant, ChildProcess>;
    for (const [i, v] of (['on', 'off'] as const).entries()) {
      const rt = await variantRuntime(root, v, ports.slice(i * 5, i * 5 + 5));
      runtimes[v] = rt;
      const built = variantConfig(store, rt);
      const settings = v === 'on'
        ? parseConfigMap({ 'enable-opentelemetry': 'true', 'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(collector), 'otel-sampler': arg('--sampler') ?? 'AlwaysOn' }, { object: 'ConfigMap bench/opentelemetry' }).settings
        : built.settings;
      masters[v] = await startVariant(renderer, { ...built, settings }, rt, v, children);
    }

    for (const v of ['on', 'off'] as const) await wrk(runtimes[v].httpPort, hostOf(0), 1);
    const results: Record<Variant, WrkResult[]> = { on: [], off: [] };
    for (let r = 0; r < rounds; r++) {
      for (const v of (r % 2 === 0 ? ['on', 'off'] : ['off', 'on']) as Variant[]) {
        results[v].push(await measuredTurn(masters[v].pid!, runtimes[v].httpPort, hostOf(0), seconds));
      }
    }
    const avg = (xs: WrkResult[]): WrkResult => ({ ...averageTurns(xs), cpuUsPerRequest: median(xs.map((x) => x.cpuUsPerRequest!)) });
    let exports = 0;
    try { exports = readFileSync(join(upstreamPrefix, 'exports.log'), 'utf8').split('\n').filter(Boolean).length; } catch { /* none */ }
    return { on: avg(results.on), off: avg(results.off), exports, rounds, seconds };
  } finally {
    for (const c of children) await stopNginx(c);
    rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  ensureWrk();
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { otel_rps_ratio: null, otel_cpu_ratio: null };
  const sampler = arg('--sampler') ?? 'AlwaysOn';
  const what = sampler === 'AlwaysOn' ? 'every request traced and exported' : `tracing on, otel-sampler ${sampler}`;
  await attempt(rows, 'data plane, tracing on / off', async () => {
    const c = await compare(full ? 10 : 4, full ? 6 : 2);
    const { rpsRatio: ratio, cpuRatio, cpuCost } = compareTurns(c.on, c.off);
    fig.otel_rps_ratio = round(ratio, 3);
    fig.otel_cpu_ratio = round(cpuRatio, 3);
    const how = turnsNote(c.seconds, c.rounds);
    rows.push({ figure: `requests/s, ${what}`, value: c.on.rps.toFixed(0), note: `${turnNote(c.on)}; ${c.exports} export requests` });
    rows.push({ figure: 'requests/s, tracing off', value: c.off.rps.toFixed(0), note: turnNote(c.off) });
    rows.push({ figure: 'requests/s cost of tracing', value: `${((1 - ratio) * 100).toFixed(1)} %`, note: how });
    rows.push({ figure: 'NGINX CPU per request cost of tracing', value: `${(cpuCost * 100).toFixed(1)} %`, note: `${(c.on.cpuUsPerRequest! - c.off.cpuUsPerRequest!).toFixed(1)} µs/request; robust to other load on the machine` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: 'other load shares the 2 cores with wrk and NGINX' });
  printTable('opentelemetry', rows);
  emitFigures(fig);
}

await main();
