// The CPU count behind `worker-processes: auto`: a cgroup's CPU limit (v1 and v2 files, as the
// kernel writes them) rounded up, and the process's CPU count without one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuLimit, cgroupVersion, usableCpus } from '../../../src/render/cpu-count.js';

const dirs: string[] = [];
function cgroupDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'irx-cgroup-'));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, f, '..'), { recursive: true });
    writeFileSync(join(dir, f), text);
  }
  return dir;
}
test.after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

test('cgroup v2: cpu.max quota over period, rounded up; "max" or garbage is no limit; the period defaults to 100000', () => {
  const v2 = (max: string) => cgroupDir({ 'cgroup.controllers': 'cpu io memory\n', 'cpu.max': `${max}\n` });
  assert.is(cgroupVersion(v2('max 100000')), 2);
  assert.is(cgroupCpuLimit(v2('150000 100000')), 2);
  assert.is(cgroupCpuLimit(v2('200000 100000')), 2);
  assert.is(cgroupCpuLimit(v2('50000 100000')), 1);
  assert.is(cgroupCpuLimit(v2('300000')), 3);
  assert.is(cgroupCpuLimit(v2('max 100000')), null);
  assert.is(cgroupCpuLimit(v2('-1 x')), null);
  assert.is(cgroupCpuLimit(v2('0 100000')), null);
  assert.is(cgroupCpuLimit(cgroupDir({ 'cgroup.controllers': '' })), null);
});

test('cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us; a quota of -1 is no limit', () => {
  const v1 = (quota: string) => cgroupDir({ 'cpu.cfs_quota_us': `${quota}\n`, 'cpu.cfs_period_us': '100000\n' });
  assert.is(cgroupVersion(v1('-1')), 1);
  assert.is(cgroupCpuLimit(v1('250000')), 3);
  assert.is(cgroupCpuLimit(v1('-1')), null);
  assert.is(cgroupCpuLimit(cgroupDir({})), null);
});

test('usableCpus: the limit of the root (v2) or of its cpu controller (v1), else the CPUs this process may use', () => {
  assert.is(usableCpus(cgroupDir({ 'cgroup.controllers': '', 'cpu.max': '400000 100000' })), 4);
  assert.is(usableCpus(cgroupDir({ 'cpu/cpu.cfs_quota_us': '500000', 'cpu/cpu.cfs_period_us': '100000' })), 5);
  assert.is(usableCpus(cgroupDir({ 'cgroup.controllers': '', 'cpu.max': 'max 100000' })), availableParallelism());
  assert.is(usableCpus(cgroupDir({})), availableParallelism());
});

test.run();
