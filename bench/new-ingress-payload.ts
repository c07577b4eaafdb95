// The payload stage of a sync that adds one plain Ingress (a new dynamic host) at 10k, in process:
// the sync actor's dynamicUpdate (the backends list, the servers map's change from what Lua holds
// as src/actors/sync.ts works it out, the route table), each part's CPU time, over 20 new
// Ingresses after a first sync.
// The build, snapshot and decision before it are timed too, for scale.
//   node --import tsx bench/new-ingress-payload.ts [--n 10000] [--adds 20]
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { snapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { backendsPayload, serversChange, serversDelta, serversPayload, type HeldServers, type ServersPayload } from '../src/model/core/payload.js';
import { routesPayload } from '../src/model/core/routes-payload.js';
import { silentLogger } from '../src/log.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import type { Ingress } from '../src/store/kube-types.js';
import { generateEvents, ingressObject } from './gen.js';
import { arg, cpuMs, emitFigures, loadAverage, median, printTable, round } from './lib.js';

const n = Number(arg('--n') ?? 10_000);
const adds = Number(arg('--adds') ?? 20);
const logger = silentLogger();
const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
for (const e of generateEvents({ n })) store.apply(e);
const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, logger, dynamicRoutes: true });
const loadBefore = loadAverage();

let config = builder.build(store).config;
let snap = snapshot(config);
let heldServers: HeldServers = serversChange(null, config).held();
/** The whole map as main (6389462) kept it, for the way it was worked out before: the whole map, then serversDelta. */
let heldWhole: ServersPayload = serversPayload(config);
routesPayload(config);

const parts = { wholeServers: [] as number[], build: [] as number[], decide: [] as number[], backends: [] as number[], servers: [] as number[], routes: [] as number[], payload: [] as number[] };
const timed = <T>(into: number[], f: () => T): T => { const c = cpuMs(); const v = f(); into.push(cpuMs() - c); return v; };
for (let k = 0; k < adds + 3; k++) {
  // A plain Ingress on a host of its own, to a Service that exists (ing-k's).
  const base = ingressObject(k, { n, plain: true });
  const ing: Ingress = { ...base, metadata: { ...base.metadata, name: `new-${k}`, uid: `new-uid-${k}`, creationTimestamp: new Date(Date.UTC(2030, 0, 1, 0, 0, k)).toISOString() },
    spec: { ...base.spec, tls: undefined, rules: [{ ...base.spec.rules![0]!, host: `new-${k}.bench.test` }] } };
  store.apply({ kind: 'Ingress', type: 'add', key: `${ing.metadata.namespace}/${ing.metadata.name}`, object: ing });
  const warm = k < 3;
  const sink = (a: number[]) => (warm ? [] : a);
  const next = timed(sink(parts.build), () => builder.build(store, [{ kind: 'Ingress', key: `${ing.metadata.namespace}/${ing.metadata.name}` }]).config);
  const d = timed(sink(parts.decide), () => decide(snap, snapshot(next)));
  const c0 = cpuMs();
  let beforeMs = 0;
  if (d.backendsChanged) timed(sink(parts.backends), () => backendsPayload(next));
  if (d.serversChanged) {
    // Before (whole maps) and now (the changed servers' names), on the same configuration, in turns.
    const whole = () => { const c = cpuMs(); const w = serversPayload(next); serversDelta(heldWhole, w); heldWhole = w; beforeMs = cpuMs() - c; if (!warm) parts.wholeServers.push(beforeMs); };
    const now = () => timed(sink(parts.servers), () => { heldServers = serversChange(heldServers, next).held(); });
    if (k % 2 === 0) { whole(); now(); } else { now(); whole(); }
  }
  if (d.routesChanged) timed(sink(parts.routes), () => routesPayload(next));
  // The stage as the sync runs it now: without the "before" computation.
  if (!warm) parts.payload.push(cpuMs() - c0 - beforeMs);
  config = next;
  snap = snapshot(next);
}

const med = (a: number[]): number => (a.length === 0 ? 0 : round(median(a), 2) ?? 0);
printTable(`one new plain Ingress at ${n} (dynamic host), CPU ms, median of ${adds}; load average ${loadBefore} → ${loadAverage()}`, [
  { figure: 'build', value: String(med(parts.build)) },
  { figure: 'snapshot + decide', value: String(med(parts.decide)) },
  { figure: 'payload (the sync\'s payload stage)', value: String(med(parts.payload)) },
  { figure: '  backends list', value: `${med(parts.backends)} (${parts.backends.length} of ${adds})` },
  { figure: '  servers map + its change', value: `${med(parts.servers)} (${parts.servers.length} of ${adds})` },
  { figure: '  the same, whole maps + serversDelta (before)', value: `${med(parts.wholeServers)} (${parts.wholeServers.length} of ${adds})` },
  { figure: '  route table', value: `${med(parts.routes)} (${parts.routes.length} of ${adds})` },
]);
emitFigures({ new_ingress_payload_cpu_ms: med(parts.payload), new_ingress_servers_change_cpu_ms: med(parts.servers), new_ingress_servers_whole_cpu_ms: med(parts.wholeServers) });
