// A server that pipes each connection to another one (a TCP port or a unix socket): the pod
// network's plumbing (pod.ts, pod-network.ts, pod-cluster.ts).
import { createConnection, createServer, type Server } from 'node:net';

export function pipeServer(connect: () => ReturnType<typeof createConnection>): Server {
  return createServer((client) => {
    const upstream = connect();
    client.pipe(upstream).pipe(client);
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close);
    upstream.on('error', close);
  });
}
