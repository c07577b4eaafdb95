// Runs inside a pod's network namespace (test/support/pod.ts starts it with nsenter): the pod's
// view of the cluster network, all of it in that namespace, which has nothing but `lo`.
// - `addresses` are added to `lo` (pod IPs of the echo backends: the controller refuses loopback
//   upstreams unless told otherwise, and the manifests' args must stay as they are);
// - `outbound`: a port on the pod's 127.0.0.1 (KUBERNETES_SERVICE_PORT) piped to a unix socket of
//   the test (the fake API server), as a Service's ClusterIP reaches the API server;
// - `inbound`: a unix socket per container port, piped to the pod's 127.0.0.1:port, so the test
//   (kubelet probes, clients, hostPort mappings) reaches the container;
// - `backends`: echo servers on those addresses.
// Prints one JSON line when everything listens; ends on SIGTERM.
import { execFileSync } from 'node:child_process';
import { createConnection, type Server } from 'node:net';
import { pipeServer } from './pipe.js';
import { rmSync } from 'node:fs';
import { startEchoServer } from './echo-server.js';

export interface PodNetworkConfig {
  addresses: string[];
  outbound: Array<{ port: number; socket: string }>;
  inbound: Array<{ socket: string; port: number }>;
  backends: Array<{ address: string; port: number; name: string }>;
}


const listen = (server: Server, ...args: unknown[]) => new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  (server.listen as (...a: unknown[]) => void)(...args, () => resolve());
});

const config = JSON.parse(process.argv[2]!) as PodNetworkConfig;
for (const address of config.addresses) execFileSync('ip', ['addr', 'add', `${address}/32`, 'dev', 'lo']);
const servers: Server[] = [];
for (const o of config.outbound) {
  const s = pipeServer(() => createConnection(o.socket));
  await listen(s, o.port, '127.0.0.1');
  servers.push(s);
}
for (const i of config.inbound) {
  rmSync(i.socket, { force: true });
  const s = pipeServer(() => createConnection(i.port, '127.0.0.1'));
  await listen(s, i.socket);
  servers.push(s);
}
const backends = await Promise.all(config.backends.map((b) => startEchoServer({ address: b.address, port: b.port, name: b.name })));
process.stdout.write(`${JSON.stringify({ ready: true, backends: backends.map((b) => ({ address: b.address, port: b.port })) })}\n`);
process.on('SIGTERM', () => {
  for (const s of servers) s.close();
  void Promise.all(backends.map((b) => b.close())).then(() => process.exit(0));
});
