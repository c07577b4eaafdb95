// Upstreams speaking what backend-protocol names besides HTTP(S): a gRPC server (HTTP/2,
// cleartext or TLS) and a FastCGI responder, each answering what it received as JSON, and a
// gRPC client call through NGINX's HTTPS port.
import { connect, createSecureServer, createServer as createH2Server, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';

export interface ProtocolServer {
  address: string;
  port: number;
  close(): Promise<void>;
}

/** One gRPC message frame: flag 0 (not compressed), big-endian length, payload. */
function grpcFrame(payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** A gRPC server answering every call with grpc-status 0 and a JSON message of the call's path and metadata. */
export async function startGrpcServer(opts: { address: string; name: string; tls?: { cert: string; key: string } }): Promise<ProtocolServer> {
  const server: Http2Server = opts.tls ? createSecureServer({ cert: opts.tls.cert, key: opts.tls.key }) : createH2Server();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    stream.resume();
    stream.on('end', () => {
      const body = Buffer.from(JSON.stringify({ name: opts.name, path: headers[':path'], headers }));
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': '' }));
      stream.end(grpcFrame(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, opts.address, resolve));
  return {
    address: opts.address,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface GrpcReply {
  status: number;
  grpcStatus: string | undefined;
  message: Record<string, unknown> | null;
}

/** A unary gRPC call over HTTP/2 with TLS to `port` (NGINX's HTTPS listener), SNI `host`. */
export function grpcCall(port: number, host: string, path: string, metadata: Record<string, string> = {}): Promise<GrpcReply> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://127.0.0.1:${port}`, { servername: host, rejectUnauthorized: false });
    session.on('error', reject);
    const req = session.request({
      ':method': 'POST', ':path': path, ':authority': host, 'content-type': 'application/grpc', te: 'trailers', ...metadata,
    });
    let status = 0;
    let grpcStatus: string | undefined;
    const chunks: Buffer[] = [];
    req.on('response', (h) => {
      status = Number(h[':status']);
      if (h['grpc-status'] !== undefined) grpcStatus = String(h['grpc-status']);
    });
    req.on('trailers', (t) => { if (t['grpc-status'] !== undefined) grpcStatus = String(t['grpc-status']); });
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('error', reject);
    req.on('end', () => {
      session.close();
      const all = Buffer.concat(chunks);
      const message = all.length >= 5 ? JSON.parse(all.subarray(5, 5 + all.readUInt32BE(1)).toString()) as Record<string, unknown> : null;
      resolve({ status, grpcStatus, message });
    });
    req.end(grpcFrame(Buffer.alloc(0)));
  });
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
