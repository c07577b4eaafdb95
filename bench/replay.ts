// Replay speed and tracing overhead: a generated log (1k Ingresses, then an endpoint storm at
// 100 updates/s of log time) replayed with `ingress-rx replay --instant`, without and with
// --trace, as child processes timed end to end. Full mode replays 100k events; quick mode 20k
// and extrapolates linearly to 100k (said so in the table).
//   node --import tsx bench/replay.ts [--full] [--events N]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, writeEventLog } from './gen.js';
import { arg, attempt, emitFigures, isFull, loadAverage, printTable, round, timedChild, verdict, type Row } from './lib.js';

const INGRESSES = 1000;
const CLUSTER_EVENTS = 2 + 3 * INGRESSES; // IngressClass, Secret, then Service, slice, Ingress each

async function replayOnce(log: string, out: string, trace: string | null): Promise<{ s: number; cpu: number; summary: string }> {
  const r = await timedChild(process.execPath, [
    '--import', 'tsx', join(REPO_ROOT, 'test', 'support', 'cli-entry.ts'), 'replay', log, '--instant', '--out', out,
    ...(trace ? ['--trace', trace] : []), '--log-level', 'error',
  ], { cwd: REPO_ROOT });
  return { s: r.wallS, cpu: r.cpuS, summary: r.stdout.trim().split('\n').pop() ?? '' };
}

async function main(): Promise<void> {
  const full = isFull();
  const events = Number(arg('--events') ?? (full ? 100_000 : 20_000));
  const rows: Row[] = [];
  const fig: Record<string, number | null> = {
    replay_100k_s: null, replay_events: null, replay_measured_s: null, replay_cpu_s: null, replay_traced_s: null, replay_traced_cpu_s: null,
    trace_overhead_ratio: null, trace_overhead_wall_ratio: null,
  };
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-replay-'));
  try {
    await attempt(rows, 'replay', async () => {
      const log = join(dir, 'storm.ndjson');
      const written = await writeEventLog(log, { n: INGRESSES }, { storm: Math.max(0, events - CLUSTER_EVENTS), stormRate: 100 });
      const mb = statSync(log).size / 2 ** 20;
      const plain = await replayOnce(log, join(dir, 'out-plain'), null);
      const traced = await replayOnce(log, join(dir, 'out-traced'), join(dir, 'trace.json'));
      const per100k = plain.s * (100_000 / written);
      fig.replay_events = written;
      fig.replay_measured_s = round(plain.s, 2);
      fig.replay_cpu_s = round(plain.cpu, 2);
      fig.replay_traced_s = round(traced.s, 2);
      fig.replay_traced_cpu_s = round(traced.cpu, 2);
      fig.replay_100k_s = round(per100k, 1);
      // CPU time, not wall time: on a shared machine the wall clock mostly measures the neighbours.
      fig.trace_overhead_ratio = round(traced.cpu / plain.cpu, 3);
      fig.trace_overhead_wall_ratio = round(traced.s / plain.s, 3);
      rows.push({ figure: `replay --instant, ${written} events`, value: `${plain.s.toFixed(1)} s`, note: `CPU ${plain.cpu.toFixed(1)} s; ${mb.toFixed(0)} MB log; ${plain.summary.replace(/ → .*$/, '')}` });
      rows.push({
        figure: 'replay of 100k events', value: `${per100k.toFixed(1)} s`, target: '≤ 5 s', status: verdict(per100k, 5),
        note: `${written >= 100_000 ? 'measured' : `EXTRAPOLATED linearly from ${written} events (quick mode)`}; CPU-based: ${(plain.cpu * (100_000 / written)).toFixed(1)} s`,
      });
      rows.push({ figure: 'replay with --trace / without (CPU time)', value: (traced.cpu / plain.cpu).toFixed(3),
        note: `wall ratio ${(traced.s / plain.s).toFixed(3)}; traced ${traced.s.toFixed(1)} s wall, ${traced.cpu.toFixed(1)} s CPU; same log, child processes incl. startup` });
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('replay and tracing', rows);
  emitFigures(fig);
}

await main();
