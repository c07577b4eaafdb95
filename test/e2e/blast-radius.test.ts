// One bad Ingress or ConfigMap value never stops the others: what NGINX refuses is quarantined
// and named (log, metric, dbg), everything else applies in the same sync, from a cold start and
// while running; a fixed object leaves quarantine.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { runDbg } from '../../src/cli/dbg.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' },
  data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical', ...data },
});
const web = (name: string, host: string, annotations: Record<string, string> = {}, path = '/') =>
  ingress('app', name, { host, paths: [{ path, pathType: path === '/' ? 'Prefix' : 'ImplementationSpecific', service: 'web' }], annotations });

async function dbgQuarantine(): Promise<string> {
  let text = '';
  await runDbg(['quarantine'], { workdir: ctl.workdir }, (s) => { text += s; });
  return text;
}

async function metricOf(name: string, labels: string): Promise<number> {
  const body = (await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz })).body;
  const line = body.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({
    args: ['--configmap', 'ingress/nginx'],
    files: {
      'cm.json': [configMap({})],
      'svc.json': [service('app', 'web'), ...slices('app', 'web', [echo])],
      'good.json': [web('good', 'good.test')],
      // NGINX refuses these; the line names the location (unknown directive), or nothing (an
      // error found while merging, at the end of the http block).
      'bad.json': [
        web('bad-directive', 'bad1.test', { [`${P}/configuration-snippet`]: 'no_such_directive on;' }),
        web('bad-merge', 'bad2.test', { [`${P}/configuration-snippet`]: 'proxy_buffers 1 4k;' }),
      ],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

over.both('cold start: the first configuration NGINX runs is the largest valid one; ready, the bad ones named', async (p) => {
  assert.is((await ctl.request('127.0.0.1', '/healthz', { port: ctl.ports.healthz })).status, 200);
  assert.is((await p.request('good.test', '/')).status, 200);
  assert.is((await p.request('bad1.test', '/')).status, 404, 'a quarantined Ingress is not served');
  const report = await dbgQuarantine();
  assert.match(report, /Ingress app\/bad-directive .*no_such_directive/);
  assert.match(report, /Ingress app\/bad-merge .*proxy_buffers/);
  assert.is(await metricOf('ingress_rx_quarantined_ingresses', 'name="bad-directive"'), 1);
  assert.is(await ctl.metric('ingress_rx_quarantined_objects'), 2);
  await ctl.logged(/ready: NGINX serves the initial state, less 2 quarantined/);
  await ctl.logged(/Ingress app\/bad-directive is quarantined/);
});

over.both('running: a new bad Ingress and a good change in one sync; the good change is served, the bad one named', async (p) => {
  ctl.write('more.json', [
    web('bad-later', 'bad3.test', { [`${P}/configuration-snippet`]: 'also_not_a_directive;' }),
    web('good-later', 'good2.test'),
  ]);
  await p.until('good2.test', '/', (r) => r.status === 200, { what: 'the good change to be served' });
  await waitFor(async () => /Ingress app\/bad-later/.test(await dbgQuarantine()), { what: 'bad-later in dbg quarantine' });
  assert.is(await ctl.metric('nginx_ingress_controller_errors'), 0, 'no failed reload: the bad Ingress was set aside in the same reload');
  assert.is((await p.request('good.test', '/')).status, 200);
});

over.both('a fixed Ingress leaves quarantine and is served', async (p) => {
  ctl.write('bad.json', [
    web('bad-directive', 'bad1.test', { [`${P}/configuration-snippet`]: 'add_header X-Fixed yes;' }),
    web('bad-merge', 'bad2.test', { [`${P}/configuration-snippet`]: 'proxy_buffers 1 4k;' }),
  ]);
  await p.until('bad1.test', '/', (r) => r.status === 200 && r.headers['x-fixed'] === 'yes', { what: 'the fixed Ingress to be served' });
  // The report follows the sync's result, a moment after NGINX serves it.
  const report = await waitFor(async () => { const r = await dbgQuarantine(); return /bad-directive/.test(r) ? null : r; }, { what: 'bad-directive to leave dbg quarantine' });
  assert.match(report, /bad-merge/);
  // The log line comes through the child's stdout, which may trail the report file.
  await waitFor(() => /Ingress app\/bad-directive left quarantine/.test(ctl.output()), { what: 'the log line saying bad-directive left quarantine' });
});

over.both('a ConfigMap NGINX refuses: its previous settings stay, Ingress changes still apply', async (p) => {
  ctl.write('cm.json', [configMap({ 'max-worker-connections': '1', 'proxy-read-timeout': '7' })]);
  ctl.write('good3.json', [web('good3', 'good3.test')]);
  await p.until('good3.test', '/', (r) => r.status === 200, { what: 'the Ingress added with the bad ConfigMap' });
  await waitFor(async () => /ConfigMap ingress\/nginx/.test(await dbgQuarantine()), { what: 'the ConfigMap in dbg quarantine' });
  const report = await dbgQuarantine();
  assert.match(report, /worker_connections/, report);
  ctl.write('cm.json', [configMap({})]);
  await waitFor(async () => !/ConfigMap/.test(await dbgQuarantine()), { what: 'the fixed ConfigMap to leave quarantine' });
});

test.run();
