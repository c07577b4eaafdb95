// What a new Ingress costs the sync in controller mode while the controller's own status writes
// come back (issue 29, item 2): in process, N generated Ingresses (dynamic routes on, as the
// commands run), then K of them replaced by objects that differ in status alone (what the status
// writer's writes look like when the watch brings them back; the store runs no sync for them)
// and one new plain Ingress added; the sync's build (with the batch's change hint, the new
// Ingress), snapshot and decision, and the payloads it decides on, each in CPU ms, and the path
// the build took. K = 0 is local mode's case. Medians of --rounds (default 3) per K.
//   node --import tsx bench/status-echo.ts [--n N] [--rounds R] [--echoes 0,300,10000]
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { snapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { backendsPayload, serversPayload } from '../src/model/core/payload.js';
import { routesPayload } from '../src/model/core/routes-payload.js';
import { silentLogger } from '../src/log.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import type { Ingress } from '../src/store/kube-types.js';
import { generateEvents, namespaceOf, serviceOf } from './gen.js';
import { arg, cpuMs, loadAverage, median, printTable, type Row } from './lib.js';

const n = Number(arg('--n') ?? 10_000);
const rounds = Number(arg('--rounds') ?? 3);
const echoCounts = (arg('--echoes') ?? `0,300,${n}`).split(',').map(Number);

const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
const events = generateEvents({ n });
for (const e of events) store.apply(e);
const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, dynamicRoutes: true });
const first = builder.build(store).config;
let held = snapshot(first);
routesPayload(first);
const ingressKeys = events.filter((e) => e.kind === 'Ingress').map((e) => e.key);

let added = 0;
let statusWrites = 0;
/** K status echoes, then one new Ingress, then the sync's model stages: CPU ms each. */
function newIngressAfter(echoes: number) {
  for (let i = 0; i < echoes; i++) {
    const key = ingressKeys[(statusWrites + i) % ingressKeys.length]!;
    const ing = store.getIngress(key)!;
    // Another address each call, so that an Ingress echoed by the previous call changes again.
    const ip = `192.0.2.${1 + (added % 250)}`;
    store.apply({ kind: 'Ingress', type: 'update', key, object: { ...ing, metadata: { ...ing.metadata, resourceVersion: `rv-${statusWrites + i}` }, status: { loadBalancer: { ingress: [{ ip }] } } } as Ingress });
  }
  statusWrites += echoes;
  const name = `route-${++added}`;
  const key = `${namespaceOf(1)}/${name}`;
  store.apply({
    kind: 'Ingress', type: 'add', key,
    object: {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
      metadata: { name, namespace: namespaceOf(1), creationTimestamp: new Date(Date.UTC(2030, 0, 1, 0, 0, added)).toISOString() },
      spec: { ingressClassName: 'nginx', rules: [{ host: `${name}.bench.example`, http: { paths: [{ path: '/only', pathType: 'Exact', backend: { service: { name: serviceOf(1), port: { number: 80 } } } }] } }] },
    } as Ingress,
  });
  const c0 = cpuMs();
  const built = builder.build(store, [{ kind: 'Ingress', key }]);
  const c1 = cpuMs();
  const next = snapshot(built.config);
  const d = decide(held, next);
  const c2 = cpuMs();
  if (d.backendsChanged) backendsPayload(built.config);
  if (d.serversChanged) serversPayload(built.config);
  if (d.routesChanged) routesPayload(built.config);
  const c3 = cpuMs();
  held = next;
  return { path: built.path, build: c1 - c0, decide: c2 - c1, payload: c3 - c2 };
}

const rows: Row[] = [];
for (const k of echoCounts) {
  const runs = Array.from({ length: rounds }, () => newIngressAfter(k));
  const m = (f: (r: (typeof runs)[number]) => number) => median(runs.map(f)).toFixed(1);
  rows.push({
    figure: `new Ingress after ${k} status echoes, ${n} Ingresses: build / decide / payloads, CPU`,
    value: `${m((r) => r.build)} / ${m((r) => r.decide)} / ${m((r) => r.payload)} ms`,
    note: `medians of ${rounds}; build paths: ${runs.map((r) => r.path).join(', ')}`,
  });
}
rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
printTable('a new Ingress while status writes come back', rows);
