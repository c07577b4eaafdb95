// The reload actor: render → write the file → SIGHUP → wait until new workers serve the new
// configuration. NGINX checks the new file itself on SIGHUP and keeps running the old one when
// it refuses it (its verdict is read from the reload log, ./reload-log.ts); the refused file is
// then kept aside and the old one put back. One parse instead of `nginx -t`'s and the reload's.
// A template that does not write the reload log is tested with `nginx -t` first, as before.
// Errors become result values; reloads never overlap. With no NGINX running (cold start) there
// is nothing to protect: the master starts on the file, and its start is the test.

import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync, chmodSync, chownSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { concatMap, defer, from, type Observable, type OperatorFunction } from 'rxjs';
import type { Logger } from '../log.js';
import type { Configuration, ModelWarning } from '../model/core/types.js';
import { auxiliaryFiles, type AuxiliaryFile, type RenderedChunks, type RenderProblem, type Renderer } from '../render/engine.js';
import type { Narrower, Refusal } from './quarantine.js';
import { reloadLogPath, type NginxRuntime } from '../render/runtime.js';
import { workerUser, type WorkerUser } from '../render/worker-access.js';
import { controlChannel, type ControlChannel } from '../render/control.js';
import { controlRequest } from './control-client.js';
import type { NginxProcess } from './nginx-process.js';
import { lineDiff } from './line-diff.js';
import { openReloadLog, reloadVerdict, type ReloadLog } from './reload-log.js';

export type ReloadResult =
  | {
    ok: true; durationMs: number; checksum: string; warnings: string[];
    /** Values the renderer refused (their locations answer 503, or they were left out), naming the Ingresses. */
    problems: ModelWarning[];
    /** What NGINX now runs: the configuration asked for, or that less what it refused (narrowed). */
    config?: Configuration;
  }
  | { ok: false; durationMs: number; error: string };

/** Narrowing rounds per reload: each sets aside at least one object. */
const MAX_NARROWING_ROUNDS = 8;

export interface ReloadDeps {
  renderer: Renderer;
  nginx: NginxProcess;
  runtime: NginxRuntime;
  logger: Logger;
  now?: () => number;
  /**
   * How long to wait for NGINX's verdict and new workers after the reload signal, on top of
   * twice what its last parse took (a start, a reload or `nginx -t`): the master parses the new
   * file before it starts them (~10 s at 10k Ingresses).
   */
  reloadTimeoutMs?: number;
  /** Failed configurations kept as nginx.conf.failed-<ts>. */
  keepFailed?: number;
  /**
   * What NGINX starts on when it runs nothing yet and a configuration fails to start it (the
   * controller's bootstrap: default and status servers only), so that it answers as before.
   */
  fallback?: Configuration;
  /** Finds and sets aside what NGINX refuses, so that the rest applies (see ./quarantine.ts). */
  narrower?: Narrower;
}

export function createReloadActor(deps: ReloadDeps): (config: Configuration) => Observable<ReloadResult> {
  const { renderer, nginx, runtime, logger } = deps;
  const now = deps.now ?? Date.now;
  const confPath = runtime.confPath;
  // Whom a private file the workers read per request belongs to: a root master's workers are another user.
  const workers = process.getuid?.() === 0 ? workerUser(runtime) : null;
  const confDir = dirname(confPath);
  let queue: Promise<unknown> = Promise.resolve();
  let seq = 0;

  // What NGINX runs, as the renderer's chunks: restored if a reload fails, and the "before" of
  // the debug diff, without reading the (tens of MB) file back; and whether it writes the reload log.
  let running: string[] | null = null;
  let runningWritesReloadLog = false;
  /** How long NGINX last took to parse a configuration (start, reload or `nginx -t`). */
  let parseMs = 0;

  async function reloadOnce(config: Configuration): Promise<ReloadResult> {
    const t0 = now();
    let current = config;
    for (let round = 0; ; round++) {
      const outcome = await applyOnce(current, t0);
      if (outcome.ok === 'over-budget') {
        // Set aside before NGINX ever read it; what is left renders smaller.
        if (round < MAX_NARROWING_ROUNDS) { current = outcome.next; continue; }
        return { ok: false, durationMs: now() - t0, error: 'reload: Ingresses still over the nginx.conf budgets after setting some aside' };
      }
      if (outcome.ok) {
        deps.narrower?.applied(current);
        return { ...outcome.result, config: current };
      }
      // NGINX refused it: set aside what it refuses and apply the rest, in this same reload.
      const next = deps.narrower && round < MAX_NARROWING_ROUNDS ? await deps.narrower.narrow(outcome.refusal, testConfig) : null;
      if (next === null) {
        if (nginx.masterPid() === null) await startPrevious();
        // NGINX's words name a temporary file's line: say what it points at in the model too.
        const error = deps.narrower ? `${outcome.error}\n${deps.narrower.explain(outcome.refusal)}` : outcome.error;
        return { ok: false, durationMs: now() - t0, error };
      }
      current = next;
    }
  }

  type Attempt = { ok: true; result: Extract<ReloadResult, { ok: true }> } | { ok: false; error: string; refusal: Refusal }
    | { ok: 'over-budget'; next: Configuration };

  /** Renders, tests and installs one configuration (or starts NGINX on it). */
  async function applyOnce(config: Configuration, t0: number): Promise<Attempt> {
    let rendered: RenderedChunks;
    try {
      rendered = renderer.renderChunks(config, runtime);
      for (const file of auxiliaryFiles(config, runtime)) writeIfChanged(file, workers);
    } catch (err) {
      const error = `render: ${(err as Error).message}`;
      logger.error({ err: (err as Error).message }, 'reload: render failed; the running configuration is kept');
      return { ok: false, error, refusal: { config, rendered: null, output: error } };
    }
    const narrowed = deps.narrower?.overBudget(rendered);
    if (narrowed) return { ok: 'over-budget', next: narrowed };
    for (const w of rendered.warnings) logger.warn(w);
    mkdirSync(confDir, { recursive: true });
    const tmp = join(confDir, `.${basename(confPath)}.tmp-${process.pid}-${++seq}`);
    writeChunks(tmp, rendered.chunks);
    const refused = (output: string): Attempt => ({ ok: false, error: output, refusal: { config, rendered, output } });
    if (nginx.masterPid() === null) {
      const started = await startOn(tmp, rendered, t0);
      return started.ok ? { ok: true, result: started } : refused(started.error);
    }
    if (runningWritesReloadLog) return reloadChecked(tmp, rendered, t0, refused);
    const testStarted = Date.now();
    const test = await nginx.test(tmp);
    parseMs = Date.now() - testStarted;
    if (!test.ok) {
      const kept = keepFailed(tmp);
      logger.error({ output: test.output, kept }, 'reload: nginx -t failed; the running configuration is kept');
      return refused(test.output);
    }
    const previous = running ?? (existsSync(confPath) ? [readFileSync(confPath, 'utf8')] : null);
    renameSync(tmp, confPath);
    if (logger.isLevelEnabled('debug')) logger.debug({ diff: lineDiff(previous?.join('') ?? '', rendered.chunks.join(''), confPath) }, 'reload: configuration diff');
    try {
      if (nginx.masterPid() === null) {
        await nginx.start(confPath);
      } else {
        const before = new Set(nginx.workerPids());
        await nginx.reload();
        await waitNewConfiguration(before, rendered.checksum, verdictTimeoutMs());
      }
    } catch (err) {
      // Keep the file on disk equal to what NGINX runs.
      if (previous !== null) writeChunks(confPath, previous);
      logger.error({ err: (err as Error).message }, 'reload: NGINX did not take the new configuration');
      return { ok: false, error: (err as Error).message, refusal: { config, rendered, output: (err as Error).message } };
    }
    return { ok: true, result: succeeded(rendered, t0, 'reload: done') };
  }

  /**
   * Installs the file and sends SIGHUP; NGINX's check of it is the test. When NGINX refuses it,
   * it runs on unchanged: the file is kept as a failed one and the previous one put back.
   */
  async function reloadChecked(tmp: string, rendered: RenderedChunks, t0: number, refused: (output: string) => Attempt): Promise<Attempt> {
    const previous = running ?? (existsSync(confPath) ? [readFileSync(confPath, 'utf8')] : null);
    const log = openReloadLog(reloadLogPath(runtime));
    const offset = log.mark();
    const before = new Set(nginx.workerPids());
    renameSync(tmp, confPath);
    if (logger.isLevelEnabled('debug')) logger.debug({ diff: lineDiff(previous?.join('') ?? '', rendered.chunks.join(''), confPath) }, 'reload: configuration diff');
    const sent = Date.now();
    let verdict: { taken: true; checkMs: number } | { taken: false; errors: string[] };
    try {
      await nginx.reload();
      verdict = await waitVerdict(before, rendered.checksum, log, offset, verdictTimeoutMs());
    } catch (err) {
      if (previous !== null) writeChunks(confPath, previous);
      logger.error({ err: (err as Error).message }, 'reload: NGINX did not take the new configuration');
      return refused((err as Error).message);
    }
    if (!verdict.taken) {
      const kept = putBack(previous);
      const output = verdict.errors.join('\n') || 'nginx: NGINX kept its running configuration without saying why (see its error log)';
      logger.error({ output, kept }, 'reload: NGINX refused the configuration and runs on the previous one');
      return refused(output);
    }
    parseMs = verdict.checkMs;
    return { ok: true, result: succeeded(rendered, t0, 'reload: done', { checkMs: verdict.checkMs, sinceSignalMs: Date.now() - sent }) };
  }

  /** The refused file becomes a failed one; the one NGINX runs is put back in its place. */
  function putBack(previous: string[] | null): string {
    const kept = failedName();
    if (previous === null) {
      renameSync(confPath, kept);
    } else {
      const tmp = join(confDir, `.${basename(confPath)}.restore-${process.pid}-${++seq}`);
      writeChunks(tmp, previous);
      linkSync(confPath, kept);
      renameSync(tmp, confPath);
    }
    pruneFailed(confDir, basename(confPath), deps.keepFailed ?? 3);
    return kept;
  }

  /**
   * New workers answering with the new checksum (as waitNewConfiguration), or NGINX's word that
   * it refused the file: the master settled after "reconfiguring" and started no worker.
   */
  async function waitVerdict(before: Set<number>, checksum: string, log: ReloadLog, offset: number, timeoutMs: number):
    Promise<{ taken: true; checkMs: number } | { taken: false; errors: string[] }> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    let woken = false;
    let checkMs = -1;
    const freshWorkers = () => nginx.workerPids().some((p) => !before.has(p));
    for (;;) {
      const master = nginx.masterPid();
      if (master === null) throw new Error('nginx exited during reload');
      if (freshWorkers()) {
        if (checkMs < 0) checkMs = Date.now() - started;
        const oldDraining = nginx.workerPids().filter((p) => before.has(p)).every(isShuttingDown);
        if (oldDraining && (await fetchChecksum(controlChannel(runtime))) === checksum) return { taken: true, checkMs };
      } else {
        const v = reloadVerdict(log.since(offset), master);
        if (v.reconfiguring && !woken) {
          nginx.wake();
          woken = true;
        }
        // Workers are started before the master settles: none now means none from this reload.
        if (v.settled && !freshWorkers()) return { taken: false, errors: v.errors };
      }
      if (Date.now() > deadline) throw new Error('timed out waiting for NGINX workers with the new configuration (see the error log)');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  function verdictTimeoutMs(): number {
    return (deps.reloadTimeoutMs ?? 30_000) + 2 * parseMs;
  }

  /** `nginx -t` on a configuration in a file of its own (a narrowing probe); never touches what runs. */
  async function testConfig(config: Configuration): Promise<{ ok: boolean; output: string }> {
    let chunks: string[];
    try {
      chunks = renderer.renderChunks(config, runtime).chunks;
    } catch (err) {
      return { ok: false, output: `render: ${(err as Error).message}` };
    }
    mkdirSync(confDir, { recursive: true });
    const probe = join(confDir, `.${basename(confPath)}.probe-${process.pid}-${++seq}`);
    writeChunks(probe, chunks);
    try {
      return await nginx.test(probe);
    } finally {
      rmSync(probe, { force: true });
    }
  }

  function succeeded(rendered: RenderedChunks, t0: number, message: string, timings: Record<string, number> = {}): Extract<ReloadResult, { ok: true }> {
    running = rendered.chunks;
    runningWritesReloadLog = rendered.writesReloadLog;
    const durationMs = now() - t0;
    logger.info({ durationMs, ...timings, checksum: rendered.checksum }, message);
    return { ok: true, durationMs, checksum: rendered.checksum, warnings: rendered.warnings, problems: rendered.problems.flatMap(problemWarnings) };
  }

  /**
   * Starts the master on the new file: one parse where `nginx -t` and a reload take two. When it
   * does not start, its output is the error (as `nginx -t`'s would be) and the file is kept as a
   * failed one; once narrowing gives up, NGINX starts on what it ran last in this process, or
   * else on the fallback (as it does when the configuration does not even render).
   */
  async function startOn(tmp: string, rendered: RenderedChunks, t0: number): Promise<ReloadResult> {
    renameSync(tmp, confPath);
    const started = Date.now();
    try {
      await nginx.start(confPath);
      parseMs = Date.now() - started;
    } catch (err) {
      const output = asTestOutput((err as Error).message);
      const kept = keepFailed(confPath);
      logger.error({ output, kept }, 'reload: NGINX did not start on the configuration');
      return { ok: false, durationMs: now() - t0, error: output };
    }
    return succeeded(rendered, t0, 'reload: NGINX started');
  }

  async function startPrevious(): Promise<void> {
    let chunks = running;
    let writesReloadLog = runningWritesReloadLog;
    if (chunks === null && deps.fallback) {
      try {
        ({ chunks, writesReloadLog } = renderer.renderChunks(deps.fallback, runtime));
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'reload: the fallback configuration does not render; NGINX stays down');
        return;
      }
    }
    if (chunks === null) return;
    writeChunks(confPath, chunks);
    try {
      await nginx.start(confPath);
      running = chunks;
      runningWritesReloadLog = writesReloadLog;
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'reload: NGINX did not start on the previous configuration either');
    }
  }

  function failedName(): string {
    return join(confDir, `${basename(confPath)}.failed-${now()}-${seq}`);
  }

  function keepFailed(path: string): string {
    const kept = failedName();
    renameSync(path, kept);
    pruneFailed(confDir, basename(confPath), deps.keepFailed ?? 3);
    return kept;
  }

  /**
   * New workers exist, one of them answers with the new checksum on the control server, and every
   * old worker has exited or is shutting down (it has closed its listening sockets then).
   */
  async function waitNewConfiguration(before: Set<number>, checksum: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = nginx.workerPids();
      const fresh = current.some((p) => !before.has(p));
      const oldDraining = current.filter((p) => before.has(p)).every(isShuttingDown);
      if (fresh && oldDraining && (await fetchChecksum(controlChannel(runtime))) === checksum) return;
      if (nginx.masterPid() === null) throw new Error('nginx exited during reload');
      if (Date.now() > deadline) throw new Error('timed out waiting for NGINX workers with the new configuration (see the error log)');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  return (config) => defer(() => {
    const run = queue.then(() => reloadOnce(config), () => reloadOnce(config));
    queue = run.catch(() => undefined);
    return from(run.catch((err: unknown): ReloadResult => ({ ok: false, durationMs: 0, error: String((err as Error)?.message ?? err) })));
  });
}

/** A render problem as the model's warnings: one per Ingress it concerns (or the host). */
export function problemWarnings(p: RenderProblem): ModelWarning[] {
  const where = p.path === undefined ? `host ${p.host}` : `host ${p.host} path ${p.path}`;
  const message = `${where}: NGINX cannot be given ${p.field}: ${p.message}; ${p.outcome}`;
  if (p.ingresses.length === 0) return [{ object: `server ${p.host}`, field: p.field, message }];
  return p.ingresses.map((i) => ({ object: `Ingress ${i.namespace}/${i.name}`, field: p.field, message }));
}

/** The actor as an operator: one ReloadResult per Configuration, in order. */
export function reloadActor(deps: ReloadDeps): OperatorFunction<Configuration, ReloadResult> {
  const actor = createReloadActor(deps);
  return concatMap((config: Configuration) => actor(config));
}

function isShuttingDown(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('shutting down');
  } catch {
    return true; // gone
  }
}

/** Writes the text as the renderer's chunks, batched into writes of about 1 MB, mode 0644. */
function writeChunks(path: string, chunks: string[]): void {
  const fd = openSync(path, 'w', 0o644);
  const flush = (text: string) => {
    const buf = Buffer.from(text, 'utf8');
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
  };
  try {
    let batch = '';
    for (const c of chunks) {
      batch += c;
      if (batch.length >= 1 << 20) {
        flush(batch);
        batch = '';
      }
    }
    if (batch !== '') flush(batch);
  } finally {
    closeSync(fd);
  }
}

function writeIfChanged({ path, content, mode = 0o644, encoding: given, readByWorkers }: AuxiliaryFile, workers: WorkerUser | null): void {
  const encoding: BufferEncoding = given ?? 'utf8';
  const owner = readByWorkers && workers ? workers : null;
  if (existsSync(path) && readFileSync(path, encoding) === content) {
    // Same bytes, but a file written by an earlier version may be more open than it should be.
    const st = statSync(path);
    if ((st.mode & 0o777) === mode && (owner === null || st.uid === owner.uid)) return;
  }
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, content, { mode, encoding });
  chmodSync(tmp, mode);
  if (owner) chownSync(tmp, owner.uid, owner.gid);
  renameSync(tmp, path);
}

function pruneFailed(dir: string, base: string, keep: number): void {
  const failed = readdirSync(dir).filter((n) => n.startsWith(`${base}.failed-`)).sort((a, b) => stamp(a) - stamp(b));
  for (const name of failed.slice(0, Math.max(0, failed.length - keep))) {
    try { unlinkSync(join(dir, name)); } catch { /* already gone */ }
  }
}

function stamp(name: string): number {
  const m = /failed-(\d+)-(\d+)$/.exec(name);
  return m ? Number(m[1]) * 1e6 + Number(m[2]) : 0;
}

/** The master's start errors in `nginx -t`'s format: "nginx: [emerg] …" without time and pid. */
function asTestOutput(output: string): string {
  return output.replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[(\w+)\] \d+#\d+: /gm, 'nginx: [$1] ');
}

function fetchChecksum(control: ControlChannel): Promise<string | null> {
  return controlRequest(control, 'GET', '/configuration-checksum', { timeoutMs: 2000 })
    .then((res) => (res.status === 200 ? res.body.trim() : null), () => null);
}
