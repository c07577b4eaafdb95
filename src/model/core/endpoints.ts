// Service + EndpointSlices → upstream endpoints, as ingress-nginx resolves them: the Service
// port is found by number, target port or name; slice ports by name (or the only port when the
// Service port has no name); ready endpoints, or, when none is ready, the terminating ones that
// still serve (as kube-proxy does, KEP-1669); de-duplicated and sorted.
import type { EndpointSlice, Service, ServicePort } from '../../store/kube-types.js';
import type { BackendService, Endpoint } from './types.js';
import { sortShort } from './sort.js';
import { STRICT_ADDRESS_POLICY, allowedEndpointAddress, judgeEndpointAddress, judgeExternalName, type AddressPolicy } from '../checks/address-policy.js';

/** Collects what the address policy refused, each naming its object and address. */
export type RefusedAddresses = string[];

/** The Service port an Ingress backend port (number or name, as a string) refers to. */
export function findServicePort(svc: Service, backendPort: string): ServicePort | undefined {
  return (svc.spec.ports ?? []).find((p) =>
    String(p.port) === backendPort || (p.targetPort !== undefined && String(p.targetPort) === backendPort) || p.name === backendPort);
}

function compareEndpoints(a: Endpoint, b: Endpoint): number {
  if (a.address !== b.address) return a.address < b.address ? -1 : 1;
  return Number(a.port) - Number(b.port);
}

type SliceEndpoint = NonNullable<EndpointSlice['endpoints']>[number];

/** ready unset means ready; serving unset defers to ready; terminating unset means not terminating. */
function isReady(ep: SliceEndpoint): boolean {
  return ep.conditions?.ready !== false;
}

function isServingTerminating(ep: SliceEndpoint): boolean {
  return ep.conditions?.terminating === true && (ep.conditions.serving ?? isReady(ep));
}

/**
 * Endpoints of `slices` for one Service port, their addresses canonical: the ready ones, or when
 * there is none, the terminating ones that still serve (a Deployment scaled to zero, a Recreate
 * update: they answer until they exit, where ingress-nginx answers 503). Addresses the policy
 * refuses are left out and named in `refused`.
 */
export function endpointsFromSlices(
  svcPort: ServicePort, slices: EndpointSlice[], protocol = 'TCP', policy: AddressPolicy = STRICT_ADDRESS_POLICY, refused: RefusedAddresses = [],
): Endpoint[] {
  const ready = endpointsWhere(svcPort, slices, protocol, policy, refused, isReady);
  if (ready.length > 0) return ready;
  return endpointsWhere(svcPort, slices, protocol, policy, refused, (ep) => !isReady(ep) && isServingTerminating(ep));
}

function endpointsWhere(
  svcPort: ServicePort, slices: EndpointSlice[], protocol: string, policy: AddressPolicy, refused: RefusedAddresses, usable: (ep: SliceEndpoint) => boolean,
): Endpoint[] {
  const out: Endpoint[] = [];
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue;
    for (const port of slice.ports ?? []) {
      if ((port.protocol ?? 'TCP') !== protocol) continue;
      // An unnamed Service port is the Service's only port: any slice port serves it.
      const target = !svcPort.name || svcPort.name === (port.name ?? '') ? port.port ?? 0 : 0;
      if (target === 0) continue;
      const targetText = String(target);
      for (const ep of slice.endpoints ?? []) {
        if (!usable(ep)) continue;
        for (const raw of ep.addresses ?? []) {
          const address = allowedEndpointAddress(policy, String(raw), targetText);
          if (address === null) {
            const verdict = judgeEndpointAddress(policy, String(raw), targetText);
            const reason = verdict.ok ? '' : verdict.reason;
            refused.push(`EndpointSlice ${slice.metadata.namespace ?? ''}/${slice.metadata.name ?? ''}: address ${JSON.stringify(String(raw).slice(0, 100))} port ${target} refused: ${reason}`);
            continue;
          }
          out.push({ address, port: targetText });
        }
      }
    }
  }
  // Sorted, equal endpoints are neighbours: each is kept once (no set of seen ones to build).
  sortShort(out, compareEndpoints);
  let kept = 0;
  for (let i = 0; i < out.length; i++) {
    const e = out[i]!;
    if (kept > 0 && out[kept - 1]!.address === e.address && out[kept - 1]!.port === e.port) continue;
    out[kept++] = e;
  }
  out.length = kept;
  return out;
}

/**
 * The endpoint of an ExternalName Service: the external name (an address in any spelling made
 * canonical) and the port's target; a name the policy refuses gives none, named in `refused`.
 */
export function externalNameEndpoint(svc: Service, backendPort: string, policy: AddressPolicy = STRICT_ADDRESS_POLICY, refused: RefusedAddresses = []): Endpoint[] {
  const name = svc.spec.externalName ?? '';
  if (policy.refuseExternalNameServices) {
    refused.push(`Service ${svc.metadata.namespace ?? ''}/${svc.metadata.name}: ExternalName Services are disabled (--disable-svc-external-name)`);
    return [];
  }
  if (name === '') return [];
  const sp = findServicePort(svc, backendPort);
  let port: string;
  if (sp) port = typeof sp.targetPort === 'number' && sp.targetPort > 0 ? String(sp.targetPort) : String(sp.port);
  else if (/^\d+$/.test(backendPort)) port = backendPort;
  else return [];
  const verdict = judgeExternalName(policy, name, port);
  if (!verdict.ok) {
    refused.push(`Service ${svc.metadata.namespace ?? ''}/${svc.metadata.name}: externalName ${JSON.stringify(name.slice(0, 100))} port ${port} refused: ${verdict.reason}`);
    return [];
  }
  return [{ address: verdict.address, port }];
}

/** The ClusterIP endpoint (`service-upstream`), or a reason it cannot be used. */
export function clusterIPEndpoint(svc: Service, backendPort: string, policy: AddressPolicy = STRICT_ADDRESS_POLICY): Endpoint | string {
  const ip = svc.spec.clusterIP ?? '';
  if (ip === '' || ip === 'None') return 'has no ClusterIP';
  let port = backendPort;
  if (!/^\d+$/.test(backendPort)) {
    const sp = (svc.spec.ports ?? []).find((p) => p.name === backendPort);
    if (!sp) return `has no port named ${JSON.stringify(backendPort)}`;
    port = String(sp.port);
  }
  const verdict = judgeEndpointAddress(policy, ip, port);
  if (!verdict.ok) return `ClusterIP ${JSON.stringify(ip.slice(0, 100))} refused: ${verdict.reason}`;
  return { address: verdict.address, port };
}

const backendServices = new WeakMap<Service, BackendService>();

/**
 * The part of a Service the Lua balancer reads; one object per Service object (stored objects
 * are immutable), so the backends rebuilt when only the endpoints changed keep it.
 */
export function backendService(svc: Service): BackendService {
  let service = backendServices.get(svc);
  if (service === undefined) {
    service = makeBackendService(svc);
    backendServices.set(svc, service);
  }
  return service;
}

function makeBackendService(svc: Service): BackendService {
  const spec: { -readonly [K in keyof BackendService['spec']]: BackendService['spec'][K] } = { type: svc.spec.type ?? 'ClusterIP' };
  if (svc.spec.externalName !== undefined) spec.externalName = svc.spec.externalName;
  if (svc.spec.clusterIP !== undefined) spec.clusterIP = svc.spec.clusterIP;
  return { metadata: { namespace: svc.metadata.namespace ?? '', name: svc.metadata.name }, spec };
}

export interface ServiceEndpoints {
  service: BackendService | null;
  endpoints: Endpoint[];
  /** Why the list is empty or degraded, for a warning; null when all is well. */
  problem: string | null;
  /** Addresses the address policy refused, each naming its EndpointSlice or Service. */
  refused: readonly string[];
}

/** The refused list of nearly every Service: one shared empty array, not one kept per Service. */
const NONE_REFUSED: readonly string[] = Object.freeze([]);
const keptRefused = (refused: RefusedAddresses): readonly string[] => (refused.length > 0 ? refused : NONE_REFUSED);

/** Endpoints of `namespace/service` at `backendPort`, following ExternalName and service-upstream. */
export function resolveServiceEndpoints(
  svc: Service | undefined, slices: EndpointSlice[], backendPort: string, serviceUpstream: boolean, policy: AddressPolicy = STRICT_ADDRESS_POLICY,
): ServiceEndpoints {
  const refused: RefusedAddresses = [];
  if (!svc) return { service: null, endpoints: [], problem: 'Service not found', refused: keptRefused(refused) };
  const service = backendService(svc);
  if (svc.spec.type === 'ExternalName') {
    const endpoints = externalNameEndpoint(svc, backendPort, policy, refused);
    return { service, endpoints, problem: endpoints.length === 0 && refused.length === 0 ? 'ExternalName Service has no usable name or port' : null, refused: keptRefused(refused) };
  }
  let problem: string | null = null;
  if (serviceUpstream) {
    const ep = clusterIPEndpoint(svc, backendPort, policy);
    if (typeof ep !== 'string') return { service, endpoints: [ep], problem: null, refused: keptRefused(refused) };
    problem = `service-upstream: Service ${ep}, using its endpoints`;
  }
  const sp = findServicePort(svc, backendPort);
  if (!sp) return { service, endpoints: [], problem: `Service has no port ${JSON.stringify(backendPort)}`, refused: keptRefused(refused) };
  return { service, endpoints: endpointsFromSlices(sp, slices, 'TCP', policy, refused), problem, refused: keptRefused(refused) };
}
