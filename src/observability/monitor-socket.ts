// The controller's end of lua/monitor.lua: a unix socket under the NGINX prefix. Nothing NGINX
// proxies to can reach it (upstream endpoints are IP addresses), and only NGINX's workers may
// write to it (file mode 0600, owned by the workers' user). Each worker connects once a second
// and sends one JSON batch; batch size, connection time and connection count are bounded.
import { createServer, type Socket } from 'node:net';
import { chmodSync, chownSync, readFileSync, rmSync } from 'node:fs';

export interface MonitorSocketOptions {
  path: string;
  /** Owner of the socket file, when it must differ from ours (a root master's workers). */
  owner?: { uid: number; gid: number };
  maxBatchBytes?: number;
  maxConnections?: number;
  timeoutMs?: number;
  onBatch(batch: unknown): void;
  onRejected(reason: string): void;
}

export interface MonitorSocket {
  path: string;
  close(): Promise<void>;
}

export const DEFAULT_MAX_BATCH_BYTES = 32 * 1024 * 1024;

export async function listenMonitorSocket(opts: MonitorSocketOptions): Promise<MonitorSocket> {
  const maxBytes = opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  const open = new Set<Socket>();
  const server = createServer((conn) => {
    open.add(conn);
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    const reject = (reason: string) => {
      if (rejected) return;
      rejected = true;
      opts.onRejected(reason);
      conn.destroy();
    };
    conn.setTimeout(opts.timeoutMs ?? 10_000, () => reject('connection timed out'));
    conn.on('data', (d: Buffer) => {
      size += d.length;
      if (size > maxBytes) { chunks.length = 0; reject(`batch larger than ${maxBytes} bytes`); return; }
      chunks.push(d);
    });
    conn.on('end', () => {
      if (rejected) return;
      conn.end();
      let batch: unknown;
      try {
        batch = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
      } catch {
        reject('batch is not JSON');
        return;
      }
      opts.onBatch(batch);
    });
    conn.on('error', () => {});
    conn.on('close', () => open.delete(conn));
  });
  server.maxConnections = opts.maxConnections ?? 64;
  rmSync(opts.path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.path, () => { server.off('error', reject); resolve(); });
  });
  chmodSync(opts.path, 0o600);
  if (opts.owner) chownSync(opts.path, opts.owner.uid, opts.owner.gid);
  return {
    path: opts.path,
    close: () => new Promise<void>((resolve) => {
      for (const c of open) c.destroy();
      server.close(() => { rmSync(opts.path, { force: true }); resolve(); });
    }),
  };
}

/**
 * The user NGINX's workers run as: with a root master, the `user` directive's (else nobody, as
 * NGINX does); otherwise ours, and the socket needs no other owner.
 */
export function workerOwner(user: string | undefined, passwd = '/etc/passwd'): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const name = (user ?? 'nobody').trim().split(/\s+/)[0]!;
  let text: string;
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  return undefined;
}
