// ingress-nginx test/e2e/cgroups/cgroups.go: the CPU count behind `worker-processes: auto` (its
// default) reads a container's CPU limit from cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us)
// and v2 (cpu.max) files, here at a directory of the test's own, as the Its use a custom path.
// ingress-rx renders `auto` as that count (src/render/cpu-count.ts; the rendering in
// test/unit/render/engine.test.ts), so a pod limited to 2 CPUs on a larger node runs 2 workers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupCpuLimit, cgroupVersion } from '../../../../src/render/cpu-count.js';
import { ported } from '../port.js';

const its = ported(test, () => { throw new Error('no controller: these Its read cgroup files'); });

function withCgroup(files: Record<string, string>, fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'irx-cgroups-'));
  try {
    for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

its.noClient('cgroups/cgroups.go:40', 'the CPU count read from cgroup files', async () => {
  withCgroup({ 'cpu.cfs_quota_us': '4', 'cpu.cfs_period_us': '2' }, (dir) => {
    assert.is(cgroupVersion(dir), 1);
    assert.is(cgroupCpuLimit(dir), 2);
  });
});

its.noClient('cgroups/cgroups.go:83', 'the CPU count read from cgroup files', async () => {
  withCgroup({ 'cgroup.controllers': '', 'cpu.max': '4 2' }, (dir) => {
    assert.is(cgroupVersion(dir), 2);
    assert.is(cgroupCpuLimit(dir), 2);
  });
});

test.run();
