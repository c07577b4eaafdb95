// Backend assembly: the topology's backend plans with the endpoints of their Services, the
// custom default backends (default-backend annotation) and upstream-default-backend. Endpoints
// are rechecked at every build and memoised per Service, port and service-upstream; a backend is
// rebuilt only when its endpoints, owner or plan changed, so unchanged backends stay the same
// objects (the hashing and the payload serialiser rely on it).
import type { EndpointSlice, Service } from '../../store/kube-types.js';
import type { StoreReader } from '../../store/types.js';
import type { ParsedAnnotations } from './annotations/index.js';
import { NO_AFFINITY, NO_ALTERNATIVES, NO_UPSTREAM_HASH, makeBackend, trafficShaping, upstreamHashBy } from './backends.js';
import type { NginxSettings } from '../core/config/settings.js';
import { resolveServiceEndpoints, type ServiceEndpoints } from '../core/endpoints.js';
import { DEFAULT_UPSTREAM } from './fragments.js';
import type { AddressPolicy } from '../checks/address-policy.js';
import { endpointsKey, type BackendPlan } from './backend-plans.js';
import type { Topology } from './topology.js';
import { sameInputs } from '../core/tracking.js';
import { byName, isSortedByName } from '../core/sort.js';
import type { Backend, Endpoint, ModelWarning } from '../core/types.js';

export interface EndpointsEntry {
  svc: Service | undefined;
  slices: readonly EndpointSlice[];
  result: ServiceEndpoints;
}

interface BackendEntry {
  ends: ServiceEndpoints;
  owner: ParsedAnnotations;
  canary: boolean;
  affinityKey: string;
  alternativesKey: string;
  sslPassthrough: boolean;
  loadBalance: string;
  backend: Backend;
}

/** What backend assembly keeps between builds. */
export interface BackendCache {
  /** `endpointsKey` → the endpoints resolved from the Service and its slices. */
  endpoints: Map<string, EndpointsEntry>;
  /** Backend name → its backend and what it was made from. */
  backends: Map<string, BackendEntry>;
  /**
   * EndpointSlice key → its Service, for the slices read (the endpoints-only path places changes
   * by it); null until the first such change asks (sliceServicesOf), so that a first sync does
   * not make a key and an entry per slice.
   */
  sliceServices: Map<string, string> | null;
}

/** `endpoints`: a memo shared with other caches (the webhook's builders, one per review), in place of a map of its own. */
export function createBackendCache(endpoints: Map<string, EndpointsEntry> = new Map()): BackendCache {
  return { endpoints, backends: new Map(), sliceServices: null };
}

/** The cache's slice → Service map, made from the endpoints read so far at its first use; endpointsFor keeps it up from then on. */
export function sliceServicesOf(cache: BackendCache): ReadonlyMap<string, string> {
  if (!cache.sliceServices) {
    const map = new Map<string, string>();
    cache.endpoints.forEach((entry, key) => noteSlices(map, entry.slices, key.slice(0, key.indexOf('|'))));
    cache.sliceServices = map;
  }
  return cache.sliceServices;
}

function noteSlices(map: Map<string, string>, slices: readonly EndpointSlice[], svcKey: string): void {
  for (let i = 0; i < slices.length; i++) map.set(`${slices[i]!.metadata.namespace ?? ''}/${slices[i]!.metadata.name ?? ''}`, svcKey);
}

export interface BackendContext {
  cache: BackendCache;
  store: StoreReader;
  settings: NginxSettings;
  addressPolicy: AddressPolicy;
}

/** The endpoints of a Service port, memoised on the identity of the Service and its slices. */
export function endpointsFor(
  c: BackendContext, svcKey: string, port: string, serviceUpstream: boolean, key = endpointsKey(svcKey, port, serviceUpstream),
): ServiceEndpoints {
  const svc = c.store.getService(svcKey);
  const slices = c.store.getEndpointSlices(svcKey);
  let entry = c.cache.endpoints.get(key);
  if (!entry || entry.svc !== svc || !sameInputs(entry.slices, slices)) {
    entry = { svc, slices, result: resolveServiceEndpoints(svc, slices, port, serviceUpstream, c.addressPolicy) };
    c.cache.endpoints.set(key, entry);
    if (c.cache.sliceServices) noteSlices(c.cache.sliceServices, slices, svcKey);
  }
  return entry.result;
}

/** The warning of a plan whose Service has refused addresses, a problem or no ready endpoint. */
export function planWarning(p: BackendPlan, ends: ServiceEndpoints): ModelWarning | undefined {
  const warning = (message: string): ModelWarning => ({ object: `Ingress ${p.ownerKey}`, field: 'spec', message: `backend ${p.name}: Service ${p.use.serviceKey}${message}` });
  // Refused addresses first, each naming its EndpointSlice or Service.
  const refused = ends.refused.length > 0 ? `: ${ends.refused.join('; ')}` : '';
  if (ends.problem) return warning(`${refused || ':'}${refused ? '; ' : ' '}${ends.problem}`);
  if (ends.endpoints.length === 0) return warning(`${refused}${refused ? '; no ready endpoints (503)' : ' has no ready endpoints (503)'}`);
  return refused ? warning(refused) : undefined;
}

/**
 * The memoised backend of a name: rebuilt when its endpoints, owner or plan changed. When only
 * the endpoints changed and `withEndpoints` is given, the new backend is the previous one with
 * its Service and endpoints replaced: the other fields stay the same objects, so decide() sees
 * the policy unchanged without hashing it.
 */
function memoBackend(
  c: BackendContext, name: string, ends: ServiceEndpoints, owner: ParsedAnnotations, p: BackendPlan | null, make: () => Backend,
  withEndpoints?: (previous: Backend) => Backend | null,
): Backend {
  let e = c.cache.backends.get(name);
  const canary = p?.canary ?? false;
  const affinityKey = p?.affinityKey ?? '';
  const alternativesKey = p?.alternativesKey ?? '';
  const sslPassthrough = p?.sslPassthrough ?? false;
  const loadBalance = c.settings.loadBalance;
  if (e && e.ends === ends && e.owner === owner && e.canary === canary && e.affinityKey === affinityKey
    && e.alternativesKey === alternativesKey && e.sslPassthrough === sslPassthrough && e.loadBalance === loadBalance) {
    return e.backend;
  }
  const samePlan = e !== undefined && e.owner === owner && e.canary === canary && e.affinityKey === affinityKey
    && e.alternativesKey === alternativesKey && e.sslPassthrough === sslPassthrough && e.loadBalance === loadBalance;
  const backend = (samePlan && withEndpoints ? withEndpoints(e!.backend) : null) ?? make();
  e = { ends, owner, canary, affinityKey, alternativesKey, sslPassthrough, loadBalance, backend };
  c.cache.backends.set(name, e);
  return backend;
}

/** The backend of a plan with these endpoints. */
export function planBackend(c: BackendContext, p: BackendPlan, ends: ServiceEndpoints): Backend {
  return memoBackend(c, p.name, ends, p.owner, p, () => makeBackend({
    name: p.name,
    service: ends.service,
    port: p.use.port,
    endpoints: ends.endpoints,
    sessionAffinityConfig: p.affinity,
    upstreamHashByConfig: upstreamHashBy(p.owner),
    loadBalance: p.owner.loadBalance || c.settings.loadBalance,
    noServer: p.canary,
    trafficShapingPolicy: p.canary ? trafficShaping(p.owner) : undefined,
    alternativeBackends: p.alternatives.length === 0 ? NO_ALTERNATIVES : [...p.alternatives],
    sslPassthrough: p.sslPassthrough,
  }), (previous) => (previous.port === p.use.port ? { ...previous, service: ends.service, endpoints: ends.endpoints } : null));
}

/** What an earlier assembly left that a later one may reuse. */
export interface AssembledBackends {
  /** Sorted by name. */
  backends: Backend[];
  /** The backend and warning of each of the topology's plans. */
  planBackends: Backend[];
  planWarnings: Array<ModelWarning | undefined>;
  /** Warnings after the plans' (custom default backends, upstream-default-backend). */
  trailing: ModelWarning[];
  /** Services of custom and upstream default backends: a change to them takes the full build. */
  otherServices: Set<string>;
}

/** Stand-ins for "no Service" in memo comparisons (one object each, so they compare equal). */
const NO_ENDPOINTS: ServiceEndpoints = { service: null, endpoints: [], problem: null, refused: [] };
const BUILT_IN: ServiceEndpoints = { service: null, endpoints: [], problem: null, refused: [] };

export interface AssemblyInputs {
  topo: Topology;
  /** The annotations of an Ingress without any (the default backends' owner). */
  defaults: ParsedAnnotations;
  /** The built-in default server's endpoint (upstream-default-backend without --default-backend-service). */
  builtIn: readonly Endpoint[];
  /**
   * An earlier assembly of the same settings after which no Service or EndpointSlice changed: a
   * plan the topology kept (the same object at the same place) gives the same backend.
   */
  reuse: { topo: Topology; assembled: AssembledBackends } | null;
}

/** Every backend of the configuration, with the warnings each gives. */
export function assembleBackends(c: BackendContext, inputs: AssemblyInputs, warnings: ModelWarning[]): AssembledBackends {
  const { topo, defaults, reuse } = inputs;
  const { store, settings } = c;
  const backends: Backend[] = [];
  const planWarnings = new Array<ModelWarning | undefined>(topo.plans.length);
  const planBackends = new Array<Backend>(topo.plans.length);
  for (let i = 0; i < topo.plans.length; i++) {
    const p = topo.plans[i]!;
    if (reuse && reuse.topo.plans[i] === p) {
      const w = reuse.assembled.planWarnings[i];
      if (w) warnings.push(w);
      planWarnings[i] = w;
      backends.push((planBackends[i] = reuse.assembled.planBackends[i]!));
      continue;
    }
    const ends = endpointsFor(c, p.use.serviceKey, p.use.port, p.serviceUpstream, p.endpointsKey);
    const w = planWarning(p, ends);
    if (w) warnings.push(w);
    planWarnings[i] = w;
    backends.push((planBackends[i] = planBackend(c, p, ends)));
  }
  const trailingFrom = warnings.length;
  const otherServices = new Set<string>();

  for (const { name, svcKey, ownerKey } of topo.customDefaults) {
    if (topo.planned.has(name)) continue;
    otherServices.add(svcKey);
    const svc = store.getService(svcKey);
    const port = svc?.spec.ports?.[0];
    const ends = port ? endpointsFor(c, svcKey, String(port.port), false) : NO_ENDPOINTS;
    const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : [...ends.refused, ...(ends.problem ? [ends.problem] : [])].join('; ') || null;
    if (problem) {
      warnings.push({ object: `Ingress ${ownerKey}`, field: 'metadata.annotations', message: `default-backend: Service ${svcKey}: ${problem}` });
    }
    backends.push(memoBackend(c, name, ends, defaults, null, () => makeBackend({
      name, service: ends.service, port: port ? String(port.port) : '', endpoints: ends.endpoints,
      sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: NO_UPSTREAM_HASH, loadBalance: settings.loadBalance,
    })));
  }

  // upstream-default-backend: --default-backend-service, else (or without endpoints) the built-in server.
  const dbKey = store.options.defaultBackendService;
  let dbEnds = BUILT_IN;
  let dbPort = inputs.builtIn[0]!.port;
  if (dbKey) {
    otherServices.add(dbKey);
    const svc = store.getService(dbKey);
    const port = svc?.spec.ports?.[0];
    const ends = port ? endpointsFor(c, dbKey, String(port.port), false) : NO_ENDPOINTS;
    if (port && ends.endpoints.length > 0) {
      dbEnds = ends;
      dbPort = String(port.port);
      if (ends.refused.length > 0) warnings.push({ object: `Service ${dbKey}`, field: '', message: `--default-backend-service: ${ends.refused.join('; ')}` });
    } else {
      const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : [...ends.refused, ends.problem ?? 'no ready endpoints'].join('; ');
      warnings.push({ object: `Service ${dbKey}`, field: '', message: `--default-backend-service: ${problem}; using the built-in default server` });
    }
  }
  backends.push(memoBackend(c, DEFAULT_UPSTREAM, dbEnds, defaults, null, () => makeBackend({
    name: DEFAULT_UPSTREAM,
    service: dbEnds.service,
    port: dbPort,
    endpoints: dbEnds === BUILT_IN ? [...inputs.builtIn] : dbEnds.endpoints,
    sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: NO_UPSTREAM_HASH, loadBalance: settings.loadBalance,
  })));
  const trailing = warnings.slice(trailingFrom);
  if (!isSortedByName(backends)) backends.sort(byName);
  return { backends, planBackends, planWarnings, trailing, otherServices };
}

/** Drops the cached backends and endpoints the new topology no longer uses. */
export function forgetBackends(cache: BackendCache, topo: Topology, defaultBackendService: string): void {
  if (topo.removed) {
    for (const b of topo.removed.backends) cache.backends.delete(b);
    return;
  }
  // Deleted in place: after a recompute nearly everything is kept, and copying 10k entries is the cost.
  const defaults = new Set(topo.customDefaults.map((d) => d.name));
  for (const n of cache.backends.keys()) {
    if (!topo.planned.has(n) && !defaults.has(n) && n !== DEFAULT_UPSTREAM) cache.backends.delete(n);
  }
  const services = new Set<string>();
  for (const p of topo.plans) services.add(p.use.serviceKey);
  for (const d of topo.customDefaults) services.add(d.svcKey);
  services.add(defaultBackendService);
  for (const k of cache.endpoints.keys()) if (!services.has(k.slice(0, k.indexOf('|')))) cache.endpoints.delete(k);
}
