// Data plane: requests/s and p99 through our Lua balancer vs a static `upstream` block, in one
// NGINX; and a dynamic host (no server block: lua/router.lua in the default server) vs the same
// backend in a server block of its own (`dataplane_dynamic_ratio`; again with the metrics log on,
// `dataplane_dynamic_metrics_ratio`). The production template is rendered for one Ingress; a copy of its server block under
// another host name, with the Lua phases removed and `proxy_pass` to a static upstream of the
// same endpoints, is added next to it. The endpoints are a tiny `return 200` NGINX, and `wrk`
// drives both hosts on loopback in turns (A B B A) so drift in the machine's load cancels out.
//   node --import tsx bench/dataplane.ts [--full] [--ablate]   (--ablate, on in full mode: also the balancer alone)
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { backendsPayload } from '../src/model/core/payload.js';
import { routesPayload } from '../src/model/core/routes-payload.js';
import type { Ingress } from '../src/store/kube-types.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, preparePrefix } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/render/fallback-cert.js';
import { controlChannel, writeControlToken } from '../src/render/control.js';
import { controlRequest } from '../src/actors/control-client.js';
import { silentLogger } from '../src/log.js';
import { freePorts } from '../test/support/ports.js';
import { waitFor } from '../test/support/wait.js';
import { generateEvents, hostOf } from './gen.js';
import { attempt, emitFigures, isFull, loadAverage, printTable, round, verdict, type Row } from './lib.js';
import { averageTurns, ensureWrk, failure, get, measuredTurn, startNginx, stopNginx, upstreamConf, wrk, type WrkResult } from './nginx-tools.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';

const STATIC_HOST = 'static.bench.example';

type Variant = 'lua' | 'static' | 'balancer-only' | 'dynamic';
const VARIANT_HOST: Record<Variant, string> = {
  lua: hostOf(0), static: STATIC_HOST, 'balancer-only': 'balancer-only.bench.example', dynamic: 'dynamic.bench.example',
};

/**
 * A copy of `host`'s server block under another name: `static` drops every Lua phase and
 * proxies to `bench_static`; `balancer-only` keeps the Lua balancer but only the rewrite phase
 * that picks the backend (`balancer.rewrite()`), without lua_ingress, header filter or log phase.
 */
function twin(conf: string, host: string, variant: 'static' | 'balancer-only'): string {
  const start = conf.indexOf(`    ## start server ${host}\n`);
  const endMarker = `    ## end server ${host}\n`;
  const end = conf.indexOf(endMarker, start);
  if (start < 0 || end < 0) throw new Error(`server ${host} not found in the rendered nginx.conf`);
  const lines = conf.slice(start, end + endMarker.length).split('\n');
  const out: string[] = [];
  let skipUntil: string | null = null;
  for (const line of lines) {
    if (skipUntil !== null) {
      if (line === skipUntil) skipUntil = null;
      continue;
    }
    const m = /^(\s*)(rewrite|header_filter|log|access)_by_lua_block \{$/.exec(line);
    if (m) {
      skipUntil = `${m[1]}}`;
      if (variant === 'balancer-only' && m[2] === 'rewrite') out.push(`${m[1]}rewrite_by_lua_block { balancer.rewrite() }`);
      continue;
    }
    const renamed = line.replaceAll(host, VARIANT_HOST[variant]);
    out.push(variant === 'static' ? renamed.replace('proxy_pass http://upstream_balancer;', 'proxy_pass http://bench_static;') : renamed);
  }
  return out.join('\n');
}

interface Comparison { lua: WrkResult; static: WrkResult | null; balancerOnly: WrkResult | null; dynamic: WrkResult | null; ratio: number | null; rounds: number; seconds: number }

async function compare(seconds: number, rounds: number, variants: Variant[], metricsLog = false): Promise<Comparison> {
  const prefix = mkdtempSync(join(tmpdir(), 'irx-bench-dp-'));
  const upstreamPrefix = join(prefix, 'upstream');
  const children: ChildProcess[] = [];
  try {
    const [http, https, status, stream, def, ...up] = await freePorts(8);
    preparePrefix(defaultRuntime({ prefix: upstreamPrefix }));
    writeFileSync(join(upstreamPrefix, 'nginx.conf'), upstreamConf(upstreamPrefix, up));
    children.push(startNginx(upstreamPrefix, join(upstreamPrefix, 'nginx.conf')));

    const runtime = defaultRuntime({
      prefix, listenAddresses: ['127.0.0.1'], httpPort: http!, httpsPort: https!, statusPort: status!, streamPort: stream!,
      defaultServerPort: def!, resolvers: ['127.0.0.1'],
      // --enable-metrics (the controller's default): every request also writes the metrics log line.
      ...(metricsLog ? { metricsLog: join(prefix, 'logs', 'metrics.log') } : {}),
      // The upstream NGINX runs on loopback, as local mode allows.
      upstreamAddresses: { allow: ['loopback'], ownPorts: [http!, https!, def!] },
    });
    preparePrefix(runtime);
    writeControlToken(runtime);
    runtime.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
    for (const e of generateEvents({ n: 1, plain: true, tlsFraction: 0, endpoints: () => up.map((p) => ({ address: '127.0.0.1', port: p })) })) {
      if (e.kind !== 'Ingress' || !e.object) { store.apply(e); continue; }
      // hostOf(0) keeps a server block (a body-size limit needs a directive; a GET never meets it);
      // the same Ingress without it, for another host, is dynamic.
      const ing = e.object as Ingress;
      const staticIng = { ...ing, metadata: { ...ing.metadata, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } } };
      store.apply({ ...e, object: staticIng });
      const rules = (ing.spec.rules ?? []).map((r) => ({ ...r, host: VARIANT_HOST.dynamic }));
      const dynamicIng = { ...ing, metadata: { ...ing.metadata, name: 'dynamic', uid: 'dynamic' }, spec: { ...ing.spec, rules } };
      store.apply({ ...e, key: `${ing.metadata.namespace}/dynamic`, object: dynamicIng });
    }
    const { config } = createModelBuilder({
      dynamicRoutes: true,
      annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: def!, logger: silentLogger(),
      addressPolicy: { allow: new Set(['loopback']), ownPorts: new Set([http!, https!, def!]) },
    }).build(store);
    let conf = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, runtime);
    const keepaliveLines = /upstream upstream_balancer \{\n(?:.*\n)*?((?:\s+keepalive.*\n)+)/.exec(conf)?.[1] ?? 'keepalive 320;';
    const keepalive = keepaliveLines.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => `        ${l}\n`).join('');
    const staticUpstream = `    upstream bench_static {\n${up.map((p) => `        server 127.0.0.1:${p};\n`).join('')}${keepalive}    }\n`;
    const twins = `${staticUpstream}${twin(conf, hostOf(0), 'static')}\n${twin(conf, hostOf(0), 'balancer-only')}\n`;
    conf = conf.replace(`    ## start server ${hostOf(0)}\n`, `${twins}    ## start server ${hostOf(0)}\n`);
    writeFileSync(runtime.confPath, conf);
    const main = startNginx(prefix, runtime.confPath);
    children.push(main);

    await waitFor(async () => (await get(up[0]!, 'x', '/')).status === 200, { timeoutMs: 10_000, what: 'upstream NGINX' }).catch(failure(children[0]!, 'upstream NGINX'));
    await waitFor(async () => {
      const r = await controlRequest(controlChannel(runtime), 'POST', '/configuration/backends', { body: JSON.stringify(backendsPayload(config)), timeoutMs: 10_000 }).catch(() => null);
      return r?.status === 201;
    }, { timeoutMs: 15_000, what: 'the backends POST' }).catch(failure(main, 'NGINX'));
    const routes = await controlRequest(controlChannel(runtime), 'POST', '/configuration/routes', { body: JSON.stringify(routesPayload(config)), timeoutMs: 10_000 });
    if (routes.status !== 201) throw new Error(`POST /configuration/routes: ${routes.status} ${routes.body}`);
    await waitFor(async () => (await get(http!, hostOf(0), '/')).status === 200, { timeoutMs: 10_000, what: 'the Lua-balanced host' });
    for (const v of variants) {
      await waitFor(async () => (await get(http!, VARIANT_HOST[v], '/')).status === 200, { timeoutMs: 10_000, what: `the ${v} host` });
    }

    // Warm every path (worker Lua caches, keepalive pools), then A B B A … turns.
    for (const v of variants) await wrk(http!, VARIANT_HOST[v], 1);
    const results = new Map<Variant, WrkResult[]>(variants.map((v) => [v, []]));
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) results.get(v)!.push(await measuredTurn(main.pid!, http!, VARIANT_HOST[v], seconds));
    }
    const avg = averageTurns;
    const l = avg(results.get('lua')!);
    const s = variants.includes('static') ? avg(results.get('static')!) : null;
    const b = variants.includes('balancer-only') ? avg(results.get('balancer-only')!) : null;
    const d = variants.includes('dynamic') ? avg(results.get('dynamic')!) : null;
    return { lua: l, static: s, balancerOnly: b, dynamic: d, ratio: s ? l.rps / s.rps : null, rounds, seconds };
  } finally {
    for (const c of children) await stopNginx(c);
    rmSync(prefix, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  ensureWrk();
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { dataplane_rps_ratio: null, dataplane_p99_ms: null, dataplane_static_p99_ms: null, dataplane_rps: null, dataplane_static_rps: null, dataplane_balancer_only_ratio: null, dataplane_cpu_ratio: null, dataplane_dynamic_ratio: null, dataplane_dynamic_cpu_ratio: null, dataplane_dynamic_metrics_ratio: null, dataplane_dynamic_metrics_cpu_ratio: null };
  await attempt(rows, 'data plane', async () => {
    const ablate = full || process.argv.includes('--ablate');
    const c = await compare(full ? 15 : 5, 2, ablate ? ['lua', 'static', 'balancer-only', 'dynamic'] : ['lua', 'static', 'dynamic']);
    const stat = c.static!;
    const ratioToStatic = c.ratio!;
    fig.dataplane_rps_ratio = round(ratioToStatic, 3);
    fig.dataplane_rps_ratio = round(ratioToStatic, 3);
    fig.dataplane_p99_ms = round(c.lua.p99, 2);
    fig.dataplane_static_p99_ms = round(stat.p99, 2);
    fig.dataplane_rps = round(c.lua.rps, 0);
    fig.dataplane_static_rps = round(stat.rps, 0);
    const how = `wrk -t2 -c32 -d${c.seconds}s, ${c.rounds} turns each (A B B A), one NGINX, 3 endpoints (NGINX return 200)`;
    const cpu = (w: WrkResult) => `NGINX CPU ${w.cpuUsPerRequest!.toFixed(1)} µs/request`;
    rows.push({ figure: 'requests/s through the Lua balancer', value: c.lua.rps.toFixed(0), note: `p50 ${c.lua.p50.toFixed(2)} ms, p99 ${c.lua.p99.toFixed(2)} ms, errors ${c.lua.errors}; ${cpu(c.lua)}` });
    rows.push({ figure: 'requests/s through a static upstream', value: stat.rps.toFixed(0), note: `p50 ${stat.p50.toFixed(2)} ms, p99 ${stat.p99.toFixed(2)} ms, errors ${stat.errors}; ${cpu(stat)}` });
    const cpuRatio = stat.cpuUsPerRequest! / c.lua.cpuUsPerRequest!;
    fig.dataplane_cpu_ratio = round(cpuRatio, 3);
    rows.push({ figure: 'static / Lua NGINX CPU per request', value: cpuRatio.toFixed(3), note: 'the requests/s ratio NGINX-bound throughput would show; robust to other load' });
    rows.push({ figure: 'Lua / static requests/s', value: ratioToStatic.toFixed(3), target: '≥ 0.9', status: verdict(ratioToStatic, 0.9, true), note: how });
    if (c.balancerOnly) {
      fig.dataplane_balancer_only_ratio = round(c.balancerOnly.rps / stat.rps, 3);
      rows.push({ figure: 'requests/s, Lua balancer + balancer.rewrite() only', value: c.balancerOnly.rps.toFixed(0),
        note: `ratio to static ${(c.balancerOnly.rps / stat.rps).toFixed(3)}; ${cpu(c.balancerOnly)} (static / this ${(stat.cpuUsPerRequest! / c.balancerOnly.cpuUsPerRequest!).toFixed(3)})` });
    }
    if (c.dynamic) {
      const ratio = c.dynamic.rps / c.lua.rps;
      fig.dataplane_dynamic_ratio = round(ratio, 3);
      fig.dataplane_dynamic_cpu_ratio = round(c.lua.cpuUsPerRequest! / c.dynamic.cpuUsPerRequest!, 3);
      rows.push({ figure: 'requests/s, a dynamic host (Lua router)', value: c.dynamic.rps.toFixed(0), note: `p50 ${c.dynamic.p50.toFixed(2)} ms, p99 ${c.dynamic.p99.toFixed(2)} ms, errors ${c.dynamic.errors}; ${cpu(c.dynamic)}` });
      rows.push({ figure: 'dynamic host / its server block, requests/s', value: ratio.toFixed(3), target: '≥ 0.95', status: verdict(ratio, 0.95, true),
        note: `NGINX CPU per request, server block / dynamic: ${fig.dataplane_dynamic_cpu_ratio}` });
    }
    rows.push({ figure: 'p99 latency through the Lua balancer', value: `${c.lua.p99.toFixed(2)} ms`, note: `static: ${stat.p99.toFixed(2)} ms (worst turn)` });
  });
  // The same dynamic / server block comparison with the metrics log on (--enable-metrics, the
  // controller's default): the router then also sets the route's metrics labels.
  await attempt(rows, 'data plane with the metrics log', async () => {
    const c = await compare(full ? 15 : 5, full ? 3 : 2, ['lua', 'dynamic'], true);
    const ratio = c.dynamic!.rps / c.lua.rps;
    fig.dataplane_dynamic_metrics_ratio = round(ratio, 3);
    fig.dataplane_dynamic_metrics_cpu_ratio = round(c.lua.cpuUsPerRequest! / c.dynamic!.cpuUsPerRequest!, 3);
    rows.push({ figure: 'with the metrics log: dynamic host / its server block, requests/s', value: ratio.toFixed(3), target: '≥ 0.95', status: verdict(ratio, 0.95, true),
      note: `NGINX CPU per request ${c.lua.cpuUsPerRequest!.toFixed(1)} / ${c.dynamic!.cpuUsPerRequest!.toFixed(1)} µs, server block / dynamic: ${fig.dataplane_dynamic_metrics_cpu_ratio}` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: 'other load shares the 2 cores with wrk and NGINX' });
  printTable('data plane', rows);
  emitFigures(fig);
}

await main();
