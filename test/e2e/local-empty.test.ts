// An empty manifests directory is a valid (empty) cluster: the controller syncs it, reports
// healthy, answers 404, and serves what is added later.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';

let ctl: LocalController;
let a: EchoServer;

test.before(async () => {
  a = await startEchoServer({ address: '127.0.0.2', name: 'a' });
  ctl = await startLocal({ files: {} });
});

test.after(async () => {
  await ctl?.stop();
  await a?.close();
});

test('an empty cluster becomes healthy after its first (empty) sync and answers 404', async () => {
  assert.is((await ctl.request('127.0.0.1', '/healthz', { port: ctl.ports.healthz })).status, 200);
  assert.ok((await ctl.metric('nginx_ingress_controller_success')) >= 1, 'the empty configuration was applied');
  assert.is((await ctl.request('any.test', '/')).status, 404);
});

test('what is added to an empty directory is served', async () => {
  ctl.write('app.json', [service('app', 'web'), ...slices('app', 'web', [a]), ingress('app', 'web', { host: 'web.test', paths: [{ path: '/', service: 'web' }] })]);
  await ctl.until('web.test', '/', (r) => r.backend === 'a', { what: 'web.test served' });
});

test.run();
