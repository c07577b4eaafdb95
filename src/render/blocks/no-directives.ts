// The groups whose settings reach NGINX only through the Lua payloads: the backends payload
// carries them and the Lua balancer applies them per request, so they print no directive and
// changing them needs no reload.
import type { RenderBlock } from './types.js';

function luaOnly(group: string): RenderBlock {
  return { group, applied: 'lua' };
}

/** canary: the backend's trafficShapingPolicy and the primary's alternativeBackends (lua/balancer.lua). */
export const canaryBlock = luaOnly('canary');
/** affinity: the backend's sessionAffinityConfig (lua/balancer/sticky). */
export const affinityBlock = luaOnly('affinity');
/** load-balance: the backend's `load-balance`. */
export const loadBalanceBlock = luaOnly('loadbalance');
/** upstream-hash-by: the backend's upstreamHashByConfig (lua/balancer/chash). */
export const upstreamHashBlock = luaOnly('upstreamhash');
/** service-upstream: the backend's one endpoint, the Service's cluster IP. */
export const serviceUpstreamBlock = luaOnly('serviceupstream');
