// Changes under load (issue 29), `ingress-rx local` at the default sync rate limit (0.3/s, burst
// 1), real NGINX, beside N generated Ingresses (bench/gen.ts: 10% TLS; quick 200, full 10k):
// 1. Ready: once /healthz answers 200, every generated host and every loaded (host, path) is asked
//    once; `ready_routes_missing` counts the 404s (a route of the initial list not served yet).
// 2. The scenario of test/support/changes-scenario.ts on 20 hosts under wrk (HTTP/1.1 kept-alive
//    connections; and with `Connection: close`, a new connection per request) and Node's HTTP/2
//    client over TLS (see http2Run for why not h2load), each phase its own run: quiet,
//    changes (Ingresses added, changed, deleted; a path moving; the certificate rotating;
//    endpoints churning; each group awaited as served), and one reload.
//    `changes_under_load_failed_requests`: non-2xx + socket errors of the quiet and changes runs;
//    `changes_under_load_reload_errors`: the same in the reload's run; `changes_under_load_p99_ratio`:
//    wrk's kept-alive p99 during the changes / quiet.
//   node --import tsx bench/changes-under-load.ts [--full] [--ingresses N]
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from '../test/support/ports.js';
import { sendRequest } from '../test/support/local-harness.js';
import { startLoad } from '../test/support/load-clients.js';
import { RELOAD_HOST, scenario, targets, wildcardCertificate, type Target, type Write } from '../test/support/changes-scenario.js';
import { hostOf, isCanary, writeManifests } from './gen.js';
import { startLocalMode, type LocalMode } from './local-mode.js';
import { ensureWrk, parseWrk, startNginx, stopNginx, upstreamConf } from './nginx-tools.js';
import { arg, attempt, emitFigures, isFull, loadAverage, percentile, printTable, round, verdict, type Row } from './lib.js';

const run = promisify(execFile);

/** One client's run; `kinds` counts by kind (wrk: non-2xx and each socket error, `timeout` = no answer within 2 s; HTTP/2: each failure's reason, GOAWAYs received, refused streams retried). */
interface RunResult { client: string; requests: number; errors: number; p99: number | null; kinds: Record<string, number> }

/** A wrk Lua script cycling through the targets (`close`: a new connection per request). */
function wrkScript(dir: string, list: Target[], close: boolean): string {
  const path = join(dir, close ? 'close.lua' : 'keepalive.lua');
  writeFileSync(path, `local t = { ${list.map((x) => `{ ${JSON.stringify(x.host)}, ${JSON.stringify(x.path)} }`).join(', ')} }
local i = 0
request = function()
  i = i + 1
  local x = t[(i % #t) + 1]
  return wrk.format("GET", x[2], { Host = x[1]${close ? ', Connection = "close"' : ''} })
end
`);
  return path;
}

async function wrkRun(client: string, script: string, port: number, connections: number, seconds: number): Promise<RunResult> {
  const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}/`], { timeout: (seconds + 30) * 1000 });
  const r = parseWrk(stdout);
  return { client, requests: r.requests, errors: r.errors, p99: r.p99, kinds: { ...r.errorKinds } };
}

/**
 * HTTP/2 from Node's client (test/support/load-clients.ts), one TLS session per host: h2load does
 * not open a new connection after a GOAWAY, and NGINX sends one after `keepalive_requests` (1,000)
 * streams, so an h2load run longer than that measures nothing but its first connections.
 */
async function http2Run(local: LocalMode, seconds: number): Promise<RunResult> {
  const h2 = startLoad({ ports: local.ports, targets: targets(), concurrency: { 'HTTP/1.1 keep-alive': 0, 'HTTP/1.1 new connection': 0, 'HTTP/2': 8 } });
  h2.phase('run');
  await new Promise((r) => setTimeout(r, seconds * 1000));
  await h2.stop();
  const c = h2.counts('HTTP/2', 'run');
  const reasons: Record<string, number> = {};
  for (const f of h2.failures) reasons[f.reason] = (reasons[f.reason] ?? 0) + 1;
  return {
    client: 'Node HTTP/2, 8 streams in flight over a TLS session per host', requests: c.requests, errors: c.failures, p99: round(percentile(c.latenciesMs, 99), 2),
    kinds: { ...reasons, 'GOAWAY received': h2.h2.goaways, 'refused streams retried': h2.h2.refusedRetried },
  };
}

/** All clients at once for `seconds`. */
function load(local: LocalMode, dir: string, seconds: number): Promise<RunResult[]> {
  const list = targets();
  return Promise.all([
    wrkRun('wrk HTTP/1.1 kept-alive (-c8)', wrkScript(dir, list, false), local.ports.http, 8, seconds),
    wrkRun('wrk HTTP/1.1 new connection per request (-c4)', wrkScript(dir, list, true), local.ports.http, 4, seconds),
    http2Run(local, seconds),
  ]);
}

function apply(local: LocalMode, w: Write): void {
  if (w.items === null) unlinkSync(join(local.manifests, w.file));
  else local.write(w.file, w.items);
}

/** SIGHUPs the NGINX master has logged (its notices log): the reloads so far. At 10k a /metrics scrape of every host's families can outlast a request's timeout. */
function reloads(local: LocalMode): number {
  try {
    return (readFileSync(join(local.workdir, 'logs', 'reload.log'), 'utf8').match(/signal 1 \(SIGHUP\) received/g) ?? []).length;
  } catch {
    return 0;
  }
}

/** Asks every (host, path) once, 16 at a time over kept-alive connections; the 404 answers. */
async function notFound(port: number, list: Target[]): Promise<{ missing: number; asked: number; failed: number; sample: string[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  let next = 0;
  let missing = 0;
  let failed = 0;
  const sample: string[] = [];
  const one = (t: Target) => new Promise<void>((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: t.path, agent, headers: { Host: t.host }, timeout: 10_000 }, (res) => {
      if (res.statusCode === 404 && ++missing <= 3) sample.push(`${t.host}${t.path}`);
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => { failed++; resolve(); });
    req.end();
  });
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < list.length) await one(list[next++]!); }));
  agent.destroy();
  return { missing, asked: list.length, failed, sample };
}

async function main(): Promise<void> {
  const n = Number(arg('--ingresses') ?? (isFull() ? 10_000 : 200));
  const rows: Row[] = [];
  const fig: Record<string, number | null> = {
    changes_under_load_failed_requests: null, changes_under_load_reload_errors: null, changes_under_load_p99_ratio: null, ready_routes_missing: null,
  };
  ensureWrk();
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-under-load-'));
  const ports = await freePorts(5);
  writeFileSync(join(dir, 'upstream.conf'), upstreamConf(dir, ports));
  const upstream = startNginx(dir, join(dir, 'upstream.conf'));
  let local: LocalMode | null = null;
  try {
    const eps = ports.map((port) => ({ address: '127.0.0.1', port }));
    const s = scenario({ web: eps.slice(0, 2), churn: eps.slice(2), certs: { first: wildcardCertificate('first'), rotated: wildcardCertificate('rotated') } });
    const t0 = performance.now();
    local = await startLocalMode({
      prefix: 'irx-bench-under-load-',
      fill: (manifests) => {
        writeManifests(manifests, { n, endpoints: () => [eps[0]!] }, 10);
        for (const w of s.initial) writeFileSync(join(manifests, w.file), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: w.items }));
      },
    });
    const l = local;

    await attempt(rows, 'ready_routes_missing', async () => {
      for (;;) {
        const h = await sendRequest(l.ports.healthz, '127.0.0.1', '/healthz').catch(() => null);
        if (h?.status === 200) break;
        if (performance.now() - t0 > 600_000) throw new Error('not Ready after 600 s');
        await new Promise((r) => setTimeout(r, 20));
      }
      const readyS = (performance.now() - t0) / 1000;
      // Every generated host (a canary shares its primary's host) and every loaded route.
      const hosts = Array.from({ length: n }, (_, i) => i).filter((i) => !isCanary(i)).map((i) => ({ host: hostOf(i), path: '/' }));
      const r = await notFound(l.ports.http, [...hosts, ...targets()]);
      fig.ready_routes_missing = r.missing;
      rows.push({
        figure: `requests answered 404 right after Ready: the hosts of ${n} generated Ingresses and the 21 loaded routes`, value: String(r.missing), target: '0',
        status: verdict(r.missing, 0), note: `${r.asked} asked (${r.failed} socket errors) once /healthz said 200, ${readyS.toFixed(1)} s after the start${r.sample.length ? `; e.g. ${r.sample.join(' ')}` : ''}`,
      });
    });

    await attempt(rows, 'changes under load', async () => {
      for (const t of targets()) await l.until(t.host, (st) => st === 200, 60_000, t.path);
      const reloadsBefore = reloads(l);
      const quiet = await load(l, dir, isFull() ? 10 : 5);

      const changesS = isFull() ? 40 : 25;
      const changing = load(l, dir, changesS);
      const c0 = performance.now();
      for (const group of s.groups) {
        for (const w of group.writes) {
          apply(l, w);
          await new Promise((r) => setTimeout(r, 150));
        }
        for (const e of group.expect) await l.until(e.host, (st) => st === e.status, 60_000, e.path);
      }
      const appliedS = (performance.now() - c0) / 1000;
      const changes = await changing;
      const reloadsAfterChanges = reloads(l);

      const sum = (rs: RunResult[]) => rs.reduce((x, r) => x + r.errors, 0);
      const requests = (rs: RunResult[]) => rs.reduce((x, r) => x + r.requests, 0);
      const listed = (phase: string, rs: RunResult[]) => {
        for (const r of rs) {
          const kinds = Object.entries(r.kinds).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
          rows.push({ figure: `${phase}: ${r.client}`, value: `${r.errors} failed`, note: `of ${r.requests}${r.p99 !== null ? `, p99 ${r.p99} ms` : ''}${kinds ? `; ${kinds}` : ''}` });
        }
      };
      listed('quiet', quiet);
      listed('changes', changes);
      fig.changes_under_load_failed_requests = sum(quiet) + sum(changes);
      const p99q = quiet[0]!.p99!;
      const p99c = changes[0]!.p99!;
      fig.changes_under_load_p99_ratio = round(p99c / p99q, 2);
      rows.push({
        figure: 'changes_under_load_failed_requests (quiet + changes, no reload)', value: String(fig.changes_under_load_failed_requests), target: '0',
        status: verdict(fig.changes_under_load_failed_requests, 0),
        note: `of ${requests(quiet) + requests(changes)}; the changes applied and served within ${appliedS.toFixed(1)} s of the ${changesS} s run; reloads during them: ${reloadsAfterChanges - reloadsBefore}`,
      });
      rows.push({ figure: 'changes_under_load_p99_ratio (wrk kept-alive p99, changes / quiet)', value: String(fig.changes_under_load_p99_ratio), target: '≤ 2', status: verdict(fig.changes_under_load_p99_ratio, 2), note: `${p99c} / ${p99q} ms` });

      // The reload 2 s into a 10 s run, and more runs until its host is served (a reload at 10k
      // takes 10–20 s on a quiet machine: docs/performance.md), their counts summed per client.
      const first = load(l, dir, 10);
      await new Promise((r) => setTimeout(r, 2000));
      apply(l, s.reload);
      const r0 = performance.now();
      const reloaded: { done: boolean; error: Error | null } = { done: false, error: null };
      l.until(RELOAD_HOST, (st) => st === 200, isFull() ? 300_000 : 60_000).then(() => { reloaded.done = true; }, (err: Error) => { reloaded.error = err; });
      const runs = [await first];
      while (!reloaded.done && !reloaded.error) runs.push(await load(l, dir, 10));
      if (reloaded.error) throw reloaded.error;
      const reloadS = (performance.now() - r0) / 1000;
      const reload = runs[0]!.map((r, i): RunResult => ({
        client: r.client,
        requests: runs.reduce((x, run) => x + run[i]!.requests, 0),
        errors: runs.reduce((x, run) => x + run[i]!.errors, 0),
        p99: r.p99 === null ? null : Math.max(...runs.map((run) => run[i]!.p99!)),
        kinds: Object.fromEntries([...new Set(runs.flatMap((run) => Object.keys(run[i]!.kinds)))].map((k) => [k, runs.reduce((x, run) => x + (run[i]!.kinds[k] ?? 0), 0)])),
      }));
      listed('one reload', reload);
      fig.changes_under_load_reload_errors = sum(reload);
      rows.push({
        figure: 'changes_under_load_reload_errors (one reload)', value: String(fig.changes_under_load_reload_errors),
        note: `of ${requests(reload)} in ${runs.length} × 10 s; the new host served ${reloadS.toFixed(1)} s after its write; reloads: ${reloads(l) - reloadsAfterChanges}; wrk keeps 8 kept-alive connections (a reset one counts as a read error), an HTTP/2 session per host`,
      });
    });
  } finally {
    await local?.stop();
    await stopNginx(upstream);
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable(`changes under load (${n} generated Ingresses)`, rows);
  emitFigures(fig);
}

await main();
