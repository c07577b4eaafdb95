// Many small objects of one namespace (issue 30, "sizes have owners"): with the namespace budgets
// lowered by their flags, a namespace's Ingresses are counted oldest first and the one that would
// pass the budget is set aside and named while the older ones and every other tenant are served;
// when the namespace makes room, it comes back. test/e2e/budgets-namespace.static.test.ts runs
// this file with every host a server block (the nginx.conf budget, not the route table's).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { dbgQuarantine, ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

let ctl: LocalController;
let echo: EchoServer;

/** 241 characters: NGINX's location tree keeps at most 255 bytes of a static location's name. */
const LONG = `/${'segment-'.repeat(24)}`;

/** `paths` Exact paths, `/p0`… or `${LONG}0`…: 52 short ones take ~11 KB of route entries or ~33 KB of locations, 18 long ones ~11 KB or ~18 KB. */
function many(ns: string, name: string, created: string, paths: number, prefix = '/p') {
  return ingress(ns, name, {
    host: `${name}.${ns}.test`, created,
    paths: Array.from({ length: paths }, (_, i) => ({ path: `${prefix}${i}`, pathType: 'Exact', service: 'web' })),
  });
}

const quarantined = () => dbgQuarantine(ctl.workdir);

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({
    args: ['--max-paths-per-namespace', '150', '--max-bytes-per-namespace', '72k'],
    files: {
      'svc.json': [service('mallory', 'web'), ...slices('mallory', 'web', [echo]), service('team-b', 'web'), ...slices('team-b', 'web', [echo])],
      'team-b.json': [ingress('team-b', 'shop', { host: 'shop.test', paths: [{ path: '/', service: 'web' }] })],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

test('paths: a namespace\'s Ingress that would pass its budget is set aside by name; older ones and other tenants are served', async () => {
  ctl.write('mallory.json', [many('mallory', 'p1', '2026-03-01T00:00:01Z', 52), many('mallory', 'p2', '2026-03-01T00:00:02Z', 52), many('mallory', 'p3', '2026-03-01T00:00:03Z', 52)]);
  ctl.write('team-b-new.json', [ingress('team-b', 'new', { host: 'new.test', paths: [{ path: '/', service: 'web' }] })]);
  await ctl.until('new.test', '/', (r) => r.status === 200, { what: 'the other tenant\'s new host', timeoutMs: 30_000 });
  await ctl.until('p2.mallory.test', '/p0', (r) => r.status === 200, { what: 'the older Ingresses served' });
  const report = await waitFor(async () => { const t = await quarantined(); return /mallory\/p3/.test(t) ? t : null; }, { what: 'p3 named' });
  assert.match(report, /Ingress mallory\/p3 .*namespace mallory holds 104 paths in older Ingresses and this one adds 52, more than a namespace may hold \(--max-paths-per-namespace=150\)/);
  assert.is((await ctl.request('p3.mallory.test', '/p0')).status, 404);
  // Room made in the namespace: the set-aside one comes back.
  ctl.write('mallory.json', [many('mallory', 'p2', '2026-03-01T00:00:02Z', 52), many('mallory', 'p3', '2026-03-01T00:00:03Z', 52)]);
  await ctl.until('p3.mallory.test', '/p0', (r) => r.status === 200, { what: 'p3 back once p1 went', timeoutMs: 30_000 });
  ctl.remove('mallory.json');
  ctl.remove('team-b-new.json');
});

test('bytes: a namespace past its byte budget loses its youngest Ingress there, named; the other tenant\'s change applies', async () => {
  // Eight Ingresses of 18 long paths (144 paths in all: within the paths budget) and 72 KiB for the
  // namespace: the youngest ones do not fit.
  ctl.write('mallory.json', Array.from({ length: 8 }, (_, i) => many('mallory', `b${i}`, `2026-03-02T00:00:0${i}Z`, 18, LONG)));
  ctl.write('team-b.json', [ingress('team-b', 'shop', { host: 'shop.test', paths: [{ path: '/', service: 'web' }, { path: '/v2', service: 'web' }] })]);
  await ctl.until('shop.test', '/v2/x', (r) => r.status === 200 && r.json?.path === '/v2/x', { what: 'the other tenant\'s change', timeoutMs: 30_000 });
  const report = await waitFor(async () => { const t = await quarantined(); return /Ingress mallory\/b7 /.test(t) ? t : null; }, { what: 'the youngest named', timeoutMs: 30_000 });
  assert.match(report, /Ingress mallory\/b7 .*over budget: namespace mallory (puts|takes) .* more than a namespace may \(--max-bytes-per-namespace=73728\)/);
  assert.not.match(report, /mallory\/b0 |team-b/);
  await ctl.until('b0.mallory.test', `${LONG}0`, (r) => r.status === 200, { what: 'the oldest served' });
  ctl.remove('mallory.json');
});

test.run();
