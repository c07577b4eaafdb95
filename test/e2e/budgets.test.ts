// Sizes have owners (issue 30, findings 8 and 10), with the default budgets: a tenant whose
// Ingresses grow the Lua payloads past what the data plane holds (the route table and backends
// share one shared dict, here shrunk so the test stays small) or whose Ingress holds more paths
// than one may, is set aside and named (log, dbg quarantine, metric) while another tenant's new
// host is served and its change applied. test/e2e/budgets.static.test.ts runs this file with
// every host a server block.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { dbgQuarantine, ingress, oneGeneration, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

const DYNAMIC = process.env.IRX_TEST_DYNAMIC_ROUTES !== '0';
let ctl: LocalController;
let echo: EchoServer;

const cm = {
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' },
  // The route table and the backends share configuration_data: 256 KiB instead of 20 MiB, so that a
  // few hundred KB fill it as 21 MB do at the default size.
  data: { 'lua-shared-dicts': 'configuration_data: 256k' },
};

/** A Service whose slices hold `n` endpoints (loopback addresses on a port nothing listens on). */
function bigService(ns: string, name: string, n: number): object[] {
  const out: object[] = [service(ns, name)];
  for (let s = 0; s * 1000 < n; s++) {
    out.push({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: `${name}-${s}`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4', ports: [{ name: 'http', port: 9 }],
      endpoints: Array.from({ length: Math.min(1000, n - s * 1000) }, (_, i) => ({ addresses: [`127.${20 + s}.${(i >> 8) & 255}.${i & 255}`], conditions: { ready: true } })),
    });
  }
  return out;
}

/** An Ingress with `hosts` hosts of `paths` paths each (route entries on dynamic hosts). */
function bulky(ns: string, name: string, created: string, svc: string, hosts: number, paths: number) {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name, namespace: ns, creationTimestamp: created },
    spec: {
      rules: Array.from({ length: hosts }, (_, h) => ({
        host: `${name}-${h}.mallory.test`,
        http: { paths: Array.from({ length: paths }, (_, p) => ({ path: `/p${p}`, pathType: 'Exact', backend: { service: { name: svc, port: { number: 80 } } } })) },
      })),
    },
  };
}

const quarantined = () => dbgQuarantine(ctl.workdir);

async function quarantinedMetric(ns: string, name: string): Promise<number> {
  const body = (await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz })).body;
  const line = body.split('\n').find((l) => l.startsWith('ingress_rx_quarantined_ingresses{') && l.includes(`namespace="${ns}"`) && l.includes(`name="${name}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** NGINX's master and workers: proportional set size summed, in MiB (pages shared with the master count once). */
function nginxPssMiB(): number {
  const master = Number(readFileSync(`${ctl.workdir}/nginx.pid`, 'utf8'));
  const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  let kb = 0;
  for (const pid of [master, ...workers]) {
    let rollup: string;
    // An old worker may exit between the listing and the read: it holds nothing any more.
    try { rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'); } catch { continue; }
    kb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)![1]);
  }
  return kb / 1024;
}

const victim = (name: string, host: string, paths: string[]) =>
  ingress('team-b', name, { host, paths: paths.map((path) => ({ path, service: 'web' })) });

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  ctl = await startLocal({
    args: ['--configmap', 'ingress/nginx'],
    files: {
      'cm.json': [cm],
      'team-b.json': [service('team-b', 'web'), ...slices('team-b', 'web', [echo]), victim('shop', 'shop.test', ['/'])],
    },
  });
  await ctl.until('shop.test', '/', (r) => r.status === 200);
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

test('finding 8: a tenant filling the configuration endpoint\'s dict is trimmed, youngest first; another tenant\'s new host and change apply', async () => {
  // Six Ingresses, each with a backend of 1,500 endpoints (~60 KB) and, on dynamic hosts, 4 hosts
  // of 25 paths (~60 KB of route entries): together several times what the dict holds.
  const attack: object[] = [];
  for (let i = 0; i < 6; i++) {
    attack.push(...bigService('mallory', `svc-${i}`, 1500));
    attack.push(bulky('mallory', `fill-${i}`, `2026-02-01T00:00:0${i}Z`, `svc-${i}`, 4, 25));
  }
  ctl.write('mallory.json', attack);
  await waitFor(() => /sync \d+: (dynamic|reload)/.test(ctl.output().split('mallory').pop() ?? ''), { what: 'a sync after the attack', timeoutMs: 30_000 });

  // The other tenant keeps changing: a new host is served and an existing Ingress's change applies.
  ctl.write('team-b-new.json', [victim('new', 'new.test', ['/'])]);
  ctl.write('team-b.json', [service('team-b', 'web'), ...slices('team-b', 'web', [echo]), victim('shop', 'shop.test', ['/', '/v2'])]);
  await ctl.until('new.test', '/', (r) => r.status === 200 && r.backend === 'web', { what: 'the other tenant\'s new host', timeoutMs: 30_000 });
  const changed = await ctl.until('shop.test', '/v2/x', (r) => r.status === 200, { what: 'the other tenant\'s change' });
  assert.is(changed.json?.path, '/v2/x');

  // Named: the log, dbg quarantine and the metric; the oldest filler is still served.
  await waitFor(async () => /Ingress mallory\/fill-5 .*over budget: the data plane cannot hold the route table and backends/.test(await quarantined()), { what: 'the youngest filler set aside' });
  const report = await quarantined();
  assert.match(report, /Ingress mallory\/fill-5 .*namespace mallory holds the most/);
  assert.not.match(report, /team-b/, 'nothing of the other tenant is set aside');
  assert.not.match(report, /mallory\/fill-0 /, 'the oldest filler is kept');
  assert.is(await quarantinedMetric('mallory', 'fill-5'), 1);
  await ctl.logged(/Ingress mallory\/fill-5 is quarantined: over budget/);
  // Routed to its backend, whose loopback endpoints refuse the connection: 502, not 404.
  if (DYNAMIC) assert.is((await ctl.request('fill-0-0.mallory.test', '/p0')).status, 502, 'the oldest filler is still served');
  // Nothing was refused by the endpoint after the budget held.
  assert.not.match(ctl.output().split('\n').slice(-200).join('\n'), /dynamic configuration failed after/);
  ctl.remove('mallory.json');
  ctl.remove('team-b-new.json');
  await waitFor(async () => (await quarantined()).includes('Nothing is quarantined'), { what: 'the quarantine emptied once the filler is gone' });
});

test('finding 10: an Ingress with more paths than one may hold is set aside and named; NGINX does not grow; the others change', async () => {
  // Measured once the workers of an earlier reload are gone: they would count as NGINX's size.
  await waitFor(() => oneGeneration(ctl.workdir), { what: 'one generation of NGINX workers' });
  const before = nginxPssMiB();
  // 1,500 paths on one host (the default budget is 1,000 per Ingress): a server block of 3,000
  // locations on a static host (~23 KB of NGINX memory each), a route table over the dynamic limit.
  ctl.write('mallory-paths.json', [service('mallory', 'web'), ...slices('mallory', 'web', [echo]),
    ingress('mallory', 'paths', { host: 'paths.mallory.test', paths: Array.from({ length: 1500 }, (_, i) => ({ path: `/p${i}`, service: 'web' })), annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } })]);
  ctl.write('team-b-later.json', [victim('later', 'later.test', ['/'])]);
  await ctl.until('later.test', '/', (r) => r.status === 200, { what: 'the other tenant\'s new host', timeoutMs: 30_000 });
  // Served, those locations took ~35 MB of NGINX's memory (PSS) here; set aside, a few at most.
  const after = nginxPssMiB();
  assert.ok(after - before < 15, `NGINX PSS ${before.toFixed(1)} → ${after.toFixed(1)} MiB`);
  assert.is((await ctl.request('paths.mallory.test', '/p1')).status, 404, 'not served');
  await waitFor(async () => /Ingress mallory\/paths .*over budget: spec\.rules holds 1500 paths, more than one Ingress may hold \(--max-paths-per-ingress=1000\)/.test(await quarantined()), { what: 'the Ingress named' });
  assert.is(await quarantinedMetric('mallory', 'paths'), 1);
  ctl.remove('mallory-paths.json');
  ctl.remove('team-b-later.json');
});

test.run();
