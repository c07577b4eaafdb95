// The validating webhook's HTTPS server (--validating-webhook): reads AdmissionReviews with bounded
// bodies and time limits on every phase (TLS handshake, headers, body), reviews Ingresses (and
// HTTPRoutes and Gateways) with ./review.ts and answers. The port takes unauthenticated
// connections, so no client can take it whole: connections and bytes in flight are bounded per client (its address) as well as in all,
// and when everything is taken, the client holding the most gives way to one holding less; the
// reviews that arrived are answered one at a time, next the client whose reviews took least. The certificate and key
// files are re-read when they change (cert-manager and Secret volume rotation), without a restart.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../log.js';
import {
  MAX_OBJECT_BYTES, admissionReviewResponse, denialMessage, gatewayObjectOf, ingressOf, readAdmissionReview, warningLines, type AdmissionResponse, type AdmissionRequest,
} from './admission-review.js';
import type { AdmissionMetrics } from './metrics.js';
import type { Finding, ReviewResult, Reviewer } from './review.js';

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
  /** The largest body: what the API server can send (an object and its old version, each at most MAX_OBJECT_BYTES). */
  maxBodyBytes?: number;
  /** Bodies of all requests in flight (read or waiting for review) together. */
  maxInFlightBytes?: number;
  /** Bodies of one client's requests in flight together. */
  maxInFlightBytesPerClient?: number;
  handshakeTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** The whole request (headers and body) must arrive within this. */
  requestTimeoutMs?: number;
  /** An idle kept-alive connection is closed after this. */
  keepAliveTimeoutMs?: number;
  /** How often Node checks the two timeouts above. */
  timeoutCheckIntervalMs?: number;
  /** Connections in all. */
  maxConnections?: number;
  /** Connections of one client (one address). */
  maxConnectionsPerClient?: number;
  /** How often the certificate and key files are checked for a change. */
  certCheckIntervalMs?: number;
}

export interface WebhookServer {
  server: Server;
  port: number;
  /** Request body bytes held right now (bounded by maxInFlightBytes). */
  inFlightBytes(): number;
  /** Connections open right now (bounded by maxConnections). */
  connections(): number;
  close(): Promise<void>;
}

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const NOT_READY = 'ingress-rx is starting and has not read the cluster yet; retry in a few seconds';

/** An object and its old version (an UPDATE), each as large as the API server sends, and the review around them. */
export const DEFAULT_MAX_BODY_BYTES = 2 * MAX_OBJECT_BYTES + 256 * 1024;

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

/** A connection, known by its remote address and port (the TLS socket a request arrives on has the same). */
interface Connection { socket: Socket; client: Client; opened: number; busy: number }
/** A request whose body is being read or waits for its review. */
interface Pending { client: Client; bytes: number; refuse(status: number, text: string): void }
interface Client {
  address: string; connections: Set<Connection>; inFlight: number; queue: Job[]; pending: Set<Pending>;
  /** Time its reviews took (ms): the next turn goes to the waiting client that used the least. */
  used: number;
}
interface Job { body: string; req: IncomingMessage; res: ServerResponse; started: number; done(): void }

export async function startWebhookServer(opts: WebhookServerOptions): Promise<WebhookServer> {
  const { logger } = opts;
  const { host, port } = parseListenAddress(opts.address);
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const maxInFlight = opts.maxInFlightBytes ?? 10 * maxBody;
  const maxInFlightPerClient = opts.maxInFlightBytesPerClient ?? Math.min(maxInFlight, 2 * maxBody);
  const maxConnections = opts.maxConnections ?? 1024;
  const maxPerClient = opts.maxConnectionsPerClient ?? 64;
  const requestTimeout = opts.requestTimeoutMs ?? 15_000;
  let inFlight = 0;
  let pair = readKeyPair(opts.certFile, opts.keyFile);
  const clients = new Map<string, Client>();
  const connections = new Map<string, Connection>();
  /** Clients with reviews waiting. */
  const waiting = new Set<Client>();
  let running = false;
  /** The `used` of the client served last (start-time fair queueing's virtual time). */
  let served = 0;

  const server = createServer({
    cert: pair.cert, key: pair.key,
    minVersion: 'TLSv1.2',
    handshakeTimeout: opts.handshakeTimeoutMs ?? 5_000,
    headersTimeout: opts.headersTimeoutMs ?? 5_000,
    requestTimeout,
    connectionsCheckingInterval: opts.timeoutCheckIntervalMs ?? 1_000,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? 30_000,
  }, (req, res) => handle(req, res));
  // A client that stops reading its answer, or opens a connection and says nothing, is dropped too.
  server.setTimeout(requestTimeout, (socket) => socket.destroy());
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'webhook: TLS client error'));

  const connectionKey = (s: { remoteAddress?: string; remotePort?: number }) => `${s.remoteAddress ?? ''}\0${s.remotePort ?? 0}`;

  function clientOf(address: string): Client {
    let c = clients.get(address);
    if (!c) clients.set(address, (c = { address, connections: new Set(), inFlight: 0, queue: [], pending: new Set(), used: 0 }));
    return c;
  }

  function forget(c: Client): void {
    if (c.connections.size === 0 && c.pending.size === 0 && c.queue.length === 0 && !waiting.has(c)) clients.delete(c.address);
  }

  /** The client's oldest connection doing nothing, if any. */
  function idleOf(c: Client): Connection | undefined {
    let idle: Connection | undefined;
    for (const conn of c.connections) if (conn.busy === 0 && (!idle || conn.opened < idle.opened)) idle = conn;
    return idle;
  }

  server.on('connection', (socket: Socket) => {
    const client = clientOf(socket.remoteAddress ?? '');
    // At its own limit, a client's new connection replaces its oldest idle one.
    if (client.connections.size >= maxPerClient) {
      const idle = idleOf(client);
      if (!idle) { socket.destroy(); forget(client); return; }
      idle.socket.destroy();
    } else if (connections.size >= maxConnections) {
      // Every connection taken: the client holding the most gives way, if it holds more than this one.
      let biggest: Client | null = null;
      for (const c of clients.values()) if (c !== client && (!biggest || c.connections.size > biggest.connections.size)) biggest = c;
      const victim = biggest && biggest.connections.size > client.connections.size + 1 ? idleOf(biggest) ?? [...biggest.connections].at(-1) : undefined;
      if (!victim) { socket.destroy(); forget(client); return; }
      victim.socket.destroy();
    }
    const conn: Connection = { socket, client, opened: performance.now(), busy: 0 };
    const key = connectionKey(socket);
    connections.set(key, conn);
    client.connections.add(conn);
    socket.once('close', () => {
      if (connections.get(key) === conn) connections.delete(key);
      client.connections.delete(conn);
      forget(client);
    });
  });

  function reply(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  /** The answer goes out and the connection closes once the client stops sending (closing with unread data would lose the answer). */
  function replyAndClose(req: IncomingMessage, res: ServerResponse, status: number, text: string): void {
    res.setHeader('connection', 'close');
    res.once('finish', () => req.socket.end());
    reply(res, status, text);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const conn = connections.get(connectionKey(req.socket));
    const client = conn?.client ?? clientOf(req.socket.remoteAddress ?? '');
    if (conn) {
      conn.busy++;
      res.once('close', () => { conn.busy--; });
    }
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
      replyAndClose(req, res, 413, `request body over ${maxBody} bytes\n`);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let refused = false;
    const pending: Pending = {
      client, bytes: 0,
      refuse(status, text) {
        if (refused) return;
        refused = true;
        release();
        chunks.length = 0;
        replyAndClose(req, res, status, text);
      },
    };
    const release = () => {
      inFlight -= pending.bytes;
      client.inFlight -= pending.bytes;
      pending.bytes = 0;
      client.pending.delete(pending);
      forget(client);
    };
    client.pending.add(pending);
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      if (pending.bytes + chunk.length > maxBody) return pending.refuse(413, `request body over ${maxBody} bytes\n`);
      if (client.inFlight + chunk.length > maxInFlightPerClient) return pending.refuse(503, 'too many large reviews in flight from this address; retry\n');
      if (inFlight + chunk.length > maxInFlight && !makeRoom(client, chunk.length)) return pending.refuse(503, 'too many large reviews in flight; retry\n');
      pending.bytes += chunk.length;
      client.inFlight += chunk.length;
      inFlight += chunk.length;
      chunks.push(chunk);
    });
    req.on('error', () => { if (!refused) release(); });
    req.on('close', () => { if (!refused && !req.complete) release(); });
    req.on('end', () => {
      if (refused) return;
      const body = Buffer.concat(chunks).toString('utf8');
      chunks.length = 0;
      // Its bytes stay counted until it is reviewed: waiting reviews are bounded too. While it
      // waits its turn the connection is quiet, which is no reason to drop it.
      req.socket.setTimeout(0);
      enqueue(client, { body, req, res, started, done: release });
    });
  }

  /**
   * Every byte in flight is taken: the biggest body of a client holding more than `client` (and
   * more than it asks for) is refused, so that a client holding little is never shut out.
   */
  function makeRoom(client: Client, bytes: number): boolean {
    while (inFlight + bytes > maxInFlight) {
      let biggest: Client | null = null;
      for (const c of clients.values()) if (c !== client && c.pending.size > 0 && (!biggest || c.inFlight > biggest.inFlight)) biggest = c;
      if (!biggest || biggest.inFlight <= client.inFlight + bytes) return false;
      let victim: Pending | null = null;
      for (const p of biggest.pending) if (!victim || p.bytes > victim.bytes) victim = p;
      victim!.refuse(503, 'too many large reviews in flight; this address holds the most; retry\n');
    }
    return true;
  }

  function enqueue(client: Client, job: Job): void {
    client.queue.push(job);
    if (!waiting.has(client)) {
      // Time spent waiting for nothing earns no credit: it starts level with the review last served.
      client.used = Math.max(client.used, served);
      waiting.add(client);
    }
    if (!running) {
      running = true;
      setImmediate(next);
    }
  }

  /**
   * One review, of the waiting client whose reviews took the least time so far, then the next
   * (other connections are read in between): a client sending costly reviews without pause
   * delays another's by one review at most.
   */
  function next(): void {
    let client: Client | null = null;
    for (const c of waiting) if (!client || c.used < client.used) client = c;
    if (!client) { running = false; return; }
    served = client.used;
    const job = client.queue.shift()!;
    if (client.queue.length === 0) waiting.delete(client);
    const t0 = performance.now();
    job.req.socket.setTimeout(requestTimeout);
    try {
      // Its client went away, or it was refused to make room, while it waited; past the request
      // timeout the API server has stopped waiting for it too.
      if (job.res.destroyed || job.res.headersSent) { /* nothing to answer */ }
      else if (performance.now() - job.started > requestTimeout) reply(job.res, 503, 'waited too long for its turn; retry\n');
      else answer(job.body, job.res, job.started);
    } catch (err) {
      // A review that throws is a bug of ours: the object is denied with the reason, never a 500.
      logger.error({ err: (err as Error).message, stack: (err as Error).stack }, 'webhook: review failed');
      reply(job.res, 200, admissionReviewResponse(uidOf(job.body), { allowed: false, code: 400, message: `ingress-rx could not review this object: ${(err as Error).message}` }), 'application/json');
    } finally {
      client.used += performance.now() - t0;
      job.done();
    }
    setImmediate(next);
  }

  function answer(body: string, res: ServerResponse, started: number): void {
    const read = readAdmissionReview(body);
    if (!read.ok) {
      reply(res, 400, `${read.message}\n`);
      return;
    }
    const req = read.request;
    const send = (r: AdmissionResponse) => reply(res, 200, admissionReviewResponse(req.uid, r), 'application/json');
    const gatewayKind = req.kind.group === GATEWAY_GROUP && req.kind.version === 'v1' && (req.kind.kind === 'HTTPRoute' || req.kind.kind === 'Gateway') && opts.reviewer.reviewGatewayAPI
      ? req.kind.kind : null;
    if (!gatewayKind && (req.kind.group !== 'networking.k8s.io' || req.kind.kind !== 'Ingress' || req.kind.version !== 'v1')) {
      send({ allowed: false, code: 400, message: `ingress-rx reviews networking.k8s.io/v1 Ingresses${opts.reviewer.reviewGatewayAPI ? ` and ${GATEWAY_GROUP}/v1 HTTPRoutes and Gateways` : ''}, not ${req.kind.group || 'core'}/${req.kind.version} ${req.kind.kind}` });
      return;
    }
    if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') {
      send({ allowed: true });
      return;
    }
    if (gatewayKind) {
      reviewGatewayAPI(req, gatewayKind, body, send);
      return;
    }
    const parsed = ingressOf(req, Buffer.byteLength(body));
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
      send({ allowed: false, code: 503, message: NOT_READY });
      return;
    }
    const result = opts.reviewer.review(ing);
    const { denials, warnings } = sendVerdict(send, key, 'Ingress', result);
    const ms = performance.now() - started;
    opts.metrics?.observe(ing.metadata.namespace ?? '', ing.metadata.name, result, ms);
    if (result.served) {
      logger.info({ ingress: key, operation: req.operation, allowed: result.allowed, denials: denials.length, warnings: warnings.length, tested: result.tested, ms: Math.round(ms * 10) / 10 },
        result.allowed ? 'webhook: Ingress accepted' : `webhook: Ingress refused: ${denials.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
    }
  }

  /** An HTTPRoute or a Gateway: reviewed as an Ingress is; the per-Ingress check counters do not count it. */
  function reviewGatewayAPI(req: AdmissionRequest, kind: 'HTTPRoute' | 'Gateway', body: string, send: (r: AdmissionResponse) => void): void {
    const parsed = gatewayObjectOf(req, kind, Buffer.byteLength(body));
    if (!parsed.ok) {
      send({ allowed: false, code: 400, message: parsed.message });
      return;
    }
    const { metadata } = parsed.value.object;
    if (metadata.deletionTimestamp) {
      send({ allowed: true });
      return;
    }
    if (opts.ready && !opts.ready()) {
      send({ allowed: false, code: 503, message: NOT_READY });
      return;
    }
    const key = `${metadata.namespace}/${metadata.name}`;
    const result = opts.reviewer.reviewGatewayAPI!(parsed.value);
    const { denials, warnings } = sendVerdict(send, key, kind, result);
    if (result.served) {
      logger.info({ [kind === 'HTTPRoute' ? 'httproute' : 'gateway']: key, operation: req.operation, allowed: result.allowed, denials: denials.length, warnings: warnings.length, tested: result.tested },
        result.allowed ? `webhook: ${kind} accepted` : `webhook: ${kind} refused: ${denials.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
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
    connections: () => connections.size,
    close: () => new Promise<void>((resolve) => {
      clearInterval(certTimer);
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/** Answers with the review's verdict: allowed with its warnings, or denied naming each denial. */
function sendVerdict(send: (r: AdmissionResponse) => void, key: string, kind: string, result: ReviewResult): { denials: Finding[]; warnings: Finding[] } {
  const denials = result.findings.filter((f) => f.severity === 'deny');
  const warnings = result.findings.filter((f) => f.severity === 'warn');
  send(result.allowed
    ? { allowed: true, warnings: warningLines(warnings) }
    : { allowed: false, code: 400, message: denialMessage(key, denials, kind), warnings: warningLines(warnings) });
  return { denials, warnings };
}

/** The uid of a review whose answer failed, so the API server can still match it (a body that got this far is an AdmissionReview). */
function uidOf(body: string): string {
  const read = readAdmissionReview(body);
  return read.ok ? read.request.uid : '';
}
