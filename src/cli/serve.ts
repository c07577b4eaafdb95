// Runs the controller's main loop for `local` and `controller`: NGINX as a child, the pipeline
// from the given sources into the sync actor, health and metrics, and a graceful shutdown.
// What differs between the two commands (sources, listen addresses, status) is passed in.
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Server as HttpServer } from 'node:http';
import type { Registry } from 'prom-client';
import {
  EMPTY, Subject, asyncScheduler, filter, from, map, merge, takeUntil,
  type Observable, type Subscription,
} from 'rxjs';
import type { Logger } from '../log.js';
import { isTask, type PipelineInput, type SourceEvent, type Task } from '../store/events.js';
import { combineHooks, type PipelineHooks } from '../streams/hooks.js';
import { createPipeline } from '../pipeline/pipeline.js';
import { IDLE_GC_MS, createIdleCollector, idleCollections } from '../pipeline/idle-gc.js';
import { createSyncWarmUp, warmUpSteps } from '../actors/sync-warm-up.js';
import { templateWatcher, geoipWatcher } from '../streams/file-watch.js';
import type { GatewayPortOptions, Store } from '../store/types.js';
import { createStore } from '../store/store.js';
import { createModelBuilder } from '../model/build.js';
import type { AddressClass, AddressPolicy } from '../model/checks/address-policy.js';
import { createSyncer, type SyncResult } from '../actors/sync.js';
import { modelSyncDeps } from '../actors/model-sync.js';
import { createRenderer } from '../render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, leftOutPath, preparePrefix, type NginxRuntime } from '../render/runtime.js';
import { createNginxProcess } from '../actors/nginx-process.js';
import { withLuaInReach, workerAccessProblem } from '../render/worker-access.js';
import { createReloadActor } from '../actors/reload.js';
import { ensureFallbackCertificate } from '../render/fallback-cert.js';
import { writeControlToken } from '../render/control.js';
import { createDynamicConfigActor } from '../actors/dynamic-config.js';
import { createMetrics, type ControllerMetrics } from '../observability/metrics.js';
import { startNginxMetrics } from '../observability/nginx-metrics.js';
import { fetchStubStatus } from '../observability/nginx-process-metrics.js';
import { metricsLogPath } from '../render/metrics-log.js';
import type { RequestMetricsConfig } from '../observability/request-metrics.js';
import { createQuarantine, type QuarantineEntry } from '../model/core/quarantine.js';
import { createNarrower } from '../actors/quarantine.js';
import { createBudgetCheck } from '../actors/budget-check.js';
import { DEFAULT_BUDGETS, type Budgets } from '../model/core/budgets.js';
import { QUARANTINE_FILE } from './dbg.js';
import { routesReport } from './routes-report.js';
import { takeoversReport } from './takeovers-report.js';
import { startHealthServer } from '../observability/health-server.js';
import { createLeftOutReporter } from '../observability/left-out.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';
import { parseNginxTime } from '../model/checks/validate.js';
import type { NginxSettings } from '../model/core/config/settings.js';

export interface ServeOptions {
  logger: Logger;
  store: Store;
  /** Builds the source; it calls `onInitialState` once its initial state was emitted. */
  source: (onInitialState: () => void) => Observable<SourceEvent>;
  runtime: NginxRuntime;
  healthz: { host: string; port: number };
  /** Other ports the controller listens on (the validating webhook's): own ports too. */
  otherOwnPorts?: readonly number[];
  annotationsPrefix: string;
  syncRateLimit: number;
  templateDir?: string;
  /** Extra observation points (recording, tracing). */
  hooks?: PipelineHooks[];
  metricsLabels: { controller_namespace: string; controller_class: string; controller_pod: string };
  /** Without leader election this controller exports the certificate expiry itself. */
  metricsLeader?: boolean;
  /** Request, NGINX process and stub_status metrics (--enable-metrics); off when undefined. */
  requestMetrics?: RequestMetricsConfig;
  /** Called after every sync (status updates, events). */
  onSync?: (result: SyncResult) => void;
  /** Level of the line naming an Ingress that is not served (default `info`). */
  leftOutLogLevel?: 'warn' | 'info';
  /** Node-local upstream addresses allowed (--allow-upstream-addresses); none by default. */
  allowUpstreamAddresses?: ReadonlySet<AddressClass>;
  /** The controller pod's own addresses (src/cli/own-addresses.ts): its own ports are refused there too. */
  ownAddresses?: ReadonlySet<string>;
  /** --disable-svc-external-name: ExternalName Services give no endpoints. */
  disableServiceExternalName?: boolean;
  /** --host-ownership: a host belongs to the namespace of its oldest Ingress. */
  hostOwnership?: boolean;
  /** --enable-dynamic-routes (src/model/ingress/dynamic-routes.ts). */
  dynamicRoutes?: boolean;
  /** What one Ingress and one namespace may put into the data plane (src/model/core/budgets.ts); the defaults when absent. */
  budgets?: Budgets;
}

export interface RunningController {
  /** Resolves once the first configuration is applied and NGINX serves it. */
  ready: Promise<void>;
  /**
   * Resolves if NGINX never started: it ran neither the first configuration nor, after that,
   * the empty one (a port in use, a broken template). The controller cannot serve then.
   */
  fatal: Promise<Error>;
  results$: Observable<SyncResult>;
  metrics: ControllerMetrics;
  /** The metrics registry served on the healthz port (the admission webhook adds its families). */
  registry: Registry;
  /** /healthz answers 500 from now on (readiness fails) while everything still runs: the shutdown grace period. */
  announceShutdown(): void;
  /**
   * Stops taking new work, lets the running sync finish, runs `beforeNginxStops` (the Ingress
   * status, as ingress-nginx clears it before NGINX drains), then quits NGINX and waits while
   * in-flight requests finish.
   */
  shutdown(beforeNginxStops?: () => Promise<void>): Promise<void>;
}

/** The ports `local` and `controller` both take (ingress-nginx's flag names). */
export interface ServePorts {
  httpPort: number;
  httpsPort: number;
  statusPort: number;
  streamPort: number;
  healthzPort: number;
  defaultServerPort: number;
  enableSslPassthrough?: boolean;
  sslPassthroughProxyPort: number;
}

/** NGINX's runtime for those ports. */
export function runtimeFor(ports: ServePorts, where: { prefix?: string; listenAddresses: string[]; geoipDir?: string; resolvConf?: string; metrics?: boolean }): NginxRuntime {
  const runtime = defaultRuntime({
    ...(where.prefix ? { prefix: where.prefix } : {}),
    listenAddresses: where.listenAddresses,
    httpPort: ports.httpPort,
    httpsPort: ports.httpsPort,
    statusPort: ports.statusPort,
    streamPort: ports.streamPort,
    defaultServerPort: ports.defaultServerPort,
    ...(where.geoipDir ? { geoipDir: where.geoipDir } : {}),
    ...(where.resolvConf ? { resolvConf: where.resolvConf } : {}),
    ...(ports.enableSslPassthrough ? { sslPassthrough: { proxyPort: ports.sslPassthroughProxyPort } } : {}),
  });
  if (where.metrics) runtime.metricsLog = metricsLogPath(runtime.prefix);
  return runtime;
}

/**
 * The address policy of a running controller: the allowed classes, and never the controller's
 * own listening ports on this node (NGINX's, the health server's, ingress-nginx's reserved ones,
 * and the ports NGINX serves Gateway listeners on by --gateway-listener-ports).
 */
export function addressPolicyFor(
  runtime: NginxRuntime, healthzPort: number, allow: ReadonlySet<AddressClass> = new Set(), refuseExternalNameServices = false, gatewayPorts?: GatewayPortOptions,
  otherOwnPorts: readonly number[] = [], ownAddresses: ReadonlySet<string> = new Set(),
): AddressPolicy {
  const own = [runtime.httpPort, runtime.httpsPort, runtime.statusPort, runtime.streamPort, runtime.defaultServerPort, healthzPort, ...(gatewayPorts?.map.values() ?? []), ...otherOwnPorts];
  if (runtime.sslPassthrough) own.push(runtime.sslPassthrough.proxyPort);
  const dataPlanePorts = new Set([runtime.httpPort, runtime.httpsPort, ...(gatewayPorts?.map.values() ?? [])]);
  return { allow, ownPorts: new Set(own), dataPlanePorts, ownAddresses, ...(refuseExternalNameServices ? { refuseExternalNameServices } : {}) };
}

/**
 * Reports what is quarantined when it changes: a log line per object set aside or let go, and
 * `quarantine.json` in the workdir for `ingress-rx dbg quarantine` (a file, so that dbg does not
 * depend on where NGINX's control endpoints live).
 */
function quarantineReport(runtime: NginxRuntime, logger: Logger): (entries: QuarantineEntry[]) => void {
  let last = new Map<string, QuarantineEntry>();
  const file = join(runtime.prefix, QUARANTINE_FILE);
  return (entries) => {
    const now = new Map(entries.map((e) => [`${e.kind} ${e.key}`, e]));
    let changed = now.size !== last.size;
    for (const [k, e] of now) {
      if (last.get(k) === e) continue;
      changed = true;
      logger.error({ object: k, reason: e.reason, ...(e.budget ? { budget: e.budget } : {}) },
        `${k} is quarantined: ${e.budget ? e.reason : `NGINX refuses it (${e.reason})`}; everything else is applied`);
    }
    for (const k of last.keys()) if (!now.has(k)) logger.info({ object: k }, `${k} left quarantine`);
    last = now;
    if (!changed && existsSync(file)) return;
    try {
      writeFileSync(`${file}.tmp`, `${JSON.stringify({ quarantined: entries }, null, 2)}\n`, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      logger.warn({ err: (err as Error).message, file }, 'could not write the quarantine report');
    }
  };
}

/** Waits for SIGTERM/SIGINT, or for the controller to find it cannot serve (its error). */
export async function untilStopped(controller: Pick<RunningController, 'fatal'>): Promise<NodeJS.Signals | Error> {
  let onSignal: (s: NodeJS.Signals) => void = () => {};
  const stop = await Promise.race([
    new Promise<NodeJS.Signals>((resolve) => {
      onSignal = resolve;
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
    }),
    controller.fatal,
  ]);
  process.removeListener('SIGTERM', onSignal);
  process.removeListener('SIGINT', onSignal);
  // A second signal (the kubelet's SIGTERM after the preStop hook began the shutdown) must not
  // kill the drain half-way: it is noted and the shutdown goes on.
  const again = (s: NodeJS.Signals) => { process.stderr.write(`ingress-rx: ${s} received while shutting down; the shutdown goes on\n`); };
  process.on('SIGTERM', again);
  process.on('SIGINT', again);
  return stop;
}

/** The policy as plain lists: for the Lua side (NginxRuntime) and the recording header. */
export function addressPolicyLists(policy: AddressPolicy): { allow: string[]; ownPorts: number[]; ownAddresses: string[] } {
  return { allow: [...policy.allow].sort(), ownPorts: [...policy.ownPorts].sort((a, b) => a - b), ownAddresses: [...policy.ownAddresses ?? []].sort() };
}

/** How long the shutdown waits for the running sync to finish. */
const RUNNING_SYNC_WAIT_MS = 30_000;
/** How long after worker-shutdown-timeout an NGINX that has not exited is killed. */
const NGINX_EXIT_MARGIN_MS = 10_000;
/** The longest a Node timer waits (a longer delay fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long to wait for NGINX after QUIT: its worker-shutdown-timeout and a margin; 0 (no timeout in NGINX either) waits as long as a timer can. */
export function nginxExitWaitMs(workerShutdownTimeoutMs: number): number {
  return workerShutdownTimeoutMs === 0 ? MAX_TIMER_MS : Math.min(workerShutdownTimeoutMs + NGINX_EXIT_MARGIN_MS, MAX_TIMER_MS);
}

export async function serve(opts: ServeOptions): Promise<RunningController> {
  const { logger, store } = opts;
  const addressPolicy = addressPolicyFor(opts.runtime, opts.healthz.port, opts.allowUpstreamAddresses, opts.disableServiceExternalName, store.options.gatewayPorts, opts.otherOwnPorts, opts.ownAddresses);
  const configured: NginxRuntime = { ...opts.runtime, upstreamAddresses: addressPolicyLists(addressPolicy) };
  preparePrefix(configured);
  const runtime = withLuaInReach(configured);
  const scheduler = asyncScheduler;
  const templateDir = opts.templateDir ?? DEFAULT_TEMPLATE_DIR;
  const controlToken = writeControlToken(runtime);
  const unreachable = workerAccessProblem(runtime);
  if (unreachable) throw new Error(unreachable);
  await ensureFallbackCertificate(dirname(runtime.fallbackCert.certPath));

  const renderer = createRenderer({ templateDir, logger });
  // A TCP/UDP service may take none of the controller's own ports (the ssl-passthrough proxy's too).
  const reservedPorts = [...addressPolicy.ownPorts];
  const modelOptions = { annotationsPrefix: opts.annotationsPrefix, defaultServerPort: runtime.defaultServerPort, reservedPorts, addressPolicy, hostOwnership: opts.hostOwnership, dynamicRoutes: opts.dynamicRoutes };
  const builder = createModelBuilder({ ...modelOptions, logger });
  // NGINX starts with the first sync, directly on its configuration (its start is the test, one
  // parse instead of `nginx -t` and a reload). If that configuration does not run, NGINX starts
  // on the configuration of an empty store (default and status servers only) and answers.
  const { config: bootstrap } = createModelBuilder({ annotationsPrefix: opts.annotationsPrefix, defaultServerPort: runtime.defaultServerPort })
    .build(createStore(store.options, ANNOTATION_REFERENCES));
  const nginx = createNginxProcess({ runtime, logger });
  // The longest worker-shutdown-timeout NGINX ran with: workers of an earlier configuration keep
  // the timeout they were started with.
  let workerShutdownTimeoutMs = 0;
  const ranWith = (settings: Readonly<NginxSettings>) => {
    workerShutdownTimeoutMs = Math.max(workerShutdownTimeoutMs, Number(parseNginxTime(settings.workerShutdownTimeout, 'msec') ?? 0n));
  };
  ranWith(bootstrap.settings);
  // What NGINX refuses is set aside, named, and everything else applied in the same sync.
  const quarantine = createQuarantine();
  const budgets = opts.budgets ?? DEFAULT_BUDGETS;
  const narrower = createNarrower({
    store, quarantine, builder, logger, budgets,
    probeBuilder: () => createModelBuilder(modelOptions),
  });
  const reload = createReloadActor({ renderer, nginx, runtime, logger, fallback: bootstrap, narrower });
  const control = { socketPath: runtime.controlSocketPath, token: () => controlToken };
  const dynamic = createDynamicConfigActor({ control, scheduler, logger });
  const metrics = createMetrics(opts.metricsLabels, {
    leader: opts.metricsLeader,
    fallbackCertPem: () => { try { return readFileSync(runtime.fallbackCert.certPath, 'utf8'); } catch { return null; } },
  });
  const nginxMetrics = runtime.metricsLog && opts.requestMetrics ? startNginxMetrics({
    registry: metrics.registry, constLabels: opts.metricsLabels, logPath: runtime.metricsLog, requests: opts.requestMetrics,
    masterPid: () => nginx.masterPid(), stubStatus: () => fetchStubStatus(control),
  }) : null;

  let ready = false;
  let shuttingDown = false;
  const received = new Map<number, number>();
  const healthServer: HttpServer = await startHealthServer({
    host: opts.healthz.host, port: opts.healthz.port, registry: metrics.exposition,
    state: { ready: () => ready && nginx.masterPid() !== null, shuttingDown: () => shuttingDown },
  });

  const stop$ = new Subject<void>();
  const tasks$ = new Subject<Task>();
  const restartSub: Subscription = nginx.events$.pipe(filter((e) => e.type === 'restarted')).subscribe(() => {
    logger.warn('NGINX was restarted; re-applying the configuration');
    tasks$.next({ kind: 'task', task: 'nginx-restart' });
  });
  const templateFiles = readdirSync(templateDir).filter((f) => f.endsWith('.liquid')).map((f) => join(templateDir, f));
  const templateChanges$ = merge(...templateFiles.map((f) => templateWatcher(f, { logger }))).pipe(
    filter(() => {
      const res = renderer.reloadTemplates();
      if (!res.ok) logger.error({ error: res.error }, 'template change rejected: the previous template stays in use');
      return res.ok;
    }),
  );
  // tasks$ first: a source that emits its initial state on subscribe signals it at once.
  const source$ = opts.source(() => tasks$.next({ kind: 'task', task: 'initial-sync' }));
  const inputs: Observable<PipelineInput> = merge(
    tasks$,
    source$,
    templateChanges$,
    existsSync(runtime.geoipDir) ? geoipWatcher(runtime.geoipDir, { logger }) : EMPTY,
  ).pipe(takeUntil(stop$));

  const reportLeftOut = createLeftOutReporter({ logger, path: leftOutPath(runtime), level: opts.leftOutLogLevel ?? 'info' });
  // Ready means the sync that merged the source's complete initial state was applied: a sync
  // before it (a template change, say) would serve an empty cluster.
  let initialStateId: number | null = null;
  let initialStateMerged = false;
  const received$ = new Subject<void>();
  /** A change waits for a sync (the store found it relevant); the items waiting, by id. */
  const queued$ = new Subject<void>();
  const waiting = new Set<number>();
  const hooks = combineHooks(
    ...(opts.hooks ?? []),
    {
      received: (it) => {
        received$.next();
        received.set(it.id, Date.now());
        if (initialStateId === null && isTask(it.input) && it.input.task === 'initial-sync') initialStateId = it.id;
      },
      queued: (it) => { waiting.add(it.id); queued$.next(); },
      released: (batch) => { for (const it of batch.items) waiting.delete(it.id); },
      dropped: (it) => { waiting.delete(it.id); metrics.ringDropped(); },
      // An Ingress left out is an irrelevant event: it never reaches a sync.
      filtered: () => reportLeftOut(store.leftOutIngresses()),
    },
  );
  const budgetCheck = createBudgetCheck({ store, quarantine, builder, budgets, logger });
  const syncer = createSyncer(modelSyncDeps({ store, builder, scheduler, reload, dynamic, quarantine, budgets: budgetCheck, cpuMs: processCpuMs }));
  const report = quarantineReport(runtime, logger);
  const reportRoutes = routesReport(runtime.prefix, logger);
  const reportTakeovers = takeoversReport(runtime.prefix, logger);
  const results$ = createPipeline({ inputs, store, scheduler, sync: syncer, syncRateLimit: opts.syncRateLimit, hooks });

  let resolveReady!: () => void;
  const readyPromise = new Promise<void>((r) => { resolveReady = r; });
  let resolveFatal!: (err: Error) => void;
  const fatal = new Promise<Error>((r) => { resolveFatal = r; });
  let nginxStarted = false;
  const startedSub = nginx.events$.pipe(filter((e) => e.type === 'started')).subscribe(() => { nginxStarted = true; });
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => { resolveDone = r; });
  let fatalError: Error | null = null;
  const resultsSub = results$.pipe(map((r) => {
    for (const w of r.warnings) logger.warn({ object: w.object, field: w.field }, `${w.object}: ${w.field}: ${w.message}`);
    const log = r.applied ? logger.info.bind(logger) : logger.error.bind(logger);
    log({ sync: r.sync, decision: r.decision, events: r.events, durationMs: r.durationMs, ...(r.dynamic?.durationMs !== undefined ? { postMs: r.dynamic.durationMs } : {}), ...syncTimings(r, received), applied: r.applied, error: r.error ?? r.reload?.error ?? r.dynamic?.error },
      `sync ${r.sync}: ${r.decision}${r.reason ? ` (${r.reason})` : ''}${r.applied ? '' : ' — FAILED'}`);
    metrics.observeSync(r, (id) => received.get(id), Date.now());
    if (r.applied && r.config) nginxMetrics?.configApplied(r.config);
    if (r.applied && r.config) ranWith(r.config.settings);
    if (r.applied && r.config) reportRoutes(r.config);
    if (r.config) reportTakeovers(r.warnings);
    for (const id of r.itemIds) received.delete(id);
    report(r.quarantined);
    if (initialStateId !== null && r.itemIds.includes(initialStateId)) initialStateMerged = true;
    if (r.applied && initialStateMerged && !ready) {
      ready = true;
      logger.info({ quarantined: r.quarantined.length }, `ready: NGINX serves the initial state${r.quarantined.length > 0 ? `, less ${r.quarantined.length} quarantined object(s): ${r.quarantined.map((e) => `${e.kind} ${e.key}`).join(', ')}` : ''}`);
      resolveReady();
    }
    if (!r.applied && r.reload && !nginxStarted && nginx.masterPid() === null && fatalError === null) {
      fatalError = new Error(`NGINX could not start: ${r.reload.error ?? 'unknown error'}`);
      resolveFatal(fatalError);
    }
    reportLeftOut(store.leftOutIngresses());
    opts.onSync?.(r);
    return r;
  })).subscribe({
    complete: () => resolveDone(),
    error: (err: unknown) => { logger.error({ err: String((err as Error)?.message ?? err) }, 'the sync pipeline failed'); resolveDone(); },
  });

  const collectIfGrown = createIdleCollector();
  const idleGcSub = idleCollections(results$, received$, IDLE_GC_MS, scheduler).pipe(takeUntil(stop$)).subscribe(() => {
    const t = performance.now();
    if (collectIfGrown()) logger.info({ durationMs: Math.round(performance.now() - t), rssMb: Math.round(process.memoryUsage.rss() / 2 ** 20) }, 'idle: garbage collected');
  });

  // Once ready with no change waiting, V8 is taught the sync after a change
  // (./actors/sync-warm-up.ts) before one comes.
  const warmUp = createSyncWarmUp({ store, builder: () => createModelBuilder(modelOptions), budgets });
  const idleWhenReady$ = merge(from(readyPromise), results$).pipe(filter(() => ready && waiting.size === 0));
  let warmedSteps = 0;
  const warmUpSub = warmUpSteps(idleWhenReady$, warmUp, scheduler, queued$).pipe(takeUntil(stop$)).subscribe({
    next: () => { warmedSteps += 1; },
    complete: () => logger.info({ steps: warmedSteps }, 'sync path warmed up'),
  });

  let shutdownPromise: Promise<void> | null = null;
  return {
    ready: readyPromise,
    fatal,
    results$,
    metrics,
    registry: metrics.registry,
    announceShutdown() {
      shuttingDown = true;
    },
    shutdown(beforeNginxStops) {
      shutdownPromise ??= (async () => {
        shuttingDown = true;
        logger.info('shutting down: no new work; waiting for the running sync');
        stop$.next();
        // Without NGINX there is nothing to finish: failed syncs would only be retried.
        const timedOut = fatalError === null && await Promise.race([
          done.then(() => false),
          new Promise<boolean>((r) => setTimeout(() => r(true), RUNNING_SYNC_WAIT_MS).unref()),
        ]);
        if (timedOut) logger.warn('the running sync did not finish in time');
        resultsSub.unsubscribe();
        restartSub.unsubscribe();
        idleGcSub.unsubscribe();
        warmUpSub.unsubscribe();
        startedSub.unsubscribe();
        await beforeNginxStops?.();
        // As ingress-nginx: QUIT, then wait for NGINX to exit. In-flight requests finish; NGINX
        // closes what still runs when worker-shutdown-timeout expires. The kill after a margin is
        // only for an NGINX that hangs past its own timeout.
        logger.info({ workerShutdownTimeoutMs }, 'stopping NGINX: in-flight requests finish within worker-shutdown-timeout');
        await nginx.quit(nginxExitWaitMs(workerShutdownTimeoutMs));
        // After NGINX: exiting workers flush their last lines.
        await nginxMetrics?.close();
        await new Promise<void>((r) => healthServer.close(() => r()));
        logger.info('stopped');
      })();
      return shutdownPromise;
    },
  };
}

/** The process's CPU time (user and system) in ms. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Where a sync's milliseconds went, for its log line: when its first event arrived (epoch ms) and
 * the sync started, the model build, decision and payloads, and each part's POST.
 */
function syncTimings(r: SyncResult, received: ReadonlyMap<number, number>): Record<string, unknown> {
  let first = Infinity;
  for (const id of r.itemIds) first = Math.min(first, received.get(id) ?? Infinity);
  return {
    ...(first !== Infinity ? { receivedAt: first } : {}), startedAt: r.t,
    ...(r.stages ? { stages: r.stages } : {}), ...(r.dynamic?.partMs ? { partMs: r.dynamic.partMs } : {}),
  };
}
