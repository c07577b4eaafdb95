// Free loopback ports for tests: ask the kernel for an ephemeral port, then release it.
import { createServer } from 'node:net';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      if (addr && typeof addr === 'object') {
        const { port } = addr;
        srv.close(() => resolve(port));
      } else reject(new Error('no address'));
    });
  });
}

export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const out = new Set<number>();
  while (out.size < n) out.add(await freePort(host));
  return [...out];
}
