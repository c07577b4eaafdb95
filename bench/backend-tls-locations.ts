// What the router's BackendTLSPolicy TLS locations cost NGINX (docs/gateway-api.md, "TLS to
// backends"): local mode with Gateway API manifests, one HTTPRoute on a Service without a policy,
// then N policies of distinct hostnames (N TLS locations in every router server, each with its CA
// bundle) with a route each; NGINX's master and workers' RSS and PSS before and after, and the
// CPU of `nginx -t` on each configuration.
//   node --import tsx bench/backend-tls-locations.ts [--policies 50]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalMode } from './local-mode.js';
import { generateCertificate } from '../test/support/lua-nginx.js';
import { arg, loadAverage, nginxMemoryMb, printTable, round, type Row } from './lib.js';

const V1 = 'gateway.networking.k8s.io/v1';
const NS = 'bench';

/** `nginx -t` of the workdir's configuration: CPU (user + sys) and wall seconds, max RSS MB (GNU time). */
function nginxTest(workdir: string): { cpu: number; wall: number; maxRssMb: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %e %M', '/usr/sbin/nginx', '-t', '-q', '-p', `${workdir}/`, '-c', join(workdir, 'nginx.conf')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`nginx -t failed: ${r.stderr.trim().slice(-400)}`);
  const [u, s, e, m] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number);
  return { cpu: u! + s!, wall: e!, maxRssMb: m! / 1024 };
}

const service = (name: string) => [
  { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec: { ports: [{ name: 'https', port: 443, targetPort: 9 }] } },
  {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: NS, labels: { 'kubernetes.io/service-name': name } },
    addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'https', port: 9, protocol: 'TCP' }],
  },
];
const route = (name: string, svc: string) => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: NS },
  spec: { parentRefs: [{ name: 'gw' }], hostnames: [`${name}.tls.bench`], rules: [{ backendRefs: [{ name: svc, port: 443 }] }] },
});

async function main(): Promise<void> {
  const n = Number(arg('--policies') ?? 50);
  const tmp = mkdtempSync(join(tmpdir(), 'irx-bench-btls-'));
  const ca = readFileSync((await generateCertificate(tmp, 'ca.tls.bench')).certPath, 'utf8');
  const base = [
    { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    { apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: NS }, spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*.tls.bench' }] } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: NS }, data: { 'ca.crt': ca } },
    ...service('plain'), route('plain', 'plain'),
  ];
  const local = await startLocalMode({ prefix: 'irx-bench-btls-', args: ['--sync-rate-limit', '20'], fill: () => {} });
  const rows: Row[] = [];
  try {
    local.write('base.json', base);
    await local.until('plain.tls.bench', (s) => s === 502 || s === 200, 120_000);
    await new Promise((r) => setTimeout(r, 2000));
    const before = { mem: nginxMemoryMb(local.pid), test: nginxTest(local.workdir), conf: readFileSync(join(local.workdir, 'nginx.conf'), 'utf8').length };
    const items: object[] = [];
    for (let i = 0; i < n; i++) {
      items.push(...service(`s${i}`), route(`r${i}`, `s${i}`), {
        apiVersion: V1, kind: 'BackendTLSPolicy', metadata: { name: `p${i}`, namespace: NS },
        spec: { targetRefs: [{ group: '', kind: 'Service', name: `s${i}` }], validation: { hostname: `b${i}.internal`, caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } },
      });
    }
    local.write('policies.json', items);
    // The backend speaks no TLS: 502 once the route's TLS location is loaded.
    await local.until(`r${n - 1}.tls.bench`, (s) => s === 502, 300_000);
    for (let i = 0; i < 100 && nginxMemoryMb(local.pid).processes > before.mem.processes; i++) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2000));
    const conf = readFileSync(join(local.workdir, 'nginx.conf'), 'utf8');
    const locations = new Set(conf.match(/dynamic-route-tls-[0-9a-f]{16} \{/g) ?? []).size;
    const after = { mem: nginxMemoryMb(local.pid), test: nginxTest(local.workdir), conf: conf.length };
    rows.push(
      { figure: `TLS locations (distinct) in nginx.conf`, value: String(locations), note: `${(conf.match(/dynamic-route-tls-[0-9a-f]{16} \{/g) ?? []).length} location blocks over the router servers` },
      { figure: 'NGINX RSS (master + workers), MB', value: `${round(before.mem.rss, 1)} → ${round(after.mem.rss, 1)}`, note: `PSS ${round(before.mem.pss, 1)} → ${round(after.mem.pss, 1)}, ${after.mem.processes} processes` },
      { figure: 'nginx -t CPU s (user + sys)', value: `${round(before.test.cpu, 2)} → ${round(after.test.cpu, 2)}`, note: `wall ${before.test.wall} → ${after.test.wall} s, max RSS ${round(before.test.maxRssMb, 1)} → ${round(after.test.maxRssMb, 1)} MB` },
      { figure: 'nginx.conf bytes', value: `${before.conf} → ${after.conf}` },
    );
  } finally {
    await local.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
  printTable(`BackendTLSPolicy: ${n} policies of distinct hostnames (load ${loadAverage()})`, rows);
}

await main();
