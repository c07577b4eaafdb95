// The addresses of the controller's own pod, which the upstream address policy refuses the own
// ports on: --own-addresses when given, else POD_IP and the addresses of the pod's interfaces.
import { networkInterfaces } from 'node:os';
import { ownAddressSet } from '../model/checks/address-policy.js';

/** --own-addresses (comma-separated) if not empty, else POD_IP and the address of every interface but loopback. */
export function ownAddresses(flag: string, env: NodeJS.ProcessEnv = process.env): Set<string> | { error: string } {
  if (flag.trim() !== '') return ownAddressSet(flag.split(','));
  // Loopback interfaces are left out: their addresses are the class loopback already, and the
  // built-in default backend is NGINX's own default server on 127.0.0.1.
  const found = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => !i.internal).map((i) => i.address));
  const podIP = env.POD_IP?.trim();
  return ownAddressSet(podIP ? [podIP, ...found] : found);
}
