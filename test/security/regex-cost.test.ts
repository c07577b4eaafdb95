// One tenant's regular expression cannot eat the workers every tenant shares: issue 30's
// `/r/(a|aa)+$` (use-regex, on a host with a server block of its own and on a dynamic one) and a
// canary-by-header-pattern of the same shape are refused at model build, named with the pattern
// and an attack string in the log and by `lint`; the worst-case input then costs NGINX's workers
// next to nothing (measured as their CPU time, not the wall clock), and the other tenant keeps
// being served. Bounded patterns keep working.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { cliArgs } from '../support/cli-command.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let web: EchoServer;
let canary: EchoServer;
const tmp = mkdtempSync(join(tmpdir(), 'irx-regex-'));

const regexIngress = (name: string, host: string, path: string, extra: Record<string, string> = {}) => ingress('team-a', name, {
  host, paths: [{ path, pathType: 'ImplementationSpecific', service: 'web' }], annotations: { [`${P}/use-regex`]: 'true', ...extra },
});
const OBJECTS = () => [
  service('team-a', 'web'), ...slices('team-a', 'web', [web]),
  service('team-a', 'canary'), ...slices('team-a', 'canary', [canary]),
  regexIngress('static', 'static.test', '/r/(a|aa)+$', { [`${P}/server-alias`]: 'alias-static.test' }),
  regexIngress('dynamic', 'dynamic.test', '/r/(a|aa)+$'),
  regexIngress('bounded', 'bounded.test', '/api/v[0-9]+/(.*)'),
  ingress('team-a', 'primary', { host: 'canary.test', paths: [{ path: '/', service: 'web' }], created: '2026-01-01T00:00:00Z' }),
  ingress('team-a', 'canary', {
    host: 'canary.test', paths: [{ path: '/', service: 'canary' }], created: '2026-02-01T00:00:00Z',
    annotations: { [`${P}/canary`]: 'true', [`${P}/canary-by-header`]: 'X-Canary', [`${P}/canary-by-header-pattern`]: '^(a|aa)+$' },
  }),
  service('team-b', 'web'), ...slices('team-b', 'web', [web]),
  ingress('team-b', 'victim', { host: 'victim.test', paths: [{ path: '/', service: 'web' }] }),
];

test.before(async () => {
  web = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  canary = await startEchoServer({ address: '127.0.0.3', name: 'canary' });
  ctl = await startLocal({ files: { 'tenants.json': OBJECTS() } });
  await ctl.until('bounded.test', '/api/v2/x', (r) => r.backend === 'web', { what: 'the bounded regex host' });
  await ctl.until('canary.test', '/', (r) => r.backend === 'web', { what: 'the canary host' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
  await canary?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** CPU seconds (user + system) NGINX's worker processes have used. */
function workersCpuSeconds(): number {
  const master = Number(readFileSync(join(ctl.workdir, 'nginx.pid'), 'utf8'));
  const children = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  let ticks = 0;
  for (const pid of children) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch { /* gone */ }
  }
  return ticks / 100;
}

test('the patterns are refused, each named with an attack string', async () => {
  // Awaited: the hosts are served before the controller's output pipe has necessarily been read.
  for (const name of ['static', 'dynamic']) {
    await ctl.logged(new RegExp(`Ingress team-a/${name}[^\\n]*path \\\\"/r/\\(a\\|aa\\)\\+\\$\\\\" can backtrack catastrophically \\(exponential\\)[^\\n]*attack: `), name);
  }
  await ctl.logged(/canary-by-header-pattern[^\n]*\^\(a\|aa\)\+\$[^\n]*can backtrack catastrophically[^\n]*attack: /, 'the canary header pattern');
  assert.not.match(ctl.output(), /bounded[^\n]*backtrack/);
});

test("the worst-case input costs NGINX's workers next to nothing; the other tenant is served", async () => {
  const before = workersCpuSeconds();
  const attack = `/r/${'a'.repeat(40)}!`;
  for (let i = 0; i < 10; i++) {
    for (const host of ['static.test', 'dynamic.test']) {
      const r = await ctl.request(host, attack);
      assert.is(r.status, 404, `${host}: the refused path serves nothing`);
    }
    const c = await ctl.request('canary.test', '/', { headers: { 'X-Canary': `${'a'.repeat(40)}!` } });
    assert.is(c.backend, 'web', 'the refused pattern sends nobody to the canary');
  }
  const spent = workersCpuSeconds() - before;
  // Without the check each static request costs a worker ~0.2 s of PCRE2 (10 of them: ~2 s).
  assert.ok(spent < 0.5, `NGINX's workers spent ${spent.toFixed(2)} s of CPU on 30 worst-case requests`);
  assert.is((await ctl.request('victim.test', '/')).backend, 'web');
  assert.is((await ctl.request('bounded.test', '/api/v1/orders')).backend, 'web', 'a bounded pattern still routes');
});

test('lint names the pattern and the attack before anything is applied', () => {
  const file = join(tmp, 'tenants.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: OBJECTS() }));
  const r = spawnSync(process.execPath, [...cliArgs(), 'lint', file], { encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`;
  assert.match(out, /Ingress team-a\/static[^\n]*\/r\/\(a\|aa\)\+\$[^\n]*can backtrack catastrophically[^\n]*attack: "/);
  assert.match(out, /Ingress team-a\/canary[^\n]*canary-by-header-pattern[^\n]*\^\(a\|aa\)\+\$[^\n]*attack: "/);
  assert.is(r.status, 1, out);
});

test.run();
