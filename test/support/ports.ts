// Free loopback ports for tests: ask the kernel for an ephemeral port, then release it.
//
// Test files run in parallel processes, and NGINX listens with `reuseport` (ingress-nginx's
// default). Two processes handed the same released port would both bind it and the kernel would
// split connections between two unrelated NGINX instances. So every port handed out is also
// reserved across processes by a file named after it, owned by the live process that took it.
import { createServer } from 'node:net';
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RESERVATIONS = join(tmpdir(), 'ingress-rx-test-ports');
const mine = new Set<string>();
let cleanupRegistered = false;

// The wildcard address: the kernel then hands out a port no socket uses on any address (an
// echo upstream on 127.0.0.2:P would otherwise not stop it giving P for 127.0.0.1).
function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host.includes(':') ? '::' : '0.0.0.0', () => {
      const addr = srv.address();
      if (addr && typeof addr === 'object') {
        const { port } = addr;
        srv.close(() => resolve(port));
      } else reject(new Error('no address'));
    });
  });
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try { process.kill(pid, 0); return true; } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM'; }
}

function tryCreate(file: string): boolean {
  try {
    const fd = openSync(file, 'wx', 0o644);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  }
}

/** Whether a live test process holds `port` (this one included). */
export function reservedPort(port: number): boolean {
  try {
    return alive(Number(readFileSync(join(RESERVATIONS, String(port)), 'utf8')));
  } catch {
    return false;
  }
}

/** Reserve `port` for this process; false when a live process holds it. */
function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const file = join(RESERVATIONS, String(port));
  if (!tryCreate(file)) {
    let owner = NaN;
    try { owner = Number(readFileSync(file, 'utf8')); } catch { /* removed meanwhile */ }
    if (owner === process.pid || alive(owner)) return false;
    rmSync(file, { force: true });
    if (!tryCreate(file)) return false;
  }
  mine.add(file);
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    process.on('exit', () => { for (const f of mine) rmSync(f, { force: true }); });
  }
  return true;
}

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await kernelPort(host);
    if (reserve(port)) return port;
  }
}

export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) out.add(await freePort(host));
  return [...out];
}
