// Service + EndpointSlices → upstream endpoints, as ingress-nginx resolves them: the Service
// port is found by number, target port or name; slice ports by name (or the only port when the
// Service port has no name); only ready endpoints; de-duplicated and sorted.
import type { EndpointSlice, Service, ServicePort } from '../store/kube-types.js';
import type { BackendService, Endpoint } from './types.js';
import { sortShort } from './sort.js';

/** The Service port an Ingress backend port (number or name, as a string) refers to. */
export function findServicePort(svc: Service, backendPort: string): ServicePort | undefined {
  return (svc.spec.ports ?? []).find((p) =>
    String(p.port) === backendPort || (p.targetPort !== undefined && String(p.targetPort) === backendPort) || p.name === backendPort);
}

function compareEndpoints(a: Endpoint, b: Endpoint): number {
  if (a.address !== b.address) return a.address < b.address ? -1 : 1;
  return Number(a.port) - Number(b.port);
}

/** Ready endpoints of `slices` for one Service port. */
export function endpointsFromSlices(svcPort: ServicePort, slices: EndpointSlice[], protocol = 'TCP'): Endpoint[] {
  const seen = new Set<string>();
  const out: Endpoint[] = [];
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue;
    for (const port of slice.ports ?? []) {
      if ((port.protocol ?? 'TCP') !== protocol) continue;
      // An unnamed Service port is the Service's only port: any slice port serves it.
      const target = !svcPort.name || svcPort.name === (port.name ?? '') ? port.port ?? 0 : 0;
      if (target === 0) continue;
      for (const ep of slice.endpoints ?? []) {
        if (ep.conditions?.ready === false) continue;
        for (const address of ep.addresses ?? []) {
          const id = `${address}|${target}`;
          if (seen.has(id)) continue;
          seen.add(id);
          out.push({ address, port: String(target) });
        }
      }
    }
  }
  return sortShort(out, compareEndpoints);
}

/** The endpoint of an ExternalName Service: the external name and the port's target. */
export function externalNameEndpoint(svc: Service, backendPort: string): Endpoint[] {
  const name = svc.spec.externalName ?? '';
  if (name === '') return [];
  const sp = findServicePort(svc, backendPort);
  let port: string;
  if (sp) port = typeof sp.targetPort === 'number' && sp.targetPort > 0 ? String(sp.targetPort) : String(sp.port);
  else if (/^\d+$/.test(backendPort)) port = backendPort;
  else return [];
  return [{ address: name, port }];
}

/** The ClusterIP endpoint (`service-upstream`), or a reason it cannot be used. */
export function clusterIPEndpoint(svc: Service, backendPort: string): Endpoint | string {
  const ip = svc.spec.clusterIP ?? '';
  if (ip === '' || ip === 'None') return 'has no ClusterIP';
  if (/^\d+$/.test(backendPort)) return { address: ip, port: backendPort };
  const sp = (svc.spec.ports ?? []).find((p) => p.name === backendPort);
  if (!sp) return `has no port named ${JSON.stringify(backendPort)}`;
  return { address: ip, port: String(sp.port) };
}

/** The part of a Service the Lua balancer reads. */
export function backendService(svc: Service): BackendService {
  const spec: BackendService['spec'] = { type: svc.spec.type ?? 'ClusterIP' };
  if (svc.spec.externalName !== undefined) spec.externalName = svc.spec.externalName;
  if (svc.spec.clusterIP !== undefined) spec.clusterIP = svc.spec.clusterIP;
  return { metadata: { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name }, spec };
}

export interface ServiceEndpoints {
  service: BackendService | null;
  endpoints: Endpoint[];
  /** Why the list is empty or degraded, for a warning; null when all is well. */
  problem: string | null;
}

/** Endpoints of `namespace/service` at `backendPort`, following ExternalName and service-upstream. */
export function resolveServiceEndpoints(
  svc: Service | undefined, slices: EndpointSlice[], backendPort: string, serviceUpstream: boolean,
): ServiceEndpoints {
  if (!svc) return { service: null, endpoints: [], problem: 'Service not found' };
  const service = backendService(svc);
  if (svc.spec.type === 'ExternalName') {
    const endpoints = externalNameEndpoint(svc, backendPort);
    return { service, endpoints, problem: endpoints.length === 0 ? 'ExternalName Service has no usable name or port' : null };
  }
  let problem: string | null = null;
  if (serviceUpstream) {
    const ep = clusterIPEndpoint(svc, backendPort);
    if (typeof ep !== 'string') return { service, endpoints: [ep], problem: null };
    problem = `service-upstream: Service ${ep}, using its endpoints`;
  }
  const sp = findServicePort(svc, backendPort);
  if (!sp) return { service, endpoints: [], problem: `Service has no port ${JSON.stringify(backendPort)}` };
  return { service, endpoints: endpointsFromSlices(sp, slices), problem };
}
