// Endpoint change → first request served by the new endpoint, through `ingress-rx local` and
// its real NGINX (manifests watcher, store, ring, bucket, sync, Lua POST, balancer). Each
// change moves the Service's only endpoint to a new port of a tiny echo process, so the reply
// names the endpoint that served it. Then the same under churn (a change every 100 ms) with the
// default rate limit, where the token bucket bounds how stale the served endpoint can be.
//   node --import tsx bench/endpoint.ts [--full]
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendRequest, startLocal, type LocalController } from '../test/support/local-harness.js';
import { attempt, emitFigures, isFull, loadAverage, now, ms, percentile, printTable, round, verdict, type Row } from './lib.js';

const HOST = 'ep.bench.example';
const NS = 'bench';

/** One echo process, many ports: each reply's body is the port that answered. */
async function portEchoes(count: number): Promise<{ ports: number[]; close(): Promise<void> }> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const srv = createServer((req, res) => {
      const port = (req.socket.address() as AddressInfo).port;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(String(port));
    });
    srv.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    servers.push(srv);
    ports.push((srv.address() as AddressInfo).port);
  }
  return {
    ports,
    close: async () => { for (const s of servers) { s.closeAllConnections(); await new Promise((r) => s.close(r)); } },
  };
}

function manifests(port: number): object[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'ep', namespace: NS }, spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
    sliceManifest(port),
    {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'ep', namespace: NS },
      spec: { rules: [{ host: HOST, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'ep', port: { number: 80 } } } }] } }] },
    },
  ];
}

function sliceManifest(port: number): object {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'ep-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'ep' } },
    addressType: 'IPv4', ports: [{ name: 'http', port }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  };
}

/** Sum of every series of a metric on /metrics. */
async function metricSum(ctl: LocalController, name: string): Promise<number> {
  const r = await sendRequest(ctl.ports.healthz, '127.0.0.1', '/metrics');
  let sum = 0;
  for (const line of r.body.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function served(ctl: LocalController): Promise<number | null> {
  const r = await ctl.request(HOST, '/').catch(() => null);
  return r && r.status === 200 ? Number(r.body) : null;
}

async function untilServed(ctl: LocalController, port: number, timeoutMs: number): Promise<number> {
  const t0 = now();
  for (;;) {
    if (await served(ctl) === port) return ms(t0);
    if (ms(t0) > timeoutMs) throw new Error(`endpoint :${port} not served after ${timeoutMs} ms`);
  }
}

const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));

interface Isolated { p50: number; p99: number; max: number; samples: number; reloads: number; rate: number }

async function isolatedChanges(count: number, rate: number, spacingMs: number): Promise<Isolated> {
  const echoes = await portEchoes(count + 1);
  const ctl = await startLocal({ files: { 'ep.json': manifests(echoes.ports[0]!) }, args: ['--sync-rate-limit', String(rate), '--log-level', 'warn'] });
  try {
    await untilServed(ctl, echoes.ports[0]!, 30_000);
    const reloadsBefore = await metricSum(ctl, 'nginx_ingress_controller_success');
    const latencies: number[] = [];
    for (let k = 1; k <= count; k++) {
      await sleep(spacingMs);
      const port = echoes.ports[k]!;
      ctl.write('ep.json', manifests(port));
      latencies.push(await untilServed(ctl, port, 20_000));
    }
    const reloads = await metricSum(ctl, 'nginx_ingress_controller_success') - reloadsBefore;
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), samples: count, reloads, rate };
  } finally {
    await ctl.stop();
    await echoes.close();
  }
}

interface Churn { changes: number; seen: number; maxStaleMs: number; convergeMs: number; reloads: number; syncs: number }

/** A change every `everyMs` for `durationMs`, polling all along; default rate limit. */
async function churn(durationMs: number, everyMs: number): Promise<Churn> {
  const changes = Math.floor(durationMs / everyMs);
  const echoes = await portEchoes(changes + 1);
  const ctl = await startLocal({ files: { 'ep.json': manifests(echoes.ports[0]!) }, args: ['--sync-rate-limit', '0.3', '--log-level', 'warn'] });
  try {
    await untilServed(ctl, echoes.ports[0]!, 30_000);
    const reloadsBefore = await metricSum(ctl, 'nginx_ingress_controller_success');
    const syncsBefore = await metricSum(ctl, 'ingress_rx_syncs_total');
    const writtenAt: number[] = [performance.now()];
    const index = new Map(echoes.ports.map((p, i) => [p, i]));
    let done = false;
    let maxStale = 0;
    const seen = new Set<number>();
    const poller = (async () => {
      while (!done) {
        const port = await served(ctl);
        const t = performance.now();
        if (port === null) continue;
        const j = index.get(port)!;
        seen.add(j);
        // Stale since the change that superseded what was served.
        const supersededAt = writtenAt[j + 1];
        if (supersededAt !== undefined) maxStale = Math.max(maxStale, t - supersededAt);
      }
    })();
    const start = performance.now();
    for (let k = 1; k <= changes; k++) {
      const due = start + k * everyMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      ctl.write('ep.json', manifests(echoes.ports[k]!));
      writtenAt[k] = performance.now();
    }
    const last = echoes.ports[changes]!;
    await untilServed(ctl, last, 30_000);
    const convergeMs = performance.now() - writtenAt[changes]!;
    done = true;
    await poller;
    const reloads = await metricSum(ctl, 'nginx_ingress_controller_success') - reloadsBefore;
    const syncs = await metricSum(ctl, 'ingress_rx_syncs_total') - syncsBefore;
    return { changes, seen: seen.size - 1, maxStaleMs: maxStale, convergeMs, reloads, syncs };
  } finally {
    await ctl.stop();
    await echoes.close();
  }
}

async function main(): Promise<void> {
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = {
    endpoint_p50_ms: null, endpoint_p99_ms: null, endpoint_reloads: null, endpoint_rate_limit: null,
    churn_max_stale_ms: null, churn_converge_ms: null, churn_reloads: null,
  };
  // Full: the default 0.3/s bucket, changes spaced beyond its 3.4 s interval. Quick: a higher rate
  // limit so the bucket never holds an isolated change back, and fewer changes.
  const [count, rate, spacing] = full ? [20, 0.3, 3600] : [12, 20, 300];
  await attempt(rows, 'endpoint change latency', async () => {
    const r = await isolatedChanges(count, rate, spacing);
    fig.endpoint_p50_ms = round(r.p50, 1);
    fig.endpoint_p99_ms = round(r.p99, 1);
    fig.endpoint_reloads = r.reloads;
    fig.endpoint_rate_limit = r.rate;
    const how = `${r.samples} isolated changes ${spacing} ms apart, --sync-rate-limit ${r.rate}${full ? ' (default)' : ' (raised: quick mode)'}; includes the 50 ms manifests-watch debounce`;
    rows.push({ figure: 'endpoint change → served by new endpoint, p50', value: `${r.p50.toFixed(0)} ms`, note: how });
    rows.push({ figure: 'endpoint change → served by new endpoint, p99', value: `${r.p99.toFixed(0)} ms`, target: '≤ 250 ms', status: verdict(r.p99, 250), note: `max ${r.max.toFixed(0)} ms` });
    rows.push({ figure: 'reloads during endpoint changes', value: String(r.reloads), target: '0', status: r.reloads === 0 ? 'met' : 'MISSED', note: 'nginx_ingress_controller_success delta' });
  });
  const duration = full ? 30_000 : 10_000;
  await attempt(rows, 'endpoint churn', async () => {
    const r = await churn(duration, 100);
    fig.churn_max_stale_ms = round(r.maxStaleMs, 0);
    fig.churn_converge_ms = round(r.convergeMs, 0);
    fig.churn_reloads = r.reloads;
    rows.push({ figure: `churn: change every 100 ms for ${duration / 1000} s, max staleness`, value: `${r.maxStaleMs.toFixed(0)} ms`,
      note: `default --sync-rate-limit 0.3: bounded by the bucket (~3.3 s) by design; ${r.changes} changes, ${r.seen} of them ever served, ${r.syncs} syncs` });
    rows.push({ figure: 'churn: last change → served', value: `${r.convergeMs.toFixed(0)} ms`, note: `reloads during churn: ${r.reloads}` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('endpoint changes through real NGINX', rows);
  emitFigures(fig);
}

await main();
