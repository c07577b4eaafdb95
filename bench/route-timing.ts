// Where a new route's milliseconds go (issue 29, item 2), for bench/routes.ts: each change's
// span from its write (a manifest file in local mode, the API server's object in controller mode)
// to the first answer of its host, cut at the timestamps the controller logs with each sync
// (src/cli/serve.ts `syncTimings`): its first event entering the pipeline, the sync's start, the
// model build, the decision, the payloads, each part's POST until NGINX answered, and the sync's
// end. And the controller-mode run: `ingress-rx controller` against the in-process fake API
// server holding the same generated cluster.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeApiServer, type FakeObject } from '../test/support/fake-apiserver.js';
import { sendRequest, startController } from '../test/support/local-harness.js';
import { generateEvents, hostOf, namespaceOf, serviceOf } from './gen.js';
import { percentile } from './lib.js';

/** One change: when it was written and when its host first answered as expected (epoch ms). */
export interface Span { written: number; served: number }

/** The stages of one change, in ms; they add up to written → served. */
export interface Stages {
  /** Write → its first event enters the pipeline (local: the file watch, its debounce, the rescan; controller: the watch). */
  arrive: number;
  /** → the sync starts (the ring, the token bucket, a sync in progress). */
  queue: number;
  build: number;
  decide: number;
  payload: number;
  backends: number;
  servers: number;
  routes: number;
  /** The rest of the sync: the actors' scheduling, serialising outside the POSTs. */
  syncOther: number;
  /** Sync end → served: the workers' catch-up and the bench's 10 ms poll. */
  afterSync: number;
  total: number;
}

export const STAGE_NAMES: ReadonlyArray<keyof Stages> = ['arrive', 'queue', 'build', 'decide', 'payload', 'backends', 'servers', 'routes', 'syncOther', 'afterSync', 'total'];

type Log = Record<string, unknown>;
const num = (x: unknown) => (typeof x === 'number' ? x : 0);

/** Each span's sync: the first applied sync whose events arrived after the write and that ended before the host was served. */
function syncsOf(logs: readonly Log[], spans: readonly Span[]): Array<{ s: Span; sync: Log }> {
  const syncs = logs.filter((l) => typeof l.msg === 'string' && /^sync \d+: /.test(l.msg) && typeof l.receivedAt === 'number' && typeof l.startedAt === 'number');
  return spans.flatMap((s) => {
    const sync = syncs.find((l) => num(l.receivedAt) >= s.written && num(l.startedAt) + num(l.durationMs) <= s.served);
    return sync ? [{ s, sync }] : [];
  });
}

/** Each span's stages, from its sync's log line. */
export function stagesOf(logs: readonly Log[], spans: readonly Span[]): Stages[] {
  const out: Stages[] = [];
  for (const { s, sync } of syncsOf(logs, spans)) {
    const st = (sync.stages ?? {}) as Record<string, number>;
    const parts = (sync.partMs ?? {}) as Record<string, number>;
    const end = num(sync.startedAt) + num(sync.durationMs);
    const build = num(st.buildMs), decide = num(st.decideMs), payload = num(st.payloadMs);
    const backends = num(parts.backends), servers = num(parts.servers), routes = num(parts.routes);
    out.push({
      arrive: num(sync.receivedAt) - s.written, queue: num(sync.startedAt) - num(sync.receivedAt),
      build, decide, payload, backends, servers, routes,
      syncOther: num(sync.durationMs) - build - decide - payload - backends - servers - routes,
      afterSync: s.served - end, total: s.served - s.written,
    });
  }
  return out;
}

/** Which of the builder's paths the spans' syncs took, counted (e.g. `updated 10`; `full` is a build over every Ingress). */
export function buildPathsOf(logs: readonly Log[], spans: readonly Span[]): string {
  const counts = new Map<string, number>();
  for (const { sync } of syncsOf(logs, spans)) {
    const path = String((sync.stages as { buildPath?: string } | undefined)?.buildPath ?? 'unknown');
    counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  return [...counts].map(([path, n]) => `${path} ${n}`).join(', ');
}

/** The medians of the spans' syncs' CPU time per stage (the controller logs it beside the wall time), e.g. `build 12 + decide 1 + payload 20 ms CPU`. */
export function syncCpuOf(logs: readonly Log[], spans: readonly Span[]): string {
  const cpu = syncsOf(logs, spans).flatMap(({ sync }): Array<Record<string, number>> => {
    const c = (sync.stages as { cpu?: Record<string, number> } | undefined)?.cpu;
    return c ? [c] : [];
  });
  if (cpu.length === 0) return 'not logged';
  const m = (k: string) => percentile(cpu.map((c) => num(c[k])), 50).toFixed(0);
  return `build ${m('buildMs')} + decide ${m('decideMs')} + payload ${m('payloadMs')} ms CPU`;
}

/** The medians (and the p99, the worst of 10) of each stage over the spans. */
export function stageSummary(stages: readonly Stages[]): { p50: Stages; p99: Stages } | null {
  if (stages.length === 0) return null;
  const pick = (p: number) => Object.fromEntries(STAGE_NAMES.map((k) => [k, percentile(stages.map((s) => s[k]), p)])) as unknown as Stages;
  return { p50: pick(50), p99: pick(99) };
}

export function describeStages(s: Stages): string {
  return STAGE_NAMES.filter((k) => k !== 'total').map((k) => `${k} ${s[k].toFixed(0)}`).join(' + ') + ` = ${s.total.toFixed(0)} ms`;
}

/** The spacing of writes at the default sync rate limit (0.3/s: a token every 3.33 s; 70 ms of margin), from the previous change served. */
const TOKEN_PERIOD_MS = 3400;

export interface ControllerRoutes {
  addMs: number[]; changeMs: number[]; reloads: number; startS: number;
  addStages: Stages[]; changeStages: Stages[];
  /** Which build paths their syncs took and their CPU (buildPathsOf, syncCpuOf). */
  addBuildPaths: string; changeBuildPaths: string;
  addCpuMs: { controller: number; nginx: number };
  /** The controller's Ingress status writes (PUTs of /status) until the new hosts were written, and until the end; how many of the N Ingresses hold its address at the end. */
  statusWrites: { beforeAdds: number; atEnd: number; withStatus: number };
}

function plainIngress(name: string, host: string, service: string, ns: string, paths: Array<[string, string]>): FakeObject {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: ns },
    spec: {
      ingressClassName: 'nginx',
      rules: [{ host, http: { paths: paths.map(([path, pathType]) => ({ path, pathType, backend: { service: { name: service, port: { number: 80 } } } })) } }],
    },
  };
}

/**
 * Controller mode: the fake API server holds N generated Ingresses (with their Services,
 * EndpointSlices, Secrets, IngressClass), `ingress-rx controller` at the default sync rate limit
 * lists and watches them; then `rounds` new plain Ingresses are created one at a time, each timed
 * from the API server's create (the watch event leaves at once) until its host answers; then
 * each gets a path added. `cpu(pid)` reads the controller's and NGINX's CPU seconds.
 */
export async function runControllerRoutes(n: number, rounds: number, cpu: (pid: number) => { controller: number; nginx: number }): Promise<ControllerRoutes> {
  const echo = createServer((_req, res) => { res.writeHead(200); res.end('ok'); });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const port = (echo.address() as AddressInfo).port;
  const fake = await startFakeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-routes-ctl-'));
  let ctl: Awaited<ReturnType<typeof startController>> | undefined;
  try {
    const events = generateEvents({ n, endpoints: () => [{ address: '127.0.0.1', port }] });
    for (const e of events) {
      const o = structuredClone(e.object) as unknown as FakeObject;
      delete (o.metadata as Record<string, unknown>).resourceVersion;
      fake.create(o);
    }
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, fake.kubeConfig().exportConfig());
    const t0 = performance.now();
    ctl = await startController({
      kubeconfig, untilHealthy: false,
      // BENCH_ROUTES_TRACE=FILE: the controller's --trace (every event through the pipeline, and why it was filtered).
      args: ['--sync-rate-limit=0.3', '--disable-leader-election', '--publish-status-address=192.0.2.10', '--allow-upstream-addresses=loopback',
        ...(process.env.BENCH_ROUTES_TRACE ? [`--trace=${process.env.BENCH_ROUTES_TRACE}`] : [])],
      env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
    });
    const c = ctl;
    const until = async (host: string, path: string, timeoutMs: number) => {
      const start = performance.now();
      for (;;) {
        if (c.child.exitCode !== null) throw new Error(`ingress-rx controller exited: ${c.output().slice(-2000)}`);
        const r = await sendRequest(c.ports.http, host, path).catch(() => null);
        if (r?.status === 200) return;
        if (performance.now() - start > timeoutMs) throw new Error(`${host}${path} not served after ${timeoutMs} ms (last: ${r?.status ?? 'no answer'})`);
        await new Promise((res) => setTimeout(res, 10));
      }
    };
    await until(hostOf(n - 2), '/', 600_000);
    const startS = (performance.now() - t0) / 1000;
    const logs = () => c.output().split('\n').filter((l) => l.startsWith('{')).flatMap((l) => { try { return [JSON.parse(l) as Log]; } catch { return []; } });
    const reloads = () => logs().filter((l) => l.msg === 'reload: done').length;
    const reloadsBefore = reloads();
    const pid = c.child.pid!;
    let lastWrite = performance.now();
    const tokenBack = () => new Promise((res) => setTimeout(res, Math.max(0, lastWrite + TOKEN_PERIOD_MS - performance.now())));
    const host = (r: number) => `route-${r}.bench.example`;
    const write = (r: number, paths: Array<[string, string]>) => fake.set(plainIngress(`route-${r}`, host(r), serviceOf(1), namespaceOf(1), paths));
    const phase = async (paths: Array<[string, string]>, probe: string) => {
      const ms: number[] = [];
      const spans: Span[] = [];
      for (let r = 0; r < rounds; r++) {
        await tokenBack();
        const t = lastWrite = performance.now();
        const written = Date.now();
        write(r, paths);
        await until(host(r), probe, 120_000);
        ms.push(performance.now() - t);
        spans.push({ written, served: Date.now() });
        // The next write 3.4 s after this one was served, so after its sync took the token: a
        // write spaced from the last write instead would wait for the bucket whenever a sync
        // started late, and every later one with it.
        lastWrite = performance.now();
      }
      return { ms, spans };
    };
    // The first sync after the initial one also writes the initial Ingresses' status; let it pass.
    await tokenBack();
    const statusWrites = () => fake.count({ verb: 'update', path: /\/ingresses\/[^/]+\/status$/ });
    const beforeAdds = statusWrites();
    const cpu0 = cpu(pid);
    const add = await phase([['/only', 'Exact']], '/only');
    const cpu1 = cpu(pid);
    const change = await phase([['/only', 'Exact'], ['/new', 'Prefix']], '/new/x');
    const all = logs();
    const withStatus = fake.list('networking.k8s.io/v1', 'Ingress').filter((o) => ((o.status as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer?.ingress?.length ?? 0) > 0).length;
    // BENCH_ROUTES_LOG=FILE keeps the controller's whole log here too (NDJSON, `.controller` added):
    // each sync line's `events` and reason say what took the tokens.
    if (process.env.BENCH_ROUTES_LOG) writeFileSync(`${process.env.BENCH_ROUTES_LOG}.controller`, c.output());
    return {
      addMs: add.ms, changeMs: change.ms, reloads: reloads() - reloadsBefore, startS,
      addStages: stagesOf(all, add.spans), changeStages: stagesOf(all, change.spans),
      addBuildPaths: `${buildPathsOf(all, add.spans)}; ${syncCpuOf(all, add.spans)}`, changeBuildPaths: `${buildPathsOf(all, change.spans)}; ${syncCpuOf(all, change.spans)}`,
      addCpuMs: { controller: (cpu1.controller - cpu0.controller) * 1000 / rounds, nginx: (cpu1.nginx - cpu0.nginx) * 1000 / rounds },
      statusWrites: { beforeAdds, atEnd: statusWrites(), withStatus },
    };
  } finally {
    await ctl?.stop();
    await fake.close();
    echo.closeAllConnections();
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
