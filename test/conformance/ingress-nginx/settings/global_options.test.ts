// ingress-nginx test/e2e/settings/global_options.go, ported: worker_rlimit_nofile is the
// process's hard limit of open files less 1024, whatever worker-processes says. A limit of the
// workers no request shows: the port reads the configuration NGINX runs (and the limit from
// /proc, as the controller reads it with getrlimit), after a request shows NGINX serves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'global-options.test';
const WHY = 'a limit of the worker processes, which no request can observe';

test.before(async () => {
  fx = await startFixture('global-options', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('global-options', HOST)], HOST);
});
test.after(() => fx.stop());

/** The controller's hard RLIMIT_NOFILE (what `ulimit -Hn` says), as /proc/<pid>/limits has it. */
function hardNofile(): number {
  const line = readFileSync(`/proc/${fx.ctl.child.pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'))!;
  return Number(line.trim().split(/\s+/)[4]);
}

async function conf(): Promise<string> {
  assert.is((await fx.ctl.request(HOST, '/')).status, 200);
  return (await fx.ctl.control('/nginx.conf')).body;
}

its.noClient('settings/global_options.go:31', WHY, async () => {
  await fx.configure({});
  assert.match(await conf(), new RegExp(`\\nworker_rlimit_nofile ${hardNofile() - 1024};`));
});

its.noClient('settings/global_options.go:37', WHY, async () => {
  await fx.configure({ 'worker-processes': '11' });
  const c = await conf();
  assert.match(c, /\nworker_processes 11;/);
  assert.match(c, new RegExp(`\\nworker_rlimit_nofile ${hardNofile() - 1024};`));
});

test.run();
