// Binds the model (build, snapshot, decide, payloads) and two actors into the sync actor's
// dependencies: the one wiring that local mode, the cluster controller and replay share.
import { defer, map, tap, type Observable, type SchedulerLike } from 'rxjs';
import type { StoreReader } from '../store/types.js';
import type { ModelBuilder } from '../model/build.js';
import { snapshot, type ModelSnapshot } from '../model/core/hash.js';
import { decide } from '../model/core/decide.js';
import { backendsPayload, serversChange, serversPayload } from '../model/core/payload.js';
import { routesPayload } from '../model/core/routes-payload.js';
import type { Configuration } from '../model/core/types.js';
import type { Quarantine } from '../model/core/quarantine.js';
import type { ActorOutcome, SyncDeps } from './sync.js';
import type { DynamicUpdate } from '../model/core/payload.js';
import type { BudgetCheck } from './budget-check.js';
import { luaSharedDicts } from '../render/settings-directives.js';

export interface ModelSyncOptions {
  store: StoreReader;
  builder: ModelBuilder;
  scheduler: SchedulerLike;
  reload: (config: Configuration) => Observable<ActorOutcome>;
  dynamic: (update: DynamicUpdate) => Observable<ActorOutcome>;
  /** What NGINX refused: the model is built without it, until a change may have fixed it. */
  quarantine?: Quarantine;
  /** The budgets (./budget-check.ts), held through the quarantine. */
  budgets?: BudgetCheck;
  /** The process's CPU time in ms: the sync's stages then say theirs. */
  cpuMs?: () => number;
}

export function modelSyncDeps(opts: ModelSyncOptions): SyncDeps<ModelSnapshot> {
  const { scheduler } = opts;
  // Stamps when an actor started and how long it took, for the tracer, unless it says itself.
  const timed = <A>(actor: (arg: A) => Observable<ActorOutcome>) => (arg: A) => defer(() => {
    const startedAt = scheduler.now();
    return actor(arg).pipe(map((o): ActorOutcome => ({
      ...o, startedAt: o.startedAt ?? startedAt, durationMs: o.durationMs ?? scheduler.now() - startedAt,
    })));
  });
  return {
    scheduler,
    ...(opts.cpuMs ? { cpuMs: opts.cpuMs } : {}),
    build: (changes, context) => {
      const q = opts.quarantine;
      if (!q) return opts.builder.build(opts.store, changes);
      // What is let go is in the model again: the builder's change hints do not say so.
      const released = q.size === 0 ? [] : q.release(opts.store, context ?? { objects: changes ?? [], everything: changes === undefined });
      const hint = released.length > 0 ? undefined : changes;
      return opts.budgets ? opts.budgets.build(hint) : opts.builder.build(q.view(opts.store), hint);
    },
    snapshot,
    decide,
    backendsPayload,
    serversPayload,
    serversChange,
    routesPayload,
    sharedDicts: (config) => luaSharedDicts(config.settings),
    reload: timed(opts.reload),
    dynamic: (update) => timed(opts.dynamic)(update).pipe(tap((o) => { if (o.tooLarge) opts.budgets?.refused(o.tooLarge, o.tooLargeBy); })),
    ...(opts.quarantine ? { quarantined: () => opts.quarantine!.entries() } : {}),
  };
}
