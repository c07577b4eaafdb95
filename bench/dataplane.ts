// Data plane: requests/s and p99 through our Lua balancer vs a static `upstream` block, in one
// NGINX. The production template is rendered for one Ingress; a copy of its server block under
// another host name, with the Lua phases removed and `proxy_pass` to a static upstream of the
// same endpoints, is added next to it. The endpoints are a tiny `return 200` NGINX, and `wrk`
// drives both hosts on loopback in turns (A B B A) so drift in the machine's load cancels out.
//   node --import tsx bench/dataplane.ts [--full]
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { backendsPayload } from '../src/model/payload.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, preparePrefix } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/actors/fallback-cert.js';
import { silentLogger } from '../src/log.js';
import { freePorts } from '../test/support/ports.js';
import { waitFor } from '../test/support/wait.js';
import { generateEvents, hostOf } from './gen.js';
import { attempt, emitFigures, isFull, loadAverage, printTable, round, verdict, type Row } from './lib.js';

const run = promisify(execFile);
const NGINX = '/usr/sbin/nginx';
const STATIC_HOST = 'static.bench.example';

const stderrOf = new WeakMap<ChildProcess, string[]>();

function startNginx(prefix: string, conf: string): ChildProcess {
  const child = spawn(NGINX, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  const text: string[] = [];
  stderrOf.set(child, text);
  child.stderr!.on('data', (d: Buffer) => { text.push(String(d)); });
  return child;
}

function failure(child: ChildProcess, what: string): (err: unknown) => never {
  return (err) => {
    throw new Error(`${(err as Error).message}; ${what} stderr: ${(stderrOf.get(child) ?? []).join('').slice(-300)}`);
  };
}

async function stopNginx(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  try { process.kill(-child.pid, 'SIGQUIT'); } catch { return; }
  const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 5000);
  await exited;
  clearTimeout(timer);
}

function upstreamConf(prefix: string, ports: number[]): string {
  return `daemon off;
master_process on;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/cb; proxy_temp_path ${prefix}/px; fastcgi_temp_path ${prefix}/fc; uwsgi_temp_path ${prefix}/uw; scgi_temp_path ${prefix}/sc;
  keepalive_requests 1000000;
${ports.map((p) => `  server { listen 127.0.0.1:${p}; location / { return 200 "ok\\n"; } }`).join('\n')}
}
`;
}

/** The server block of `host` as a static twin: no Lua phases, proxy_pass to `bench_static`. */
function staticTwin(conf: string, host: string, upstreamBody: string): string {
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
    if (m) { skipUntil = `${m[1]}}`; continue; }
    out.push(line.replaceAll(host, STATIC_HOST).replace('proxy_pass http://upstream_balancer;', 'proxy_pass http://bench_static;'));
  }
  return `    upstream bench_static {\n${upstreamBody}    }\n${out.join('\n')}`;
}

interface WrkResult { rps: number; p99: number; p50: number; errors: number }

function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v.trim());
  if (!m) return NaN;
  const x = Number(m[1]);
  return m[2] === 'us' ? x / 1000 : m[2] === 'ms' ? x : m[2] === 's' ? x * 1000 : x * 60_000;
}

async function wrk(port: number, host: string, seconds: number): Promise<WrkResult> {
  const { stdout } = await run('wrk', ['-t2', '-c32', `-d${seconds}s`, '--latency', '-H', `Host: ${host}`, `http://127.0.0.1:${port}/`], { timeout: (seconds + 30) * 1000 });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? '');
  const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const sockErr = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (sockErr ? sockErr.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  if (!Number.isFinite(rps)) throw new Error(`wrk output not understood: ${stdout.slice(0, 200)}`);
  return { rps, p99, p50, errors };
}

function get(port: number, host: string, path: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { Host: host, Connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}) }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

interface Comparison { lua: WrkResult; static: WrkResult; ratio: number; rounds: number; seconds: number }

async function compare(seconds: number, rounds: number): Promise<Comparison> {
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
    });
    preparePrefix(runtime);
    runtime.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, silentLogger());
    for (const e of generateEvents({ n: 1, plain: true, tlsFraction: 0, endpoints: () => up.map((p) => ({ address: '127.0.0.1', port: p })) })) store.apply(e);
    const { config } = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: def!, logger: silentLogger() }).build(store);
    let conf = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, runtime);
    const keepaliveLines = /upstream upstream_balancer \{\n(?:.*\n)*?((?:\s+keepalive.*\n)+)/.exec(conf)?.[1] ?? 'keepalive 320;';
    const keepalive = keepaliveLines.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => `        ${l}\n`).join('');
    const twin = `${staticTwin(conf, hostOf(0), `${up.map((p) => `        server 127.0.0.1:${p};\n`).join('')}${keepalive}`)}\n`;
    conf = conf.replace(`    ## start server ${hostOf(0)}\n`, `${twin}    ## start server ${hostOf(0)}\n`);
    writeFileSync(runtime.confPath, conf);
    const main = startNginx(prefix, runtime.confPath);
    children.push(main);

    await waitFor(async () => (await get(up[0]!, 'x', '/')).status === 200, { timeoutMs: 10_000, what: 'upstream NGINX' }).catch(failure(children[0]!, 'upstream NGINX'));
    await waitFor(async () => {
      const r = await get(status!, '127.0.0.1', '/configuration/backends', 'POST', JSON.stringify(backendsPayload(config)));
      return r.status === 201;
    }, { timeoutMs: 15_000, what: 'the backends POST' }).catch(failure(main, 'NGINX'));
    await waitFor(async () => (await get(http!, hostOf(0), '/')).status === 200, { timeoutMs: 10_000, what: 'the Lua-balanced host' });
    await waitFor(async () => (await get(http!, STATIC_HOST, '/')).status === 200, { timeoutMs: 10_000, what: 'the static host' });

    // Warm both paths (worker Lua caches, keepalive pools), then A B B A … turns.
    await wrk(http!, hostOf(0), 1);
    await wrk(http!, STATIC_HOST, 1);
    const lua: WrkResult[] = [];
    const stat: WrkResult[] = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? ['lua', 'static'] : ['static', 'lua'];
      for (const which of order) {
        if (which === 'lua') lua.push(await wrk(http!, hostOf(0), seconds));
        else stat.push(await wrk(http!, STATIC_HOST, seconds));
      }
    }
    const avg = (xs: WrkResult[]): WrkResult => ({
      rps: xs.reduce((a, x) => a + x.rps, 0) / xs.length,
      p99: Math.max(...xs.map((x) => x.p99)),
      p50: xs.reduce((a, x) => a + x.p50, 0) / xs.length,
      errors: xs.reduce((a, x) => a + x.errors, 0),
    });
    const l = avg(lua);
    const s = avg(stat);
    return { lua: l, static: s, ratio: l.rps / s.rps, rounds, seconds };
  } finally {
    for (const c of children) await stopNginx(c);
    rmSync(prefix, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { dataplane_rps_ratio: null, dataplane_p99_ms: null, dataplane_static_p99_ms: null, dataplane_rps: null, dataplane_static_rps: null };
  await attempt(rows, 'data plane', async () => {
    const c = await compare(full ? 15 : 5, 2);
    fig.dataplane_rps_ratio = round(c.ratio, 3);
    fig.dataplane_p99_ms = round(c.lua.p99, 2);
    fig.dataplane_static_p99_ms = round(c.static.p99, 2);
    fig.dataplane_rps = round(c.lua.rps, 0);
    fig.dataplane_static_rps = round(c.static.rps, 0);
    const how = `wrk -t2 -c32 -d${c.seconds}s, ${c.rounds} turns each (A B B A), one NGINX, 3 endpoints (NGINX return 200)`;
    rows.push({ figure: 'requests/s through the Lua balancer', value: c.lua.rps.toFixed(0), note: `p50 ${c.lua.p50.toFixed(2)} ms, p99 ${c.lua.p99.toFixed(2)} ms, errors ${c.lua.errors}` });
    rows.push({ figure: 'requests/s through a static upstream', value: c.static.rps.toFixed(0), note: `p50 ${c.static.p50.toFixed(2)} ms, p99 ${c.static.p99.toFixed(2)} ms, errors ${c.static.errors}` });
    rows.push({ figure: 'Lua / static requests/s', value: c.ratio.toFixed(3), target: '≥ 0.9', status: verdict(c.ratio, 0.9, true), note: how });
    rows.push({ figure: 'p99 latency through the Lua balancer', value: `${c.lua.p99.toFixed(2)} ms`, note: `static: ${c.static.p99.toFixed(2)} ms (worst turn)` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage(), note: 'other load shares the 2 cores with wrk and NGINX' });
  printTable('data plane', rows);
  emitFigures(fig);
}

await main();
