// The number of CPUs NGINX's workers may use, as ingress-nginx counts them for
// `worker-processes: auto` (its default): a container's CPU limit (the cgroup's quota over its
// period, rounded up) where one is set, else the CPUs this process may run on. NGINX's own `auto`
// ignores the limit and would start a worker per CPU of the node.
import { availableParallelism } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** 2 when `dir` is a cgroup v2 hierarchy (it has cgroup.controllers), else 1. */
export function cgroupVersion(dir: string): 1 | 2 {
  return existsSync(join(dir, 'cgroup.controllers')) ? 2 : 1;
}

const read = (dir: string, file: string): string | null => {
  try { return readFileSync(join(dir, file), 'utf8').trim(); } catch { return null; }
};

/** A positive integer, or null (absent, `max`, -1, garbage). */
const positive = (s: string | undefined | null): number | null => (s != null && /^\d+$/.test(s) && Number(s) > 0 ? Number(s) : null);

/**
 * The CPU limit the cgroup at `dir` sets (v2: cpu.max "quota period", period 100000 when
 * absent; v1: cpu.cfs_quota_us over cpu.cfs_period_us), rounded up; null without a limit.
 */
export function cgroupCpuLimit(dir: string): number | null {
  let quota: number | null;
  let period: number | null;
  if (cgroupVersion(dir) === 2) {
    const [q, p] = (read(dir, 'cpu.max') ?? '').split(/\s+/);
    quota = positive(q);
    period = p === undefined ? 100_000 : positive(p);
  } else {
    quota = positive(read(dir, 'cpu.cfs_quota_us'));
    period = positive(read(dir, 'cpu.cfs_period_us'));
  }
  return quota === null || period === null ? null : Math.ceil(quota / period);
}

/**
 * The CPUs for worker_processes: the limit of this process's cgroup (v2 at /sys/fs/cgroup, v1's
 * cpu controller at /sys/fs/cgroup/cpu) when it has one, else the CPUs its affinity allows.
 */
export function usableCpus(root = '/sys/fs/cgroup'): number {
  const limit = cgroupVersion(root) === 2 ? cgroupCpuLimit(root) : cgroupCpuLimit(join(root, 'cpu'));
  return limit ?? availableParallelism();
}
