// The validating webhook's HTTPS server (--validating-webhook): reads AdmissionReviews with bounded
// bodies and time limits on every phase (TLS handshake, headers, body), reviews Ingresses with
// ./review.ts and answers. The certificate and key files are re-read when they change (cert-manager
// and Secret volume rotation), without a restart.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../log.js';
import {
  admissionReviewResponse, denialMessage, ingressOf, readAdmissionReview, warningLines, type AdmissionResponse,
} from './admission-review.js';
import type { AdmissionMetrics } from './metrics.js';
import type { Reviewer } from './review.js';

export interface WebhookServerOptions {
  /** `host:port` as ingress-nginx's --validating-webhook (`:8443` listens on every address). */
  address: string;
  certFile: string;
  keyFile: string;
  reviewer: Reviewer;
  logger: Logger;
  metrics?: AdmissionMetrics;
  /** Reviews are refused (retry later) until the store holds the cluster's initial state. */
  ready?: () => boolean;
  /** ingress-nginx's limit: three times the API server's 3 MB request limit. */
  maxBodyBytes?: number;
  /** Bodies of all requests in flight together; past it, a request is answered 503. */
  maxInFlightBytes?: number;
  handshakeTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** The whole request (headers and body) must arrive within this. */
  requestTimeoutMs?: number;
  /** How often Node checks the two timeouts above. */
  timeoutCheckIntervalMs?: number;
  maxConnections?: number;
  /** How often the certificate and key files are checked for a change. */
  certCheckIntervalMs?: number;
}

export interface WebhookServer {
  server: Server;
  port: number;
  /** Request body bytes held right now (bounded by maxInFlightBytes). */
  inFlightBytes(): number;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BODY_BYTES = 9 * 1024 * 1024;

/** `:8443`, `0.0.0.0:8443`, `[::1]:8443` → host (undefined: every address) and port. */
export function parseListenAddress(address: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`--validating-webhook "${address}" is not "<host>:<port>" (e.g. ":8443")`);
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

interface KeyPair { cert: Buffer; key: Buffer; digest: string }

function readKeyPair(certFile: string, keyFile: string): KeyPair {
  const cert = readFileSync(certFile);
  const key = readFileSync(keyFile);
  createSecureContext({ cert, key }); // throws on a bad pair
  return { cert, key, digest: createHash('sha256').update(cert).update('\0').update(key).digest('hex') };
}

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const { logger } = opts;
  const { host, port } = parseListenAddress(opts.address);
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxInFlight = opts.maxInFlightBytes ?? 4 * maxBody;
  let inFlight = 0;
  let pair = readKeyPair(opts.certFile, opts.keyFile);

  const server = createServer({
    cert: pair.cert, key: pair.key,
    minVersion: 'TLSv1.2',
    handshakeTimeout: opts.handshakeTimeoutMs ?? 10_000,
    headersTimeout: opts.headersTimeoutMs ?? 10_000,
    requestTimeout: opts.requestTimeoutMs ?? 30_000,
    connectionsCheckingInterval: opts.timeoutCheckIntervalMs ?? 1_000,
    keepAliveTimeout: 30_000,
  }, (req, res) => handle(req, res));
  server.maxConnections = opts.maxConnections ?? 512;
  // A client that stops reading its answer is dropped too.
  server.setTimeout(opts.requestTimeoutMs ?? 30_000, (socket) => socket.destroy());
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'webhook: TLS client error'));

  function reply(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
    if (res.headersSent) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      reply(res, 405, 'POST an admission.k8s.io/v1 AdmissionReview\n');
      req.resume();
      return;
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      reply(res, 415, 'content-type must be application/json\n');
      req.resume();
      return;
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > maxBody) {
      res.setHeader('connection', 'close');
      res.once('finish', () => req.socket.end());
      reply(res, 413, `request body over ${maxBody} bytes\n`);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const release = () => { inFlight -= size; size = 0; };
    // The answer goes out, then the rest of the body is read and dropped until the client
    // closes or the request timeout ends it: closing with unread data would reset the
    // connection and lose the answer.
    const refuse = (status: number, text: string) => {
      refused = true;
      release();
      chunks.length = 0;
      res.setHeader('connection', 'close');
      res.once('finish', () => req.socket.end());
      reply(res, status, text);
    };
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      if (size + chunk.length > maxBody) return refuse(413, `request body over ${maxBody} bytes\n`);
      if (inFlight + chunk.length > maxInFlight) return refuse(503, 'too many large reviews in flight; retry\n');
      size += chunk.length;
      inFlight += chunk.length;
      chunks.push(chunk);
    });
    req.on('error', () => release());
    req.on('close', () => { if (!refused) release(); });
    req.on('end', () => {
      if (refused) return;
      const body = Buffer.concat(chunks).toString('utf8');
      chunks.length = 0;
      release();
      try {
        answer(body, res, started);
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'webhook: review failed');
        reply(res, 500, 'internal error\n');
      }
    });
  }

  function answer(body: string, res: ServerResponse, started: number): void {
    const read = readAdmissionReview(body);
    if (!read.ok) {
      reply(res, 400, `${read.message}\n`);
      return;
    }
    const req = read.request;
    const send = (r: AdmissionResponse) => reply(res, 200, admissionReviewResponse(req.uid, r), 'application/json');
    if (req.kind.group !== 'networking.k8s.io' || req.kind.kind !== 'Ingress' || req.kind.version !== 'v1') {
      send({ allowed: false, code: 400, message: `ingress-rx reviews networking.k8s.io/v1 Ingresses, not ${req.kind.group || 'core'}/${req.kind.version} ${req.kind.kind}` });
      return;
    }
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') {
      send({ allowed: true });
      return;
    }
    const parsed = ingressOf(req);
    if (!parsed.ok) {
      send({ allowed: false, code: 400, message: parsed.message });
      return;
    }
    const ing = parsed.ingress;
    const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
    if (ing.metadata.deletionTimestamp) {
      send({ allowed: true });
      return;
    }
    if (opts.ready && !opts.ready()) {
      send({ allowed: false, code: 503, message: 'ingress-rx is starting and has not read the cluster yet; retry in a few seconds' });
      return;
    }
    const result = opts.reviewer.review(ing);
    const denials = result.findings.filter((f) => f.severity === 'deny');
    const warnings = result.findings.filter((f) => f.severity === 'warn');
    send(result.allowed
      ? { allowed: true, warnings: warningLines(warnings) }
      : { allowed: false, code: 400, message: denialMessage(key, denials), warnings: warningLines(warnings) });
    const ms = performance.now() - started;
    opts.metrics?.observe(ing.metadata.namespace ?? '', ing.metadata.name, result, ms);
    if (result.served) {
      logger.info({ ingress: key, operation: req.operation, allowed: result.allowed, denials: denials.length, warnings: warnings.length, tested: result.tested, ms: Math.round(ms * 10) / 10 },
        result.allowed ? 'webhook: Ingress accepted' : `webhook: Ingress refused: ${denials.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
    }
  }

  const certTimer = setInterval(() => {
    try {
      const next = readKeyPair(opts.certFile, opts.keyFile);
      if (next.digest === pair.digest) return;
      server.setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
      pair = next;
      logger.info('webhook: certificate reloaded');
    } catch (err) {
      // Mid-rotation the two files can disagree for a moment: keep serving the previous pair.
      logger.warn({ err: (err as Error).message }, 'webhook: certificate files unreadable or mismatched; keeping the previous ones');
    }
  }, opts.certCheckIntervalMs ?? 10_000);
  certTimer.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  logger.info({ address: opts.address, port: boundPort }, 'validating webhook listening');
  return {
    server,
    port: boundPort,
    inFlightBytes: () => inFlight,
    close: () => new Promise<void>((resolve) => {
      clearInterval(certTimer);
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
