// Constant load from Node clients on a list of (host, path): HTTP/1.1 on kept-alive connections,
// HTTP/1.1 with a new connection per request, and HTTP/2 over TLS (one session per host, as a
// browser keeps one). Every request is counted from its real answer, under the phase label that
// was current when it was sent: its status, its latency, or its error.
import { Agent, request, type ClientRequest } from 'node:http';
import { connect as http2Connect, constants, type ClientHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { Target } from './changes-scenario.js';

export type LoadClient = 'HTTP/1.1 keep-alive' | 'HTTP/1.1 new connection' | 'HTTP/2';
export const LOAD_CLIENTS: readonly LoadClient[] = ['HTTP/1.1 keep-alive', 'HTTP/1.1 new connection', 'HTTP/2'];

export interface Failure { client: LoadClient; phase: string; target: string; reason: string; atMs: number }

export interface PhaseCounts { requests: number; failures: number; latenciesMs: number[] }

export interface LoadOptions {
  ports: { http: number; https: number };
  targets: Target[];
  /** Loops per client (each keeps one request in flight). */
  concurrency: Record<LoadClient, number>;
}

export function startLoad(opts: LoadOptions) {
  const keepAlive = new Agent({ keepAlive: true, maxSockets: opts.concurrency['HTTP/1.1 keep-alive'] });
  const sessions = new Map<string, ClientHttp2Session>();
  let phase = 'start';
  let running = true;
  const t0 = performance.now();
  const counts = new Map<string, PhaseCounts>();
  const failures: Failure[] = [];
  /** Kept-alive sockets ever opened (each connection NGINX accepted for the keep-alive client). */
  const keepAliveSockets = new Set<Socket>();
  const h2 = { sessions: 0, goaways: 0, refusedRetried: 0 };
  /** Answers on kept-alive connections that said `Connection: close` (the server ends the connection after them). */
  const keepAliveClosedByServer = { count: 0 };
  const of = (client: LoadClient, p: string) => {
    const key = `${client}|${p}`;
    let c = counts.get(key);
    if (!c) counts.set(key, (c = { requests: 0, failures: 0, latenciesMs: [] }));
    return c;
  };
  const done = (client: LoadClient, p: string, target: Target, started: number, failure: string | null) => {
    const c = of(client, p);
    c.requests++;
    if (failure === null) c.latenciesMs.push(performance.now() - started);
    else {
      c.failures++;
      failures.push({ client, phase: p, target: `${target.host}${target.path}`, reason: failure, atMs: Math.round(performance.now() - t0) });
    }
  };

  const overHttp1 = (client: LoadClient, target: Target) => new Promise<void>((resolve) => {
    const p = phase;
    const started = performance.now();
    const fresh = client === 'HTTP/1.1 new connection';
    const req: ClientRequest = request({
      host: '127.0.0.1', port: opts.ports.http, path: target.path, timeout: 10_000,
      ...(fresh ? { agent: false, headers: { Host: target.host, Connection: 'close' } } : { agent: keepAlive, headers: { Host: target.host } }),
    }, (res) => {
      res.resume();
      if (!fresh && res.headers.connection === 'close') keepAliveClosedByServer.count++;
      res.on('end', () => { done(client, p, target, started, res.statusCode === 200 ? null : `status ${res.statusCode}`); resolve(); });
      res.on('error', (err) => { done(client, p, target, started, `response ${err.message}`); resolve(); });
    });
    if (!fresh) req.on('socket', (s) => keepAliveSockets.add(s));
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => { done(client, p, target, started, (err as NodeJS.ErrnoException).code ?? err.message); resolve(); });
    req.end();
  });

  const session = (host: string): ClientHttp2Session => {
    const s = sessions.get(host);
    if (s && !s.closed && !s.destroyed && !(s as ClientHttp2Session & { goneAway?: boolean }).goneAway) return s;
    const fresh = http2Connect(`https://127.0.0.1:${opts.ports.https}`, { servername: host, rejectUnauthorized: false, ALPNProtocols: ['h2'] }) as ClientHttp2Session & { goneAway?: boolean };
    h2.sessions++;
    fresh.on('goaway', () => { h2.goaways++; fresh.goneAway = true; });
    fresh.on('error', () => {});
    sessions.set(host, fresh);
    return fresh;
  };

  const overHttp2 = (target: Target, p = phase, started = performance.now()) => new Promise<void>((resolve) => {
    let stream;
    try {
      stream = session(target.host).request({ ':path': target.path, ':authority': target.host });
    } catch (err) {
      // The session got GOAWAY between the check and the request: nothing was sent; send it on a new one.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ERR_HTTP2_GOAWAY_SESSION' || code === 'ERR_HTTP2_INVALID_SESSION') { resolve(overHttp2(target, p, started)); return; }
      done('HTTP/2', p, target, started, (err as Error).message);
      resolve();
      return;
    }
    let status = 0;
    let ended = false;
    let error: string | null = null;
    stream.setTimeout(10_000, () => stream.close());
    stream.on('response', (h) => { status = Number(h[':status']); });
    stream.on('end', () => { ended = true; });
    stream.on('error', (err: NodeJS.ErrnoException) => { error = err.code ?? err.message; });
    stream.resume();
    // Decided once, when the stream is closed ('end' and 'error' can both come, in either order).
    stream.on('close', () => {
      if (status === 0 && stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) {
        // Refused (numbered after NGINX's GOAWAY's last stream): not processed, so a client retries
        // it on a new connection (RFC 9113 §8.7), as browsers do; counted apart.
        h2.refusedRetried++;
        resolve(overHttp2(target, p, started));
        return;
      }
      const failure = status === 200 && ended && error === null ? null
        : error ?? (status === 0 ? `no answer (RST_STREAM ${stream.rstCode})` : `status ${status}`);
      done('HTTP/2', p, target, started, failure);
      resolve();
    });
    stream.end();
  });

  const loops: Promise<void>[] = [];
  for (const client of LOAD_CLIENTS) {
    for (let l = 0; l < opts.concurrency[client]; l++) {
      loops.push((async () => {
        // Each loop starts at its own target, so all hosts are in flight at once.
        for (let i = l * 7; running; i++) {
          const target = opts.targets[i % opts.targets.length]!;
          await (client === 'HTTP/2' ? overHttp2(target) : overHttp1(client, target));
        }
      })());
    }
  }
  return {
    /** Requests sent from now on are counted under `name`. */
    phase(name: string) { phase = name; },
    counts: (client: LoadClient, p: string): PhaseCounts => of(client, p),
    total: () => [...counts.values()].reduce((a, c) => a + c.requests, 0),
    failures,
    keepAliveSockets: () => keepAliveSockets.size,
    keepAliveClosedByServer: () => keepAliveClosedByServer.count,
    h2,
    async stop() {
      running = false;
      await Promise.all(loops);
      keepAlive.destroy();
      for (const s of sessions.values()) s.close();
    },
  };
}

export type Load = ReturnType<typeof startLoad>;
