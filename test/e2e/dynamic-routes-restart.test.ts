// NGINX restarted under a running controller (`ingress-rx local`, real NGINX): its shared dicts
// start empty, so the controller's next route table POST, a change to the table NGINX held
// before, is refused with 409 and the whole table follows at once (src/actors/dynamic-config.ts,
// lua/configuration.lua); every dynamic host is served again, and later changes go as changes
// against the new table. Hosts are asked for over HTTP/1.1 and HTTP/2. The Lua side alone:
// lua-route-delta.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { PROTOCOLS, protocolClient } from '../support/protocols.js';

let ctl: LocalController;
let echo: EchoServer;
const plain = (name: string) => ingress('app', name, { host: `${name}.test`, paths: [{ path: '/', service: 'web' }] });
/** Each host is asked for over HTTP/1.1 and HTTP/2. */
const overBoth = async (host: string, check: (r: Reply) => boolean, what: string) => {
  for (const protocol of PROTOCOLS) await protocolClient(ctl, protocol).until(host, '/', check, { what: `${what} over ${protocol}` });
};
const served = (host: string) => overBoth(host, (r) => r.status === 200 && r.headers['x-echo-name'] === 'web', `${host} served`);

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({ files: { 'app.json': [service('app', 'web'), ...slices('app', 'web', [echo]), plain('one')] } });
});
test.after(async () => { await ctl?.stop(); await echo?.close(); });

test('NGINX restarted: the change it cannot take is refused (409), the whole table follows, and changes go on from there', async () => {
  await served('one.test');
  ctl.write('two.json', [plain('two')]);
  await served('two.test');

  const master = Number(readFileSync(join(ctl.workdir, 'nginx.pid'), 'utf8'));
  const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  process.kill(master, 'SIGKILL');
  for (const pid of workers) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone with its master */ } }
  await ctl.logged('NGINX was restarted', 'the restart noticed');
  await ctl.logged('route table: NGINX holds another table; posting the whole table', 'the whole table after the 409');
  await served('one.test');
  await served('two.test');
  const table = JSON.parse((await ctl.control('/configuration/routes')).body) as { hosts: Record<string, unknown> };
  assert.equal(Object.keys(table.hosts).filter((h) => h.endsWith('.test')).sort(), ['one.test', 'two.test']);

  ctl.write('three.json', [plain('three')]);
  await served('three.test');
  ctl.remove('two.json');
  await overBoth('two.test', (r) => r.status === 404, 'two.test gone');
  await served('one.test');
  // Only the restart's change was refused: the later ones were taken as changes.
  assert.is(ctl.output().split('\n').filter((l) => l.includes('NGINX holds another table')).length, 1);
});

test.run();
