// NGINX for the data-plane benches: start and stop it, a `return 200` endpoint NGINX, wrk
// turns with the NGINX CPU they cost, and wrk itself (installed from Debian when missing).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { promisify } from 'node:util';

const run = promisify(execFile);
const NGINX = '/usr/sbin/nginx';

const stderrOf = new WeakMap<ChildProcess, string[]>();

export function startNginx(prefix: string, conf: string, opts: { ownSession?: boolean } = {}): ChildProcess {
  // Same process group as this script: if `npm run bench` stops the script, NGINX goes too.
  // `ownSession`: a session of its own, as the controller starts NGINX: with the kernel's
  // autogroup scheduling, a session is what gets a fair share of a loaded machine's CPU.
  const child = spawn(NGINX, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'], detached: opts.ownSession === true });
  const text: string[] = [];
  stderrOf.set(child, text);
  child.stderr!.on('data', (d: Buffer) => { text.push(String(d)); });
  return child;
}

export function failure(child: ChildProcess, what: string): (err: unknown) => never {
  return (err) => {
    throw new Error(`${(err as Error).message}; ${what} stderr: ${(stderrOf.get(child) ?? []).join('').slice(-300)}`);
  };
}

export async function stopNginx(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return;
  const exited = new Promise((r) => child.once('exit', r));
  // The master stops its workers; SIGTERM is a fast shutdown.
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

export function upstreamConf(prefix: string, ports: number[]): string {
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

export interface WrkResult {
  rps: number; p99: number; p50: number; errors: number; requests: number; cpuUsPerRequest?: number;
  /** The errors by kind: non-2xx/3xx answers and each kind of socket error (`timeout`: no answer within wrk's 2 s). */
  errorKinds?: Record<'non-2xx' | 'connect' | 'read' | 'write' | 'timeout', number>;
}

/** CPU time (user + system, µs) of an NGINX master and its workers, from /proc. */
export function nginxCpuUs(masterPid: number): number {
  const ticks = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpu: Number(f[11]) + Number(f[12]) };
  };
  let total = ticks(masterPid).cpu;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const t = ticks(Number(name));
      if (t.ppid === masterPid) total += t.cpu;
    } catch { /* exited */ }
  }
  return total * 10_000; // USER_HZ 100
}

/**
 * Time on CPU (µs) of an NGINX master and its workers from /proc/<pid>/schedstat: nanoseconds,
 * where /proc/<pid>/stat counts 10 ms ticks (too coarse for a turn of a second or two).
 */
export function nginxRunUs(masterPid: number): number {
  const run = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  let total = run(masterPid);
  for (const child of readFileSync(`/proc/${masterPid}/task/${masterPid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
    try { total += run(Number(child)); } catch { /* exited */ }
  }
  return total;
}

function toMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v.trim());
  if (!m) return NaN;
  const x = Number(m[1]);
  return m[2] === 'us' ? x / 1000 : m[2] === 'ms' ? x : m[2] === 's' ? x * 1000 : x * 60_000;
}

export async function wrk(port: number, host: string, seconds: number, scheme: 'http' | 'https' = 'http'): Promise<WrkResult> {
  const { stdout } = await run('wrk', ['-t2', '-c32', `-d${seconds}s`, '--latency', '-H', `Host: ${host}`, `${scheme}://127.0.0.1:${port}/`], { timeout: (seconds + 30) * 1000 });
  return parseWrk(stdout);
}

/** wrk's printed summary (run with `--latency`): errors are non-2xx/3xx answers plus socket errors. */
export function parseWrk(stdout: string): WrkResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p99 = toMs(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? '');
  const p50 = toMs(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? '');
  const requests = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const sockErr = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const [connect, read, write, timeout] = [1, 2, 3, 4].map((i) => Number(sockErr?.[i] ?? 0)) as [number, number, number, number];
  const errors = non2xx + connect + read + write + timeout;
  if (!Number.isFinite(rps)) throw new Error(`wrk output not understood: ${stdout.slice(0, 200)}`);
  return { rps, p99, p50, errors, requests, errorKinds: { 'non-2xx': non2xx, connect, read, write, timeout } };
}

/** A wrk turn with the NGINX CPU it cost per request: unlike requests/s, not skewed by other load. */
export async function measuredTurn(masterPid: number, port: number, host: string, seconds: number): Promise<WrkResult> {
  const before = nginxCpuUs(masterPid);
  const r = await wrk(port, host, seconds);
  return { ...r, cpuUsPerRequest: (nginxCpuUs(masterPid) - before) / r.requests };
}

export function get(port: number, host: string, path: string, method = 'GET', body?: string): Promise<{ status: number; body: string }> {
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

/** Several turns of one variant as one: mean requests/s, p50 and CPU per request, worst p99, totals. */
export function averageTurns(xs: WrkResult[]): WrkResult {
  return {
    rps: xs.reduce((a, x) => a + x.rps, 0) / xs.length,
    p99: Math.max(...xs.map((x) => x.p99)),
    p50: xs.reduce((a, x) => a + x.p50, 0) / xs.length,
    errors: xs.reduce((a, x) => a + x.errors, 0),
    requests: xs.reduce((a, x) => a + x.requests, 0),
    cpuUsPerRequest: xs.reduce((a, x) => a + (x.cpuUsPerRequest ?? NaN), 0) / xs.length,
  };
}

/** Installs Debian's wrk when it is missing (the data-plane benches drive NGINX with it). */
export function ensureWrk(): void {
  ensureDebianTool('wrk', 'wrk');
}

/** Installs Debian package `pkg` when `binary` is missing (e.g. h2load from nghttp2-client). */
export function ensureDebianTool(binary: string, pkg: string): void {
  try {
    execFileSync(binary, ['--version'], { stdio: 'ignore' });
    return;
  } catch (err) {
    // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
  }
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const apt = (args: string[]) => execFileSync(sudo[0] ?? 'apt-get', [...(sudo.length ? ['apt-get'] : []), ...args], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', '--no-install-recommends', pkg]);
}
