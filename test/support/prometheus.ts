// A real Prometheus (Debian's package) for tests: installed when missing without starting the
// system service, then run on a free loopback port with its own storage directory, scraping
// the given targets every second; instant queries and label values through its HTTP API.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports.js';
import { waitFor } from './wait.js';

const BINARY = '/usr/bin/prometheus';
const POLICY = '/usr/sbin/policy-rc.d';

/** Installs Debian's prometheus when it is missing; a policy-rc.d keeps its service from starting on :9090. */
export function ensurePrometheus(): void {
  if (existsSync(BINARY)) return;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  const run = (cmd: string[]) => execFileSync(sudo[0] ?? cmd[0]!, sudo.length ? cmd : cmd.slice(1), { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  const ownPolicy = !existsSync(POLICY);
  if (ownPolicy) run(['sh', '-c', `printf '#!/bin/sh\\nexit 101\\n' > ${POLICY} && chmod 755 ${POLICY}`]);
  try {
    run(['apt-get', 'update', '-qq']);
    run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'prometheus']);
  } finally {
    if (ownPolicy) run(['rm', '-f', POLICY]);
  }
}

export interface PromVector { metric: Record<string, string>; value: [number, string] }

export interface Prometheus {
  port: number;
  /** An instant query; throws on a PromQL error. */
  query(expr: string): Promise<PromVector[]>;
  /** Grafana's label_values(selector, label): the label's values among the series matching selector. */
  labelValues(selector: string, label: string): Promise<string[]>;
  output(): string;
  stop(): Promise<void>;
}

function getJson(port: number, path: string): Promise<{ status: string; data: unknown; error?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => {
        try { resolve(JSON.parse(body)); } catch { reject(new Error(`not JSON (${res.statusCode}): ${body.slice(0, 200)}`)); }
      });
    });
    req.on('timeout', () => req.destroy(new Error('Prometheus query timed out')));
    req.on('error', reject);
    req.end();
  });
}

export async function startPrometheus(opts: { targets: string[]; labels: Record<string, string> }): Promise<Prometheus> {
  ensurePrometheus();
  const dir = mkdtempSync(join(tmpdir(), 'irx-prometheus-'));
  const [port] = await freePorts(1);
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify({
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [{ job_name: 'ingress-rx', static_configs: [{ targets: opts.targets, labels: opts.labels }] }],
  }));
  const child: ChildProcess = spawn(BINARY, [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1h', '--log.level=warn',
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`prometheus exited: ${out.slice(-2000)}`);
      return (await getJson(port!, '/api/v1/status/buildinfo').catch(() => null))?.status === 'success';
    }, { timeoutMs: 30_000, what: 'Prometheus ready' });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    port: port!,
    output: () => out,
    async query(expr) {
      const r = await getJson(port!, `/api/v1/query?query=${encodeURIComponent(expr)}`);
      if (r.status !== 'success') throw new Error(`${r.error ?? 'query failed'}: ${expr}`);
      const data = r.data as { resultType: string; result: PromVector[] | [number, string] };
      // A scalar result (e.g. an expression of time()) as a one-sample vector.
      return data.resultType === 'scalar' ? [{ metric: {}, value: data.result as [number, string] }] : data.result as PromVector[];
    },
    async labelValues(selector, label) {
      const r = await getJson(port!, `/api/v1/series?match[]=${encodeURIComponent(selector)}`);
      if (r.status !== 'success') throw new Error(`${r.error ?? 'series failed'}: ${selector}`);
      return [...new Set((r.data as Array<Record<string, string>>).map((s) => s[label]).filter((v): v is string => v !== undefined))].sort();
    },
    stop,
  };
}
