// --record and --trace for the live commands: builds the recorder and tracer the flags ask for
// and hands back their pipeline hooks; nothing is installed when neither flag is given.
import { closeSync, openSync } from 'node:fs';
import { asyncScheduler } from 'rxjs';
import type { Logger } from '../log.js';
import type { PipelineHooks } from '../streams/hooks.js';
import type { StoreOptions } from '../store/types.js';
import type { SyncResult } from '../actors/sync.js';
import { createRecorder, recordingHooks } from '../streams/record.js';
import { createTracer } from '../observability/trace.js';
import { DEFAULT_RING_CAPACITY } from '../pipeline/pipeline.js';
import { version } from '../version.js';

export interface ObservabilityOptions {
  record?: string;
  recordSecrets?: boolean;
  /** `true` for `--trace` without a file: trace to the log only. */
  trace?: string | boolean;
}

export interface Observability {
  hooks: PipelineHooks[];
  onSync?: (r: SyncResult) => void;
  close(): Promise<void>;
}

export async function observability(opts: ObservabilityOptions, ctx: {
  logger: Logger;
  header: {
    storeOptions: StoreOptions; syncRateLimit: number; annotationsPrefix: string; defaultServerPort: number;
    upstreamAddresses?: { allow: string[]; ownPorts: number[]; ownAddresses?: string[] }; hostOwnership?: boolean; dynamicRoutes?: boolean;
  };
}): Promise<Observability> {
  // A file asked for that cannot be written is a start error, not a recording silently lost.
  for (const [flag, file] of [['--record', opts.record], ['--trace', typeof opts.trace === 'string' ? opts.trace : undefined]] as const) {
    if (file === undefined || file === '') continue;
    try {
      closeSync(openSync(file, 'w'));
    } catch (err) {
      throw new Error(`${flag} ${file}: cannot write it: ${(err as Error).message}`);
    }
  }
  const hooks: PipelineHooks[] = [];
  const closers: Array<() => Promise<void>> = [];
  let onSync: ((r: SyncResult) => void) | undefined;
  if (opts.record) {
    const recorder = createRecorder({
      file: opts.record,
      recordSecrets: opts.recordSecrets ?? false,
      logger: ctx.logger,
      scheduler: asyncScheduler,
      header: {
        ingressRx: version(),
        store: ctx.header.storeOptions,
        syncRateLimit: ctx.header.syncRateLimit,
        ringCapacity: DEFAULT_RING_CAPACITY,
        burst: 1,
        annotationsPrefix: ctx.header.annotationsPrefix,
        defaultServerPort: ctx.header.defaultServerPort,
        ...(ctx.header.upstreamAddresses ? { upstreamAddresses: ctx.header.upstreamAddresses } : {}),
        ...(ctx.header.hostOwnership ? { hostOwnership: true } : {}),
        ...(ctx.header.dynamicRoutes ? { dynamicRoutes: true } : {}),
      },
    });
    hooks.push(recordingHooks(recorder));
    closers.push(() => recorder.close());
  }
  if (opts.trace) {
    const tracer = createTracer({ file: typeof opts.trace === 'string' ? opts.trace : undefined, logger: ctx.logger, scheduler: asyncScheduler });
    hooks.push(tracer.hooks);
    onSync = (r) => tracer.syncDone(r);
    closers.push(() => tracer.close());
  }
  return { hooks, onSync, close: async () => { for (const c of closers) await c(); } };
}
