// A Gateway's spec.addresses against the addresses this controller is published on (the same as
// the Ingresses' load-balancer status: --publish-status-address, else --publish-service, else the
// nodes of the controller's pods). Every Gateway of ours is served by the same NGINX, so it can
// only be bound to those: a requested address that is not one of them is not usable, an empty
// value is given one of them, and status.addresses lists what the Gateway is bound to. Pure.
import { BlockList, isIP } from 'node:net';
import type { Gateway, GatewaySpecAddress, LoadBalancerIngress } from '../../store/kube-types.js';

/** The address types a Gateway of ours may request (the spec's NamedAddress and domain-prefixed types are not). */
export const SUPPORTED_ADDRESS_TYPES: readonly string[] = ['IPAddress', 'Hostname'];
/** The CRD's bound on spec.addresses and status.addresses. */
const MAX_ADDRESSES = 16;

export interface GatewayStatusAddress { readonly type: 'IPAddress' | 'Hostname'; readonly value: string }

const typeOf = (a: GatewaySpecAddress) => a.type ?? 'IPAddress';
/** A value as it may appear in a message: quoted, at most 64 characters. */
const shown = (v: string) => JSON.stringify(v.length > 64 ? `${v.slice(0, 64)}…` : v);

/** Why the Gateway is not accepted for its addresses (the spec's UnsupportedAddress), or null. */
export function unsupportedAddress(gw: Gateway): string | null {
  const list = gw.spec.addresses ?? [];
  if (list.length > MAX_ADDRESSES) return `spec.addresses lists ${list.length} addresses (at most ${MAX_ADDRESSES})`;
  for (const [i, a] of list.entries()) {
    const type = typeOf(a);
    if (!SUPPORTED_ADDRESS_TYPES.includes(type)) return `spec.addresses[${i}]: address type ${shown(type)} is not supported (${SUPPORTED_ADDRESS_TYPES.join(' or ')})`;
  }
  return null;
}

/** The published addresses as the Gateway API writes them. */
export function publishedAddresses(published: readonly LoadBalancerIngress[]): GatewayStatusAddress[] {
  const out: GatewayStatusAddress[] = [];
  for (const p of published) {
    if (p.ip) out.push({ type: 'IPAddress', value: p.ip });
    else if (p.hostname) out.push({ type: 'Hostname', value: p.hostname });
  }
  return out;
}

/** Whether a requested value names this published address (IPs compared as addresses: `::1` is `0:0::1`). */
function sameAddress(type: string, value: string, p: GatewayStatusAddress): boolean {
  if (p.type !== type) return false;
  if (type === 'Hostname') return value.toLowerCase() === p.value.toLowerCase();
  const family = isIP(value);
  if (family === 0 || family !== isIP(p.value)) return false;
  const list = new BlockList();
  list.addAddress(p.value, family === 6 ? 'ipv6' : 'ipv4');
  return list.check(value, family === 6 ? 'ipv6' : 'ipv4');
}

export interface BoundAddresses {
  /** What status.addresses says: the addresses the Gateway is bound to. */
  readonly addresses: GatewayStatusAddress[];
  /** Why Programmed is False for an address, or null. */
  readonly problem: { readonly reason: 'AddressNotUsable' | 'AddressNotAssigned'; readonly message: string } | null;
}

/**
 * Binds the Gateway to the published addresses: all of them when it requests none; else each
 * requested value that is one of them, and for each empty value the first of its type not bound
 * yet. A value that is not published is not usable; an empty value with none left, not assigned.
 */
export function bindAddresses(gw: Gateway, published: readonly LoadBalancerIngress[]): BoundAddresses {
  const ours = publishedAddresses(published);
  const requested = gw.spec.addresses ?? [];
  if (requested.length === 0) return { addresses: ours.slice(0, MAX_ADDRESSES), problem: null };
  const bound: GatewayStatusAddress[] = [];
  const notUsable: string[] = [];
  const notAssigned: string[] = [];
  const offered = ours.length === 0 ? 'none is published yet' : `published: ${ours.map((a) => a.value).join(', ')}`;
  for (const [i, a] of requested.entries()) {
    const type = typeOf(a);
    if (!SUPPORTED_ADDRESS_TYPES.includes(type)) continue;
    const value = a.value ?? '';
    if (value === '') {
      const free = ours.find((p) => p.type === type && !bound.includes(p));
      if (free) bound.push(free);
      else notAssigned.push(`spec.addresses[${i}]: no ${type} is left to assign (${offered})`);
      continue;
    }
    const match = ours.find((p) => sameAddress(type, value, p));
    if (!match) notUsable.push(`spec.addresses[${i}] ${type} ${shown(value)} is not an address this controller is published on (${offered}; --publish-service or --publish-status-address)`);
    else if (!bound.includes(match)) bound.push(match);
  }
  const problem = notUsable.length > 0 ? { reason: 'AddressNotUsable' as const, message: notUsable.join('; ') }
    : notAssigned.length > 0 ? { reason: 'AddressNotAssigned' as const, message: notAssigned.join('; ') }
      : null;
  return { addresses: bound, problem };
}

/** The Gateway's conditions with Programmed False when an address is not usable or not assigned. */
export function withAddressConditions<C extends { type: string; status: 'True' | 'False'; reason: string; message: string }>(conditions: readonly C[], bound: BoundAddresses): C[] {
  return conditions.map((c) => (c.type === 'Programmed' && c.status === 'True' && bound.problem
    ? { ...c, status: 'False' as const, reason: bound.problem.reason, message: bound.problem.message }
    : c));
}
