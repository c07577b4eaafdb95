// A backend that fails on purpose and counts the tries it gets, for retry tests (the Gateway API
// conformance suite's retry simulation, in our own form). A request names its own counter with
// `?uuid=` and asks to fail its first `succeedAfter` tries: with the status `responseCode`, or,
// without one, by resetting the connection (TCP RST); `delayMs` waits that long before failing.
// The try after those answers 200 with JSON {name, path, method, tries, protocol, headers, body}. It speaks HTTP/1.1 and, with
// `h2c`, HTTP/2 cleartext (prior knowledge) on the same port.
import { createServer as createH1, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createH2c, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';

export interface FlakyServer {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  /** The tries the counter `uuid` got so far. */
  tries(uuid: string): number;
  close(): Promise<void>;
}

export async function startFlakyServer(opts: { address: string; name: string; h2c?: boolean }): Promise<FlakyServer> {
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://flaky');
    const uuid = url.searchParams.get('uuid') ?? '';
    const tries = (counts.get(uuid) ?? 0) + 1;
    counts.set(uuid, tries);
    const succeedAfter = Number(url.searchParams.get('succeedAfter') ?? 0);
    let body = '';
    const answer = () => {
      if (tries <= succeedAfter) {
        const code = Number(url.searchParams.get('responseCode') ?? 0);
        if (code > 0) {
          res.writeHead(code, { 'content-type': 'text/plain' });
          res.end(`failing try ${tries} of ${uuid}\n`);
        } else if ('stream' in req) {
          req.stream.close(2); // HTTP/2: the stream reset with INTERNAL_ERROR
        } else {
          (req.socket as Socket).resetAndDestroy();
        }
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: opts.name, path: req.url, method: req.method, tries, protocol: req.httpVersion, headers: req.headers, body }));
    };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      body = Buffer.concat(chunks).toString('utf8');
      const delay = Number(url.searchParams.get('delayMs') ?? 0);
      if (tries <= succeedAfter && delay > 0) setTimeout(answer, delay);
      else answer();
    });
  };
  const server = opts.h2c ? createH2c({}, handle) : createH1(handle);
  server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, opts.address, resolve));
  return {
    name: opts.name,
    address: opts.address,
    port: (server.address() as AddressInfo).port,
    tries: (uuid) => counts.get(uuid) ?? 0,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
