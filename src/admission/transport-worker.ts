// The webhook's transport thread (./transport.ts starts it): the HTTPS server of ./server.ts,
// asking the thread that started it for each review.
import { workerData } from 'node:worker_threads';
import { createLogger } from '../log.js';
import { startWebhookServer } from './server.js';
import { kernelThreadId, transportPort, type TransportData } from './transport.js';

const data = workerData as TransportData;
const link = transportPort();
try {
  const server = await startWebhookServer({
    ...data.server,
    logger: createLogger({ level: data.logLevel }),
    remote: link.remote(data.gatewayAPI, data.window),
    metrics: {
      observe(ns, name, r, ms) {
        link.post({ type: 'observe', ns, name, result: { served: r.served, allowed: r.allowed, tested: r.tested, viewMs: r.viewMs, buildMs: r.buildMs }, ms });
      },
    },
  });
  link.onClose(() => server.close());
  link.post({ type: 'listening', port: server.port, tid: kernelThreadId() });
} catch (err) {
  link.post({ type: 'failed', message: (err as Error).message });
}
