// An empty manifests directory is a valid (empty) cluster: the controller syncs it, reports
// healthy, answers 404, and serves what is added later.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let a: EchoServer;

test.before(async () => {
  a = await startEchoServer({ address: '127.0.0.2', name: 'a' });
  ctl = await startLocal({ files: {} });
});

test.after(async () => {
  await ctl?.stop();
  await a?.close();
});

over.both('an empty cluster becomes healthy after its first (empty) sync and answers 404', async (p) => {
  assert.is((await ctl.request('127.0.0.1', '/healthz', { port: ctl.ports.healthz })).status, 200);
  assert.ok((await ctl.metric('nginx_ingress_controller_success')) >= 1, 'the empty configuration was applied');
  assert.is((await p.request('any.test', '/')).status, 404);
});

over.both('what is added to an empty directory is served', async (p) => {
  const host = `web-${p.tag}.test`;
  ctl.write(`app-${p.tag}.json`, [service('app', 'web'), ...slices('app', 'web', [a]), ingress('app', `web-${p.tag}`, { host, paths: [{ path: '/', service: 'web' }] })]);
  await p.until(host, '/', (r) => r.backend === 'a', { what: `${host} served` });
});

test('once quiet after a sync, the controller collects garbage and says what it holds since', async () => {
  const collected = /[^\n]*"msg":"idle: garbage collected"[^\n]*/;
  const line = (await ctl.logged(collected, 'the idle collection')).match(collected)![0];
  assert.match(line, /"rssMb":\d+/);
});

test.run();
