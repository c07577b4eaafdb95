// The NGINX process actor against the real binary: start, test, reload, a killed master is
// restarted and serves again, quit leaves no process behind.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { createNginxHarness, type NginxHarness } from '../support/nginx-harness.js';
import { configuration, server } from '../support/config-builder.js';
import { waitFor } from '../support/wait.js';

const alive = (pid: number): boolean => existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readStatus(pid));
function readStatus(pid: number): string {
  try { return readFileSync(`/proc/${pid}/status`, 'utf8'); } catch { return ''; }
}

async function started(): Promise<NginxHarness> {
  const h = await createNginxHarness();
  writeFileSync(h.runtime.confPath, h.renderer.render(configuration([server('a.example.com')]), h.runtime));
  return h;
}

test('start resolves once the status port answers; quit leaves no process behind', async () => {
  const h = await started();
  let pids: number[] = [];
  try {
    const events = firstValueFrom(h.nginx.events$.pipe(take(1)));
    await h.nginx.start(h.runtime.confPath);
    assert.equal((await events).type, 'started');
    const master = h.nginx.masterPid();
    assert.ok(master);
    pids = [master!, ...h.nginx.workerPids()];
    assert.ok(pids.length >= 2, 'master and a worker');
    assert.is((await h.control('/healthz')).status, 200);
    assert.is((await h.http(h.runtime.defaultServerPort, '/anything')).status, 404);
    const conf = await h.control('/nginx.conf');
    assert.ok(conf.body.includes('## start server a.example.com'), 'the running config is served for dbg conf');
    await h.nginx.quit(5000);
    assert.is(h.nginx.masterPid(), null);
    for (const p of pids) assert.not.ok(alive(p), `pid ${p} still alive`);
  } finally {
    await h.close();
  }
});

test('test() reports the NGINX error of a broken configuration', async () => {
  const h = await started();
  try {
    const bad = join(h.prefix, 'bad.conf');
    writeFileSync(bad, 'events {}\nhttp { bogus_directive on; }\n');
    const r = await h.nginx.test(bad);
    assert.is(r.ok, false);
    assert.match(r.output, /unknown directive "bogus_directive"/);
    assert.ok((await h.nginx.test(h.runtime.confPath)).ok);
  } finally {
    await h.close();
  }
});

test('a killed master is restarted with backoff and serves again', async () => {
  const h = await started();
  try {
    await h.nginx.start(h.runtime.confPath);
    const first = h.nginx.masterPid()!;
    const seen = firstValueFrom(h.nginx.events$.pipe(filter((e) => e.type !== 'started'), take(2), toArray()));
    process.kill(first, 'SIGKILL');
    const [exited, restarted] = await seen;
    assert.equal(exited!.type, 'exited');
    assert.is(exited!.pid, first);
    assert.equal(restarted!.type, 'restarted');
    assert.is.not(restarted!.pid, first);
    assert.is(h.nginx.masterPid(), restarted!.pid);
    assert.is((await h.control('/healthz')).status, 200);
  } finally {
    await h.close();
  }
});

test('start rejects with NGINX output when the configuration cannot run', async () => {
  const h = await started();
  try {
    const bad = join(h.prefix, 'bad.conf');
    writeFileSync(bad, 'events {}\nhttp { bogus_directive on; }\n');
    try {
      await h.nginx.start(bad);
      assert.unreachable('start should fail');
    } catch (err) {
      assert.match((err as Error).message, /bogus_directive/);
    }
    assert.is(h.nginx.masterPid(), null);
  } finally {
    await h.close();
  }
});

test('reload() signals the master: new workers replace the old ones', async () => {
  const h = await started();
  try {
    await h.nginx.start(h.runtime.confPath);
    const before = h.nginx.workerPids();
    await h.nginx.reload();
    await waitFor(() => h.nginx.workerPids().some((p) => !before.includes(p)), { what: 'new workers' });
  } finally {
    await h.close();
  }
});

test('NGINX does not outlive the controller process that started it', async () => {
  const h = await started();
  let pid = 0;
  try {
    const script = `
      import { createNginxProcess } from ${JSON.stringify(new URL('../../src/actors/nginx-process.ts', import.meta.url).pathname)};
      import { silentLogger } from ${JSON.stringify(new URL('../../src/log.ts', import.meta.url).pathname)};
      const runtime = JSON.parse(process.env.RUNTIME);
      const nginx = createNginxProcess({ runtime, logger: silentLogger() });
      await nginx.start(runtime.confPath);
      console.log(nginx.masterPid());
      process.exit(0);
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env: { ...process.env, RUNTIME: JSON.stringify(h.runtime) }, cwd: new URL('../..', import.meta.url).pathname, timeout: 30_000 }).toString();
    pid = Number(out.trim().split('\n').pop());
    assert.ok(pid > 0, out);
    await waitFor(() => !alive(pid), { what: `nginx ${pid} to exit` });
  } finally {
    if (pid > 0) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone, as expected */ }
    await h.close();
  }
});

test.run();
