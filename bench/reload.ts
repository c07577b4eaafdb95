// A reload at scale (local mode, real NGINX): N generated Ingresses, then new Ingresses written
// one at a time, each with an annotation that needs a directive (proxy-body-size), so its host
// gets a server block and NGINX reloads (a plain one is dynamic: bench/routes.ts); the clock runs from the
// manifest write until the new host is served. The controller's own log says how long the
// reload actor took and, within it, NGINX's check of the new configuration and the reload.
// Quick mode 2k Ingresses, full mode 10k (`reload_ms_10k`).
//   node --import tsx bench/reload.ts [--full] [--n N] [--rounds R]
import { namespaceOf, serviceOf } from './gen.js';
import { startGeneratedCluster } from './local-mode.js';
import { arg, attempt, emitFigures, isFull, loadAverage, median, printTable, round, type Row } from './lib.js';

function ingress(name: string, host: string, service: string, ns: string) {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name, namespace: ns, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } },
    spec: { ingressClassName: 'nginx', rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }] } }] },
  };
}

interface Reloads { servedMs: number[]; actorMs: number[]; checkMs: number[]; startS: number }

async function run(n: number, rounds: number): Promise<Reloads> {
  const cluster = await startGeneratedCluster('irx-bench-reload-', n);
  const { local, startS } = cluster;
  try {
    const out: Reloads = { servedMs: [], actorMs: [], checkMs: [], startS };
    for (let r = 0; r < rounds; r++) {
      const host = `reload-${r}.bench.example`;
      const before = local.logs().length;
      await new Promise((res) => setTimeout(res, 300)); // the bucket refills
      const t = performance.now();
      local.write(`reload-${r}.json`, [ingress(`reload-${r}`, host, serviceOf(0), namespaceOf(0))]);
      await local.until(host, (s) => s === 200, 300_000);
      out.servedMs.push(performance.now() - t);
      // Served by the new workers before the actor has seen the old ones drain and logged it.
      let done: Record<string, unknown> | undefined;
      for (const t1 = performance.now(); !done && performance.now() - t1 < 30_000; await new Promise((res) => setTimeout(res, 20))) {
        done = local.logs().slice(before).find((l) => l.msg === 'reload: done');
      }
      if (typeof done?.durationMs === 'number') out.actorMs.push(done.durationMs);
      if (typeof done?.checkMs === 'number') out.checkMs.push(done.checkMs);
    }
    return out;
  } finally {
    await cluster.stop();
  }
}

async function main(): Promise<void> {
  const full = isFull();
  const n = Number(arg('--n') ?? (full ? 10_000 : 2000));
  const rounds = Number(arg('--rounds') ?? 3);
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { reload_ms_10k: null, reload_ms_2k: null };
  await attempt(rows, `reload ${n}`, async () => {
    const r = await run(n, rounds);
    const served = median(r.servedMs);
    const key = n === 10_000 ? 'reload_ms_10k' : n === 2000 ? 'reload_ms_2k' : null;
    if (key) fig[key] = round(served, 0);
    rows.push({
      figure: `new Ingress written → served, ${n} Ingresses (a reload)`, value: `${served.toFixed(0)} ms`,
      note: `median of ${r.servedMs.length} (${r.servedMs.map((x) => x.toFixed(0)).join(', ')}); reload actor ${r.actorMs.map((x) => x.toFixed(0)).join(', ') || '?'} ms${r.checkMs.length ? `, of which NGINX's check before the new workers ${r.checkMs.map((x) => x.toFixed(0)).join(', ')} ms` : ''}; cold start ${r.startS.toFixed(1)} s`,
    });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('reload', rows);
  emitFigures(fig);
}

await main();
