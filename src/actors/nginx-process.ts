// The NGINX master as a child process in its own process group: start, test, reload, quit,
// and restart with backoff when it dies unexpectedly (the controller then re-applies the
// configuration, backends included, on `restarted`).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Subject, timer, asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from '../log.js';
import { removeStaleSockets, type NginxRuntime } from '../render/runtime.js';
import { controlChannel } from '../render/control.js';
import { controlRequest, describeChannel } from './control-client.js';

export interface NginxProcessEvent {
  type: 'started' | 'exited' | 'restarted';
  pid: number;
  code?: number | null;
  signal?: string | null;
}

export interface NginxProcess {
  /**
   * Spawns the master with `-p prefix -c confPath`; resolves once a worker answers on the status
   * port; rejects with NGINX's output when the master exits first.
   */
  start(confPath: string): Promise<void>;
  /** `nginx -t`; never rejects. */
  test(confPath: string): Promise<{ ok: boolean; output: string }>;
  /** Signals the master to reload (SIGHUP). */
  reload(): Promise<void>;
  /**
   * Sends the master SIGIO, which it only logs, and only once it waits for signals again: after
   * "reconfiguring", that line marks the end of its attempt (see ./reload-log.ts).
   */
  wake(): void;
  /** Graceful stop (SIGQUIT), then SIGKILL to the whole group if it still runs after timeoutMs. */
  quit(timeoutMs?: number): Promise<void>;
  masterPid(): number | null;
  /** Current children of the master (workers, cache manager). */
  workerPids(): number[];
  readonly events$: Observable<NginxProcessEvent>;
}

export interface NginxProcessOptions {
  runtime: NginxRuntime;
  logger: Logger;
  scheduler?: SchedulerLike;
  binary?: string;
  /** First restart delay; doubles per consecutive failure up to 30 s. */
  restartBackoffMs?: number;
  /** How long start() waits for the control server: the master parses the whole file first (~10 s at 10k Ingresses). */
  startTimeoutMs?: number;
}

const TAIL = 8192;

export function createNginxProcess(opts: NginxProcessOptions): NginxProcess {
  const { runtime, logger } = opts;
  const binary = opts.binary ?? '/usr/sbin/nginx';
  const scheduler = opts.scheduler ?? asyncScheduler;
  const baseBackoff = opts.restartBackoffMs ?? 1000;
  const events = new Subject<NginxProcessEvent>();
  let child: ChildProcess | null = null;
  let confPath = runtime.confPath;
  let quitting = false;
  let failures = 0;
  let restartTimer: Subscription | null = null;
  let output = '';
  // The master start() waits for: its exit is start()'s failure, not a crash to restart.
  let starting: ChildProcess | null = null;

  function spawnMaster(): ChildProcess {
    output = '';
    removeStaleSockets(runtime);
    const c = spawn(binary, ['-p', `${runtime.prefix}/`, '-c', confPath], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (d: Buffer) => { output = (output + d.toString()).slice(-TAIL); };
    c.stdout?.on('data', collect);
    c.stderr?.on('data', collect);
    c.on('error', (err) => logger.error({ err: err.message }, 'nginx: spawn failed'));
    // NGINX must not outlive the controller, even when it exits without calling quit().
    const onProcessExit = () => killGroup(c.pid);
    process.once('exit', onProcessExit);
    c.on('exit', (code, signal) => {
      process.removeListener('exit', onProcessExit);
      onExit(c, code, signal);
    });
    return c;
  }

  function onExit(c: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    killGroup(c.pid);
    if (child !== c) return;
    child = null;
    const pid = c.pid ?? -1;
    events.next({ type: 'exited', pid, code, signal });
    if (quitting || c === starting) return;
    logger.error({ pid, code, signal, output: output.slice(-2000) }, 'nginx: master exited unexpectedly; restarting');
    const delay = Math.min(baseBackoff * 2 ** failures, 30_000);
    failures++;
    restartTimer = timer(delay, scheduler).subscribe(() => {
      restartTimer = null;
      if (quitting || child) return;
      const next = spawnMaster();
      child = next;
      waitListening(next).then(
        () => {
          failures = 0;
          logger.info({ pid: next.pid }, 'nginx: restarted');
          events.next({ type: 'restarted', pid: next.pid ?? -1 });
        },
        (err: Error) => logger.error({ err: err.message }, 'nginx: restart failed'),
      );
    });
  }

  async function waitListening(c: ChildProcess): Promise<void> {
    const deadline = Date.now() + (opts.startTimeoutMs ?? 120_000);
    for (;;) {
      if (c.exitCode !== null || c.signalCode !== null) {
        // 'exit' can come before the last of stderr: wait for the pipes (bounded).
        await new Promise<void>((r) => {
          if (c.stderr?.readableEnded !== false) return r();
          const t = setTimeout(r, 1000);
          c.once('close', () => { clearTimeout(t); r(); });
        });
        // NGINX's own words, as `nginx -t` would print them for a configuration that cannot run.
        throw new Error(output.trim() || `nginx exited during start (${c.exitCode ?? c.signalCode})`);
      }
      if (await workerAnswers(runtime)) return;
      if (Date.now() > deadline) throw new Error(`nginx did not listen on ${describeChannel(controlChannel(runtime))} in time: ${output.trim()}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  }

  return {
    events$: events.asObservable(),
    async start(path) {
      if (child) throw new Error('nginx is already running');
      confPath = path;
      quitting = false;
      const c = spawnMaster();
      child = c;
      starting = c;
      try {
        await waitListening(c);
      } catch (err) {
        if (child === c) {
          quitting = true;
          child = null;
          killGroup(c.pid);
        }
        throw err;
      } finally {
        starting = null;
      }
      logger.info({ pid: c.pid }, 'nginx: started');
      events.next({ type: 'started', pid: c.pid ?? -1 });
    },
    test(path) {
      return new Promise((resolve) => {
        execFile(binary, ['-t', '-q', '-p', `${runtime.prefix}/`, '-c', path], { timeout: 120_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
          resolve({ ok: !err, output: `${stdout}${stderr}`.trim() || (err ? err.message : '') });
        });
      });
    },
    async reload() {
      const pid = child?.pid;
      if (!pid) throw new Error('nginx is not running');
      process.kill(pid, 'SIGHUP');
    },
    wake() {
      const pid = child?.pid;
      if (pid) try { process.kill(pid, 'SIGIO'); } catch { /* exited: the reload actor sees it */ }
    },
    async quit(timeoutMs = 10_000) {
      quitting = true;
      restartTimer?.unsubscribe();
      restartTimer = null;
      const c = child;
      if (!c || c.pid === undefined) return;
      const exited = new Promise<void>((r) => {
        if (c.exitCode !== null || c.signalCode !== null) r();
        else c.once('exit', () => r());
      });
      try { process.kill(c.pid, 'SIGQUIT'); } catch { /* already gone */ }
      let timeout: NodeJS.Timeout | undefined;
      const stillRunning = await Promise.race([exited.then(() => false), new Promise<boolean>((r) => { timeout = setTimeout(() => r(true), timeoutMs); })]);
      clearTimeout(timeout);
      if (stillRunning) opts.logger.warn({ timeoutMs }, 'NGINX did not exit after QUIT in time; killing it');
      killGroup(c.pid);
      await exited;
      if (child === c) child = null;
    },
    masterPid: () => child?.pid ?? null,
    workerPids() {
      const pid = child?.pid;
      if (!pid) return [];
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      } catch {
        return [];
      }
    },
  };
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try { process.kill(-pid, 'SIGKILL'); } catch { /* group already gone */ }
}

/**
 * An HTTP answer on the control socket, not just a connect: the kernel accepts connections on
 * the master's listening socket before any worker exists, and only a worker answers. Any status
 * will do (no token is sent: this asks nothing of the control server).
 */
function workerAnswers(runtime: NginxRuntime): Promise<boolean> {
  return controlRequest(controlChannel(runtime), 'GET', '/healthz', { anonymous: true, timeoutMs: 1000 })
    .then(() => true, () => false);
}
