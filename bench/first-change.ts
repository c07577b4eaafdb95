// What the first new Ingress after the initial sync pays that the next ones do not (issue 29,
// item 2): in a fresh process, N generated Ingresses (dynamic routes on), one initial sync through
// the sync actor as `serve.ts` wires it (quarantine, budgets, the dynamic-config actor's
// serialisers; NGINX's reload and the control server's answers stood in for), then new plain
// Ingresses one at a time, each the store's add and one sync: each sync's stages in CPU ms
// (build, snapshot + decide, payloads, the actor's serialising), in order, so the first stands
// beside the rest. `--gc` runs a full collection between the initial sync and the first new
// Ingress (as the controller's idle collection does, 5 s after a sync); `--warm` runs the
// controller's warm-up (src/actors/sync-warm-up.ts) there first, all its steps in a row
// (`--warm-ingresses`, `--warm-steps` change its size). The stages are the main thread's CPU
// (V8's compiler and GC threads run beside it); the warm-up's is the process's.
//   node --import tsx --expose-gc bench/first-change.ts [--n N] [--adds K] [--gc] [--warm] [--cluster-shape]
import { lastValueFrom, of, queueScheduler, tap } from 'rxjs';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { createQuarantine } from '../src/model/core/quarantine.js';
import { DEFAULT_BUDGETS } from '../src/model/core/budgets.js';
import { createBudgetCheck } from '../src/actors/budget-check.js';
import { createSyncer } from '../src/actors/sync.js';
import { modelSyncDeps } from '../src/actors/model-sync.js';
import { createSyncWarmUp } from '../src/actors/sync-warm-up.js';
import { createDynamicConfigActor } from '../src/actors/dynamic-config.js';
import { silentLogger } from '../src/log.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import type { Ingress } from '../src/store/kube-types.js';
import type { PipelineItem, SourceEvent } from '../src/store/events.js';
import { generateEvents, namespaceOf, serviceOf } from './gen.js';
import { arg, cpuMs, loadAverage, mainThreadCpuMs, median, printTable, type Row } from './lib.js';

const n = Number(arg('--n') ?? 10_000);
const adds = Number(arg('--adds') ?? 10);
const logger = silentLogger();

const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
const builderOptions = { annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, dynamicRoutes: true, logger };
const builder = createModelBuilder(builderOptions);
const quarantine = createQuarantine();
const budgets = createBudgetCheck({ store, quarantine, builder, budgets: DEFAULT_BUDGETS, logger });
let actorCpu = 0;
const dynamicActor = createDynamicConfigActor({
  control: { socketPath: '/nonexistent', token: () => 'bench' }, scheduler: queueScheduler, logger,
  request: () => of({ status: 201, body: '' }),
});
const syncer = createSyncer(modelSyncDeps({
  store, builder, scheduler: queueScheduler, quarantine, budgets, cpuMs: mainThreadCpuMs,
  reload: () => of({ ok: true, checksum: 'bench' }),
  dynamic: (update) => {
    const c0 = mainThreadCpuMs();
    return dynamicActor(update).pipe(tap(() => { actorCpu = mainThreadCpuMs() - c0; }));
  },
}));

let id = 0;
let syncs = 0;
const item = (input: PipelineItem['input']): PipelineItem => ({ id: ++id, t: 0, skippable: input.kind !== 'task', input } as PipelineItem);
async function sync(items: PipelineItem[]) {
  actorCpu = 0;
  const c0 = mainThreadCpuMs();
  const r = await lastValueFrom(syncer({ n: ++syncs, t: 0, items }));
  const total = mainThreadCpuMs() - c0;
  if (!r.applied) throw new Error(`sync ${r.sync} not applied: ${r.error ?? r.reason} ${JSON.stringify(r.dynamic ?? r.reload)}`);
  return { r, total, actor: actorCpu };
}

const events: SourceEvent[] = generateEvents({ n });
for (const e of events) store.apply(e);
const initial = await sync([item({ kind: 'task', task: 'initial-sync' } as PipelineItem['input'])]);
const rows: Row[] = [{ figure: `initial sync, ${n} Ingresses`, value: `${initial.total.toFixed(0)} ms CPU`, note: `${initial.r.decision}; build ${initial.r.stages?.cpu?.buildMs.toFixed(0)} ms` }];
if (process.argv.includes('--gc')) (globalThis as { gc?: () => void }).gc?.();
if (process.argv.includes('--warm')) {
  const warm = createSyncWarmUp({
    store, builder: () => createModelBuilder(builderOptions), budgets: DEFAULT_BUDGETS,
    ...(arg('--warm-ingresses') ? { ingresses: Number(arg('--warm-ingresses')) } : {}), ...(arg('--warm-steps') ? { steps: Number(arg('--warm-steps')) } : {}),
  });
  const c0 = cpuMs();
  let steps = 0;
  while (warm() !== null) steps += 1;
  rows.push({ figure: 'warm-up after the initial sync', value: `${(cpuMs() - c0).toFixed(0)} ms CPU`, note: `${steps} steps` });
}

// `--cluster-shape`: the new Ingresses' metadata has the generated ones' fields (uid,
// resourceVersion, generation, annotations), so V8 sees objects of the shapes it has seen.
const clusterShape = process.argv.includes('--cluster-shape');
const created = (k: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, k)).toISOString();
const totals: number[] = [];
for (let k = 1; k <= adds; k++) {
  const name = `route-${k}`;
  const key = `${namespaceOf(1)}/${name}`;
  const event: SourceEvent = {
    kind: 'Ingress', type: 'add', key,
    object: {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
      metadata: clusterShape
        ? { name, namespace: namespaceOf(1), uid: `route-uid-${k}`, resourceVersion: '1', generation: 1, creationTimestamp: created(k), annotations: {} }
        : { name, namespace: namespaceOf(1), creationTimestamp: created(k) },
      spec: { ingressClassName: 'nginx', rules: [{ host: `${name}.bench.example`, http: { paths: [{ path: '/only', pathType: 'Exact', backend: { service: { name: serviceOf(1), port: { number: 80 } } } }] } }] },
    } as Ingress,
  };
  const c0 = cpuMs();
  store.apply(event);
  const storeMs = cpuMs() - c0;
  const { r, total, actor } = await sync([item(event)]);
  totals.push(total);
  const cpu = r.stages?.cpu;
  rows.push({
    figure: `new Ingress ${k}: store / build / decide / payloads / actor / sync total`,
    value: `${storeMs.toFixed(1)} / ${cpu?.buildMs.toFixed(1)} / ${cpu?.decideMs.toFixed(1)} / ${cpu?.payloadMs.toFixed(1)} / ${actor.toFixed(1)} / ${total.toFixed(1)} ms`,
    note: `${r.decision} (${r.reason}); build path ${r.stages?.buildPath}; posted ${r.posted.join(', ')}`,
  });
}
const later = totals.slice(Math.ceil(totals.length / 2));
rows.push({ figure: 'sync total: the first new Ingress / median of the later half', value: `${totals[0]?.toFixed(1)} / ${median(later).toFixed(1)} ms`, note: process.argv.includes('--warm') ? 'after the warm-up' : 'no warm-up' });
rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
printTable('the first new Ingress after the initial sync, CPU ms', rows);
