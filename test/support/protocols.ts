// One end-to-end behaviour over HTTP/1.1 and over HTTP/2 (TLS with ALPN h2) through the same
// NGINX: a test registered with `both` runs once per protocol, named `<name> [HTTP/1.1]` and
// `<name> [HTTP/2]`, and gets a client speaking that protocol whose replies look the same to the
// test (status, headers, body, backend). A request the HTTP/1.1 leg sends over plain HTTP goes
// over HTTPS on the HTTP/2 leg (a host without TLS gets the default certificate), since NGINX
// offers HTTP/2 only with TLS. A behaviour that exists only in HTTP/1.1 (the WebSocket upgrade,
// `Expect: 100-continue`, the plain-HTTP port itself) is registered with `http1Only`, one only
// HTTP/2 has (gRPC) with `http2Only`, each saying why.
// docs/fidelity.md's protocol column is read from these registrations (scripts/gen-docs.ts).
import { connect, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import { prefacedConnection, replyOf, tlsOptions, untilReply, type CliProcess, type Reply, type RequestOptions } from './local-harness.js';

export type Protocol = 'HTTP/1.1' | 'HTTP/2';
export const PROTOCOLS: readonly Protocol[] = ['HTTP/1.1', 'HTTP/2'];

export interface ProtocolClient {
  readonly protocol: Protocol;
  /** `h1` or `h2`: a short label for paths and names one run must not share with the other. */
  readonly tag: 'h1' | 'h2';
  /** The scheme and port a request without `https` reaches: plain HTTP for HTTP/1.1, HTTPS for HTTP/2. */
  readonly scheme: 'http' | 'https';
  readonly port: number;
  request(host: string, path: string, opts?: RequestOptions): Promise<Reply>;
  /** Waits until `check` holds for a reply over this protocol (as `LocalController.until`). */
  until(host: string, path: string, check: (r: Reply) => boolean, opts?: RequestOptions & { what?: string; timeoutMs?: number }): Promise<Reply>;
}

/** What a client needs of a running controller. */
export type Target = Pick<CliProcess, 'ports' | 'request' | 'workdir'>;

type Register = (name: string, fn: () => Promise<void>) => void;

// Headers HTTP/2 forbids (RFC 9113 8.2.2); `Host` travels as `:authority`.
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/** An HTTP/2 stream the server reset (RST_STREAM) or ended without an answer; `code` is the reset's error code. */
export class StreamReset extends Error {
  constructor(readonly code: number, what: string) {
    super(`HTTP/2 stream of ${what} ended without an answer (RST_STREAM code ${code})`);
  }
}

/**
 * One request over HTTP/2 to `port` (a TLS listener), SNI and `:authority` `host`, on its own
 * connection as the HTTP/1.1 helper's `Connection: close` request is. Fails when the server
 * does not choose h2, so an HTTP/2 leg never quietly runs over HTTP/1.1.
 */
export function http2Request(port: number, host: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const given = Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const);
    const authority = given.find(([k]) => k === 'host')?.[1] ?? host;
    const tls = { ALPNProtocols: ['h2'], ...tlsOptions(authority, opts) };
    const session = connect(`https://127.0.0.1:${port}`, {
      ...tls, rejectUnauthorized: opts.ca !== undefined,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      ...(opts.preface !== undefined ? { createConnection: () => prefacedConnection(port, opts.preface!, tls) } : {}),
    });
    const fail = (err: Error) => { session.destroy(); reject(err); };
    session.setTimeout(10_000, () => fail(new Error(`HTTP/2 request to ${host}${path} timed out`)));
    session.on('error', fail);
    session.on('connect', () => {
      if (session.alpnProtocol !== 'h2') fail(new Error(`NGINX chose ${String(session.alpnProtocol)}, not h2, for ${host}`));
    });
    const req = session.request({
      ':method': opts.method ?? 'GET', ':path': path, ':authority': authority, ':scheme': 'https',
      ...Object.fromEntries(given.filter(([k]) => !CONNECTION_HEADERS.has(k))),
    });
    let head: Http2Headers = {};
    let raw: string[] = [];
    const chunks: Buffer[] = [];
    req.on('response', (h: Http2Headers, _flags: number, rawHeaders: string[]) => {
      head = h;
      raw = rawHeaders.flatMap((v, i) => (i % 2 === 0 && !v.startsWith(':') ? [v, rawHeaders[i + 1]!] : []));
    });
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('error', (err: Error) => (head[':status'] === undefined ? undefined : fail(err)));
    req.on('close', () => {
      session.close();
      if (head[':status'] === undefined) fail(new StreamReset(req.rstCode ?? 0, `${host}${path}`));
      else resolve(replyOf(Number(head[':status']), Object.fromEntries(Object.entries(head).filter(([k]) => !k.startsWith(':'))), raw, chunks));
    });
    req.end(opts.body);
  });
}

/** A client of `target` speaking `protocol`; `sent()` counts its requests. */
export function protocolClient(target: Target, protocol: Protocol): ProtocolClient & { sent(): number } {
  let sent = 0;
  const request = (host: string, path: string, opts: RequestOptions = {}): Promise<Reply> => {
    sent += 1;
    if (protocol === 'HTTP/1.1') return target.request(host, path, opts);
    if (opts.port !== undefined && !opts.https) {
      throw new Error(`HTTP/2 needs TLS, and port ${opts.port} is asked for plain HTTP: send this request with the HTTP/1.1 client`);
    }
    return http2Request(opts.port ?? target.ports.https, host, path, opts);
  };
  return {
    protocol,
    tag: protocol === 'HTTP/1.1' ? 'h1' : 'h2',
    scheme: protocol === 'HTTP/1.1' ? 'http' : 'https',
    port: protocol === 'HTTP/1.1' ? target.ports.http : target.ports.https,
    request,
    until: (host, path, check, opts = {}) => untilReply(target.workdir, () => request(host, path, opts), check, { what: opts.what ?? `${host}${path}`, timeoutMs: opts.timeoutMs }),
    sent: () => sent,
  };
}

/**
 * Registration of end-to-end tests on `register` (uvu's `test` or a suite) against the
 * controller `target()` returns (one NGINX per file serves both protocols).
 */
export function protocolMatrix(register: Register, target: () => Target) {
  return {
    /** `fn` runs once per protocol; it must send at least one request through its client. */
    both(name: string, fn: (p: ProtocolClient) => Promise<void>): void {
      for (const protocol of PROTOCOLS) {
        register(`${name} [${protocol}]`, async () => {
          const p = protocolClient(target(), protocol);
          await fn(p);
          if (p.sent() === 0) throw new Error(`"${name}" runs over ${protocol} but sent no request through its protocol client`);
        });
      }
    },
    /** A behaviour only HTTP/1.1 has; `why` names it (it is printed in docs/fidelity.md). */
    http1Only(name: string, why: string, fn: (p: ProtocolClient) => Promise<void>): void {
      register(`${name} [HTTP/1.1 only: ${why}]`, () => fn(protocolClient(target(), 'HTTP/1.1')));
    },
    /** A behaviour only HTTP/2 has (gRPC); `why` names it. */
    http2Only(name: string, why: string, fn: (p: ProtocolClient) => Promise<void>): void {
      register(`${name} [HTTP/2 only: ${why}]`, () => fn(protocolClient(target(), 'HTTP/2')));
    },
    /** A check that sends no HTTP request (it reads the running nginx.conf, a TLS handshake, a log); `what` says what it reads. */
    noRequest(name: string, what: string, fn: () => Promise<void> | void): void {
      register(`${name} [no request: ${what}]`, async () => { await fn(); });
    },
  };
}
