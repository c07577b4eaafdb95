// Dynamic routes at scale (local mode, real NGINX): N generated Ingresses (about a fifth of them
// plain enough to be dynamic), then new plain Ingresses written one at a time, each a new host
// the Lua router serves from a POSTed route table; the clock runs from the manifest write until
// the host is served (`route_add_served_ms_10k`). Then each of them gets a path added
// (`route_change_served_ms_10k`). Then, through one Gateway written beforehand, new HTTPRoutes
// one at a time, each a new host, from the manifest write until it is served
// (`httproute_add_served_ms_10k`). NGINX must not reload once for any of it.
// Writes are spaced at the default sync rate limit (0.3/s, burst 1, as ingress-nginx): each comes
// 3.4 s after the previous write, when the token bucket holds a token again, so the figure is the
// change's own path (manifest watch and its 50 ms debounce, model build, payloads, POSTs, each
// worker's first decode of the new table). A write within 3.3 s of a sync waits for its token by
// design; that wait is the rate limit's, not the route's.
// Then the same new and changed Ingresses in controller mode, against the in-process fake API
// server, timed from the object's create (./route-timing.ts); both modes print where each change's
// milliseconds went, stage by stage, from the timestamps the controller logs with each sync.
// Quick mode 2k Ingresses, full mode 10k. `--mode local|controller|both` (both by default);
// `--ingresses-only` leaves the HTTPRoute phase out of local mode.
//   node --import tsx bench/routes.ts [--full] [--n N] [--rounds R] [--mode M] [--ingresses-only]
// BENCH_ROUTES_LOG=FILE keeps the controller's whole log (NDJSON): the warnings say what was set aside and why.
import { writeFileSync } from 'node:fs';
import { namespaceOf, serviceOf } from './gen.js';
import { startGeneratedCluster } from './local-mode.js';
import { buildPathsOf, describeStages, syncCpuOf, runControllerRoutes, stageSummary, stagesOf, type Span, type Stages } from './route-timing.js';
import { arg, attempt, emitFigures, isFull, loadAverage, nginxCpuSeconds, percentile, printTable, processCpuSeconds, round, verdict, type Row } from './lib.js';

function ingress(name: string, host: string, service: string, ns: string, paths: Array<[string, string]>) {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: ns },
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host, http: { paths: paths.map(([path, pathType]) => ({ path, pathType, backend: { service: { name: service, port: { number: 80 } } } })) } }],
    },
  };
}

const GATEWAY_V1 = 'gateway.networking.k8s.io/v1';
const GATEWAY = [
  { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
  {
    apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'bench-gateway' },
    spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
  },
];

function httpRoute(name: string, host: string, service: string, ns: string) {
  return {
    apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'bench-gateway' }], hostnames: [host],
      rules: [{ matches: [{ path: { type: 'Exact', value: '/only' } }], backendRefs: [{ name: service, port: 80 }] }],
    },
  };
}

/** A token of the default sync rate limit (0.3/s) comes back after 3.33 s; 70 ms of margin. */
const TOKEN_PERIOD_MS = 3400;

/** Where a new host's milliseconds went (medians): write → its sync starts (watch, debounce, token), the sync (build, render, POSTs), of which the POSTs, and sync end → served (each worker's catch-up, the poll). */
interface AddBreakdown { toSync: number; sync: number; post: number; afterSync: number }

interface Routes {
  addMs: number[]; changeMs: number[]; reloads: number; startS: number; breakdown: AddBreakdown | null;
  /** New HTTPRoutes written → served, and the reloads from the first of them on (the Gateway is written before). */
  httpRouteAddMs: number[]; httpRouteReloads: number;
  /** CPU per new host from its write until it is served, the pauses for a token included (idle): the controller's, and NGINX's (workers' decode, the polls). */
  addCpuMs: { controller: number; nginx: number };
  /** Each new host's and each added path's stages (./route-timing.ts). */
  addStages: Stages[]; changeStages: Stages[];
  /** Which build paths their syncs took (./route-timing.ts). */
  addBuildPaths: string; changeBuildPaths: string;
}

/** Each span's sync: the first dynamic sync that ended after the write (its log line's time). */
function breakdown(logs: Array<Record<string, unknown>>, spans: Array<{ written: number; served: number }>): AddBreakdown | null {
  const syncs = logs.filter((l) => typeof l.msg === 'string' && /^sync \d+: dynamic/.test(l.msg) && typeof l.time === 'number' && typeof l.durationMs === 'number');
  const parts: AddBreakdown[] = [];
  for (const s of spans) {
    const sync = syncs.find((l) => (l.time as number) > s.written && (l.time as number) <= s.served);
    if (!sync) continue;
    const end = sync.time as number;
    const ms = sync.durationMs as number;
    parts.push({ toSync: end - ms - s.written, sync: ms, post: typeof sync.postMs === 'number' ? sync.postMs : NaN, afterSync: s.served - end });
  }
  if (parts.length === 0) return null;
  const median = (k: keyof AddBreakdown) => percentile(parts.map((p) => p[k]), 50);
  return { toSync: median('toSync'), sync: median('sync'), post: median('post'), afterSync: median('afterSync') };
}

async function run(n: number, rounds: number, ingressesOnly: boolean): Promise<Routes> {
  // The setup of bench/reload.ts, so the two figures compare.
  const cluster = await startGeneratedCluster('irx-bench-routes-', n, { defaultRateLimit: true });
  const { local, startS } = cluster;
  try {
    const reloadsBefore = local.logs().filter((l) => l.msg === 'reload: done').length;
    const out: Routes = { addMs: [], changeMs: [], reloads: 0, startS, addCpuMs: { controller: 0, nginx: 0 }, breakdown: null, httpRouteAddMs: [], httpRouteReloads: 0, addStages: [], changeStages: [], addBuildPaths: '', changeBuildPaths: '' };
    const spans: Array<{ written: number; served: number }> = [];
    const cpu = () => ({ controller: processCpuSeconds(local.pid).own, nginx: nginxCpuSeconds(local.pid) });
    const cpu0 = cpu();
    const hostOfRound = (r: number) => `route-${r}.bench.example`;
    const write = (r: number, paths: Array<[string, string]>) =>
      local.write(`route-${r}.json`, [ingress(`route-${r}`, hostOfRound(r), serviceOf(1), namespaceOf(1), paths)]);
    let lastWrite = performance.now();
    // The bucket refills one token per 1/0.3 s after the previous sync took it (see the top).
    const tokenBack = () => new Promise((res) => setTimeout(res, Math.max(0, lastWrite + TOKEN_PERIOD_MS - performance.now())));
    for (let r = 0; r < rounds; r++) {
      await tokenBack();
      const t = lastWrite = performance.now();
      const written = Date.now();
      write(r, [['/only', 'Exact']]);
      await local.until(hostOfRound(r), (s) => s === 200, 120_000, '/only');
      out.addMs.push(performance.now() - t);
      spans.push({ written, served: Date.now() });
    }
    out.breakdown = breakdown(local.logs(), spans);
    out.addStages = stagesOf(local.logs(), spans);
    out.addBuildPaths = `${buildPathsOf(local.logs(), spans)}; ${syncCpuOf(local.logs(), spans)}`;
    const changeSpans: Span[] = [];
    const cpu1 = cpu();
    out.addCpuMs = { controller: (cpu1.controller - cpu0.controller) * 1000 / rounds, nginx: (cpu1.nginx - cpu0.nginx) * 1000 / rounds };
    for (let r = 0; r < rounds; r++) {
      await tokenBack();
      const t = lastWrite = performance.now();
      const written = Date.now();
      write(r, [['/only', 'Exact'], ['/new', 'Prefix']]);
      await local.until(hostOfRound(r), (s) => s === 200, 120_000, '/new/x');
      out.changeMs.push(performance.now() - t);
      changeSpans.push({ written, served: Date.now() });
    }
    out.changeStages = stagesOf(local.logs(), changeSpans);
    out.changeBuildPaths = `${buildPathsOf(local.logs(), changeSpans)}; ${syncCpuOf(local.logs(), changeSpans)}`;
    const reloads = () => local.logs().filter((l) => l.msg === 'reload: done').length;
    out.reloads = reloads() - reloadsBefore;
    if (ingressesOnly) return out;
    // The Gateway (a listener: the one change allowed to reload), then a first route to see it served.
    await tokenBack();
    lastWrite = performance.now();
    local.write('gateway.json', GATEWAY);
    const routeHost = (r: number) => `httproute-${r}.bench.example`;
    const writeRoute = (r: number) => local.write(`httproute-${r}.json`, [httpRoute(`httproute-${r}`, routeHost(r), serviceOf(1), namespaceOf(1))]);
    await tokenBack();
    lastWrite = performance.now();
    writeRoute(-1);
    await local.until(routeHost(-1), (s) => s === 200, 120_000, '/only');
    const routeReloadsBefore = reloads();
    for (let r = 0; r < rounds; r++) {
      await tokenBack();
      const t = lastWrite = performance.now();
      writeRoute(r);
      await local.until(routeHost(r), (s) => s === 200, 120_000, '/only');
      out.httpRouteAddMs.push(performance.now() - t);
    }
    out.httpRouteReloads = reloads() - routeReloadsBefore;
    // Why NGINX reloaded since the Ingress phase began: each reloading sync's own words.
    const why = local.logs().map((l) => String(l.msg)).filter((m) => /^sync \d+: reload/.test(m)).slice(1);
    if (why.length > 0) process.stderr.write(`routes: reloading syncs:\n${why.map((m) => `  ${m.slice(0, 300)}`).join('\n')}\n`);
    return out;
  } finally {
    // BENCH_ROUTES_LOG=FILE keeps the controller's whole log (NDJSON) to read afterwards.
    if (process.env.BENCH_ROUTES_LOG) writeFileSync(process.env.BENCH_ROUTES_LOG, local.logs().map((l) => JSON.stringify(l)).join('\n'));
    await cluster.stop();
  }
}

const CONTROLLER_FIGURES = {
  route_add_served_controller_ms_10k: null, route_add_served_controller_p99_ms_10k: null,
  route_change_served_controller_ms_10k: null, route_reloads_controller_10k: null,
} satisfies Record<string, null>;

/** The stages' medians and p99s as two rows (./route-timing.ts). */
function stageRows(what: string, stages: Stages[], buildPaths: string): Row[] {
  const s = stageSummary(stages);
  if (!s) return [{ figure: `${what}: where the ms go`, value: 'n/a', note: 'no sync matched the writes in the log' }];
  return [
    { figure: `${what}: where the ms go, medians`, value: `${s.p50.total.toFixed(0)} ms`, note: `${describeStages(s.p50)}; builds: ${buildPaths}` },
    { figure: `${what}: where the ms go, p99s`, value: `${s.p99.total.toFixed(0)} ms`, note: `${describeStages(s.p99)} (each stage's own p99)` },
  ];
}

/** Controller mode (the fake API server): from the object's create to its host served. */
async function controllerRows(n: number, rounds: number, rows: Row[], fig: Record<string, number | null> | null): Promise<void> {
  const r = await runControllerRoutes(n, rounds, (pid) => ({ controller: processCpuSeconds(pid).own, nginx: nginxCpuSeconds(pid) }));
  const add50 = percentile(r.addMs, 50), add99 = percentile(r.addMs, 99);
  const change50 = percentile(r.changeMs, 50), change99 = percentile(r.changeMs, 99);
  if (fig) {
    fig.route_add_served_controller_ms_10k = round(add50, 0);
    fig.route_add_served_controller_p99_ms_10k = round(add99, 0);
    fig.route_change_served_controller_ms_10k = round(change50, 0);
    fig.route_reloads_controller_10k = r.reloads;
  }
  const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  rows.push({ figure: `controller mode: new Ingress created → served, ${n} Ingresses, p50`, value: `${add50.toFixed(0)} ms`, note: `${r.addMs.length} new hosts: ${list(r.addMs)}; cold start ${r.startS.toFixed(1)} s` });
  rows.push({ figure: `controller mode: new Ingress created → served, ${n} Ingresses, p99`, value: `${add99.toFixed(0)} ms`, target: '≤ 100 ms', status: verdict(add99, 100) });
  rows.push({ figure: `controller mode: CPU per new Ingress, ${n} Ingresses: controller / NGINX`, value: `${r.addCpuMs.controller.toFixed(0)} / ${r.addCpuMs.nginx.toFixed(0)} ms` });
  rows.push(...stageRows(`controller mode, ${n} Ingresses: new Ingress`, r.addStages, r.addBuildPaths));
  rows.push({ figure: `controller mode: path added → served, ${n} Ingresses, p50 / p99`, value: `${change50.toFixed(0)} / ${change99.toFixed(0)} ms`, note: list(r.changeMs) });
  rows.push(...stageRows(`controller mode, ${n} Ingresses: path added`, r.changeStages, r.changeBuildPaths));
  rows.push({ figure: 'controller mode: reloads for all of it', value: String(r.reloads), target: '0', status: verdict(r.reloads, 0) });
  rows.push({ figure: 'controller mode: Ingress status writes when the new hosts began / at the end', value: `${r.statusWrites.beforeAdds} / ${r.statusWrites.atEnd}`, note: `${r.statusWrites.withStatus} Ingresses hold the address at the end` });
}

async function main(): Promise<void> {
  const full = isFull();
  const n = Number(arg('--n') ?? (full ? 10_000 : 2000));
  const rounds = Math.max(10, Number(arg('--rounds') ?? 10));
  const rows: Row[] = [];
  const size = n === 10_000 ? '10k' : n === 2000 ? '2k' : null;
  const fig: Record<string, number | null> = {
    route_add_served_ms_10k: null, route_add_served_p99_ms_10k: null, route_change_served_ms_10k: null, route_reloads_10k: null,
    route_add_controller_cpu_ms_10k: null, route_add_nginx_cpu_ms_10k: null,
    httproute_add_served_ms_10k: null, httproute_add_served_p99_ms_10k: null, httproute_reloads_10k: null,
    ...CONTROLLER_FIGURES,
  };
  const mode = arg('--mode') ?? 'both';
  if (mode !== 'controller') await attempt(rows, `routes ${n}`, async () => {
    const r = await run(n, rounds, process.argv.includes('--ingresses-only'));
    const add50 = percentile(r.addMs, 50);
    const add99 = percentile(r.addMs, 99);
    const change50 = percentile(r.changeMs, 50);
    if (size === '10k') {
      fig.route_add_served_ms_10k = round(add50, 0);
      fig.route_add_served_p99_ms_10k = round(add99, 0);
      fig.route_change_served_ms_10k = round(change50, 0);
      fig.route_reloads_10k = r.reloads;
      fig.route_add_controller_cpu_ms_10k = round(r.addCpuMs.controller, 0);
      fig.route_add_nginx_cpu_ms_10k = round(r.addCpuMs.nginx, 0);
      fig.httproute_add_served_ms_10k = round(percentile(r.httpRouteAddMs, 50), 0);
      fig.httproute_add_served_p99_ms_10k = round(percentile(r.httpRouteAddMs, 99), 0);
      fig.httproute_reloads_10k = r.httpRouteReloads;
    }
    const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    rows.push({ figure: `new plain Ingress written → served, ${n} Ingresses, p50`, value: `${add50.toFixed(0)} ms`, note: `${r.addMs.length} new hosts: ${list(r.addMs)}; cold start ${r.startS.toFixed(1)} s` });
    rows.push({ figure: `new plain Ingress written → served, ${n} Ingresses, p99`, value: `${add99.toFixed(0)} ms`, target: '≤ 100 ms', status: verdict(add99, 100) });
    rows.push({ figure: `CPU per new Ingress, ${n} Ingresses: controller / NGINX`, value: `${r.addCpuMs.controller.toFixed(0)} / ${r.addCpuMs.nginx.toFixed(0)} ms`,
      note: 'from /proc, write to served; robust to other load, unlike the wall times' });
    if (r.breakdown) {
      const b = r.breakdown;
      rows.push({ figure: `where a new host's ms go, ${n} Ingresses (medians)`, value: `${b.toSync.toFixed(0)} + ${b.sync.toFixed(0)} + ${b.afterSync.toFixed(0)} ms`,
        note: `write → sync starts (watch, debounce, token) + sync (build, render, POSTs; the POSTs ${Number.isNaN(b.post) ? '?' : b.post.toFixed(0)} ms) + sync end → served (workers' catch-up, the 10 ms poll)` });
    }
    rows.push({ figure: `path added to a dynamic Ingress → served, ${n} Ingresses, p50`, value: `${change50.toFixed(0)} ms`, note: `p99 ${percentile(r.changeMs, 99).toFixed(0)} ms: ${list(r.changeMs)}` });
    rows.push(...stageRows(`local mode, ${n} Ingresses: new Ingress`, r.addStages, r.addBuildPaths), ...stageRows(`local mode, ${n} Ingresses: path added`, r.changeStages, r.changeBuildPaths));
    rows.push({ figure: 'reloads for all of it', value: String(r.reloads), target: '0', status: verdict(r.reloads, 0) });
    if (r.httpRouteAddMs.length === 0) return;
    const route50 = percentile(r.httpRouteAddMs, 50);
    const route99 = percentile(r.httpRouteAddMs, 99);
    rows.push({ figure: `new HTTPRoute written → served, ${n} Ingresses, p50`, value: `${route50.toFixed(0)} ms`, note: `${r.httpRouteAddMs.length} new hosts: ${list(r.httpRouteAddMs)}` });
    rows.push({ figure: `new HTTPRoute written → served, ${n} Ingresses, p99`, value: `${route99.toFixed(0)} ms`, target: '≤ 1000 ms', status: verdict(route99, 1000) });
    rows.push({ figure: 'reloads for the new HTTPRoutes (after the Gateway)', value: String(r.httpRouteReloads), target: '0', status: verdict(r.httpRouteReloads, 0) });
  });
  if (mode !== 'local') await attempt(rows, `routes ${n}, controller mode`, () => controllerRows(n, rounds, rows, size === '10k' ? fig : null));
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('dynamic routes', rows);
  emitFigures(fig);
}

await main();
