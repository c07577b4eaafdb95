// Warms V8 up for the first change after the initial sync. The initial sync builds every fragment
// anew; the next one finds every fragment in the builder's memo, patches the topology and posts
// deltas: branches V8 has no feedback for, so it deoptimises the loops over every Ingress and runs
// them interpreted until it recompiles them. At 10k the first new Ingress's sync cost ~4× what the
// later ones cost (docs/performance.md, inc11). A probe with its own builder, quarantine, budgets,
// syncer and serialisers runs that path over a few of the store's Ingresses, one toggled per step:
// V8 keeps feedback and optimised code per closure site, so the controller's own closures gain
// them, while no state of theirs is touched.
import { interval, map, of, queueScheduler, switchMap, take, takeUntil, takeWhile, type Observable, type SchedulerLike } from 'rxjs';
import type { Ingress } from '../store/kube-types.js';
import type { StoreReader } from '../store/types.js';
import { ingressView } from '../store/ingress-view.js';
import type { ModelBuilder } from '../model/build.js';
import { createQuarantine } from '../model/core/quarantine.js';
import type { Budgets } from '../model/core/budgets.js';
import { silentLogger } from '../log.js';
import { createBudgetCheck } from './budget-check.js';
import { createDynamicConfigActor } from './dynamic-config.js';
import { modelSyncDeps } from './model-sync.js';
import { createSyncer, type SyncResult } from './sync.js';

/** Enough Ingresses for the loops over them to gather feedback, few enough for a step of a few ms. */
export const WARM_UP_INGRESSES = 200;
/** Steps after the probe's first sync: each hides or shows one Ingress again, as a change does. */
export const WARM_UP_STEPS = 24;

export interface SyncWarmUpOptions {
  store: StoreReader;
  /** A new builder with the controller's options (the probe's own). */
  builder: () => ModelBuilder;
  budgets: Budgets;
  ingresses?: number;
  steps?: number;
}

const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`;

/** The store with only `list`'s Ingresses, in its order, and no Gateway objects (a step stays a few ms); everything else read through. */
function probeView(store: StoreReader, list: () => readonly Ingress[]): StoreReader {
  const listed = (key: string) => list().find((ing) => keyOf(ing) === key);
  return ingressView(store, {
    listIngresses: () => list() as Ingress[],
    getIngress: listed,
    ingressesReferencingSecret: (key) => store.ingressesReferencingSecret(key).filter((k) => listed(k) !== undefined),
    gateway: false,
  });
}

/**
 * One step per call, synchronous (the probe's actors answer at once): the probe's sync result, or
 * null once every step ran. The store is read at the first step; later steps reuse its objects.
 */
export function createSyncWarmUp(opts: SyncWarmUpOptions): () => SyncResult | null {
  const steps = opts.steps ?? WARM_UP_STEPS;
  const logger = silentLogger();
  let all: readonly Ingress[] = [];
  let current: readonly Ingress[] = [];
  const view = probeView(opts.store, () => current);
  const builder = opts.builder();
  const quarantine = createQuarantine();
  const budgets = createBudgetCheck({ store: view, quarantine, builder, budgets: opts.budgets, logger });
  const dynamic = createDynamicConfigActor({
    control: { socketPath: '', token: () => '' }, scheduler: queueScheduler, logger,
    request: () => of({ status: 201, body: '' }),
  });
  const sync = createSyncer(modelSyncDeps({
    store: view, builder, scheduler: queueScheduler, quarantine, budgets, dynamic,
    reload: () => of({ ok: true, checksum: '' }),
  }));
  let step = 0;
  return () => {
    if (step > steps) return null;
    let toggled: Ingress | undefined;
    if (step === 0) {
      all = opts.store.listIngresses().slice(0, opts.ingresses ?? WARM_UP_INGRESSES);
      current = all;
    } else if (all.length > 0) {
      // Odd steps hide an Ingress, even steps show it again; another one each pair.
      toggled = all[(Math.floor((step - 1) / 2) * 7) % all.length]!;
      current = step % 2 === 1 ? all.filter((ing) => ing !== toggled) : all;
    }
    step += 1;
    const items = toggled
      ? [{ id: step, t: 0, skippable: true, input: { kind: 'Ingress' as const, type: 'update' as const, key: keyOf(toggled), object: toggled } }]
      : [{ id: step, t: 0, skippable: false, input: { kind: 'task' as const, task: 'initial-sync' as const } }];
    let result: SyncResult | null = null;
    sync({ n: step, t: 0, items }).subscribe((r) => { result = r; });
    return result;
  };
}

/**
 * After `start$` first emits (the controller is ready, no change waiting), one warm-up step a
 * millisecond, each in a task of its own. Ends for good when `changes$` emits (a change waits for a
 * sync: it goes first, and pays what it paid without a warm-up), when no step is left, or when a
 * step throws: a warm-up may cost idle time, never a sync's.
 */
export function warmUpSteps(start$: Observable<unknown>, step: () => SyncResult | null, scheduler: SchedulerLike, changes$: Observable<unknown>): Observable<SyncResult> {
  const safeStep = (): SyncResult | null => { try { return step(); } catch { return null; } };
  return start$.pipe(
    take(1),
    // Changes before it (the initial state itself) do not count.
    switchMap(() => interval(1, scheduler).pipe(takeUntil(changes$))),
    map(safeStep),
    takeWhile((r): r is SyncResult => r !== null),
  );
}
