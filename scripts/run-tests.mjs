#!/usr/bin/env node
// Runs every test/**/*.test.ts in its own Node process (uvu has no per-test timeout, and one
// hung file must not hang the suite), bounds each file and the whole run, and ends with the
// plain line CI reads: `N passed, N failed, N skipped`. Zero tests is a failure.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 300_000);
const RUN_TIMEOUT_MS = Number(process.env.TEST_RUN_TIMEOUT_MS ?? 27 * 60_000);
const JOBS = Number(process.env.TEST_JOBS ?? 2);
const filters = process.argv.slice(2);

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name === 'fixtures' || name === 'support') continue;
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = findTests(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
const started = Date.now();

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
    });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const budget = Math.min(FILE_TIMEOUT_MS, RUN_TIMEOUT_MS - (Date.now() - started));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    }, Math.max(budget, 1000));
    child.on('close', (code) => {
      clearTimeout(timer);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* group already gone */ }
      const num = (label) => Number((out.match(new RegExp(`^\\s*${label}:\\s+(\\d+)`, 'm')) ?? [])[1] ?? NaN);
      const total = num('Total'), passed = num('Passed'), skipped = num('Skipped');
      let r;
      if (Number.isNaN(total) || timedOut) {
        r = { passed: Number.isNaN(passed) ? 0 : passed, failed: 1, skipped: Number.isNaN(skipped) ? 0 : skipped };
      } else {
        r = { passed, failed: total - passed, skipped };
        if (code !== 0 && r.failed === 0) r.failed = 1;
      }
      const secs = ((Date.now() - t0) / 1000).toFixed(1);
      const status = r.failed ? (timedOut ? 'TIMEOUT' : 'FAIL') : 'ok';
      process.stdout.write(`${status.padEnd(7)} ${file}  (${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped, ${secs}s)\n`);
      if (r.failed) failures.push({ file, out });
      resolve(r);
    });
  });
}

/**
 * NGINX runs in its own process group, so a test process killed with SIGKILL (a timeout) leaves
 * its NGINX behind with parent 1. Reap such orphans whose prefix is under the temp directory.
 */
function reapOrphanedNginx() {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
      if (ppid === 1 && cmdline.startsWith('nginx: master process') && cmdline.includes(` -p ${tmpdir()}/`)) {
        process.kill(-Number(pid), 'SIGKILL');
        process.stdout.write(`reaped an orphaned NGINX (pid ${pid})\n`);
      }
    } catch { /* gone, or not ours to read */ }
  }
}

// scripts/test.sh builds the container image while the other files run; the files that run the
// image go last and wait for the build's exit status (a failed build fails them, with its log).
const imageStatus = process.env.IMAGE_BUILD_STATUS;
const needsImage = (f) => Boolean(imageStatus) && /image-pod/.test(f);
let imageBuilt;
function imageBuild() {
  imageBuilt ??= new Promise((resolve) => {
    const poll = () => {
      let code;
      try { code = readFileSync(imageStatus, 'utf8').trim(); } catch { setTimeout(poll, 1000); return; }
      let log = '';
      try { log = readFileSync(process.env.IMAGE_BUILD_LOG ?? '', 'utf8'); } catch { /* no log */ }
      process.stdout.write(log.split('\n').filter((l) => l.startsWith('image: ')).map((l) => `${l}\n`).join(''));
      resolve({ ok: code === '0', log });
    };
    poll();
  });
  return imageBuilt;
}

const queue = [...files.filter((f) => !needsImage(f)), ...files.filter(needsImage)];
async function worker() {
  while (queue.length) {
    const f = queue.shift();
    if (needsImage(f)) {
      const build = await imageBuild();
      if (!build.ok) {
        process.stdout.write(`FAIL    ${f}  (the image build failed)\n`);
        failures.push({ file: f, out: `scripts/image.sh failed:\n${build.log}` });
        totals.failed += 1;
        continue;
      }
    }
    const r = await runFile(f);
    reapOrphanedNginx();
    totals.passed += r.passed; totals.failed += r.failed; totals.skipped += r.skipped;
  }
}
await Promise.all(Array.from({ length: Math.max(1, JOBS) }, worker));

for (const f of failures) {
  process.stdout.write(`\n===== ${f.file} =====\n${f.out.slice(-6000)}\n`);
}
if (totals.passed + totals.failed === 0) {
  process.stdout.write('no test ran\n');
  totals.failed = Math.max(totals.failed, 1);
}
process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(totals.failed ? 1 : 0);
