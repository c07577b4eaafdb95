// Not in `npm run bench`: the controller's CPU per Ingress status write (issue 29, item 2). The
// status writer writes N Ingresses (GET, then PUT of /status; unpaced) against the fake API
// server, which runs in a child process so that only the writer's CPU is counted, over HTTPS as
// a real API server (--http: plain HTTP), once with client-node's own API client (a new
// connection, and TLS handshake, per request) and once with the controller's kept-alive one,
// alternating (--rounds, default 2). At 10k Ingresses the first status run writes them all.
//   node --import tsx bench/status-writes.ts [--n 1000] [--rounds 2] [--http]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BehaviorSubject } from 'rxjs';
import { KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { startFakeApiServer } from '../test/support/fake-apiserver.js';
import { makeCertificate } from '../test/support/pod-cluster.js';
import { createStatusWriter } from '../src/actors/status.js';
import { makeKeepAliveApiClient } from '../src/streams/kube-client.js';
import { silentLogger } from '../src/log.js';
import type { Ingress } from '../src/store/kube-types.js';
import { arg, loadAverage, median, printTable, type Row } from './lib.js';

const n = Number(arg('--n') ?? 1000);
const https = !process.argv.includes('--http');

if (process.argv.includes('--serve-fake')) {
  // The child: the fake API server with N Ingresses; says its kubeconfig and the list, stops when told.
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-status-'));
  const tls = https ? makeCertificate(dir, 'api', 'kube-apiserver', ['127.0.0.1']) : undefined;
  const fake = await startFakeApiServer(tls ? { tls: { cert: tls.cert, key: tls.key } } : undefined);
  for (let i = 0; i < n; i++) {
    fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `app-${i}`, namespace: 'shop' }, spec: { ingressClassName: 'nginx', rules: [{ host: `app-${i}.test` }] } });
  }
  process.send!({ kubeconfig: fake.kubeConfig().exportConfig(), ingresses: fake.list('networking.k8s.io/v1', 'Ingress') });
  process.once('message', () => {
    void fake.close().then(() => { rmSync(dir, { recursive: true, force: true }); process.exit(0); });
  });
} else {
  const rounds = Number(arg('--rounds') ?? 2);
  const perWrite: Record<'client-node' | 'kept-alive', number[]> = { 'client-node': [], 'kept-alive': [] };
  const wall: Record<'client-node' | 'kept-alive', number[]> = { 'client-node': [], 'kept-alive': [] };
  const loadBefore = loadAverage();
  for (let r = 0; r < rounds; r++) {
    for (const client of ['client-node', 'kept-alive'] as const) {
      const child = fork(fileURLToPath(import.meta.url), ['--serve-fake', '--n', String(n), ...(https ? [] : ['--http'])], { execArgv: ['--import', 'tsx'] });
      const { kubeconfig, ingresses } = await new Promise<{ kubeconfig: string; ingresses: Ingress[] }>((resolve) => child.once('message', (m) => resolve(m as never)));
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      const writer = createStatusWriter({
        networking: client === 'client-node' ? kc.makeApiClient(NetworkingV1Api) : makeKeepAliveApiClient(kc, NetworkingV1Api),
        addresses: async () => [{ ip: '192.0.2.10' }], otherReplicasRunning: async () => true, isLeader$: new BehaviorSubject(true),
        intervalMs: 3_600_000, updateStatusOnShutdown: false, logger: silentLogger(), writesPerSecond: 0,
      });
      writer.start();
      await writer.sync([]);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const run = await writer.sync(ingresses);
      const cpu = process.cpuUsage(cpu0);
      wall[client].push(performance.now() - t0);
      if (run.written.length !== n) throw new Error(`${run.written.length} of ${n} written: ${JSON.stringify(run.failed.slice(0, 3))}`);
      perWrite[client].push((cpu.user + cpu.system) / 1000 / n);
      await writer.shutdown();
      child.send('stop');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
  const rows: Row[] = (['client-node', 'kept-alive'] as const).map((client) => ({
    figure: `controller CPU per status write (GET + PUT), ${https ? 'HTTPS' : 'HTTP'}, ${client}`,
    value: `${median(perWrite[client]).toFixed(2)} ms`,
    note: `rounds ${perWrite[client].map((x) => x.toFixed(2)).join(', ')}; ${n} writes in ${(median(wall[client]) / 1000).toFixed(1)} s (10 in flight, unpaced)`,
  }));
  rows.push({ figure: 'load average (1/5/15 min) before / after', value: `${loadBefore} / ${loadAverage()}` });
  printTable('status writes', rows);
}
