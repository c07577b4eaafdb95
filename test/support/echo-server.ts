// Small HTTP echo upstreams for NGINX tests: each listens on its own 127.0.0.x address and
// answers with its address, port, name, method, path, request headers and the body's length and
// SHA-256 as JSON. A few paths act like httpbin's: `/__status/<code>` answers that status,
// `/__bytes/<n>` n bytes, `/__content/<type>/<subtype>/<n>` n bytes of text of that content
// type, `/__header/<name>/<value>` adds that response header (value URL-encoded), and
// `/__delay/<ms>` answers after ms (each may sit anywhere in the path, after a prefix).
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { TLSSocket } from 'node:tls';
import { reservedPort } from './ports.js';

export interface EchoReply {
  name: string;
  address: string;
  port: number;
  method: string;
  path: string;
  /** The HTTP version the request arrived with (e.g. `1.1`). */
  proto: string;
  headers: IncomingHttpHeaders;
  /** The request body as it arrived: its length and SHA-256 (hex). */
  bodyBytes: number;
  bodySha256: string;
  /** Over HTTPS: the SNI the client sent ('' for none) and the CN of the client certificate it showed ('' for none). */
  tls?: { sni: string; clientCN: string };
}

export interface EchoServer {
  name: string;
  address: string;
  port: number;
  /** `address:port`, as a balancer sees the endpoint. */
  hostPort: string;
  /** The endpoint as the backends payload spells it. */
  endpoint: { address: string; port: string };
  /** Requests answered so far. */
  hits(): number;
  /** Delay every later answer by `ms` (a slow endpoint). */
  setDelay(ms: number): void;
  /**
   * A pod's graceful shutdown: new connections are refused at once, idle ones closed, answers in
   * progress still given (with `Connection: close`); resolves once no connection is left.
   */
  stopAccepting(): Promise<void>;
  close(): Promise<void>;
}

export interface EchoOptions {
  /** Loopback address to bind, 127.0.0.1 by default. */
  address?: string;
  /** 0 (any free port) by default; a fixed port lets two addresses share one port. */
  port?: number;
  name?: string;
  delayMs?: number;
  /** Serve HTTPS with this certificate and key (PEM); with `clientCA`, only to clients showing a certificate it signed. */
  tls?: { cert: string; key: string; clientCA?: string };
  /** The status of every answer whose path asks for none (`/__status/<code>`); 200 by default. */
  status?: number;
}

export async function startEchoServer(opts: EchoOptions = {}): Promise<EchoServer> {
  const address = opts.address ?? '127.0.0.1';
  let delayMs = opts.delayMs ?? 0;
  let hits = 0;
  let name = opts.name ?? address;
  let stopping: Promise<void> | null = null;
  let closed = false;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    hits += 1;
    const url = req.url ?? '';
    const hash = createHash('sha256');
    let bodyBytes = 0;
    const reply = (): void => {
      if (closed) return; // closed while this answer was delayed
      if (stopping) res.setHeader('connection', 'close');
      const bytes = /\/__bytes\/(\d+)/.exec(url);
      if (bytes) {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes[1], 'x-echo-name': name });
        res.end(Buffer.alloc(Number(bytes[1]), 'x'));
        return;
      }
      const content = /\/__content\/([a-z]+\/[a-z0-9.+-]+)\/(\d+)/.exec(url);
      if (content) {
        res.writeHead(200, { 'content-type': content[1], 'content-length': content[2], 'x-echo-name': name });
        res.end(Buffer.alloc(Number(content[2]), 'echo '));
        return;
      }
      const header = /\/__header\/([A-Za-z0-9-]+)\/([^/?]*)/.exec(url);
      if (header) res.setHeader(header[1]!, decodeURIComponent(header[2]!));
      const body: EchoReply = {
        name, address, port, method: req.method ?? '', path: url, proto: req.httpVersion, headers: req.headers, bodyBytes, bodySha256: hash.digest('hex'),
        ...(req.socket instanceof TLSSocket ? { tls: { sni: (req.socket as TLSSocket & { servername?: string | false }).servername || '', clientCN: String(req.socket.getPeerCertificate()?.subject?.CN ?? '') } } : {}),
      };
      const text = JSON.stringify(body);
      const status = Number(/\/__status\/(\d{3})/.exec(url)?.[1] ?? opts.status ?? 200);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-echo-name': name, server: 'echo' });
      res.end(text);
    };
    const delay = Number(/\/__delay\/(\d+)/.exec(url)?.[1] ?? delayMs);
    req.on('data', (d: Buffer) => { hash.update(d); bodyBytes += d.length; });
    req.on('end', () => (delay > 0 ? setTimeout(reply, delay) : reply()));
  };
  let port = 0;
  // Headers as large as NGINX passes with its largest buffers (Node's own limit is 16 KB).
  const maxHeaderSize = 64 * 1024;
  const clientAuth = opts.tls?.clientCA ? { ca: opts.tls.clientCA, requestCert: true, rejectUnauthorized: true } : {};
  const server: Server = opts.tls ? createTlsServer({ cert: opts.tls.cert, key: opts.tls.key, maxHeaderSize, ...clientAuth }, handler) : createServer({ maxHeaderSize }, handler);
  server.keepAliveTimeout = 1000;
  // Port 0: the kernel picks a free port on this address atomically, with no reuse race. It may
  // be a port a controller of a test listens on at 127.0.0.1, and the address policy refuses
  // loopback endpoints at the controller's own ports: such a port is given back.
  for (;;) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, address, () => resolve());
    });
    port = (server.address() as AddressInfo).port;
    if (opts.port !== undefined || !reservedPort(port)) break;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  if (!opts.name) name = `${address}:${port}`;
  return {
    name,
    address,
    port,
    hostPort: `${address}:${port}`,
    endpoint: { address, port: String(port) },
    hits: () => hits,
    setDelay: (ms) => { delayMs = ms; },
    stopAccepting: () => {
      stopping ??= new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return stopping;
    },
    close: () => new Promise<void>((resolve) => {
      closed = true;
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** `n` echo servers on 127.0.0.<first>, 127.0.0.<first+1>, ... */
export async function startEchoServers(n: number, opts: { firstOctet?: number; delayMs?: number } = {}): Promise<EchoServer[]> {
  const first = opts.firstOctet ?? 2;
  return Promise.all(Array.from({ length: n }, (_, i) => startEchoServer({ address: `127.0.0.${first + i}`, delayMs: opts.delayMs })));
}

export async function closeAll(servers: EchoServer[]): Promise<void> {
  await Promise.all(servers.map((s) => s.close()));
}
