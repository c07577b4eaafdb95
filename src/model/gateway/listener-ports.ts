// Which port NGINX serves each Gateway or ListenerSet listener on (one rule for both). Port 80
// (HTTP) is --http-port's and 443 (HTTPS) --https-port's, shared with the Ingresses; a listener on
// any other port gets a server of its own that routes only among the routes attached to
// listeners of that port, over TLS for HTTPS listeners (docs/gateway-api.md, "Listener ports").
// NGINX listens on the listener's port itself, or on the port --gateway-listener-ports maps it
// to. The oldest listener to claim a port decides its protocol. A port that cannot be served is
// the listener's PortUnavailable: one the controller uses itself, one below 1024 in local mode
// without a mapping, one another listener's port already maps to, one an older listener serves
// with the other protocol, one past the bound on ports.
import type { Gateway, GatewayListener, ListenerSet } from '../../store/kube-types.js';
import type { GatewayPortOptions } from '../../store/types.js';

export type { GatewayPortOptions };

/** The port a Gateway listener must name to be served on --http-port. */
export const HTTP_LISTENER_PORT = 80;
/** The port an HTTPS listener must name to be served on --https-port. */
export const HTTPS_LISTENER_PORT = 443;
/** Listener ports besides 80 and 443, over every Gateway: each is a listening socket and a server of nginx.conf. */
export const MAX_EXTRA_PORTS = 32;

/** Where one listener is served, or why it is not. */
export type PortAssignment = { readonly local: number } | { readonly problem: string };

export interface ListenerPorts {
  /** The listener's assignment (HTTP and HTTPS listeners; others are the protocol's problem). `ownerKey`: `namespace/gateway`, or `ListenerSet namespace/name`. */
  of(ownerKey: string, l: GatewayListener): PortAssignment;
  /** The listener ports other than 80 and 443 some listener is served on, with NGINX's port for each and `tls` for HTTPS; sorted by port. */
  readonly extra: readonly ExtraPort[];
}

export interface ExtraPort { readonly port: number; readonly local: number; readonly tls?: true }

/** A ListenerSet's listeners that take a port (its Gateway admitted it, no conflict with its Gateway's): `ListenerSet namespace/name` is their owner key. */
export interface PortedSet { readonly set: ListenerSet; readonly listeners: readonly GatewayListener[] }

const keyOf = (g: Gateway) => `${g.metadata.namespace ?? ''}/${g.metadata.name}`;
export const setOwnerKey = (set: ListenerSet) => `ListenerSet ${set.metadata.namespace ?? ''}/${set.metadata.name}`;
const created = (o: Gateway | ListenerSet) => o.metadata.creationTimestamp ?? '';

/** Parses --gateway-listener-ports (`8080=18080,8090=18090`); an error names the bad item. */
export function parseListenerPortMap(items: readonly string[]): ReadonlyMap<number, number> | { error: string } {
  const out = new Map<number, number>();
  for (const item of items) {
    if (item === '') continue;
    const m = /^(\d{1,5})=(\d{1,5})$/.exec(item);
    const from = m ? Number(m[1]) : 0;
    const to = m ? Number(m[2]) : 0;
    if (!m || from < 1 || from > 65535 || to < 1 || to > 65535) return { error: `"${item.slice(0, 40)}": expected <listener port>=<port>, each 1 to 65535` };
    if (from === HTTP_LISTENER_PORT || from === HTTPS_LISTENER_PORT) return { error: `"${item}": listener ports 80 and 443 are served on --http-port and --https-port` };
    if (out.has(from)) return { error: `listener port ${from} is mapped twice` };
    out.set(from, to);
  }
  return out;
}

/**
 * Every HTTP and HTTPS listener's port, of Gateways and the ListenerSets they admitted, oldest
 * object first (the store's order; a ListenerSet after Gateways as old): the first listener to
 * claim a port keeps it, with its protocol.
 */
export function assignListenerPorts(gateways: readonly Gateway[], opts: GatewayPortOptions | undefined, sets: readonly PortedSet[] = []): ListenerPorts {
  const byListener = new Map<string, PortAssignment>();
  // NGINX's port → the listener port served there.
  const claimed = new Map<number, number>();
  const extra = new Map<number, ExtraPort>();
  const owners: Array<{ key: string; created: string; listeners: readonly GatewayListener[] }> = gateways.map((g) => ({ key: keyOf(g), created: created(g), listeners: g.spec.listeners ?? [] }));
  if (sets.length > 0) {
    for (const s of sets) owners.push({ key: setOwnerKey(s.set), created: created(s.set), listeners: s.listeners });
    owners.sort((a, b) => a.created.localeCompare(b.created)); // stable: the store's order among equals
  }
  for (const owner of owners) {
    for (const l of owner.listeners) {
      if (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS') continue;
      byListener.set(`${owner.key}/${l.name}`, assign(l));
    }
  }
  function assign(l: GatewayListener): PortAssignment {
    const port = l.port;
    const tls = l.protocol === 'HTTPS';
    if (port === HTTPS_LISTENER_PORT) return tls ? { local: port } : { problem: `port ${port} serves TLS (--https-port): an HTTP listener cannot use it` };
    if (port === HTTP_LISTENER_PORT) return tls ? { problem: `port ${port} serves plain HTTP (--http-port): an HTTPS listener cannot use it` } : { local: port };
    if (!Number.isInteger(port) || port < 1 || port > 65535) return { problem: `port ${JSON.stringify(port)} is not a port number from 1 to 65535` };
    const known = extra.get(port);
    if (known !== undefined) {
      if ((known.tls === true) !== tls) return { problem: `port ${port} is already served ${known.tls ? 'over TLS (HTTPS)' : 'as plain HTTP'} for an older listener: a${tls ? 'n HTTPS' : 'n HTTP'} listener cannot use it` };
      return { local: known.local };
    }
    const mapped = opts?.map.get(port);
    const local = mapped ?? port;
    if (mapped === undefined && opts?.unprivileged && port < 1024) {
      return { problem: `port ${port} is below 1024, which local mode cannot bind: map it with --gateway-listener-ports ${port}=<port>` };
    }
    const own = opts?.reserved.get(local);
    if (own !== undefined) return { problem: `port ${port} would be served on ${local}, which the controller uses itself (${own})` };
    const other = claimed.get(local);
    if (other !== undefined) return { problem: `port ${port} would be served on ${local}, where listener port ${other} is served` };
    if (extra.size >= MAX_EXTRA_PORTS) return { problem: `port ${port} is not served: at most ${MAX_EXTRA_PORTS} listener ports besides 80 and 443` };
    claimed.set(local, port);
    extra.set(port, { port, local, ...(tls ? { tls: true as const } : {}) });
    return { local };
  }
  return {
    of: (ownerKey, l) => byListener.get(`${ownerKey}/${l.name}`) ?? assign(l),
    extra: [...extra.values()].sort((a, b) => a.port - b.port),
  };
}

/** The route table's name for a host served through listeners of `port`: the host itself on 80 and 443, `host:port` on another. */
export function hostKey(host: string, port: number): string {
  return port === HTTP_LISTENER_PORT || port === HTTPS_LISTENER_PORT ? host : `${host}:${port}`;
}
