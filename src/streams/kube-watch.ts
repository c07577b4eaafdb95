// The Watch our informers use instead of client-node's: watch starts are spaced by a minimum
// gap, a watch silent for longer than the idle timeout is recycled, stopping aborts even a
// connect in flight, and the informer's own aborts end a watch quietly (no AbortError).
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { Logger } from '../log.js';

export interface KubeWatchOptions {
  /** Least time between two watch starts. */
  minGapMs: number;
  /** A watch with no line (event or bookmark) for this long is recycled. */
  idleTimeoutMs: number;
  scheduler: SchedulerLike;
  logger: Logger;
  /** What the informer is handed of each added, modified or deleted object (its cache keeps it). */
  project?: (raw: any) => unknown;
  /** Called as each watch starts; the informer has applied its list, if it made one, by then. */
  onStart?: () => void;
  /** Called when a watch got its 200 response: the connection is healthy again. */
  onConnected?: () => void;
}

type WatchCallback = (phase: string, apiObj: any, watchObj?: any) => void;
type DoneCallback = (err: any) => void;

/** An HTTP error the informer understands: `statusCode` 410 makes it relist. */
export class WatchHttpError extends Error {
  constructor(readonly statusCode: number, message: string) {
    super(message);
  }
}

export class KubeWatch extends Watch {
  private lastStart = Number.NEGATIVE_INFINITY;
  private closed = false;
  /** How to end each watch in progress (or waiting for its gap) without telling the informer. */
  private readonly cancels = new Set<() => void>();

  constructor(private readonly kc: KubeConfig, private readonly opts: KubeWatchOptions) {
    super(kc);
  }

  override async watch(path: string, query: Record<string, string | number | boolean | undefined>, callback: WatchCallback, done: DoneCallback): Promise<AbortController> {
    const controller = new AbortController();
    if (this.closed) {
      controller.abort();
      return controller;
    }
    this.opts.onStart?.();
    const wait = this.lastStart + this.opts.minGapMs - this.opts.scheduler.now();
    if (wait > 0) await this.sleep(wait, controller.signal);
    if (this.closed || controller.signal.aborted) return controller;
    this.lastStart = this.opts.scheduler.now();
    void this.open(path, query, callback, done, controller.signal);
    return controller;
  }

  /** Ends every watch for good; `done` is not called for them. */
  close(): void {
    this.closed = true;
    for (const cancel of [...this.cancels]) cancel();
  }

  private sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let timer: Subscription | undefined;
      const wake = () => {
        timer?.unsubscribe();
        this.cancels.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.cancels.add(wake);
      signal.addEventListener('abort', wake, { once: true });
      timer = this.opts.scheduler.schedule(wake, ms);
    });
  }

  private async open(path: string, query: Record<string, string | number | boolean | undefined>, callback: WatchCallback, done: DoneCallback, signal: AbortSignal): Promise<void> {
    const { logger, scheduler, idleTimeoutMs, project } = this.opts;
    let finished = false;
    let streaming = false;
    let idle: Subscription | undefined;
    /** When the last line came: the idle timer, armed once, re-arms itself for what is left (not one timer per line). */
    let lastLine = scheduler.now();
    let req: http.ClientRequest | undefined;

    const finish = (err: unknown, tellInformer: boolean) => {
      if (finished) return;
      finished = true;
      idle?.unsubscribe();
      this.cancels.delete(cancel);
      signal.removeEventListener('abort', cancel);
      req?.destroy();
      if (tellInformer && !this.closed) {
        try {
          done(err);
        } catch (e) {
          logger.error({ err: e, path }, 'watch done handler threw');
        }
      }
    };
    const cancel = () => finish(null, false);
    const armIdle = (ms = idleTimeoutMs) => {
      idle?.unsubscribe();
      idle = scheduler.schedule(() => {
        const silentFor = scheduler.now() - lastLine;
        if (streaming && silentFor < idleTimeoutMs) {
          armIdle(idleTimeoutMs - silentFor);
          return;
        }
        if (streaming) {
          logger.debug({ path, idleTimeoutMs }, 'watch silent for too long, recycling it');
          finish(null, true);
        } else finish(new Error(`watch on ${path} got no response within ${idleTimeoutMs} ms`), true);
      }, ms);
    };
    this.cancels.add(cancel);
    signal.addEventListener('abort', cancel, { once: true });
    armIdle();

    try {
      const cluster = this.kc.getCurrentCluster();
      if (!cluster) throw new Error('no current cluster in the kubeconfig');
      const url = new URL(cluster.server + path);
      url.searchParams.set('watch', 'true');
      url.searchParams.set('allowWatchBookmarks', 'true');
      for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
      const init = await this.kc.applyToFetchOptions({});
      if (finished) return;
      const headers: Record<string, string> = {};
      (init.headers as { forEach?: (fn: (v: string, k: string) => void) => void } | undefined)?.forEach?.((v, k) => {
        headers[k] = v;
      });
      const request = url.protocol === 'https:' ? https.request : http.request;
      req = request(url, { method: 'GET', agent: init.agent as http.Agent | undefined, headers });
      req.on('error', (err) => finish(streaming ? null : err, true));
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            if (body.length < 4096) body += c;
          });
          res.on('error', () => undefined);
          res.on('end', () => finish(new WatchHttpError(res.statusCode ?? 0, statusMessage(res.statusCode ?? 0, body)), true));
          return;
        }
        streaming = true;
        lastLine = scheduler.now();
        armIdle();
        this.opts.onConnected?.();
        const lines = createInterface({ input: res, crlfDelay: Infinity });
        lines.on('line', (line) => {
          if (finished) return;
          lastLine = scheduler.now();
          if (!line.trim()) return;
          let event: { type?: string; object?: unknown };
          try {
            event = JSON.parse(line) as typeof event;
          } catch {
            logger.warn({ path, line: line.slice(0, 200) }, 'watch sent a line that is not JSON');
            return;
          }
          try {
            const type = event.type ?? '';
            const object = project && (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') ? project(event.object) : event.object;
            const r = callback(type, object, event) as unknown;
            if (r instanceof Promise) r.catch((err) => logger.error({ err, path }, 'watch event handler failed'));
          } catch (err) {
            logger.error({ err, path }, 'watch event handler threw');
          }
        });
        // A stream that ends, cleanly or not, after a 200 is a normal end: the informer re-watches.
        lines.on('close', () => finish(null, true));
        lines.on('error', () => finish(null, true)); // readline re-emits the response's errors
        res.on('error', () => finish(null, true));
        res.on('close', () => finish(null, true));
      });
      req.end();
    } catch (err) {
      finish(err, true);
    }
  }
}

function statusMessage(code: number, body: string): string {
  try {
    const status = JSON.parse(body) as { message?: string };
    if (status.message) return `${code}: ${status.message}`;
  } catch {
    // not a Status object
  }
  return `${code}: ${http.STATUS_CODES[code] ?? 'error'}`;
}
