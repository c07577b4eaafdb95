// ListenerSets: listeners a team adds to a Gateway it does not own. A ListenerSet attaches only
// to one of our Gateways whose spec.allowedListeners admits its namespace (None, the default,
// admits none; Same, Selector or All), and only while that Gateway is accepted. Its listeners
// join the Gateway's in the spec's precedence: the Gateway's own first, then ListenerSets
// oldest first, then by namespace/name (the store's order), each set's in its own order. A
// listener that takes a port another listener of higher precedence uses with another protocol
// is in ProtocolConflict; one with the same port, protocol and hostname is in HostnameConflict;
// a conflicted listener serves nothing, so a later ListenerSet never takes a host from an
// earlier listener. Messages name no sibling object: a tenant learns only that the port or
// hostname is taken.
import type { Gateway, GatewayListener, ListenerSet, Namespace } from '../../store/kube-types.js';
import type { GatewayResources } from '../../store/types.js';
import { gatewayProblem, namespaceAllowed } from './attachment.js';
import { GATEWAY_GROUP } from './references.js';

/** Why a listener of an attached ListenerSet is set aside: a conflict, or past the CRD's 64 listeners. */
export type ConflictReason = 'HostnameConflict' | 'ProtocolConflict' | 'TooManyListeners';

/** The CRD's bound on a ListenerSet's listeners, held here too for objects that did not pass it (manifests). */
export const MAX_SET_LISTENERS = 64;

export interface SetListener {
  /** `ListenerSet namespace/name/listener`: the key its attached routes, certificates and status go by. */
  readonly key: string;
  /** Its position in the ListenerSet's spec.listeners. */
  readonly index: number;
  readonly listener: GatewayListener;
  readonly conflict: { readonly reason: ConflictReason; readonly message: string } | null;
}

export interface ListenerSetOutcome {
  readonly set: ListenerSet;
  /** `namespace/name` of the parent Gateway (one of ours). */
  readonly gateway: string;
  /** Why the set attaches nothing, or null when the Gateway takes it. */
  readonly refused: { readonly reason: 'NotAllowed' | 'ParentNotAccepted'; readonly message: string } | null;
  /** Its listeners in order (none when refused). */
  readonly listeners: readonly SetListener[];
}

/** `namespace/name` → outcome, for every ListenerSet whose parentRef names one of our Gateways. */
export type ListenerSets = ReadonlyMap<string, ListenerSetOutcome>;

export const listenerSetKey = (set: ListenerSet, listener: string) => `ListenerSet ${set.metadata.namespace ?? ''}/${set.metadata.name}/${listener}`;

/** `warn(object, field, message)`: a listener dropped because its name repeats an earlier one of the set (the CRD refuses it). */
export function listenerSetsOf(
  resources: GatewayResources, namespaceOf: (name: string) => Namespace | undefined, warn: (object: string, field: string, message: string) => void,
): ListenerSets {
  const out = new Map<string, ListenerSetOutcome>();
  if (resources.listenerSets.length === 0) return out;
  const gateways = new Map(resources.gateways.map((g) => [`${g.metadata.namespace ?? ''}/${g.metadata.name}`, g]));
  // Per Gateway: port → the protocol and hostnames its listeners of higher precedence hold.
  const taken = new Map<string, Map<number, { protocol: string; hostnames: Set<string> }>>();
  const claim = (gw: string, l: GatewayListener): SetListener['conflict'] => {
    let ports = taken.get(gw);
    if (!ports) {
      taken.set(gw, (ports = new Map()));
      for (const own of gateways.get(gw)!.spec.listeners ?? []) claim(gw, own);
    }
    const hostname = (l.hostname ?? '').toLowerCase();
    const held = ports.get(l.port);
    if (!held) {
      ports.set(l.port, { protocol: l.protocol, hostnames: new Set([hostname]) });
      return null;
    }
    if (held.protocol !== l.protocol) {
      return { reason: 'ProtocolConflict', message: `port ${l.port} is already used with protocol ${held.protocol} by a listener of higher precedence on this Gateway` };
    }
    if (held.hostnames.has(hostname)) {
      return { reason: 'HostnameConflict', message: `${hostname ? `hostname ${JSON.stringify(hostname)}` : 'every hostname (no hostname)'} on port ${l.port} is already served by a listener of higher precedence on this Gateway` };
    }
    held.hostnames.add(hostname);
    return null;
  };
  for (const set of resources.listenerSets) {
    const ns = set.metadata.namespace ?? '';
    const ref = set.spec?.parentRef;
    if (!ref || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') continue;
    const gwKey = `${ref.namespace ?? ns}/${ref.name}`;
    const gw = gateways.get(gwKey);
    if (!gw) continue; // another controller's Gateway, or none: not ours to answer
    const refused = refusal(gw, gwKey, ns, namespaceOf);
    const listeners: SetListener[] = [];
    const names = new Set<string>();
    for (const [index, listener] of (refused ? [] : set.spec.listeners ?? []).entries()) {
      if (names.has(listener.name)) {
        warn(`ListenerSet ${ns}/${set.metadata.name}`, `spec.listeners[${index}].name`, `listener name ${JSON.stringify(String(listener.name).slice(0, 100))} repeats an earlier one; set aside`);
        continue;
      }
      names.add(listener.name);
      const conflict = index >= MAX_SET_LISTENERS
        ? { reason: 'TooManyListeners' as const, message: `a ListenerSet has at most ${MAX_SET_LISTENERS} listeners` }
        : claim(gwKey, listener);
      listeners.push({ key: listenerSetKey(set, listener.name), index, listener, conflict });
    }
    out.set(`${ns}/${set.metadata.name}`, { set, gateway: gwKey, refused, listeners });
  }
  return out;
}

function refusal(gw: Gateway, gwKey: string, setNs: string, namespaceOf: (name: string) => Namespace | undefined): ListenerSetOutcome['refused'] {
  const invalid = gatewayProblem(gw);
  if (invalid) return { reason: 'ParentNotAccepted', message: `Gateway ${gwKey} is not accepted: ${invalid}` };
  const from = gw.spec.allowedListeners?.namespaces ?? { from: 'None' };
  if ((from.from ?? 'None') === 'None' || !namespaceAllowed(from, gw.metadata.namespace ?? '', setNs, namespaceOf)) {
    return { reason: 'NotAllowed', message: `Gateway ${gwKey}'s allowedListeners.namespaces (from: ${from.from ?? 'None'}) does not admit ListenerSets of namespace "${setNs}"` };
  }
  return null;
}

/**
 * Whether a host is taken from a listener by a more specific one of another owner on the same
 * Gateway and port (an exact hostname over a wildcard, a narrower wildcard over a wider one, any
 * over none), so a route attached through a ListenerSet's wider listener never gets a host a
 * Gateway's or another ListenerSet's listener names — nor the other way round. Between a Gateway's
 * own listeners this is not applied (GatewayHTTPListenerIsolation, docs/gateway-api.md).
 */
export function shadowedHosts(gateways: readonly Gateway[], sets: ListenerSets): (listenerKey: string, host: string) => boolean {
  type Entry = { key: string; owner: string; port: number; hostname: string };
  const byGateway = new Map<string, Entry[]>();
  const byKey = new Map<string, { gateway: string; entry: Entry }>();
  const add = (gateway: string, entry: Entry) => {
    const list = byGateway.get(gateway) ?? [];
    if (list.length === 0) byGateway.set(gateway, list);
    list.push(entry);
    byKey.set(entry.key, { gateway, entry });
  };
  for (const o of sets.values()) {
    for (const l of o.listeners) if (!l.conflict) add(o.gateway, { key: l.key, owner: `ListenerSet ${o.set.metadata.namespace ?? ''}/${o.set.metadata.name}`, port: l.listener.port, hostname: (l.listener.hostname ?? '').toLowerCase() });
  }
  if (byKey.size === 0) return () => false;
  for (const gw of gateways) {
    const key = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    if (!byGateway.has(key)) continue;
    for (const l of gw.spec.listeners ?? []) add(key, { key: `${key}/${l.name}`, owner: `Gateway ${key}`, port: l.port, hostname: (l.hostname ?? '').toLowerCase() });
  }
  return (listenerKey, host) => {
    const at = byKey.get(listenerKey);
    if (!at || host.startsWith('*.')) return false;
    const mine = specificity(at.entry.hostname, host);
    return byGateway.get(at.gateway)!.some((e) => e.owner !== at.entry.owner && e.port === at.entry.port && specificity(e.hostname, host) > mine);
  };
}

/** How specifically a listener hostname matches a host: 0 not at all, 1 no hostname, 2 + suffix length a wildcard, 1000 exact. */
function specificity(hostname: string, host: string): number {
  if (hostname === '') return 1;
  if (hostname === host) return 1000;
  if (hostname.startsWith('*.') && host.endsWith(hostname.slice(1)) && host.length > hostname.length - 1) return 2 + hostname.length;
  return 0;
}
