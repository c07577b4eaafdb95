// TCP/UDP services ConfigMaps (`"<port>": "<namespace>/<service>:<port>[:PROXY][:PROXY]"`) →
// L4 services with their endpoints. Bad entries are reported and skipped; the rest still work.
// The ConfigMap is the operator's, but the Service an entry names, its EndpointSlices and its
// ExternalName are its namespace's: they reach nginx.conf (a stream upstream has no Lua), so each
// is held to what NGINX takes and to the address policy here.
import { isIP } from 'node:net';
import type { ConfigMap, EndpointSlice, Service } from '../../store/kube-types.js';
import type { Endpoint, L4Service, ModelWarning } from './types.js';
import { endpointsFromSlices, externalNameEndpoint, findServicePort } from './endpoints.js';
import { STRICT_ADDRESS_POLICY, type AddressPolicy } from '../checks/address-policy.js';

/** A namespace and a Service name: DNS labels, as the API server takes them. */
const NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A port name: an IANA service name (at most 15 characters, a letter among them). */
const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/;
/** Entries per ConfigMap: each is a listening socket per address and a server of nginx.conf. */
export const MAX_L4_SERVICES = 1000;
/** How an entry whose ExternalName Service names a host is refused (a deliberate difference: the webhook's table warns). */
export const L4_EXTERNAL_NAME_REFUSED = 'is a name; a TCP/UDP service takes an address (NGINX would resolve the name itself, out of reach of the address policy)';

const preview = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text);
const isPort = (p: string) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535;

export interface L4Lookup {
  getService(key: string): Service | undefined;
  getEndpointSlices(serviceKey: string): EndpointSlice[];
}

export function parseL4Services(
  cmKey: string, cm: ConfigMap | undefined, protocol: 'TCP' | 'UDP', reserved: ReadonlySet<number>, store: L4Lookup,
  policy: AddressPolicy = STRICT_ADDRESS_POLICY,
): { services: L4Service[]; warnings: ModelWarning[] } {
  const object = `ConfigMap ${cmKey}`;
  const warnings: ModelWarning[] = [];
  const services: L4Service[] = [];
  if (!cm) {
    warnings.push({ object, field: '', message: `${protocol} services ConfigMap not found` });
    return { services, warnings };
  }
  const data = cm.data ?? {};
  const numeric = (k: string) => (/^\d+$/.test(k) ? Number(k) : Infinity);
  const keys = Object.keys(data).sort((a, b) => numeric(a) - numeric(b) || (a < b ? -1 : a > b ? 1 : 0));
  for (const key of keys) {
    const field = `data[${preview(key)}]`;
    if (services.length >= MAX_L4_SERVICES) {
      warnings.push({ object, field, message: `more than ${MAX_L4_SERVICES} ${protocol} services; this entry and the higher ports are ignored` });
      break;
    }
    const warn = (message: string) => warnings.push({ object, field, message: `${message}; entry ignored` });
    const port = Number(key);
    if (!/^\d+$/.test(key) || port < 1 || port > 65535) { warn('key must be a port number 1-65535'); continue; }
    if (reserved.has(port)) { warn(`port ${port} is reserved by the controller`); continue; }
    const parts = (data[key] ?? '').trim().split(':');
    const [nsName, svcPort, p3, p4] = parts;
    if (parts.length < 2 || parts.length > 4 || !nsName || !svcPort) { warn('value must be "<namespace>/<service>:<port>[:PROXY][:PROXY]"'); continue; }
    const [ns, name, extra] = nsName.split('/');
    if (!ns || !name || extra !== undefined || !NAME.test(ns) || !NAME.test(name)) { warn(`${preview(nsName)} is not "<namespace>/<service>"`); continue; }
    if (!isPort(svcPort) && !PORT_NAME.test(svcPort)) { warn(`${preview(svcPort)} is not a port number or name`); continue; }
    if ((p3 !== undefined && p3 !== 'PROXY' && p3 !== '') || (p4 !== undefined && p4 !== 'PROXY' && p4 !== '')) {
      warn('only "PROXY" may follow the port'); continue;
    }
    const svcKey = `${ns}/${name}`;
    const svc = store.getService(svcKey);
    let endpoints: Endpoint[] = [];
    const refused: string[] = [];
    if (!svc) {
      warnings.push({ object, field, message: `Service ${svcKey} not found; no endpoints` });
    } else if (svc.spec.type === 'ExternalName') {
      endpoints = externalNameEndpoint(svc, svcPort, policy, refused).filter((e) => {
        if (isIP(e.address) !== 0) return true;
        // NGINX would resolve it itself, once, when it loads the configuration: past the address
        // policy, and a name it cannot resolve would stop every reload.
        refused.push(`Service ${svcKey}: externalName ${preview(e.address)} ${L4_EXTERNAL_NAME_REFUSED}`);
        return false;
      });
    } else {
      const sp = findServicePort(svc, svcPort);
      if (!sp) warnings.push({ object, field, message: `Service ${svcKey} has no port ${svcPort}; no endpoints` });
      else endpoints = endpointsFromSlices(sp, store.getEndpointSlices(svcKey), protocol, policy, refused);
    }
    // Ports come from the Service and its EndpointSlices: NGINX refuses one out of range in any upstream.
    endpoints = endpoints.filter((e) => {
      if (isPort(e.port)) return true;
      refused.push(`Service ${svcKey}: endpoint ${e.address} port ${preview(e.port)} is not a port (1-65535)`);
      return false;
    });
    for (const r of refused) warnings.push({ object, field, message: r });
    services.push({
      port,
      backend: { namespace: ns, name, port: svcPort },
      endpoints,
      proxyProtocol: { decode: p3 === 'PROXY', encode: p4 === 'PROXY' },
    });
  }
  return { services, warnings };
}
