// Shared bits of the bench scripts: mode flags, timing, statistics, the printed table and the
// final machine-readable JSON line every script ends with.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { readFileSync } from 'node:fs';

export type Figures = Record<string, number | string | null>;

export interface Row {
  figure: string;
  value: string;
  target?: string;
  /** 'met', 'MISSED', 'n/a', 'ERROR'. */
  status?: string;
  note?: string;
}

export const isFull = (argv = process.argv) => argv.includes('--full');

export function arg(name: string, argv = process.argv): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

export function ms(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export const now = () => process.hrtime.bigint();

/** CPU time (user + system) of this process in ms: on a busy machine it shows what wall time hides. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * CPU time of this process's main thread in ms, from the kernel's scheduler statistics (Linux):
 * without the GC's helper threads, which process CPU counts (about as much again in a 10k build).
 */
export function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

export function loadAverage(): string {
  return os.loadavg().map((x) => x.toFixed(1)).join(' ');
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

export const median = (values: number[]) => percentile(values, 50);

export const round = (x: number | null | undefined, digits = 1): number | null =>
  x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits;

/** 'met' or 'MISSED' against an upper (or, with `atLeast`, lower) bound. */
export function verdict(value: number | null, target: number, atLeast = false): string {
  if (value === null) return 'n/a';
  return (atLeast ? value >= target : value <= target) ? 'met' : 'MISSED';
}

export function printTable(title: string, rows: Row[]): void {
  const cols: Array<keyof Row> = ['figure', 'value', 'target', 'status', 'note'];
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ').trimEnd();
  const out = [`\n## ${title}`, line(cols.map(String)), widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...rows.map((r) => line(cols.map((c) => String(r[c] ?? ''))))];
  process.stdout.write(`${out.join('\n')}\n`);
}

/** The last line of every bench script. */
export function emitFigures(figures: Figures): void {
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** Runs a figure; on failure records the error as a table row and leaves its keys null. */
export async function attempt<T>(rows: Row[], figure: string, fn: () => Promise<T> | T): Promise<T | null> {
  try {
    return await fn();
  } catch (err) {
    rows.push({ figure, value: '-', status: 'ERROR', note: String((err as Error)?.message ?? err).split('\n')[0]!.slice(0, 160) });
    return null;
  }
}

export function machine(): Record<string, string> {
  const safe = (cmd: string, args: string[]) => {
    try { return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(); } catch (err) {
      return String((err as { stderr?: string }).stderr ?? '').trim();
    }
  };
  return {
    nproc: safe('nproc', []),
    memory: safe('sh', ['-c', "free -m | awk '/Mem:/{print $2\" MB\"}'"]),
    node: process.version,
    nginx: safe('sh', ['-c', '/usr/sbin/nginx -v 2>&1']).replace(/^nginx version: /, ''),
    wrk: safe('sh', ['-c', 'wrk --version 2>&1 | head -1']),
  };
}

export interface ChildTiming { wallS: number; cpuS: number; stdout: string }

/** Runs a command to completion under /usr/bin/time: wall and CPU (user + system) seconds. */
export async function timedChild(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<ChildTiming> {
  const { execFile } = await import('node:child_process');
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(os.tmpdir(), 'irx-bench-time-'));
  const out = join(dir, 'time');
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile('/usr/bin/time', ['-o', out, '-f', '%e %U %S', cmd, ...args], { cwd: opts.cwd, timeout: opts.timeoutMs ?? 900_000, maxBuffer: 16 << 20 },
        (err, so, se) => (err ? reject(new Error(`${cmd} ${args.slice(0, 4).join(' ')}… failed: ${String(se).trim().split('\n').slice(-3).join(' ')}`)) : resolve(so)));
    });
    const [wall, user, sys] = readFileSync(out, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    return { wallS: wall!, cpuS: user! + sys!, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** utime + stime of a live process, and cutime + cstime of its reaped children, from /proc (USER_HZ is 100 on Linux). */
export function processCpuSeconds(pid: number): { own: number; reaped: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { own: (Number(fields[11]) + Number(fields[12])) / 100, reaped: (Number(fields[13]) + Number(fields[14])) / 100 };
}

export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** NGINX's master and workers under the controller: RSS and PSS summed, in MB. */
export function nginxMemoryMb(controllerPid: number): { rss: number; pss: number; processes: number } {
  let rss = 0;
  let pss = 0;
  let processes = 0;
  for (const master of childPids(controllerPid)) {
    if (!readFileSync(`/proc/${master}/cmdline`, 'utf8').includes('nginx')) continue;
    for (const p of [master, ...childPids(master)]) {
      const rollup = readFileSync(`/proc/${p}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)![1]);
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)![1]);
      processes++;
    }
  }
  return { rss: rss / 1024, pss: pss / 1024, processes };
}

/** CPU of the NGINX master and its workers, alive under the controller (`nginx -t` runs are reaped: see `reaped`). */
export function nginxCpuSeconds(controllerPid: number): number {
  let sum = 0;
  for (const master of childPids(controllerPid)) {
    if (!readFileSync(`/proc/${master}/cmdline`, 'utf8').includes('nginx')) continue;
    for (const p of [master, ...childPids(master)]) sum += processCpuSeconds(p).own;
  }
  return sum;
}
