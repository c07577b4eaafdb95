// nginx_ingress_controller_nginx_process_*: the NGINX master and its children from /proc (CPU,
// memory, I/O, process count, oldest start) and stub_status's connection and request counters,
// read at scrape time, with ingress-nginx's names and help texts.
import { readdirSync, readFileSync } from 'node:fs';
import { controlRequest } from '../actors/control-client.js';
import type { ControlChannel } from '../render/control.js';
import type { Registry } from 'prom-client';
import { registerFamily, type Sample } from './exposition.js';

const P = 'nginx_ingress_controller_nginx_process_';
const CLOCK_TICKS = 100; // USER_HZ on Linux

export interface ProcessSample { pid: number; ppid: number; cpuSeconds: number; startTicks: number; rssBytes: number; vmBytes: number; readBytes: number; writeBytes: number }

/** One process from /proc, or null when it is gone. */
export function readProcess(pid: number, proc = '/proc'): ProcessSample | null {
  try {
    const stat = readFileSync(`${proc}/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`${proc}/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    let readBytes = 0;
    let writeBytes = 0;
    try {
      const io = readFileSync(`${proc}/${pid}/io`, 'utf8');
      readBytes = Number(/^read_bytes: (\d+)/m.exec(io)?.[1] ?? 0);
      writeBytes = Number(/^write_bytes: (\d+)/m.exec(io)?.[1] ?? 0);
    } catch { /* io needs the same user (or root) */ }
    return {
      pid, ppid: Number(f[1]), cpuSeconds: (Number(f[11]) + Number(f[12])) / CLOCK_TICKS, startTicks: Number(f[19]),
      rssBytes: kb('VmRSS'), vmBytes: kb('VmSize'), readBytes, writeBytes,
    };
  } catch {
    return null;
  }
}

/** The master and its children (workers, cache manager). */
export function nginxProcesses(masterPid: number, proc = '/proc'): ProcessSample[] {
  const master = readProcess(masterPid, proc);
  if (!master) return [];
  const out = [master];
  for (const name of readdirSync(proc)) {
    if (!/^\d+$/.test(name) || Number(name) === masterPid) continue;
    let stat: string;
    try { stat = readFileSync(`${proc}/${name}/stat`, 'utf8'); } catch { continue; }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== masterPid) continue;
    const p = readProcess(Number(name), proc);
    if (p) out.push(p);
  }
  return out;
}

function bootTime(proc: string): number {
  return Number(/^btime (\d+)/m.exec(readFileSync(`${proc}/stat`, 'utf8'))?.[1] ?? 0);
}

/** stub_status's text as NGINX serves it on the status server: the one place that reads it. */
export async function fetchStubStatus(channel: ControlChannel, timeoutMs = 2000): Promise<string> {
  const res = await controlRequest(channel, 'GET', '/nginx_status', { timeoutMs });
  if (res.status !== 200) throw new Error(`stub_status answered ${res.status}`);
  return res.body;
}

export interface StubStatus { active: number; accepted: number; handled: number; requests: number; reading: number; writing: number; waiting: number }

export function parseStubStatus(text: string): StubStatus {
  const n = (re: RegExp, i = 1) => Number(re.exec(text)?.[i] ?? 0);
  const totals = /(\d+)\s+(\d+)\s+(\d+)/;
  return {
    active: n(/Active connections: (\d+)/),
    accepted: n(totals, 1), handled: n(totals, 2), requests: n(totals, 3),
    reading: n(/Reading: (\d+)/), writing: n(/Writing: (\d+)/), waiting: n(/Waiting: (\d+)/),
  };
}

export interface NginxProcessMetricsOptions {
  registry: Registry;
  masterPid: () => number | null;
  stubStatus: () => Promise<string>;
  proc?: string;
}

/**
 * Registers the families. CPU and I/O counters accumulate per process, so a worker that exits
 * at a reload keeps what it used and the counters never go down (as process-exporter's groups).
 */
export function registerNginxProcessMetrics(opts: NginxProcessMetricsOptions): void {
  const proc = opts.proc ?? '/proc';
  const seen = new Map<number, { startTicks: number; cpu: number; read: number; write: number }>();
  const totals = { cpu: 0, read: 0, write: 0 };
  let snapshot: { at: number; procs: ProcessSample[] } = { at: -1, procs: [] };

  // One /proc walk per scrape, shared by the seven families.
  function sample(): ProcessSample[] {
    const now = Date.now();
    if (now - snapshot.at < 500) return snapshot.procs;
    const master = opts.masterPid();
    const procs = master === null ? [] : nginxProcesses(master, proc);
    for (const p of procs) {
      const prev = seen.get(p.pid);
      const base = prev && prev.startTicks === p.startTicks ? prev : { startTicks: p.startTicks, cpu: 0, read: 0, write: 0 };
      totals.cpu += Math.max(0, p.cpuSeconds - base.cpu);
      totals.read += Math.max(0, p.readBytes - base.read);
      totals.write += Math.max(0, p.writeBytes - base.write);
      seen.set(p.pid, { startTicks: p.startTicks, cpu: p.cpuSeconds, read: p.readBytes, write: p.writeBytes });
    }
    const alive = new Set(procs.map((p) => p.pid));
    for (const pid of seen.keys()) if (!alive.has(pid)) seen.delete(pid);
    snapshot = { at: now, procs };
    return procs;
  }

  const family = (name: string, help: string, type: 'counter' | 'gauge', value: (ps: ProcessSample[]) => number) =>
    registerFamily(opts.registry, { name: `${P}${name}`, help, type, samples: () => {
      const ps = sample();
      return ps.length === 0 ? [] : [{ value: value(ps) }];
    } });
  const sum = (ps: ProcessSample[], f: (p: ProcessSample) => number) => ps.reduce((a, p) => a + f(p), 0);
  family('num_procs', 'number of processes', 'gauge', (ps) => ps.length);
  family('cpu_seconds_total', 'Cpu usage in seconds', 'counter', () => totals.cpu);
  family('read_bytes_total', 'number of bytes read', 'counter', () => totals.read);
  family('write_bytes_total', 'number of bytes written', 'counter', () => totals.write);
  family('resident_memory_bytes', 'number of bytes of memory in use', 'gauge', (ps) => sum(ps, (p) => p.rssBytes));
  family('virtual_memory_bytes', 'number of bytes of memory in use', 'gauge', (ps) => sum(ps, (p) => p.vmBytes));
  family('oldest_start_time_seconds', 'start time in seconds since 1970/01/01', 'gauge',
    (ps) => bootTime(proc) + Math.min(...ps.map((p) => p.startTicks)) / CLOCK_TICKS);

  // stub_status: one request per scrape, shared by its three families.
  let status: { at: number; value: Promise<StubStatus | null> } = { at: -1, value: Promise.resolve(null) };
  const stub = () => {
    const now = Date.now();
    if (now - status.at >= 500) status = { at: now, value: opts.stubStatus().then(parseStubStatus, () => null) };
    return status.value;
  };
  registerFamily(opts.registry, {
    name: `${P}connections_total`, help: 'total number of connections with state {accepted, handled}', type: 'counter',
    samples: async (): Promise<Sample[]> => {
      const s = await stub();
      return s ? [{ labels: { state: 'accepted' }, value: s.accepted }, { labels: { state: 'handled' }, value: s.handled }] : [];
    },
  });
  registerFamily(opts.registry, {
    name: `${P}requests_total`, help: 'total number of client requests', type: 'counter',
    samples: async () => { const s = await stub(); return s ? [{ value: s.requests }] : []; },
  });
  registerFamily(opts.registry, {
    name: `${P}connections`, help: 'current number of client connections with state {active, reading, writing, waiting}', type: 'gauge',
    samples: async () => {
      const s = await stub();
      return s ? (['active', 'reading', 'writing', 'waiting'] as const).map((state) => ({ labels: { state }, value: s[state] })) : [];
    },
  });
}
