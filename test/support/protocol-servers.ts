// Upstreams speaking what backend-protocol names besides HTTP(S): a gRPC server (@grpc/grpc-js,
// cleartext or TLS) with a gRPC client of it through NGINX's HTTPS port, and a FastCGI responder
// answering what it received as JSON.
import * as grpc from '@grpc/grpc-js';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';

export interface ProtocolServer {
  address: string;
  port: number;
  close(): Promise<void>;
}

// Messages are JSON: the methods need no .proto, and a reply shows what the server received.
type Json = Record<string, unknown>;
const toBuffer = (v: Json): Buffer => Buffer.from(JSON.stringify(v));
const fromBuffer = (b: Buffer): Json => JSON.parse(b.toString()) as Json;
const method = (name: string, requestStream: boolean, responseStream: boolean) => ({
  path: `/echo.Echo/${name}`, requestStream, responseStream,
  requestSerialize: toBuffer, requestDeserialize: fromBuffer, responseSerialize: toBuffer, responseDeserialize: fromBuffer,
});

/**
 * echo.Echo: Say (unary: the server's name, the call's path and metadata, the request), Count
 * (server streaming: `n` messages), Sum (client streaming: the sum of the messages' `n`) and Fail
 * (unary: NOT_FOUND with the request's `message`).
 */
const ECHO_SERVICE = {
  say: method('Say', false, false),
  count: method('Count', false, true),
  sum: method('Sum', true, false),
  fail: method('Fail', false, false),
} satisfies grpc.ServiceDefinition;

export async function startGrpcServer(opts: { address: string; name: string; tls?: { cert: string; key: string } }): Promise<ProtocolServer> {
  const server = new grpc.Server();
  server.addService(ECHO_SERVICE, {
    say: (call: grpc.ServerUnaryCall<Json, Json>, done: grpc.sendUnaryData<Json>) => {
      done(null, { name: opts.name, path: call.getPath(), metadata: call.metadata.getMap(), request: call.request });
    },
    count: (call: grpc.ServerWritableStream<Json, Json>) => {
      for (let i = 0; i < Number(call.request.n); i += 1) call.write({ i, name: opts.name });
      call.end();
    },
    sum: (call: grpc.ServerReadableStream<Json, Json>, done: grpc.sendUnaryData<Json>) => {
      let total = 0;
      let messages = 0;
      call.on('data', (m: Json) => { total += Number(m.n); messages += 1; });
      call.on('end', () => done(null, { name: opts.name, total, messages }));
    },
    fail: (call: grpc.ServerUnaryCall<Json, Json>, done: grpc.sendUnaryData<Json>) => {
      done({ code: grpc.status.NOT_FOUND, details: String(call.request.message) });
    },
  });
  const credentials = opts.tls
    ? grpc.ServerCredentials.createSsl(null, [{ private_key: Buffer.from(opts.tls.key), cert_chain: Buffer.from(opts.tls.cert) }], false)
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${opts.address}:0`, credentials, (err, bound) => (err ? reject(err) : resolve(bound)));
  });
  return { address: opts.address, port, close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())) };
}

/** A client of echo.Echo: each call resolves with its messages or rejects with the gRPC error (its `code`, `details`). */
export interface EchoClient {
  say(request: Json, metadata?: Record<string, string>): Promise<Json>;
  count(n: number): Promise<Json[]>;
  sum(ns: number[]): Promise<Json>;
  fail(message: string): Promise<Json>;
  close(): void;
}

/** An echo.Echo client over HTTP/2 with TLS to `port` (NGINX's HTTPS listener), SNI and `:authority` `host`. */
export function grpcClient(port: number, host: string): EchoClient {
  const Client = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo');
  // The default certificate is self-signed: the client trusts what NGINX presents.
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false }), {
    'grpc.ssl_target_name_override': host, 'grpc.default_authority': host,
  }) as unknown as Record<string, (...args: unknown[]) => grpc.ClientReadableStream<Json> & grpc.ClientWritableStream<Json>> & grpc.Client;
  const unary = (name: string, request: Json, metadata: Record<string, string> = {}) => new Promise<Json>((resolve, reject) => {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(metadata)) md.set(k, v);
    client[name]!(request, md, (err: grpc.ServiceError | null, reply: Json) => (err ? reject(err) : resolve(reply)));
  });
  return {
    say: (request, metadata) => unary('say', request, metadata),
    fail: (message) => unary('fail', { message }),
    count: (n) => new Promise((resolve, reject) => {
      const out: Json[] = [];
      const call = client.count!({ n });
      call.on('data', (m: Json) => out.push(m));
      call.on('error', reject);
      call.on('end', () => resolve(out));
    }),
    sum: (ns) => new Promise((resolve, reject) => {
      const call = client.sum!((err: grpc.ServiceError | null, reply: Json) => (err ? reject(err) : resolve(reply)));
      for (const n of ns) call.write({ n });
      call.end();
    }),
    close: () => client.close(),
  };
}

// ---- FastCGI (the responder role; records as the FastCGI 1.0 specification lays them out)

const FCGI_BEGIN_REQUEST = 1;
const FCGI_END_REQUEST = 3;
const FCGI_PARAMS = 4;
const FCGI_STDIN = 5;
const FCGI_STDOUT = 6;

function record(type: number, id: number, content: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt8(1, 0);
  head.writeUInt8(type, 1);
  head.writeUInt16BE(id, 2);
  head.writeUInt16BE(content.length, 4);
  return Buffer.concat([head, content]);
}

function readLength(buf: Buffer, at: number): [number, number] {
  const first = buf[at]!;
  return first < 0x80 ? [first, at + 1] : [buf.readUInt32BE(at) & 0x7fffffff, at + 4];
}

function parseParams(buf: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < buf.length) {
    const [nameLength, a] = readLength(buf, at);
    const [valueLength, b] = readLength(buf, a);
    out[buf.subarray(b, b + nameLength).toString()] = buf.subarray(b + nameLength, b + nameLength + valueLength).toString();
    at = b + nameLength + valueLength;
  }
  return out;
}

/** A FastCGI responder answering 200 with the request's params as JSON. */
export async function startFastCgiServer(opts: { address: string; name: string }): Promise<ProtocolServer> {
  const server: TcpServer = createTcpServer((socket: Socket) => {
    let pending = Buffer.alloc(0);
    let params = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      pending = Buffer.concat([pending, d]);
      while (pending.length >= 8) {
        const type = pending[1]!;
        const id = pending.readUInt16BE(2);
        const length = pending.readUInt16BE(4);
        const padding = pending[6]!;
        if (pending.length < 8 + length + padding) return;
        const content = pending.subarray(8, 8 + length);
        pending = pending.subarray(8 + length + padding);
        if (type === FCGI_BEGIN_REQUEST) params = Buffer.alloc(0);
        else if (type === FCGI_PARAMS) params = Buffer.concat([params, content]);
        else if (type === FCGI_STDIN && length === 0) {
          const body = JSON.stringify({ name: opts.name, params: parseParams(params) });
          const stdout = Buffer.from(`Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
          socket.end(Buffer.concat([
            record(FCGI_STDOUT, id, stdout), record(FCGI_STDOUT, id, Buffer.alloc(0)), record(FCGI_END_REQUEST, id, Buffer.alloc(8)),
          ]));
        }
      }
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, opts.address, resolve));
  return {
    address: opts.address,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
