// Record a real `ingress-rx local` session (manifests added, edited, deleted) and replay the
// log in virtual time: the replay ends on the same backends and the same servers and locations
// as the live NGINX ran. Paths and ports differ by design (replay renders a fixed runtime).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { runReplay } from '../../src/cli/replay.js';

const tmp = mkdtempSync(join(tmpdir(), 'irx-record-'));
const logFile = join(tmp, 'session.ndjson');
let ctl: LocalController;
let a: EchoServer;
let b: EchoServer;

test.before(async () => {
  a = await startEchoServer({ address: '127.0.0.2', name: 'a' });
  b = await startEchoServer({ address: '127.0.0.3', name: 'b' });
  ctl = await startLocal({
    args: ['--record', logFile],
    files: {
      'svc.json': [service('rec', 'web'), ...slices('rec', 'web', [a])],
      'web.json': [ingress('rec', 'web', { host: 'web.rec.test', paths: [{ path: '/', service: 'web' }] })],
      'gone.json': [ingress('rec', 'gone', { host: 'gone.rec.test', paths: [{ path: '/', service: 'web' }] })],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all([a, b].map((e) => e?.close()));
  rmSync(tmp, { recursive: true, force: true });
});

/** `server_name` and `location` lines of every server block, in order, whitespace-folded. */
function routingLines(conf: string): string[] {
  return conf.split('\n').map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => /^(## start server |server_name |location |set \$proxy_upstream_name )/.test(l));
}

test('a recorded local session replays to the same backends and routing as the live run', async () => {
  await ctl.until('gone.rec.test', '/', (r) => r.backend === 'a');
  ctl.write('api.json', [ingress('rec', 'api', { host: 'api.rec.test', paths: [{ path: '/v1', pathType: 'Prefix', service: 'web' }] })]);
  await ctl.until('api.rec.test', '/v1/x', (r) => r.backend === 'a', { what: 'added Ingress' });
  ctl.write('svc.json', [service('rec', 'web'), ...slices('rec', 'web', [b])]);
  await ctl.until('web.rec.test', '/', (r) => r.backend === 'b', { what: 'edited endpoints' });
  ctl.remove('gone.json');
  await ctl.until('gone.rec.test', '/', (r) => r.status === 404, { what: 'deleted Ingress' });

  const liveBackends = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<{ name: string }>;
  const liveConf = (await ctl.control('/nginx.conf')).body;
  const liveRoutes = JSON.parse((await ctl.control('/configuration/routes')).body) as { hosts: Record<string, unknown> };
  assert.is(await ctl.stop('SIGTERM'), 0);

  const out = join(tmp, 'replay');
  assert.is(await runReplay(logFile, { instant: true, out }), 0);
  const replayed = JSON.parse(readFileSync(join(out, 'final', 'backends.json'), 'utf8')) as Array<{ name: string }>;
  const byName = (xs: Array<{ name: string }>) => [...xs].sort((x, y) => x.name.localeCompare(y.name));
  // The default backend points at the live default-server port, which the replay runtime fixes.
  const strip = (xs: Array<{ name: string }>) => byName(xs).filter((x) => x.name !== 'upstream-default-backend');
  assert.equal(strip(replayed), strip(liveBackends));
  assert.equal(routingLines(readFileSync(join(out, 'final', 'nginx.conf'), 'utf8')), routingLines(liveConf));
  // With --enable-dynamic-routes (IRX_TEST_DYNAMIC_ROUTES) the plain hosts are the route table's.
  assert.equal(JSON.parse(readFileSync(join(out, 'final', 'routes.json'), 'utf8')), liveRoutes);
  assert.ok(routingLines(liveConf).includes('server_name api.rec.test;') || 'api.rec.test' in liveRoutes.hosts);
  assert.not.ok('gone.rec.test' in liveRoutes.hosts);
  assert.not.ok(routingLines(liveConf).some((l) => l.includes('gone.rec.test')));

  const decisions = readFileSync(join(out, 'decisions.ndjson'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { decision: string });
  assert.ok(decisions.some((d) => d.decision === 'dynamic'), 'the endpoint edit replays as a dynamic update');
  assert.ok(decisions.some((d) => d.decision === 'reload'));
});

test.run();
