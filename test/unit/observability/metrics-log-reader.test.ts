// The metrics-log reader: complete lines only, a bounded backlog, and rotation under a real NGINX
// (rename + SIGUSR1) that loses no line, with the metrics log rendered from our template.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { createMetricsLogReader } from '../../../src/observability/metrics-log-reader.js';
import { METRICS_LOG_FIELDS, metricsLogPath } from '../../../src/render/metrics-log.js';
import { createReloadActor } from '../../../src/actors/reload.js';
import { createNginxHarness } from '../../support/nginx-harness.js';
import { backend, configuration, location, server } from '../../support/config-builder.js';
import { startEchoServer } from '../../support/echo-server.js';
import { waitFor } from '../../support/wait.js';

function reader(path: string, opts: { maxBacklogBytes?: number } = {}) {
  const lines: string[] = [];
  let skipped = 0;
  const r = createMetricsLogReader({ path, masterPid: () => null, onLines: (ls) => lines.push(...ls), onSkipped: (b) => { skipped += b; }, ...opts });
  return { r, lines, skipped: () => skipped };
}

test('hands over complete lines only, across polls; waits for the file to appear', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-mlog-'));
  const path = join(dir, 'metrics.log');
  const { r, lines } = reader(path);
  try {
    await r.poll();
    assert.equal(lines, []);
    writeFileSync(path, 'one\ntw');
    await r.poll();
    assert.equal(lines, ['one']);
    appendFileSync(path, 'o\nthree\n');
    await r.poll();
    assert.equal(lines, ['one', 'two', 'three']);
    await r.poll();
    assert.is(lines.length, 3);
  } finally {
    await r.close();
    assert.not.ok(existsSync(path), 'close() removes the file');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a backlog beyond the bound is skipped and counted, then reading goes on', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-mlog-'));
  const path = join(dir, 'metrics.log');
  const { r, lines, skipped } = reader(path, { maxBacklogBytes: 1000 });
  try {
    writeFileSync(path, 'x'.repeat(99).concat('\n').repeat(20));
    await r.poll();
    assert.is(lines.length, 0);
    assert.is(skipped(), 2000);
    appendFileSync(path, 'next\n');
    await r.poll();
    assert.equal(lines, ['next']);
  } finally {
    await r.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a file replaced behind the reader (NGINX restarted after it was removed) is read from its start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-mlog-'));
  const path = join(dir, 'metrics.log');
  const { r, lines } = reader(path);
  try {
    writeFileSync(path, 'a\n');
    await r.poll();
    rmSync(path);
    writeFileSync(path, 'b\nc\n');
    await r.poll();
    assert.equal(lines, ['a', 'b', 'c']);
  } finally {
    await r.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rotation: lines a worker flushes into the old file after the reopen signal are still read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-mlog-'));
  const path = join(dir, 'metrics.log');
  const lines: string[] = [];
  let t = 0;
  // This process stands in for NGINX's master: SIGUSR1 makes it "reopen" (a new file appears).
  let signalled = false;
  const onSignal = () => { signalled = true; writeFileSync(path, 'new\n'); };
  process.on('SIGUSR1', onSignal);
  const r = createMetricsLogReader({ path, masterPid: () => process.pid, rotateBytes: 100, drainMs: 5000, now: () => t, onLines: (ls) => lines.push(...ls), onSkipped: () => {} });
  try {
    writeFileSync(path, 'old\n'.repeat(30));
    await r.poll();
    await waitFor(() => signalled, { what: 'the reopen signal' });
    assert.ok(existsSync(`${path}.1`), 'renamed');
    await r.poll();
    // A slow worker's last buffer lands in the old file after the reader saw the new one.
    appendFileSync(`${path}.1`, 'late\n');
    t = 6000;
    await r.poll();
    assert.equal(lines.filter((l) => l !== 'old'), ['new', 'late']);
    assert.ok(existsSync(`${path}.1`), 'kept while it still grows (a worker that could not reopen writes there)');
    t = 12_000;
    await r.poll();
    assert.not.ok(existsSync(`${path}.1`), 'the old file is gone once it stopped growing');
    assert.is(lines.filter((l) => l === 'old').length, 30);
  } finally {
    process.off('SIGUSR1', onSignal);
    await r.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('real NGINX: one line per request in the template\'s format; rotations under load lose no line', async () => {
  const echo = await startEchoServer();
  const h = await createNginxHarness({ runtime: { workerProcesses: '2' } });
  const logPath = metricsLogPath(h.prefix);
  h.runtime.metricsLog = logPath;
  const lines: string[] = [];
  const r = createMetricsLogReader({
    path: logPath, masterPid: () => h.nginx.masterPid(), rotateBytes: 4096, drainMs: 300,
    onLines: (ls) => lines.push(...ls), onSkipped: () => { throw new Error('nothing may be skipped'); },
  });
  try {
    const cfg = configuration([server('m.test', { locations: [location({ path: '/', ingress: { namespace: 'shop', name: 'front' }, service: { name: 'web', port: '80' }, backend: 'shop-web-80' })] })]);
    const reload = createReloadActor({ renderer: h.renderer, nginx: h.nginx, runtime: h.runtime, logger: h.logger, reloadTimeoutMs: 10_000 });
    const res = await firstValueFrom(reload(cfg));
    assert.ok(res.ok, JSON.stringify(res));
    assert.is(await h.postBackends([backend('shop-web-80', [echo.endpoint])]), 201);
    await waitFor(async () => (await h.http(h.runtime.httpPort, '/', { host: 'm.test' })).status === 200, { what: 'backends synced' });

    // Bursts, each read before the next: NGINX flushes every second, the file passes the
    // rotation size after each burst, and the next burst runs while the old file is drained.
    const sent = 300;
    const status = METRICS_LOG_FIELDS.indexOf('status');
    const ok = () => lines.filter((l) => l.split('\t')[status] === '200');
    const before = ok().length;
    for (let burst = 0; burst < 6; burst++) {
      for (let i = burst * 50; i < (burst + 1) * 50; i++) await h.http(h.runtime.httpPort, `/p${i}`, { host: 'm.test', method: i % 3 === 0 ? 'POST' : 'GET' });
      await waitFor(async () => { await r.poll(); return ok().length >= before + (burst + 1) * 50; }, { timeoutMs: 10_000, what: `burst ${burst} read` });
    }
    await waitFor(async () => { await r.poll(); return !existsSync(`${logPath}.1`); }, { timeoutMs: 10_000, what: 'the old file drained and gone' });
    const rotations = (readFileSync(h.runtime.errorLogPath, 'utf8').match(/SIGUSR1\) received.*reopening logs/g) ?? []).length;
    assert.ok(rotations >= 3, `rotations: ${rotations}`);
    assert.is(ok().length, echo.hits(), 'one line per proxied request, none lost, none twice');
    const f = lines[lines.length - 1]!.split('\t');
    assert.is(f.length, METRICS_LOG_FIELDS.length);
    const field = (name: (typeof METRICS_LOG_FIELDS)[number]) => f[METRICS_LOG_FIELDS.indexOf(name)];
    assert.equal([field('namespace'), field('ingress_name'), field('service_name'), field('location_path'), field('proxy_alternative_upstream_name'), field('status'), field('host')],
      ['shop', 'front', 'web', '/', '', '200', 'm.test']);
    assert.match(field('request_time')!, /^\d+\.\d{3}$/);
    assert.match(field('upstream_response_time')!, /^\d+\.\d{3}$/);
    const method = METRICS_LOG_FIELDS.indexOf('request_method');
    assert.is(lines.filter((l) => l.split('\t')[method] === 'POST').length, sent / 3);
  } finally {
    await r.close();
    await h.close();
    await echo.close();
  }
});

test.run();
