// Replay: a recorded log drives the same pipeline as a live run — store, ring, bucket,
// exhaustMap sync, model decisions — with offline actors, in virtual time (--instant) or in
// real time scaled by --speed. Out come the decisions, every distinct nginx.conf and payload,
// and the final ones; replaying one log twice in virtual time gives byte-identical output.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { writePrivateFile } from '../streams/record-writer.js';
import { join } from 'node:path';
import {
  Observable, VirtualAction, VirtualTimeScheduler, asyncScheduler, lastValueFrom, takeWhile, tap,
  type SchedulerLike,
} from 'rxjs';
import type { Logger } from '../log.js';
import { offlineRuntime, scratchRuntime } from '../render/offline.js';
import { createStore } from '../store/store.js';
import { createModelBuilder } from '../model/build.js';
import type { AddressClass } from '../model/checks/address-policy.js';
import { createSyncer, type SyncResult } from '../actors/sync.js';
import { modelSyncDeps } from '../actors/model-sync.js';
import { createRenderer } from '../render/engine.js';
import { DEFAULT_TEMPLATE_DIR } from '../render/runtime.js';
import { isTask, type PipelineInput } from '../store/events.js';
import { replayInputs, scaledScheduler } from '../streams/replay-source.js';
import { createPipeline } from '../pipeline/pipeline.js';
import { isRedacted } from '../streams/record.js';
import type { ReplayLog, TimedInput } from '../streams/replay-log.js';
import { createOfflineActors, type NginxTestOptions, type OfflineActors } from '../actors/offline.js';
import { createTracer, type Tracer } from '../observability/trace.js';
import type { Secret } from '../store/kube-types.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';

export interface ReplayOptions {
  log: ReplayLog;
  /**
   * Virtual time, or real time played `speed` times faster. `clock` is the real time that
   * `speed` scales (default: the async scheduler); a VirtualTimeScheduler there is flushed.
   */
  mode: { instant: true } | { speed: number; clock?: SchedulerLike };
  outDir: string;
  nginxTest?: boolean;
  /** The NGINX binary `nginx -t` runs (default /usr/sbin/nginx). */
  nginxBinary?: string;
  templateDir?: string;
  /** Chrome trace file, or true for trace-level log lines only. */
  trace?: string | boolean;
  logger: Logger;
}

export interface ReplayReport {
  events: number;
  syncs: number;
  reloads: number;
  dynamicUpdates: number;
  failedSyncs: number;
  /** Distinct configurations and payloads written. */
  configs: number;
  payloads: number;
  /** Problems worth telling the operator (truncated log, redacted keys, retries given up). */
  warnings: string[];
  /** ms of log time the replay covered. */
  durationMs: number;
}

/** The decisions.ndjson line of a sync: exactly these keys, in this order. */
export function decisionLine(r: SyncResult, start: number): string {
  return JSON.stringify({ sync: r.sync, t: r.t - start, events: r.events, decision: r.decision, reason: r.reason, checksum: r.checksum });
}

function redactedKeySecrets(entries: readonly TimedInput[]): number {
  const keys = new Set<string>();
  for (const { input } of entries) {
    if (isTask(input) || input.kind !== 'Secret') continue;
    if (isRedacted(input.object as Secret, 'tls.key')) keys.add(input.key);
  }
  return keys.size;
}

const OUTPUTS = ['decisions.ndjson', 'configs', 'payloads', 'final'];

/** Writes what NGINX would run at the end; false when no configuration was ever applied. */
function writeFinal(outDir: string, actors: OfflineActors): boolean {
  const dir = join(outDir, 'final');
  mkdirSync(dir, { recursive: true });
  if (actors.backends !== null) writePrivateFile(join(dir, 'backends.json'), actors.backends);
  if (actors.servers !== null) writePrivateFile(join(dir, 'servers.json'), actors.servers);
  if (actors.routes !== null) writePrivateFile(join(dir, 'routes.json'), actors.routes);
  if (actors.nginxConf === null) return false;
  writePrivateFile(join(dir, 'nginx.conf'), actors.nginxConf);
  return true;
}

export async function replay(opts: ReplayOptions): Promise<ReplayReport> {
  const { log, logger, outDir } = opts;
  const { header } = log;
  const warnings = [...log.warnings];
  const redacted = redactedKeySecrets(log.entries);
  if (redacted > 0) {
    warnings.push(`${redacted} TLS Secret(s) were recorded with redacted keys: their certificates cannot be verified, ` +
      'so their hosts replay with the default certificate (record with --record-secrets for a faithful TLS replay)');
  }

  mkdirSync(outDir, { recursive: true });
  for (const name of OUTPUTS) rmSync(join(outDir, name), { recursive: true, force: true });

  let scratch: string | null = null;
  let nginxTest: NginxTestOptions | undefined;
  if (opts.nginxTest) {
    const runtime = await scratchRuntime(header.defaultServerPort);
    scratch = runtime.prefix;
    nginxTest = { runtime, nginxBinary: opts.nginxBinary };
  }

  let tracer: Tracer | null = null;
  try {
    const startedAt = Date.parse(header.startedAt);
    const epoch = Number.isFinite(startedAt) ? startedAt : 0;
    const store = createStore(header.store, ANNOTATION_REFERENCES, logger);
    const builder = createModelBuilder({
      annotationsPrefix: header.annotationsPrefix,
      defaultServerPort: header.defaultServerPort,
      addressPolicy: {
        allow: new Set((header.upstreamAddresses?.allow ?? []) as AddressClass[]),
        ownPorts: new Set(header.upstreamAddresses?.ownPorts ?? []),
        ownAddresses: new Set(header.upstreamAddresses?.ownAddresses ?? []),
      },
      hostOwnership: header.hostOwnership ?? false,
      dynamicRoutes: header.dynamicRoutes ?? false,
      // Certificates expire against the recording's clock, not today's.
      now: () => new Date(epoch + scheduler.now() - start),
      logger,
    });
    const renderer = createRenderer({ templateDir: opts.templateDir ?? DEFAULT_TEMPLATE_DIR, logger });

    // The clock starts last, so that loading the templates takes no log time.
    const { mode } = opts;
    const clock: SchedulerLike = 'instant' in mode ? new VirtualTimeScheduler(VirtualAction, Infinity) : mode.clock ?? asyncScheduler;
    const virtual = clock instanceof VirtualTimeScheduler ? clock : null;
    const scheduler: SchedulerLike = 'instant' in mode ? clock : scaledScheduler(clock, mode.speed);
    const start = scheduler.now();
    const actors = createOfflineActors({ renderer, runtime: offlineRuntime(header.defaultServerPort), logger, outDir, nginxTest });
    const syncer = createSyncer(modelSyncDeps({ store, builder, scheduler, reload: (c) => actors.reload(c), dynamic: (u) => actors.dynamic(u) }));
    tracer = opts.trace
      ? createTracer({ file: typeof opts.trace === 'string' ? opts.trace : undefined, logger, scheduler, syncWrites: virtual !== null })
      : null;

    let inputsDoneAt: number | null = null;
    const inputs = new Observable<PipelineInput>((subscriber) => replayInputs(log.entries, scheduler).subscribe({
      next: (x) => subscriber.next(x),
      error: (e) => subscriber.error(e),
      complete: () => { inputsDoneAt = scheduler.now(); subscriber.complete(); },
    }));

    const lines: string[] = [];
    const report = { syncs: 0, reloads: 0, dynamicUpdates: 0, failedSyncs: 0 };
    let gaveUp: SyncResult | null = null;
    const results$ = createPipeline({
      inputs, store, scheduler, sync: syncer,
      ringCapacity: header.ringCapacity, syncRateLimit: header.syncRateLimit, burst: header.burst,
      hooks: tracer?.hooks,
    }).pipe(
      tap((r) => {
        lines.push(decisionLine(r, start));
        tracer?.syncDone(r);
        report.syncs++;
        if (r.reload) report.reloads++;
        if (r.dynamic) report.dynamicUpdates++;
        if (!r.applied) report.failedSyncs++;
        for (const w of r.warnings) logger.debug({ object: w.object, field: w.field }, `${w.object}: ${w.field}: ${w.message}`);
        logger.info({ sync: r.sync, t: r.t - start, decision: r.decision, applied: r.applied }, `replay: sync ${r.sync}: ${r.decision} (${r.reason})`);
      }),
      // After the log ends the store no longer changes, so a failed sync would only fail again
      // on every retry: stop there instead of retrying forever.
      takeWhile((r) => {
        if (!r.applied && inputsDoneAt !== null && r.t >= inputsDoneAt) { gaveUp = r; return false; }
        return true;
      }, true),
    );

    if (virtual) {
      let failure: unknown = null;
      results$.subscribe({ error: (e) => { failure = e; } });
      virtual.flush();
      if (failure) throw failure;
    } else {
      await lastValueFrom(results$, { defaultValue: null });
    }
    const end = scheduler.now();
    if (gaveUp) {
      const r = gaveUp as SyncResult;
      warnings.push(`the log's final configuration cannot be applied (sync ${r.sync}: ${r.error ?? r.reload?.error ?? r.dynamic?.error ?? 'failed'}); retries stopped`);
    }

    writeFileSync(join(outDir, 'decisions.ndjson'), lines.length > 0 ? `${lines.join('\n')}\n` : '');
    if (!writeFinal(outDir, actors)) warnings.push('no configuration was applied: final/nginx.conf is not written');
    await tracer?.close();
    tracer = null;

    return {
      events: log.entries.length, ...report, configs: actors.configs.size, payloads: actors.payloads.size,
      warnings, durationMs: end - start,
    };
  } finally {
    await tracer?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}
