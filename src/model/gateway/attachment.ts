// Which listeners of our Gateways an HTTPRoute attaches to, and on which host names: its
// parentRefs (name, namespace, sectionName, port), each listener's allowedRoutes (namespaces:
// Same, All or Selector; kinds) and the intersection of the route's hostnames with the
// listener's, less the names a more specific listener of the same Gateway and port takes (listener
// isolation). HTTP listeners and HTTPS listeners terminating TLS
// are served on the port ./listener-ports.ts gives them. A parentRef of kind ListenerSet reaches
// the listeners of that ListenerSet (./listener-sets.ts) when its Gateway took it, `Same` then
// meaning the ListenerSet's namespace; its listeners take ports by the same rule as a Gateway's.
import type { Gateway, GatewayListener, HTTPRoute, Namespace, ParentReference, RouteNamespaces } from '../../store/kube-types.js';
import { unsupportedAddress } from './addresses.js';
import { GATEWAY_GROUP } from './references.js';
import { assignListenerPorts, type ListenerPorts, type PortAssignment } from './listener-ports.js';
import { hostProblem } from '../core/paths.js';

export interface Attachment {
  /** `namespace/gateway/listener`, or `ListenerSet namespace/name/listener` (./listener-sets.ts). */
  readonly listener: string;
  /** The host names the route is served on through this listener (lower case; `*.` wildcards kept); none when it would take every host (not served yet). */
  readonly hostnames: readonly string[];
  /** An HTTPS listener: its certificates serve these host names (./listener-tls.ts). */
  readonly https: boolean;
  /** The listener's port. */
  readonly port: number;
}

/** The spec's reasons for a route parent's Accepted condition when it is False. */
export type NotAcceptedReason = 'NoMatchingParent' | 'NotAllowedByListeners' | 'NoMatchingListenerHostname';

/** What one parentRef gives: the attachments, or why there is none. */
export type ParentResult = { readonly attached: readonly Attachment[] } | { readonly refused: string; readonly reason: NotAcceptedReason };

/** A ListenerSet a route may name as its parent (./listener-sets.ts's outcome): its listeners, or why it takes none. */
export interface AttachableSet {
  readonly refused: { readonly message: string } | null;
  readonly listeners: ReadonlyArray<{ readonly key: string; readonly listener: GatewayListener; readonly conflict: { readonly reason: string; readonly message: string } | null }>;
}

/** A listener a parentRef may reach: its key, why it is unusable (a ListenerSet's conflict), where it is served, and the host names more specific listeners of its owner take from it. */
interface Reachable {
  readonly key: string;
  readonly listener: GatewayListener;
  readonly unusable: string | null;
  readonly port: PortAssignment;
  readonly isolate: (hostnames: readonly string[]) => string[];
}

export function attachParent(
  route: HTTPRoute, ref: ParentReference, gateways: ReadonlyMap<string, Gateway>, namespaceOf: (name: string) => Namespace | undefined,
  ports: ListenerPorts = assignListenerPorts([...gateways.values()], undefined),
  listenerSets: ReadonlyMap<string, AttachableSet> = new Map(),
): ParentResult {
  const routeNs = route.metadata.namespace ?? '';
  const group = ref.group ?? GATEWAY_GROUP;
  const kind = ref.kind ?? 'Gateway';
  if (group === GATEWAY_GROUP && kind === 'ListenerSet') {
    const setKey = `${ref.namespace ?? routeNs}/${ref.name}`;
    const set = listenerSets.get(setKey);
    if (!set) return { refused: `ListenerSet ${setKey} not found, or not attached to a Gateway of this controller`, reason: 'NoMatchingParent' };
    if (set.refused) return { refused: `ListenerSet ${setKey} is not accepted: ${set.refused.message}`, reason: 'NoMatchingParent' };
    return attachListeners(route, ref, `ListenerSet ${setKey}`, setKey.slice(0, setKey.indexOf('/')), set.listeners.map((l) => ({
      key: l.key, listener: l.listener, unusable: l.conflict ? `${l.conflict.reason}: ${l.conflict.message}` : null,
      port: ports.of(`ListenerSet ${setKey}`, l.listener), isolate: (h) => [...h],
    })), namespaceOf);
  }
  if (group !== GATEWAY_GROUP || kind !== 'Gateway') {
    return { refused: `parent ${group}/${kind} is not a Gateway or a ListenerSet`, reason: 'NoMatchingParent' };
  }
  const gwKey = `${ref.namespace ?? routeNs}/${ref.name}`;
  const gw = gateways.get(gwKey);
  if (!gw) return { refused: `Gateway ${gwKey} not found, or not of a GatewayClass of this controller`, reason: 'NoMatchingParent' };
  const invalid = gatewayProblem(gw);
  if (invalid) return { refused: `Gateway ${gwKey} is not accepted: ${invalid.message}`, reason: 'NoMatchingParent' };
  // A Gateway parentRef reaches the Gateway's own listeners only, never its ListenerSets'.
  return attachListeners(route, ref, `Gateway ${gwKey}`, gw.metadata.namespace ?? '', (gw.spec.listeners ?? []).map((l) => ({
    key: `${gwKey}/${l.name}`, listener: l, unusable: null, port: ports.of(gwKey, l), isolate: (h) => isolated(h, gw, l),
  })), namespaceOf);
}

/** The route on the owner's listeners that the parentRef names (sectionName, port). `ownerNs`: the namespace `Same` means. */
function attachListeners(
  route: HTTPRoute, ref: ParentReference, owner: string, ownerNs: string, listeners: readonly Reachable[],
  namespaceOf: (name: string) => Namespace | undefined,
): ParentResult {
  const routeNs = route.metadata.namespace ?? '';
  const named = listeners.filter(({ listener: l }) => (ref.sectionName === undefined || l.name === ref.sectionName) && (ref.port === undefined || l.port === ref.port));
  if (named.length === 0) return { refused: `${owner} has no listener${ref.sectionName !== undefined ? ` named "${ref.sectionName}"` : ''}${ref.port !== undefined ? ` on port ${ref.port}` : ''}`, reason: 'NoMatchingParent' };
  const reasons: string[] = [];
  let reason: NotAcceptedReason | undefined;
  const attached: Attachment[] = [];
  const refuse = (key: string, why: string, code: NotAcceptedReason) => {
    reasons.push(`listener ${key}: ${why}`);
    reason ??= code;
  };
  for (const { key, listener: l, unusable, port, isolate } of named) {
    const problem = unusable ?? listenerProblem(l, port);
    if (problem) {
      refuse(key, problem, 'NoMatchingParent');
      continue;
    }
    const why = listenerRefusal(l, ownerNs, routeNs, namespaceOf);
    if (why) {
      refuse(key, why, 'NotAllowedByListeners');
      continue;
    }
    const hostnames = intersectHostnames(route.spec.hostnames, l.hostname);
    const base = { listener: key, https: l.protocol === 'HTTPS', port: l.port };
    // Neither names a hostname: attached (the spec's attachment is allowedRoutes and the
    // parentRef alone, so the listener counts it), but every host is not served yet (no hostnames).
    if (!l.hostname && (route.spec.hostnames ?? []).length === 0) {
      attached.push({ ...base, hostnames: [] });
      continue;
    }
    if (hostnames.length === 0) {
      refuse(key, `no hostname of the route matches the listener's ${l.hostname ? JSON.stringify(l.hostname) : '(none)'}`, 'NoMatchingListenerHostname');
      continue;
    }
    attached.push({ ...base, hostnames: isolate(hostnames) });
  }
  return attached.length > 0 ? { attached } : { refused: reasons.join('; '), reason: reason ?? 'NoMatchingParent' };
}

/** Why a whole Gateway is not served (Accepted=False, InvalidParameters), or null: we read no parameters, so any parametersRef is one we cannot honour. */
export function gatewayProblem(gw: Gateway): { reason: 'InvalidParameters' | 'UnsupportedAddress'; message: string } | null {
  const ref = gw.spec.infrastructure?.parametersRef;
  if (ref) return { reason: 'InvalidParameters', message: `spec.infrastructure.parametersRef ${ref.group ?? ''}/${ref.kind ?? ''} ${JSON.stringify(ref.name ?? '')}: this controller reads no parameters` };
  const address = unsupportedAddress(gw);
  return address ? { reason: 'UnsupportedAddress', message: address } : null;
}

/** Whether every kind allowedRoutes.kinds lists is one this listener serves (HTTPRoute). */
export function allRouteKindsServed(l: GatewayListener): boolean {
  return (l.allowedRoutes?.kinds ?? []).every((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute');
}

/**
 * The host names a route takes through listener `l`, less those a more specific listener of the
 * same Gateway and port takes whole (GatewayHTTPListenerIsolation): a request goes to the most
 * specific listener matching its host, and only that listener's routes answer it. Names such a
 * listener takes in part (a wildcard above an exact listener's name) are kept: the router looks
 * the most specific name up first.
 */
function isolated(hostnames: readonly string[], gw: Gateway, l: GatewayListener): string[] {
  const others = (gw.spec.listeners ?? []).filter((o) => o !== l && o.port === l.port && o.hostname && moreSpecific(o.hostname.toLowerCase(), l.hostname?.toLowerCase()));
  if (others.length === 0) return [...hostnames];
  return hostnames.filter((h) => !others.some((o) => o.hostname!.toLowerCase() === h || covers(o.hostname!.toLowerCase(), h)));
}

/** Whether listener hostname `a` is more specific than `b` (none: every host): an exact name, else the longer wildcard. */
function moreSpecific(a: string, b: string | undefined): boolean {
  if (!b) return true;
  if (a === b) return false;
  if (!b.startsWith('*.')) return false;
  return !a.startsWith('*.') || a.length > b.length;
}

/** Why a listener is not served at all, or null; `port` is where ./listener-ports.ts serves it. */
export function listenerProblem(l: GatewayListener, port: { local: number } | { problem: string }): string | null {
  if (l.hostname !== undefined && l.hostname !== '') {
    const h = l.hostname;
    const problem = h.startsWith('*.') || !h.includes('*') ? hostProblem(h.toLowerCase()) : `hostname ${JSON.stringify(h.slice(0, 100))}: "*" only as the first label`;
    if (problem) return problem;
  }
  if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') return `protocol ${l.protocol} is not served yet (HTTP and HTTPS only)`;
  if ('problem' in port) return port.problem;
  if (l.protocol === 'HTTP') return null;
  if ((l.tls?.mode ?? 'Terminate') !== 'Terminate') return `tls.mode ${l.tls!.mode} is not served (Terminate only)`;
  if ((l.tls?.certificateRefs ?? []).length === 0) return 'an HTTPS listener needs tls.certificateRefs';
  return null;
}

/** Whether the listener's allowedRoutes.kinds admit HTTPRoutes (no list: the protocol's kinds, HTTPRoute for HTTP). */
export function admitsHTTPRoutes(l: GatewayListener): boolean {
  const kinds = l.allowedRoutes?.kinds;
  return !kinds || kinds.length === 0 || kinds.some((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute');
}

/** Why the listener takes no HTTPRoute of the namespace, or null. `ownerNs`: its Gateway's or ListenerSet's namespace. */
function listenerRefusal(l: GatewayListener, ownerNs: string, routeNs: string, namespaceOf: (name: string) => Namespace | undefined): string | null {
  if (!admitsHTTPRoutes(l)) return `allowedRoutes.kinds does not include HTTPRoute`;
  const from = l.allowedRoutes?.namespaces ?? { from: 'Same' };
  if (!namespaceAllowed(from, ownerNs, routeNs, namespaceOf)) {
    return `allowedRoutes.namespaces (from: ${from.from ?? 'Same'}) does not admit routes of namespace "${routeNs}"`;
  }
  return null;
}

/** Whether `from` (Same: `ownerNs`; All; Selector over the namespace's labels; anything else: none) admits namespace `ns`. */
export function namespaceAllowed(rn: RouteNamespaces, ownerNs: string, routeNs: string, namespaceOf: (name: string) => Namespace | undefined): boolean {
  switch (rn.from ?? 'Same') {
    case 'All': return true;
    case 'Same': return routeNs === ownerNs;
    case 'Selector': return rn.selector !== undefined && selectorMatches(rn.selector, namespaceOf(routeNs)?.metadata.labels ?? {});
    default: return false;
  }
}

/** A metav1.LabelSelector (matchLabels and matchExpressions); an empty one selects every namespace. */
function selectorMatches(sel: NonNullable<RouteNamespaces['selector']>, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In': if (!has || !values.includes(labels[e.key]!)) return false; break;
      case 'NotIn': if (has && values.includes(labels[e.key]!)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false; // an operator we do not know selects nothing
    }
  }
  return true;
}

/**
 * The route's host names on a listener: all of the route's when the listener has none, the
 * listener's when the route has none, else those that match each other (an exact name matching
 * a wildcard is the exact name; of two wildcards, the narrower). Route and listener both without
 * one would take every host: not served (nothing is returned).
 */
export function intersectHostnames(routeHostnames: readonly string[] | undefined, listenerHostname: string | undefined): string[] {
  const route = (routeHostnames ?? []).map((h) => h.toLowerCase());
  const listener = listenerHostname?.toLowerCase();
  if (!listener) return [...new Set(route)];
  if (route.length === 0) return [listener];
  const out = new Set<string>();
  for (const h of route) {
    if (h === listener) out.add(h);
    else if (covers(listener, h)) out.add(h);
    else if (covers(h, listener)) out.add(listener);
  }
  return [...out];
}

/** Whether the wildcard `*.suffix` covers `name` (exact, or a narrower wildcard): one or more labels before the suffix. */
function covers(wildcard: string, name: string): boolean {
  if (!wildcard.startsWith('*.')) return false;
  const suffix = wildcard.slice(1);
  const base = name.startsWith('*.') ? name.slice(2) : name;
  return base.endsWith(suffix) && base.length > suffix.length;
}
