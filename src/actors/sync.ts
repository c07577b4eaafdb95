// The sync actor: entered with exhaustMap, it rebuilds the model from the whole store, compares
// it with what NGINX runs, and applies the difference through the reload and dynamic-config
// actors. What NGINX runs (its state) lives in this closure and advances only after success.
import { catchError, defer, exhaustMap, finalize, map, of, switchMap, type Observable, type OperatorFunction, type SchedulerLike } from 'rxjs';
import { isTask, type StoredKind } from '../store/events.js';
import type { GatewayAPIStatus } from '../model/gateway/index.js';
import type { BuildPath } from '../model/build.js';
import type { SyncBatch } from '../streams/hooks.js';
import type { Decision, DecisionKind } from '../model/core/decide.js';
import { wholeServersChange, type DynamicPart, type DynamicUpdate, type HeldServers, type ServersChange, type ServersPayload } from '../model/core/payload.js';
import type { RoutesPayload } from '../model/core/routes-payload.js';
import type { Backend, Configuration, ModelWarning } from '../model/core/types.js';
import type { QuarantineEntry } from '../model/core/quarantine.js';

export type { DecisionKind };

export interface ActorOutcome {
  ok: boolean;
  error?: string;
  durationMs?: number;
  attempts?: number;
  /** Scheduler time the actor started (tracing places its span by it). */
  startedAt?: number;
  /** A reload's: the checksum of the nginx.conf NGINX now runs. */
  checksum?: string;
  /** A reload's: the configuration NGINX now runs when it is not the one asked for (narrowed). */
  config?: Configuration;
  /** A reload's: what the renderer refused, as warnings naming the objects. */
  problems?: ModelWarning[];
  /** A dynamic update's: the part the configuration endpoint refused as too large (413). */
  tooLarge?: DynamicPart;
  /** A dynamic update's: how many bytes `tooLarge` lacked, when NGINX's answer said. */
  tooLargeBy?: number;
  /** A dynamic update's: milliseconds each part's POST took until NGINX answered (its serialising included). */
  partMs?: Partial<Record<DynamicPart, number>>;
}

/** What a batch changed, for the quarantine: which objects, or everything (templates, ConfigMap, a lossy batch). */
export interface BatchContext {
  objects: ReadonlyArray<{ kind: StoredKind; key: string }>;
  everything: boolean;
}

export interface SyncDeps<S> {
  scheduler: SchedulerLike;
  /** The process's CPU time in ms, when the sync's stages should say theirs too (a shared machine stretches their wall time). */
  cpuMs?: () => number;
  /** `changes`: the objects the batch changed; undefined when unknown (a task such as a template change). */
  build(changes?: ReadonlyArray<{ kind: StoredKind; key: string }>, context?: BatchContext): { config: Configuration; warnings: ModelWarning[]; gatewayStatus?: GatewayAPIStatus; path?: BuildPath };
  snapshot(config: Configuration): S;
  decide(running: S | null, next: S): Decision;
  backendsPayload(config: Configuration): readonly Backend[];
  serversPayload(config: Configuration): ServersPayload;
  /**
   * What to post of the servers map from the one Lua holds (null: nothing known), cheaper than
   * the whole map when few servers changed; absent: the whole map is made and compared.
   */
  serversChange?(held: HeldServers | null, config: Configuration): ServersChange;
  /** The dynamic hosts' route table; absent: routes are never posted (every host static). */
  routesPayload?(config: Configuration): RoutesPayload;
  reload(config: Configuration): Observable<ActorOutcome>;
  dynamic(update: DynamicUpdate): Observable<ActorOutcome>;
  /**
   * The Lua shared dictionaries a configuration declares (names and sizes). NGINX keeps a zone
   * across a reload only at the same size: a reload that changes them leaves Lua's data in new,
   * empty zones, so everything is posted again.
   */
  sharedDicts?(config: Configuration): string;
  /** What is set aside because NGINX refused it (see model/core/quarantine.ts), after the sync. */
  quarantined?(): QuarantineEntry[];
}

export interface SyncResult {
  sync: number;
  /** Scheduler time the sync started. */
  t: number;
  /** How many pipeline items the sync merged. */
  events: number;
  itemIds: number[];
  decision: DecisionKind;
  reason: string;
  /** Of the nginx.conf NGINX runs after this sync (its first line; '' until one ran). */
  checksum: string;
  /** True when NGINX now runs this model (or nothing had to change). */
  applied: boolean;
  reload?: ActorOutcome;
  dynamic?: ActorOutcome;
  posted: DynamicPart[];
  warnings: ModelWarning[];
  durationMs: number;
  /** Absent only when the sync itself failed (error set). */
  config?: Configuration;
  /** The Gateway API status conditions the build computed (only when some Gateway of ours exists). */
  gatewayStatus?: GatewayAPIStatus;
  /** Objects set aside because NGINX refuses them; the rest is applied. */
  quarantined: QuarantineEntry[];
  /** Where the sync's milliseconds went before any actor: the model build, the snapshot and decision, the payloads. */
  stages?: SyncStages;
  error?: string;
}

export interface SyncStages {
  buildMs: number; decideMs: number; payloadMs: number;
  /** Which of the builder's paths the build took (how much of the model it made anew). */
  buildPath?: BuildPath;
  /** The same stages' CPU time (with SyncDeps.cpuMs). */
  cpu?: { buildMs: number; decideMs: number; payloadMs: number };
}

const FORCING_TASKS = new Set(['template-change', 'file-change']);
/** Tasks after which anything set aside may pass again. */
const CONTEXT_TASKS = new Set(['template-change', 'file-change', 'configmap-change']);

/** Builds the function that runs one sync; the returned function keeps NGINX's state. */
export function createSyncer<S>(deps: SyncDeps<S>): (batch: SyncBatch) => Observable<SyncResult> {
  // What nginx.conf holds, and what the Lua side holds: they advance separately, so a
  // reload that succeeded is not redone because a POST after it failed.
  let reloaded: S | null = null;
  let posted: S | null = null;
  let postedRoutes: RoutesPayload | null = null;
  let postedBackends: ReadonlySet<string> = new Set();
  /** The whole host → certificate map NGINX accepted last: later syncs post what changed from it. */
  let postedServers: HeldServers | null = null;
  let confChecksum = '';
  let reloadedDicts: string | null = null;

  return (batch) => defer(() => {
    const tasks = batch.items.map((i) => i.input).filter(isTask);
    if (tasks.some((t) => t.task === 'nginx-restart')) { reloaded = null; posted = null; postedRoutes = null; postedBackends = new Set(); postedServers = null; }
    const forced = tasks.find((t) => FORCING_TASKS.has(t.task));

    const context: BatchContext = {
      objects: batch.items.flatMap(({ input }) => (isTask(input) ? [] : [{ kind: input.kind, key: input.key }])),
      everything: batch.lossy === true || tasks.some((t) => CONTEXT_TASKS.has(t.task)),
    };
    const now = () => deps.scheduler.now();
    const cpu0 = deps.cpuMs?.() ?? 0;
    const t0 = now();
    const built = deps.build(tasks.length > 0 ? undefined : batchChanges(batch), context);
    const t1 = now();
    const cpu1 = deps.cpuMs?.() ?? 0;
    const warnings = [...built.warnings];
    let config = built.config;
    let next = deps.snapshot(config);
    const structural = deps.decide(reloaded, next);
    // The two sides differ only after a failed reload or POST.
    const dynamicSide = posted === reloaded ? structural : deps.decide(posted, next);
    const needsReload = structural.kind === 'reload' || forced !== undefined;
    const t2 = now();
    const cpu2 = deps.cpuMs?.() ?? 0;
    let { update, servers } = dynamicUpdate(deps, config, posted === null ? null : dynamicSide, postedServers);
    let posts = Object.keys(update) as DynamicPart[];
    const stages: SyncStages = {
      buildMs: t1 - t0, decideMs: t2 - t1, payloadMs: now() - t2, ...(built.path ? { buildPath: built.path } : {}),
      ...(deps.cpuMs ? { cpu: { buildMs: cpu1 - cpu0, decideMs: cpu2 - cpu1, payloadMs: deps.cpuMs() - cpu2 } } : {}),
    };

    const decision: DecisionKind = needsReload ? 'reload' : posts.length > 0 ? 'dynamic' : 'none';
    const reason = forced && structural.kind !== 'reload'
      ? `${forced.task}${forced.detail ? ` ${forced.detail}` : ''}`
      : decision === 'reload' ? structural.reason : dynamicSide.reason;

    const result = (partial: Partial<SyncResult>): SyncResult => ({
      sync: batch.n, t: batch.t, events: batch.items.length, itemIds: batch.items.map((i) => i.id),
      decision, reason, checksum: confChecksum, applied: false, posted: [], warnings,
      durationMs: deps.scheduler.now() - batch.t, config, quarantined: deps.quarantined?.() ?? [], stages,
      ...(built.gatewayStatus ? { gatewayStatus: built.gatewayStatus } : {}), ...partial,
    });

    if (decision === 'none') {
      // Decided dynamic, but nothing differs from what NGINX holds (a new host without a certificate).
      if (!needsReload && posted !== null) posted = next;
      return of(result({ applied: true }));
    }

    const reload$: Observable<ActorOutcome | null> = needsReload
      ? routesBeforeReload(deps, postedRoutes, postedBackends, update.routes).pipe(switchMap(() => deps.reload(config)))
      : of(null);
    return reload$.pipe(
      switchMap((reloadOutcome) => {
        if (reloadOutcome && !reloadOutcome.ok) return of(result({ reload: reloadOutcome }));
        if (reloadOutcome) {
          if (reloadOutcome.config && reloadOutcome.config !== config) {
            // NGINX runs the configuration less what it refused: that is what Lua must hold too.
            config = reloadOutcome.config;
            next = deps.snapshot(config);
            ({ update, servers } = dynamicUpdate(deps, config, posted === null ? null : deps.decide(posted, next), postedServers));
            posts = Object.keys(update) as DynamicPart[];
          }
          const dicts = deps.sharedDicts?.(config) ?? '';
          if (reloadedDicts !== null && dicts !== reloadedDicts && posted !== null) {
            posted = null; postedRoutes = null; postedBackends = new Set(); postedServers = null;
            ({ update, servers } = dynamicUpdate(deps, config, null, null));
            posts = Object.keys(update) as DynamicPart[];
          }
          reloadedDicts = dicts;
          if (reloadOutcome.problems) for (const p of reloadOutcome.problems) warnings.push(p);
          reloaded = next;
          confChecksum = reloadOutcome.checksum ?? confChecksum;
        }
        if (posts.length === 0) return of(result({ applied: true, reload: reloadOutcome ?? undefined }));
        return deps.dynamic(update).pipe(map((dyn) => {
          if (dyn.ok) {
            posted = next;
            if (update.routes) postedRoutes = update.routes;
            if (servers) postedServers = servers.held();
            if (update.backends) postedBackends = new Set(update.backends.map((b) => b.name));
          }
          return result({ applied: dyn.ok, reload: reloadOutcome ?? undefined, dynamic: dyn, posted: dyn.ok ? posts : [] });
        }));
      }),
    );
  }).pipe(
    // An error would end the pipeline: it becomes a failed result, and the pacer retries.
    catchError((err: unknown) => of<SyncResult>({
      sync: batch.n, t: batch.t, events: batch.items.length, itemIds: batch.items.map((i) => i.id),
      decision: 'none', reason: 'sync failed', checksum: confChecksum, applied: false, posted: [], warnings: [], quarantined: deps.quarantined?.() ?? [],
      durationMs: deps.scheduler.now() - batch.t, error: err instanceof Error ? err.message : String(err),
    })),
  );
}

/**
 * Before a reload that also changes the route table: the table Lua holds, plus the hosts new to it
 * whose backends Lua already holds. A host whose server block the reload removes is then in the
 * table when the new workers start, while the old workers still have its server block, which wins
 * over the router. Everything else (hosts that change or leave, new backends) follows the reload
 * with the whole update, whatever this POST's outcome.
 */
function routesBeforeReload<S>(
  deps: SyncDeps<S>, held: RoutesPayload | null, backends: ReadonlySet<string>, next: RoutesPayload | undefined,
): Observable<unknown> {
  if (held === null || next === undefined) return of(null);
  const added = Object.entries(next.hosts).filter(([host, entries]) => held.hosts[host] === undefined
    && entries.every((e) => backends.has(e.backend) && (e.fallback === '' || backends.has(e.fallback))));
  if (added.length === 0) return of(null);
  return deps.dynamic({ routes: { hosts: { ...held.hosts, ...Object.fromEntries(added) } } });
}

/**
 * What Lua must be sent: every part when it holds nothing known (`side` null), else what changed;
 * the certificates as a change to the map Lua accepted last (`heldServers`), absent when none
 * differs. `servers` gives the whole map the update brings Lua to, once it is taken.
 */
function dynamicUpdate<S>(deps: SyncDeps<S>, config: Configuration, side: Decision | null, heldServers: HeldServers | null): { update: DynamicUpdate; servers?: ServersChange } {
  const update: DynamicUpdate = {};
  let servers: ServersChange | undefined;
  if (side === null || side.backendsChanged) update.backends = deps.backendsPayload(config);
  if (side === null || side.serversChanged) {
    const held = side === null ? null : heldServers;
    servers = deps.serversChange ? deps.serversChange(held, config) : wholeServersChange(held, config, deps.serversPayload(config));
    if (servers.part) update.servers = servers.part;
  }
  if (deps.routesPayload && (side === null || side.routesChanged)) update.routes = deps.routesPayload(config);
  return { update, servers };
}

/**
 * The batch's source events as the model builder's change hints; none when the ring dropped
 * events since the previous batch, since the batch then does not name every change.
 */
function batchChanges(batch: SyncBatch): Array<{ kind: StoredKind; key: string }> | undefined {
  if (batch.lossy) return undefined;
  const changes: Array<{ kind: StoredKind; key: string }> = [];
  for (const { input } of batch.items) if (!isTask(input)) changes.push({ kind: input.kind, key: input.key });
  return changes;
}

/**
 * The operator form: batches in, results out, through exhaustMap. `onIdle` tells the pacer
 * the actor is free again (and whether the sync failed, so it is retried).
 */
export function syncActor(
  sync: (batch: SyncBatch) => Observable<SyncResult>,
  onIdle: (failed: boolean) => void,
): OperatorFunction<SyncBatch, SyncResult> {
  return exhaustMap((batch) => {
    let failed = true;
    return sync(batch).pipe(
      map((r) => { failed = !r.applied; return r; }),
      finalize(() => onIdle(failed)),
    );
  });
}
