// `ingress-rx local` as a bench's child process: free ports, its JSON log lines kept for the
// figures the controller itself logs (reload durations), and a stop that takes NGINX down too.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../test/support/ports.js';
import { sendRequest } from '../test/support/local-harness.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REPO_ROOT, hostOf, writeManifests } from './gen.js';

export interface LocalMode {
  /** The manifests directory (the cluster). */
  manifests: string;
  workdir: string;
  /** The controller's process (NGINX runs under it). */
  pid: number;
  ports: { http: number; https: number; healthz: number };
  /** Writes a manifest file atomically (rename), as an editor or `kubectl` would change one. */
  write(file: string, items: object[]): void;
  /** The controller's log lines so far, parsed (`--log-level info`). */
  logs(): Array<Record<string, unknown>>;
  /** Polls `host` until `ok` holds for the status and body; resolves with the ms it took. */
  until(host: string, ok: (status: number, body: string) => boolean, timeoutMs: number, path?: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * A temp directory with `manifests/` and `work/`, `fill(manifests)` run before the controller
 * starts (as a cluster that exists already), then `ingress-rx local` on it.
 */
export async function startLocalMode(opts: { prefix: string; fill: (manifests: string) => void; args?: string[] }): Promise<LocalMode> {
  const dir = mkdtempSync(join(tmpdir(), opts.prefix));
  chmodSync(dir, 0o711); // as root, NGINX's workers (nobody) must enter the workdir's parent
  const manifests = join(dir, 'manifests');
  const workdir = join(dir, 'work');
  mkdirSync(manifests, { recursive: true });
  opts.fill(manifests);
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test', 'support', 'cli-entry.ts'), 'local',
    '--manifests', manifests, '--workdir', workdir, '--http-port', String(http), '--https-port', String(https),
    '--status-port', String(status), '--stream-port', String(stream), '--healthz-port', String(healthz),
    '--default-server-port', String(def), '--log-level', 'info', ...(opts.args ?? [])], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d; });
  child.stderr!.on('data', (d: Buffer) => { out += d; });
  let exited = false;
  child.on('exit', () => { exited = true; });
  return {
    manifests, workdir, pid: child.pid!, ports: { http: http!, https: https!, healthz: healthz! },
    write(file, items) {
      const p = join(manifests, file);
      writeFileSync(`${p}.tmp`, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
      renameSync(`${p}.tmp`, p);
    },
    logs() {
      const lines: Array<Record<string, unknown>> = [];
      for (const l of out.split('\n')) {
        if (!l.startsWith('{')) continue;
        try { lines.push(JSON.parse(l) as Record<string, unknown>); } catch { /* a partial last line */ }
      }
      return lines;
    },
    async until(host, ok, timeoutMs, path = '/') {
      const t0 = performance.now();
      for (;;) {
        if (exited) throw new Error(`ingress-rx local exited: ${out.slice(-500)}`);
        const r = await sendRequest(http!, host, path).catch(() => null);
        if (r && ok(r.status, r.body)) return performance.now() - t0;
        if (performance.now() - t0 > timeoutMs) throw new Error(`${host} not served as expected after ${timeoutMs} ms (last: ${r?.status ?? 'no answer'})`);
        await new Promise((res) => setTimeout(res, 10));
      }
    },
    async stop() {
      if (!exited) {
        const done = new Promise((res) => child.once('exit', res));
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await done;
        clearTimeout(killer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface GeneratedCluster {
  local: LocalMode;
  /** Seconds from start until the generated Ingresses are served. */
  startS: number;
  stop(): Promise<void>;
}

/**
 * N generated Ingresses (10 per manifest file) whose endpoints are one `200 ok` HTTP server,
 * `ingress-rx local` on them with a raised rate limit unless `defaultRateLimit` (the bucket must
 * not hold an isolated change back: the figures are the change's own), resolved once they are served.
 */
export async function startGeneratedCluster(prefix: string, n: number, opts: { defaultRateLimit?: boolean } = {}): Promise<GeneratedCluster> {
  const echo = createServer((_req, res) => { res.writeHead(200); res.end('ok'); });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const port = (echo.address() as AddressInfo).port;
  const closeEcho = () => { echo.closeAllConnections(); echo.close(); };
  const t0 = performance.now();
  let local: LocalMode;
  try {
    local = await startLocalMode({
      prefix, args: opts.defaultRateLimit ? [] : ['--sync-rate-limit', '20'],
      fill: (dir) => writeManifests(dir, { n, endpoints: () => [{ address: '127.0.0.1', port }] }, 10),
    });
  } catch (err) {
    closeEcho();
    throw err;
  }
  const stop = async () => { await local.stop(); closeEcho(); };
  try {
    await local.until(hostOf(n - 2), (s) => s === 200, 600_000);
  } catch (err) {
    await stop();
    throw err;
  }
  return { local, startS: (performance.now() - t0) / 1000, stop };
}
