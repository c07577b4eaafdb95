// --gateway-listener-ports and the ports the controller uses itself, as the model reads them
// (src/model/gateway/listener-ports.ts): a Gateway listener is never served on one of those.
import { parseListenerPortMap } from '../model/gateway/listener-ports.js';
import type { GatewayPortOptions } from '../store/types.js';

export const GATEWAY_LISTENER_PORTS_HELP = 'Gateway API listener ports other than 80 and 443, each mapped to the port NGINX listens on for it: "8080=18080,8090=18090". An unmapped port is served on itself (docs/gateway-api.md, "Listener ports").';

/** `own`: each port the controller or NGINX use with its flag; `unprivileged`: local mode. */
export function gatewayPortOptions(items: readonly string[], own: ReadonlyArray<readonly [string, number]>, unprivileged: boolean): GatewayPortOptions | { error: string } {
  const map = parseListenerPortMap(items);
  if ('error' in map) return { error: `invalid value for --gateway-listener-ports: ${map.error}` };
  const reserved = new Map<number, string>();
  for (const [flag, port] of own) if (!reserved.has(port)) reserved.set(port, `--${flag}`);
  return { map: map as ReadonlyMap<number, number>, reserved, unprivileged };
}
