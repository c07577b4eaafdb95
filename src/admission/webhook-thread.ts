// Runs the validating webhook in a worker thread of its own (./webhook-worker.ts), off the
// controller's event loop: a review, however large, or a flood of hostile connections, costs the
// worker's loop, never the one that runs syncs, /healthz and leader election. The worker keeps its
// own store, fed with the source events the controller's store takes (forward them in the same
// order), and reports each review for the metrics, which stay on the controller's registry.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { SourceEvent } from '../store/events.js';
import type { StoreOptions } from '../store/types.js';
import type { AdmissionMetrics, ObservedReview } from './metrics.js';
import type { ReviewerOptions } from './review.js';
import type { WebhookServerOptions } from './server.js';

/** What the worker is started with (structured-cloned: data only, no functions). */
export interface WebhookThreadData {
  logLevel: string;
  storeOptions: StoreOptions;
  server: Omit<WebhookServerOptions, 'reviewer' | 'logger' | 'metrics' | 'ready'>;
  reviewer: Omit<ReviewerOptions, 'store' | 'now'>;
}

/** A review's figures as the worker reports them; the config size is asked for separately, at a scrape. */
export type ReviewFigures = Omit<ObservedReview, 'configBytes'>;

export type ToWorker = { type: 'event'; event: SourceEvent } | { type: 'loaded' } | { type: 'config-size' } | { type: 'close' };
export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'failed'; message: string }
  | { type: 'observe'; ns: string; name: string; result: ReviewFigures; ms: number }
  /** The answer to `config-size`: the last accepted review's. */
  | { type: 'config-size'; bytes: number };

export interface WebhookThread {
  /** A source event, for the worker's store (in the order the controller's store takes them). */
  forward(event: SourceEvent): void;
  /** The controller's store holds the cluster's initial state: from now on reviews are answered. */
  loaded(): void;
  /** The port it listens on, once it does; rejects when the server could not start. */
  listening: Promise<number>;
  close(): Promise<void>;
}

/** The worker's entry: compiled next to this module, or (running from source under tsx) the TypeScript one through tsx's loader. */
function workerEntry(): { url: URL; eval: false } | { code: string; eval: true } {
  const compiled = new URL('./webhook-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(compiled))) return { url: compiled, eval: false };
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = new URL('./webhook-worker.ts', import.meta.url).href;
  return { code: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`, eval: true };
}

export function startWebhookThread(data: WebhookThreadData, deps: { logger: Logger; metrics?: AdmissionMetrics }): WebhookThread {
  const entry = workerEntry();
  const worker = entry.eval ? new Worker(entry.code, { eval: true, workerData: data }) : new Worker(entry.url, { workerData: data });
  const send = (m: ToWorker) => worker.postMessage(m);
  let exited = false;
  /** Scrapes waiting for the worker's config size, answered in the order asked. */
  const sizeAsked: Array<(bytes: number) => void> = [];
  let lastSize = 0;
  const askConfigSize = (): Promise<number> => {
    if (exited) return Promise.resolve(lastSize);
    return new Promise((resolve) => {
      sizeAsked.push(resolve);
      send({ type: 'config-size' });
    });
  };
  const listening = new Promise<number>((resolve, reject) => {
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'listening') resolve(m.port);
      else if (m.type === 'failed') reject(new Error(m.message));
      else if (m.type === 'observe') deps.metrics?.observe(m.ns, m.name, { ...m.result, configBytes: askConfigSize }, m.ms);
      else if (m.type === 'config-size') {
        lastSize = m.bytes;
        sizeAsked.shift()?.(m.bytes);
      }
    });
    worker.once('error', (err) => {
      deps.logger.error({ err: err.message, stack: err.stack }, 'the validating webhook\'s thread failed');
      reject(err);
    });
    worker.once('exit', (code) => {
      exited = true;
      for (const resolve of sizeAsked.splice(0)) resolve(lastSize);
      reject(new Error(`the validating webhook's thread exited (${code})`));
    });
  });
  listening.catch(() => {}); // the caller awaits it; a later failure is logged above
  return {
    forward: (event) => { if (!exited) send({ type: 'event', event }); },
    loaded: () => { if (!exited) send({ type: 'loaded' }); },
    listening,
    async close() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      send({ type: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
