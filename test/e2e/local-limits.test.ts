// Local mode holds manifests to the API server's limits: a file over the size cap is refused
// unread, an object whose annotations pass 256 KiB or that passes 1.5 MiB is refused by name;
// the good Ingresses keep serving and the controller's memory (RSS) stays near its baseline,
// also after edits and once the files are gone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;

/** The controller process's resident memory, in MiB. */
function rssMiB(): number {
  const status = readFileSync(`/proc/${ctl.child.pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024;
}

const web = (name: string, annotations: Record<string, string> = {}) =>
  ingress('app', name, { host: `${name}.test`, paths: [{ path: '/', service: 'web' }], annotations });

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({
    files: {
      'svc.json': [service('app', 'web'), ...slices('app', 'web', [echo])],
      'good.json': [web('good')],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

over.both('objects over the API limits are refused by name; memory stays near the baseline and returns after', async (p) => {
  for (let i = 0; i < 20; i++) assert.is((await p.request('good.test', '/')).status, 200);
  const baseline = rssMiB();
  // Generous: what matters is not growing by the size of what was refused (the issue saw 1.8 GB).
  const bound = baseline + 120;

  // 50 MB in one annotation: the file is over the cap and not even read.
  ctl.write('huge.json', [web('huge', { 'example.com/blob': 'x'.repeat(50 * 1024 * 1024) })]);
  await waitFor(() => /huge\.json.*file is \d+ bytes; manifests files may hold at most/.test(ctl.output()), { what: 'the huge file refused' });
  assert.ok(rssMiB() < bound, `RSS ${rssMiB()} MiB after a 50 MB file (baseline ${baseline})`);

  // Annotations over 256 KiB, and an object over 1.5 MiB, in files under the cap.
  ctl.write('annotations.json', [web('annotated', { 'example.com/blob': 'y'.repeat(300 * 1024) }), web('fine')]);
  ctl.write('object.json', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'app' }, data: { blob: 'z'.repeat(1600 * 1024) } }]);
  await p.until('fine.test', '/', (r) => r.status === 200, { what: 'the good Ingress next to the oversized one' });
  await waitFor(() => /Ingress annotated: metadata\.annotations hold \d+ bytes; the API server allows 262144; refused/.test(ctl.output()), { what: 'the annotations refused by name' });
  await waitFor(() => /ConfigMap big: the object is \d+ bytes; the API server allows 1572864; refused/.test(ctl.output()), { what: 'the object refused by name' });
  assert.is((await p.request('annotated.test', '/')).status, 404, 'the refused Ingress is not served');

  // An edit of each, then everything removed: memory comes back.
  ctl.write('annotations.json', [web('annotated', { 'example.com/blob': 'w'.repeat(300 * 1024) }), web('fine')]);
  ctl.write('huge.json', [web('huge', { 'example.com/blob': 'v'.repeat(50 * 1024 * 1024) })]);
  await waitFor(() => (ctl.output().match(/huge\.json.*file is \d+ bytes/g) ?? []).length >= 2, { what: 'the edited huge file refused again' });
  ctl.remove('huge.json');
  ctl.remove('annotations.json');
  ctl.remove('object.json');
  await p.until('fine.test', '/', (r) => r.status === 404, { what: 'the removed files to be gone' });
  assert.is((await p.request('good.test', '/')).status, 200);
  const after = await waitFor(() => { const r = rssMiB(); return r < bound ? r : null; }, { what: `RSS to return under ${bound} MiB`, timeoutMs: 15_000 });
  assert.ok(after < bound, `RSS ${after} MiB after (baseline ${baseline})`);
  console.log(`  RSS: baseline ${baseline.toFixed(0)} MiB, after ${after.toFixed(0)} MiB`);
});

test.run();
