// Requests and upstreams below the HTTP libraries, for what they would refuse to send or hide:
// an HTTP/1.1 request written byte for byte and its answer read as bytes, an HTTP/2 request over
// TLS (ALPN h2) whose header values are sent as given (HPACK literals, no Huffman), and an upstream
// that records the bytes NGINX sent it.
import { connect as netConnect, createServer, type AddressInfo, type Server } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface RawReply {
  /** Everything the server sent, as latin1. */
  raw: string;
  status: number;
  /** Header lines as sent (name and value split at the first `:`), in order. */
  headers: Array<[string, string]>;
  /** Bytes after the header block. */
  body: string;
}

/** Reads an HTTP/1.x answer: status, header lines, the rest. */
export function parseRawReply(raw: string): RawReply {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = lines.map((l): [string, string] => {
    const colon = l.indexOf(':');
    return colon < 0 ? [l, ''] : [l.slice(0, colon).trim(), l.slice(colon + 1).trim()];
  });
  return { raw, status: Number(/^HTTP\/\d\.\d (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

/** Sends `request` (latin1 bytes, sent as they are) to 127.0.0.1:port and reads until the server closes. */
export function rawHttp1(port: number, request: string, timeoutMs = 10_000): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const s = netConnect(port, '127.0.0.1', () => s.write(Buffer.from(request, 'latin1')));
    const chunks: Buffer[] = [];
    s.setTimeout(timeoutMs, () => s.destroy(new Error('raw HTTP/1.1 request timed out')));
    s.on('data', (d) => chunks.push(d));
    s.on('error', reject);
    s.on('close', () => resolve(parseRawReply(Buffer.concat(chunks).toString('latin1'))));
  });
}

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream, 5);
  return Buffer.concat([h, payload]);
}

/** An HPACK string literal, no Huffman (lengths up to 126, enough for a test). */
function hpackString(s: string): Buffer {
  const b = Buffer.from(s, 'latin1');
  if (b.length > 126) throw new Error('HPACK literal too long for this encoder');
  return Buffer.concat([Buffer.from([b.length]), b]);
}

export interface RawHttp2Outcome {
  /** RST_STREAM or GOAWAY: the server refused the request as malformed. */
  reset: boolean;
  /** The :status of a HEADERS frame answering stream 1 (0 when none came). */
  status: number;
}

/**
 * One HTTP/2 GET over TLS with ALPN h2 whose pseudo-headers and headers are sent as HPACK
 * literals exactly as given, bytes a library would refuse included. Only the answer's status is
 * decoded (a static-table index, as NGINX sends common ones, or a literal).
 */
export function rawHttp2(port: number, authority: string, path: string, headers: Array<[string, string]> = []): Promise<RawHttp2Outcome> {
  const literal = (n: string, v: string) => Buffer.concat([Buffer.from([0x00]), hpackString(n), hpackString(v)]);
  const block = Buffer.concat([literal(':method', 'GET'), literal(':scheme', 'https'), literal(':path', path), literal(':authority', authority),
    ...headers.map(([n, v]) => literal(n, v))]);
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ port, host: '127.0.0.1', servername: authority, ALPNProtocols: ['h2'], rejectUnauthorized: false }, () => {
      if (s.alpnProtocol !== 'h2') { s.destroy(); reject(new Error(`no h2 (${String(s.alpnProtocol)})`)); return; }
      s.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), frame(4, 0, 0, Buffer.alloc(0)), frame(1, 0x5, 1, block)]));
    });
    let buf = Buffer.alloc(0);
    const outcome: RawHttp2Outcome = { reset: false, status: 0 };
    const done = () => { s.destroy(); resolve(outcome); };
    s.setTimeout(10_000, () => { s.destroy(); reject(new Error('raw HTTP/2 request timed out')); });
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 9) {
        const len = buf.readUIntBE(0, 3);
        if (buf.length < 9 + len) break;
        const type = buf[3]!;
        const stream = buf.readUInt32BE(5) & 0x7fffffff;
        const payload = buf.subarray(9, 9 + len);
        buf = buf.subarray(9 + len);
        if ((type === 3 && stream === 1) || type === 7) { outcome.reset = true; return done(); }
        if (type === 1 && stream === 1) {
          // HPACK static table: 8 = 200, 9 = 204, 10 = 206, 11 = 304, 12 = 400, 13 = 404, 14 = 500.
          const first = payload[0]!;
          const indexed: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };
          if (first & 0x80) outcome.status = indexed[first & 0x7f] ?? 0;
          else if ((first & 0xf0) === 0 || (first & 0xc0) === 0x40) {
            // A literal with an indexed name (:status is index 8): its value follows as a string.
            const vlen = payload[1]! & 0x7f;
            outcome.status = Number(payload.subarray(2, 2 + vlen).toString('latin1')) || 0;
          }
          return done();
        }
      }
    });
  });
}

export interface RecordingUpstream {
  address: string;
  port: number;
  /** The raw bytes of each request received, in order (latin1). */
  requests: string[];
  close(): Promise<void>;
}

/** An upstream that records each request's bytes and answers `status` (200) with `{"name": name}`. */
export function startRecordingUpstream(address: string, name: string, status = 200): Promise<RecordingUpstream> {
  const requests: string[] = [];
  const server: Server = createServer((c) => {
    let got = '';
    c.on('data', (d) => {
      got += d.toString('latin1');
      if (!got.includes('\r\n\r\n')) return;
      requests.push(got);
      const body = JSON.stringify({ name });
      c.end(`HTTP/1.1 ${status} ${status === 200 ? 'OK' : 'No'}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
    c.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, address, () => {
    resolve({
      address, port: (server.address() as AddressInfo).port, requests,
      close: () => new Promise<void>((r) => server.close(() => r())),
    });
  }));
}
