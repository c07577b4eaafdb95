// NGINX's memory per 1,000 paths (local mode, real NGINX): a small cluster, then one Ingress
// with P Exact paths (one location each), on one static host (an annotation with a directive
// gives it a server block) or spread over dynamic hosts (the Lua router's table); the memory of NGINX's master and workers
// (RSS summed as `ps` shows it, and PSS, which counts pages the workers share with the master
// once) before and after, per 1,000 paths. Each case in a controller of its own.
//   node --import tsx bench/nginx-memory.ts [--paths P]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalMode } from './local-mode.js';
import { sendRequest } from '../test/support/local-harness.js';
import { arg, attempt, emitFigures, loadAverage, nginxMemoryMb, printTable, round, type Row } from './lib.js';

/** A dynamic host holds at most MAX_DYNAMIC_LOCATIONS locations: the paths are spread over hosts of PER_HOST. */
const PER_HOST = 200;

/** One Ingress with `paths` Exact paths (one location each) on `host`, or on hosts `0.host`, `1.host`… of PER_HOST paths. */
function manyPaths(host: string, paths: number, annotations: Record<string, string>, spread: boolean) {
  const hosts = spread ? Math.ceil(paths / PER_HOST) : 1;
  const per = Math.ceil(paths / hosts);
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'many', namespace: 'bench', annotations },
    spec: {
      ingressClassName: 'nginx',
      rules: Array.from({ length: hosts }, (_, h) => ({
        host: spread ? `${h}.${host}` : host,
        http: { paths: Array.from({ length: Math.min(per, paths - h * per) }, (_, i) => ({ path: `/p${h * per + i}`, pathType: 'Exact', backend: { service: { name: 'web', port: { number: 80 } } } })) },
      })),
    },
  };
}

interface Case { before: { rss: number; pss: number }; after: { rss: number; pss: number }; workers: number }

async function measure(paths: number, staticHost: boolean, upstream: number): Promise<Case> {
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'bench' }, spec: { ports: [{ name: 'http', port: 80, targetPort: upstream }] } };
  const slice = {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-1', namespace: 'bench', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }], ports: [{ name: 'http', port: upstream, protocol: 'TCP' }],
  };
  const local = await startLocalMode({ prefix: 'irx-bench-mem-', args: ['--sync-rate-limit', '20'], fill: () => {} });
  try {
    local.write('svc.json', [service, slice, { ...manyPaths('small.bench', 1, {}, false), metadata: { name: 'small', namespace: 'bench', annotations: {} } }]);
    await local.until('small.bench', (s) => s === 200, 120_000, '/p0');
    // Every worker has served (and, on a dynamic host, decoded the route table) before and after.
    const warm = async (host: string, path: string) => { for (let i = 0; i < 40; i++) await sendRequest(local.ports.http, host, path, { headers: { connection: 'close' } }).catch(() => null); };
    await warm('small.bench', '/p0');
    await new Promise((r) => setTimeout(r, 2000));
    const before = nginxMemoryMb(local.pid);
    const many = manyPaths(staticHost ? 'static.bench' : 'dynamic.bench', paths, staticHost ? { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } : {}, !staticHost);
    local.write('many.json', [many]);
    const last = many.spec.rules[many.spec.rules.length - 1]!;
    await local.until(last.host, (s) => s === 200, 600_000, `/p${paths - 1}`);
    await warm(last.host, `/p${paths - 1}`);
    // Old workers of a reload drain first.
    for (let i = 0; i < 100 && nginxMemoryMb(local.pid).processes > before.processes; i++) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 2000));
    const after = nginxMemoryMb(local.pid);
    return { before, after, workers: after.processes - 1 };
  } finally {
    await local.stop();
  }
}

async function main(): Promise<void> {
  const paths = Number(arg('--paths') ?? 5000);
  const echo = createServer((_req, res) => { res.writeHead(200); res.end('ok'); });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const upstream = (echo.address() as AddressInfo).port;
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { nginx_rss_mb_per_1k_paths_static: null, nginx_rss_mb_per_1k_paths_dynamic: null, nginx_pss_mb_per_1k_paths_static: null, nginx_pss_mb_per_1k_paths_dynamic: null };
  for (const staticHost of [true, false]) {
    const kind = staticHost ? 'static' : 'dynamic';
    await attempt(rows, `NGINX memory per 1,000 paths, ${kind} host`, async () => {
      const c = await measure(paths, staticHost, upstream);
      const per = (a: number, b: number) => ((b - a) * 1000) / paths;
      fig[`nginx_rss_mb_per_1k_paths_${kind}`] = round(per(c.before.rss, c.after.rss), 1);
      fig[`nginx_pss_mb_per_1k_paths_${kind}`] = round(per(c.before.pss, c.after.pss), 1);
      rows.push({
        figure: `NGINX memory per 1,000 paths, ${kind} host (${paths} paths, ${c.workers} workers)`,
        value: `RSS ${round(per(c.before.rss, c.after.rss), 1)} MB, PSS ${round(per(c.before.pss, c.after.pss), 1)} MB`,
        note: `RSS ${round(c.before.rss, 0)} → ${round(c.after.rss, 0)} MB, PSS ${round(c.before.pss, 0)} → ${round(c.after.pss, 0)} MB`,
      });
    });
  }
  echo.close();
  printTable(`NGINX memory per path (load ${loadAverage()})`, rows);
  emitFigures(fig);
}

await main();
