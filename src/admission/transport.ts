// The webhook's transport in a thread of its own (./transport-worker.ts): TLS, HTTP, the
// AdmissionReview's JSON both ways, the per-client bounds and the fair order of reviews
// (./server.ts) run there. The thread holding the store only reviews: the transport posts it each
// review's object once its turn comes, a few at a time (the server's window), and it answers with
// the verdict and the time the review took, which the transport charges to the review's client.
// So no burst of reviews reaches this thread at once, and its loop never waits on a socket.
import { readlinkSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import type { Logger } from '../log.js';
import type { ObservedReview } from './metrics.js';
import type { Reviewer } from './review.js';
import type { RemoteAnswer, ReviewTask, WebhookServerOptions } from './server.js';
import { startWorker, stopWorker } from './worker-entry.js';

/**
 * Reviews the transport asks at once, reviewed in one turn here: fewer wake-ups of both threads
 * per review than one at a time (measured: 2 at a time cost 0.40–0.47 ms of the two threads' CPU
 * per review, 4 at a time 0.34, 8 at a time 0.33), and a newcomer waits for at most these.
 */
export const REVIEW_WINDOW = 4;
/**
 * The transport's heap: bodies held until their turn (at most the server's bytes in flight, 10
 * largest bodies by default) and the two reviews parsed at once; no store, no model.
 */
const TRANSPORT_OLD_GENERATION_MB = 192;

export interface TransportData {
  logLevel: string;
  gatewayAPI: boolean;
  window: number;
  server: Omit<WebhookServerOptions, 'reviewer' | 'remote' | 'logger' | 'metrics' | 'ready'>;
}

export type ToTransport = { type: 'reviewed'; id: number; answer: RemoteAnswer } | { type: 'close' };
export type FromTransport =
  | { type: 'listening'; port: number; tid: number }
  | { type: 'failed'; message: string }
  | { type: 'review'; id: number; task: ReviewTask }
  | { type: 'observe'; ns: string; name: string; result: Omit<ObservedReview, 'configBytes'>; ms: number };

export interface WebhookTransport {
  port: number;
  /** The transport thread's kernel thread id (0 where /proc has none), so its CPU time can be read. */
  tid: number;
  close(): Promise<void>;
}

/** The webhook's server on a transport thread, reviewing here with `opts.reviewer`. */
export function startWebhookTransport(opts: WebhookServerOptions & { reviewer: Reviewer }): Promise<WebhookTransport> {
  const { logger, reviewer, metrics, ready } = opts;
  const data: TransportData = {
    logLevel: logger.level, gatewayAPI: Boolean(reviewer.reviewGatewayAPI), window: REVIEW_WINDOW,
    server: {
      address: opts.address, certFile: opts.certFile, keyFile: opts.keyFile, maxBodyBytes: opts.maxBodyBytes, maxInFlightBytes: opts.maxInFlightBytes,
      maxInFlightBytesPerClient: opts.maxInFlightBytesPerClient, handshakeTimeoutMs: opts.handshakeTimeoutMs, headersTimeoutMs: opts.headersTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs, keepAliveTimeoutMs: opts.keepAliveTimeoutMs, timeoutCheckIntervalMs: opts.timeoutCheckIntervalMs,
      maxConnections: opts.maxConnections, maxConnectionsPerClient: opts.maxConnectionsPerClient, certCheckIntervalMs: opts.certCheckIntervalMs,
    },
  };
  const worker = startWorker(import.meta.url, 'transport-worker', { workerData: data, resourceLimits: { maxOldGenerationSizeMb: TRANSPORT_OLD_GENERATION_MB } });
  const send = (m: ToTransport) => worker.postMessage(m);
  /** The config size of the last accepted Ingress, measured only when a scrape asks for it. */
  let lastAccepted: () => number = () => 0;
  let exited = false;

  function review(task: ReviewTask): RemoteAnswer {
    const t0 = performance.now();
    try {
      if (ready && !ready()) return { state: 'not-ready', ms: performance.now() - t0 };
      const r = task.kind === 'Ingress' ? reviewer.review(task.ingress) : reviewer.reviewGatewayAPI!(task);
      if (task.kind === 'Ingress' && r.served && r.allowed) lastAccepted = r.configBytes;
      const result = { served: r.served, reason: r.reason, allowed: r.allowed, findings: r.findings, tested: r.tested, viewMs: r.viewMs, buildMs: r.buildMs };
      return { state: 'reviewed', result, ms: performance.now() - t0 };
    } catch (err) {
      return { state: 'failed', message: (err as Error).message, stack: (err as Error).stack, ms: performance.now() - t0 };
    }
  }

  // A port delivers every message that arrives while it is being drained in one task, so a review
  // is only queued there; a turn reviews those queued when it began (at most the window): timers,
  // sockets and the store's events run between two turns.
  const asked: Array<{ id: number; task: ReviewTask }> = [];
  let turn = false;
  function reviewNext(): void {
    // The reviews here when the turn began (at most the window); those arriving meanwhile wait for the next turn.
    for (const m of asked.splice(0)) send({ type: 'reviewed', id: m.id, answer: review(m.task) });
    if (asked.length > 0) setImmediate(reviewNext);
    else turn = false;
  }

  return new Promise((resolve, reject) => {
    worker.on('message', (m: FromTransport) => {
      if (m.type === 'review') {
        asked.push(m);
        if (!turn) {
          turn = true;
          setImmediate(reviewNext);
        }
      } else if (m.type === 'observe') metrics?.observe(m.ns, m.name, { ...m.result, configBytes: () => lastAccepted() }, m.ms);
      else if (m.type === 'listening') {
        resolve({
          port: m.port, tid: m.tid,
          close: () => (exited ? Promise.resolve() : stopWorker(worker, () => send({ type: 'close' }))),
        });
      } else if (m.type === 'failed') reject(new Error(m.message));
    });
    worker.once('error', (err) => {
      logger.error({ err: err.message, stack: err.stack }, 'the validating webhook\'s transport thread failed');
      reject(err);
    });
    worker.once('exit', (code) => {
      exited = true;
      reject(new Error(`the validating webhook's transport thread exited (${code})`));
    });
  });
}

/** This thread's kernel thread id, on Linux. */
export function kernelThreadId(): number {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return 0;
  }
}

/** Runs in the transport thread: posts reviews to the thread that started it and waits for each answer. */
export function transportPort(): { remote: (gatewayAPI: boolean, window: number) => WebhookServerOptions['remote']; post(m: FromTransport): void; onClose(close: () => Promise<void>): void } {
  const port = parentPort!;
  const post = (m: FromTransport) => port.postMessage(m);
  const answers = new Map<number, (a: RemoteAnswer) => void>();
  let nextId = 0;
  let close: () => Promise<void> = async () => {};
  port.on('message', (m: ToTransport) => {
    if (m.type === 'reviewed') {
      const answered = answers.get(m.id);
      answers.delete(m.id);
      answered?.(m.answer);
    } else if (m.type === 'close') void close().then(() => port.close());
  });
  return {
    remote: (gatewayAPI, window) => ({
      gatewayAPI, window,
      review(task) {
        const id = nextId++;
        post({ type: 'review', id, task });
        return new Promise((resolve) => answers.set(id, resolve));
      },
    }),
    post,
    onClose(fn) { close = fn; },
  };
}
