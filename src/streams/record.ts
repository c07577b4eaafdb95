// The recorder behind `--record FILE`: appends every raw pipeline input (before the store
// filters it) to an NDJSON log — a header line with the flags that shape the model, then one
// line per event or task with its time offset. Writing never blocks or breaks the pipeline.
import { createHmac, randomBytes } from 'node:crypto';
import type { SchedulerLike } from 'rxjs';
import type { Logger } from '../log.js';
import type { Secret } from '../store/kube-types.js';
import type { StoreOptions } from '../store/types.js';
import { isTask, type EventType, type PipelineInput, type StoredKind, type TaskKind } from '../store/events.js';
import type { PipelineHooks } from './hooks.js';
import { createLineWriter } from './record-writer.js';

export const RECORD_FORMAT = 'ingress-rx-record';
/** Bump when a reader of the old format would misread the new one. */
export const RECORD_FORMAT_VERSION = 1;
/** What every redacted Secret value starts with (earlier recorders wrote `…:sha256:<16 hex>` after it). */
export const REDACTED_MARKER = 'ingress-rx:redacted:';
/** Prefix of the value that replaces a redacted Secret value; a keyed fingerprint of the value follows. */
export const REDACTED_PREFIX = `${REDACTED_MARKER}hmac-sha256:`;
/** The Secret metadata the store reads (identity, order, the Helm label); everything else is dropped from a redacted Secret. */
const KEPT_SECRET_METADATA = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'labels'] as const;
/** Secret keys whose values are public and kept even when secrets are redacted. */
export const PUBLIC_SECRET_KEYS: ReadonlySet<string> = new Set(['tls.crt', 'ca.crt']);

/** The flags that shape the model: replay rebuilds the same store and pipeline from them. */
export interface RecordHeader {
  format: typeof RECORD_FORMAT;
  version: number;
  /** ingress-rx version that wrote the log. */
  ingressRx: string;
  /** Wall-clock time of the log's t = 0 (ISO); replay evaluates certificate expiry against it. */
  startedAt: string;
  store: StoreOptions;
  syncRateLimit: number;
  ringCapacity: number;
  burst: number;
  annotationsPrefix: string;
  defaultServerPort: number;
  /** The upstream address policy (--allow-upstream-addresses and the own ports); absent: strict. */
  upstreamAddresses?: { allow: string[]; ownPorts: number[]; ownAddresses?: string[] };
  /** --host-ownership; absent: off. */
  hostOwnership?: boolean;
  /** --enable-dynamic-routes (absent: off). */
  dynamicRoutes?: boolean;
  /** True when Secret values were replaced by REDACTED_PREFIX fingerprints. */
  secretsRedacted: boolean;
}

export interface RecordedEvent {
  /** ms since the log's start. */
  t: number;
  kind: StoredKind;
  type: EventType;
  key: string;
  object: unknown;
}

export interface RecordedTask {
  t: number;
  task: TaskKind;
  detail?: string;
}

export type RecordEntry = RecordedEvent | RecordedTask;

export function isRecordedTask(e: RecordEntry): e is RecordedTask {
  return (e as RecordedTask).task !== undefined;
}

export interface Recorder {
  record(input: PipelineInput, t: number): void;
  /** Flushes what is queued and closes the file; resolves even after a write error. */
  close(): Promise<void>;
  /** True once a write failed; later entries are discarded. */
  readonly failed: boolean;
  /** Entries accepted and entries lost to a write error. */
  readonly written: number;
  readonly lost: number;
}

export interface RecorderOptions {
  file: string;
  /** `startedAt`, `format` and `version` are filled in by the recorder when absent. */
  header: Omit<RecordHeader, 'format' | 'version' | 'startedAt' | 'secretsRedacted'> & Partial<RecordHeader>;
  recordSecrets: boolean;
  logger: Logger;
  scheduler: SchedulerLike;
  /** Wall clock for the header's startedAt (epoch ms). */
  now?: () => number;
}

/**
 * Makes the redactor of one recording. Every non-public value of a Secret becomes a marker with a
 * fingerprint of the value: an HMAC-SHA256 (128 bits) under a key drawn for this recording and
 * never written anywhere, so within the log equal values have equal markers (a changed value
 * still shows as a change, which is all replay needs), while nobody holding the log can confirm a
 * guessed value, nor match values across two logs. Under `data` the marker is base64-encoded like
 * the value it replaces, so it decodes to readable text: an auth Secret then holds a placeholder
 * user (`ingress-rx`, hash `redacted:hmac-sha256:…`) and keeps its shape; a TLS key is no PEM key.
 * Of the Secret's metadata only what the store reads is kept: annotations (kubectl's
 * last-applied-configuration holds the whole Secret) and managedFields are dropped.
 */
export function createSecretRedactor(key: Buffer = randomBytes(32)): (secret: Secret) => Secret {
  const fingerprint = (v: string) => REDACTED_PREFIX + createHmac('sha256', key).update(v).digest('hex').slice(0, 32);
  const redact = (values: Record<string, string> | undefined, encoded: boolean) => {
    if (!values) return values;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(values)) {
      if (PUBLIC_SECRET_KEYS.has(k)) { out[k] = v; continue; }
      const marker = fingerprint(v);
      out[k] = encoded ? Buffer.from(marker).toString('base64') : marker;
    }
    return out;
  };
  return (secret) => {
    const metadata: Record<string, unknown> = {};
    for (const field of KEPT_SECRET_METADATA) {
      const v = (secret.metadata as unknown as Record<string, unknown>)[field];
      if (v !== undefined) metadata[field] = v;
    }
    const out: Secret = { apiVersion: secret.apiVersion, kind: secret.kind, metadata: metadata as unknown as Secret['metadata'] };
    if (secret.type !== undefined) out.type = secret.type;
    if (secret.data) out.data = redact(secret.data, true);
    if (secret.stringData) out.stringData = redact(secret.stringData, false);
    return out;
  };
}

/** Whether a Secret's value under `key` (in `data` or `stringData`) was redacted by a recorder (of any version). */
export function isRedacted(secret: Secret, key: string): boolean {
  const b64 = secret.data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8').startsWith(REDACTED_MARKER);
  return secret.stringData?.[key]?.startsWith(REDACTED_MARKER) ?? false;
}

export function createRecorder(opts: RecorderOptions): Recorder {
  const { logger, scheduler } = opts;
  const start = scheduler.now();
  const header: RecordHeader = {
    format: RECORD_FORMAT,
    version: RECORD_FORMAT_VERSION,
    startedAt: new Date((opts.now ?? Date.now)()).toISOString(),
    ...opts.header,
    secretsRedacted: !opts.recordSecrets,
  };
  let written = 0;
  let lost = 0;
  const redactSecret = opts.recordSecrets ? null : createSecretRedactor();
  const writer = createLineWriter(opts.file, (err) => {
    logger.error({ err, file: opts.file }, `record: cannot write ${opts.file}: ${err.message}; recording stopped`);
  });
  writer.write(JSON.stringify(header));

  // Inputs a source emits in one synchronous burst (an initial list, a manifests commit) share
  // the burst's first time, so replay emits them together too and batches them as live did.
  let burstT: number | null = null;
  const burstTime = (t: number): number => {
    if (burstT !== null) return burstT;
    burstT = t;
    queueMicrotask(() => { burstT = null; });
    return t;
  };

  const entry = (input: PipelineInput, t: number): RecordEntry => {
    const offset = Math.max(0, burstTime(t) - start);
    if (isTask(input)) return input.detail === undefined ? { t: offset, task: input.task } : { t: offset, task: input.task, detail: input.detail };
    const object = input.kind === 'Secret' && redactSecret ? redactSecret(input.object as Secret) : withoutManagedFields(input.object);
    return { t: offset, kind: input.kind, type: input.type, key: input.key, object };
  };

  return {
    record(input, t) {
      if (writer.failed) { lost++; return; }
      let line: string;
      try {
        line = JSON.stringify(entry(input, t));
      } catch (err) {
        logger.warn({ err }, 'record: an input could not be serialised; skipped');
        return;
      }
      writer.write(line);
      written++;
    },
    close: () => writer.close(),
    get failed() { return writer.failed; },
    get written() { return written; },
    get lost() { return lost + writer.lost; },
  };
}

/** The object without `metadata.managedFields` (the store never reads them; a kube source already drops them). */
function withoutManagedFields(object: unknown): unknown {
  const meta = (object as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!meta || meta.managedFields === undefined) return object;
  const { managedFields: _, ...rest } = meta;
  return { ...(object as object), metadata: rest };
}

/**
 * Hooks that feed the recorder with the raw inputs. `configmap-change` tasks are left out: the
 * store derives them from the ConfigMap event, so replay derives them again.
 */
export function recordingHooks(recorder: Pick<Recorder, 'record'>): PipelineHooks {
  return {
    received(item) {
      if (isTask(item.input) && item.input.task === 'configmap-change') return;
      recorder.record(item.input, item.t);
    },
  };
}
