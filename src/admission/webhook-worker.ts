// The validating webhook's thread (./webhook-thread.ts starts it): its own store, kept in step with
// the controller's by the source events the controller forwards, its own reviewer and HTTPS
// server. Nothing it does runs on the controller's event loop, so syncs, /healthz and the Lease
// never wait on a review, however large or many.
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../log.js';
import { createStore } from '../store/store.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';
import { createReviewer } from './review.js';
import { startWebhookServer, type WebhookServer } from './server.js';
import type { WebhookThreadData, ToWorker, FromWorker } from './webhook-thread.js';

const data = workerData as WebhookThreadData;
const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);
const logger = createLogger({ level: data.logLevel });
const store = createStore(data.storeOptions, ANNOTATION_REFERENCES, logger);
const reviewer = createReviewer({ ...data.reviewer, store });
let loaded = false;
/** The config size of the last accepted review, measured only when a scrape asks for it. */
let lastConfigBytes: (() => number | Promise<number>) | null = null;
let server: WebhookServer | null = null;

port.on('message', (m: ToWorker) => {
  // Through the reviewer, which keeps its index of server names and backends in step.
  if (m.type === 'event') reviewer.apply(m.event);
  else if (m.type === 'loaded') {
    // Before the first review is answered: it then runs compiled code over a built index.
    try {
      reviewer.warm();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'webhook: warm-up review failed');
    }
    loaded = true;
  }
  // Answered in the order asked (each through one promise turn).
  else if (m.type === 'config-size') void Promise.resolve(lastConfigBytes?.() ?? 0).then((bytes) => post({ type: 'config-size', bytes }));
  else if (m.type === 'close') void (server?.close() ?? Promise.resolve()).then(() => port.close());
});

try {
  server = await startWebhookServer({
    ...data.server,
    logger,
    reviewer,
    metrics: {
      observe(ns, name, r, ms) {
        if (r.served && r.allowed) lastConfigBytes = r.configBytes;
        post({ type: 'observe', ns, name, result: { served: r.served, allowed: r.allowed, tested: r.tested, viewMs: r.viewMs, buildMs: r.buildMs }, ms });
      },
    },
    ready: () => loaded,
  });
  post({ type: 'listening', port: server.port });
} catch (err) {
  post({ type: 'failed', message: (err as Error).message });
}
