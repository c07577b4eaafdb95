// The model builder, the model's entry: store → Configuration. It runs the front end (today the
// Ingress one, ./ingress/) and the core's stages (./core/), following ingress-nginx's rules, in
// this order: the settings (ConfigMap), each Ingress's fragment (./ingress/fragments.ts, memoised
// per Ingress object), the topology (./ingress/topology-cache.ts: hosts, servers, backend plans,
// canaries), TLS (./ingress/tls.ts), backends with their endpoints (./ingress/backend-assembly.ts)
// and L4 services. Each stage keeps its cache in one object, so a rebuild redoes only what a
// change touches and hands back unchanged parts as the same objects, which the hashing in
// ./core/hash.ts relies on. When only EndpointSlices changed, ./ingress/endpoints-only.ts
// rebuilds just their backends.
import type { Logger } from '../log.js';
import type { ConfigMap, Ingress } from '../store/kube-types.js';
import type { StoreReader } from '../store/types.js';
import { GATEWAY_KINDS, type StoredKind } from '../store/events.js';
import { defaultAnnotations, locationTemplate, parseAnnotations, type ParsedAnnotations, type ParseResult } from './ingress/annotations/index.js';
import { prefixedAnnotationsKey } from './ingress/annotations/reader.js';
import type { NginxSettings } from './core/config/settings.js';
import { defaultSettings, parseConfigMap } from './core/config/parse.js';
import type { Backend, BackendTLSLocation, Certificate, Configuration, Endpoint, Location, ModelWarning, Server } from './core/types.js';
import { createCertificateCache } from './core/certificates.js';
import { DEFAULT_UPSTREAM, buildFragment, makeLocation, type IngressFragment } from './ingress/fragments.js';
import { parseL4Services } from './core/l4.js';
import { ROOT_PATH } from './core/paths.js';
import type { ServerMemo, Topology } from './ingress/topology.js';
import { createTopologyCache } from './ingress/topology-cache.js';
import { dependenciesCurrent, sameInputs, trackingReader, type Dependency } from './core/tracking.js';
import { STRICT_ADDRESS_POLICY, type AddressPolicy } from './checks/address-policy.js';
import { createBackendNameClaims } from './ingress/backend-names.js';
import { assembleBackends, createBackendCache, forgetBackends, sliceServicesOf, type BackendCache, type BackendContext, type EndpointsEntry } from './ingress/backend-assembly.js';
import { certificatesValidUntil, createTLSCache, forgetHosts, selectTLS, type TLSCache } from './ingress/tls.js';
import { changedServices, rebuildServiceBackends, type LastBuild } from './ingress/endpoints-only.js';
import { backendTLS, gatewayAPIStatus, gatewayFrontends, gatewayTLS, resolveBackends, translateGateways, type FrontendTable, type GatewayAPIStatus, type GatewayTLSCache, type GatewayTranslation, type LocationFactory } from './gateway/index.js';
import type { GatewayResources } from '../store/types.js';
import { byName } from './core/sort.js';

/** Distinct annotation sets kept (per namespace); past it the memo starts afresh. */
const MAX_SHARED_ANNOTATION_SETS = 4096;

export interface ModelBuildOptions {
  /** --annotations-prefix, e.g. `nginx.ingress.kubernetes.io`. */
  annotationsPrefix: string;
  /** The built-in 404 server; upstream-default-backend points at 127.0.0.1:<port> unless --default-backend-service. */
  defaultServerPort: number;
  /** Clock for certificate expiry. */
  now?: () => Date;
  logger?: Logger;
  /** Ports a TCP/UDP services entry may not take; default ingress-nginx's 80, 443, 442, the default server, 10246, 10247, 10254. */
  reservedPorts?: number[];
  /** Which node-local upstream addresses are refused; all of them by default. */
  addressPolicy?: AddressPolicy;
  /** --host-ownership: a host belongs to the namespace of its oldest Ingress. */
  hostOwnership?: boolean;
  /**
   * --enable-dynamic-routes: hosts whose every Ingress the Lua router can serve are matched in Lua
   * (./ingress/dynamic-routes.ts) instead of a server block. Off unless given (the commands turn it on).
   */
  dynamicRoutes?: boolean;
  /** Caches several builders may share (the admission webhook makes a builder per review). */
  shared?: SharedCaches;
}

/** What builders can share: parsed certificates (by Secret object) and the settings of the last ConfigMap. */
export interface SharedCaches {
  readCertificate: ReturnType<typeof createCertificateCache>;
  settings: { memo: SettingsMemo | null };
  /**
   * Fragments by Ingress object, in place of each builder's own (a WeakMap): the webhook's
   * builders, one per review, keep the stored Ingresses' fragments in a bounded map.
   */
  fragments?: FragmentMemo;
  /**
   * The annotation-set memo and the built-in default server's root, in place of each builder's
   * own (both depend on the settings object alone, which `settings` keeps across builders): the
   * webhook's builders, one per review, parse an annotation set and make the root once, not in
   * every review.
   */
  perSettings?: PerSettingsCaches;
  /** Hosts' servers, memoised on the identity of their inputs, in place of each builder's own (the memo bounds itself). */
  servers?: ServerMemo;
  /** Services' endpoints, memoised on the identity of the Service and its slices, in place of each builder's own (the memo bounds itself). */
  endpoints?: Map<string, EndpointsEntry>;
}

/** What depends on the settings object alone (and the builder's options, the same for every builder sharing it). */
export interface PerSettingsCaches {
  /**
   * Parsed annotations shared by the Ingresses of one namespace with equal annotations (most
   * Ingresses of a cluster share a few annotation sets), for the settings they were parsed with.
   * Only results that read nothing from the store and warned about nothing are kept: they depend
   * on the namespace, the annotations and the settings alone, and name no Ingress.
   */
  parsed: { settings: NginxSettings | null; byAnnotations: Map<string, ParsedAnnotations> };
  /** The built-in default server's root location, per settings. */
  defaultRoot: { settings: NginxSettings; location: Location } | null;
  /** An empty annotation-set memo, for new settings. */
  newAnnotationMemo(): Map<string, ParsedAnnotations>;
}

export function createPerSettingsCaches(newAnnotationMemo = () => new Map<string, ParsedAnnotations>()): PerSettingsCaches {
  return { parsed: { settings: null, byAnnotations: newAnnotationMemo() }, defaultRoot: null, newAnnotationMemo };
}

/** An Ingress's fragment, valid while the settings and what it read are the same. */
export interface FragmentEntry { settings: NginxSettings; deps: Dependency[]; fragment: IngressFragment }
export interface FragmentMemo {
  get(ing: Ingress): FragmentEntry | undefined;
  set(ing: Ingress, entry: FragmentEntry): void;
}

interface SettingsMemo { key: string; cm: ConfigMap | undefined; deps: Dependency[]; settings: NginxSettings; warnings: ModelWarning[] }

export function createSharedCaches(): SharedCaches {
  return { readCertificate: createCertificateCache(), settings: { memo: null } };
}

/**
 * How a build went: only the backends of changed EndpointSlices rebuilt; the previous topology
 * kept (no Ingress and no setting changed); patched for the few Ingresses that changed; or
 * computed anew over every Ingress.
 */
export type BuildPath = 'endpoints' | 'kept' | 'updated' | 'full';

export interface BuildResult {
  config: Configuration;
  warnings: ModelWarning[];
  path: BuildPath;
  /** The Gateway API status conditions, when some Gateway of ours exists (a full build computes them). */
  gatewayStatus?: GatewayAPIStatus;
}

/** What changed in the store since the previous build (the sync batch's source events). */
export type StoreChanges = ReadonlyArray<{ kind: StoredKind; key: string }>;

export interface ModelBuilder {
  /**
   * `changes`, when given, must name every object changed since the previous build; when they
   * are all EndpointSlices, only the backends of their Services are rebuilt; when they are all
   * Ingresses and Gateway API objects, the backends of plans the topology kept are reused.
   * Undefined: unknown.
   */
  build(store: StoreReader, changes?: StoreChanges): BuildResult;
}

/** What the builder keeps between builds, beside the topology's, TLS and backend caches. */
interface BuilderCaches {
  /** Per Ingress object: its fragment, valid while the settings and what it read are the same. */
  readonly ingresses: FragmentMemo;
  /** The builder's own, or the shared one. */
  readonly perSettings: PerSettingsCaches;
  /** The topology of the last full build (its removals are forgotten from the other caches once). */
  topology: Topology | null;
  /** The last lists handed out: an equal list is handed back as the same array. */
  servers: readonly Server[] | undefined;
  backends: readonly Backend[] | undefined;
  /** What the endpoints-only path reuses; null after a build that threw. */
  last: LastBuild | null;
  /** The Ingresses' hosts (without `_`) of a topology, which the Gateway API front end yields to. */
  ingressHosts: { topo: Topology; hosts: Set<string>; key: string } | null;
  /** The Gateway API front end's last translation and what it was made from. */
  gateway: { resources: GatewayResources; settings: NginxSettings; ingressHosts: string; serviceFacts: string; translation: GatewayTranslation } | null;
  /** The HTTPRoutes' backends of the last full build, by name (an equal one is handed back as the same object). */
  gatewayBackends: Map<string, Backend>;
  /** Locations of HTTPRoutes get every group's defaults: one factory per settings. */
  gatewayLocations: { settings: NginxSettings; make: LocationFactory } | null;
  /** Hosts of HTTPS listeners with their certificates. */
  gatewayTLS: GatewayTLSCache;
}

export function createModelBuilder(opts: ModelBuildOptions): ModelBuilder {
  const now = opts.now ?? (() => new Date());
  const logger = opts.logger;
  const shared = opts.shared ?? createSharedCaches();
  const builtIn: readonly Endpoint[] = [{ address: '127.0.0.1', port: String(opts.defaultServerPort) }];
  const reserved = new Set(opts.reservedPorts ?? [80, 443, 442, opts.defaultServerPort, 10246, 10247, 10254]);
  const addressPolicy = opts.addressPolicy ?? STRICT_ADDRESS_POLICY;
  const caches: BuilderCaches = { ingresses: shared.fragments ?? new WeakMap(), perSettings: shared.perSettings ?? createPerSettingsCaches(), topology: null, servers: undefined, backends: undefined, last: null, ingressHosts: null, gateway: null, gatewayBackends: new Map(), gatewayLocations: null, gatewayTLS: new Map() };
  const tlsCache: TLSCache = createTLSCache();
  const backendCache: BackendCache = createBackendCache(shared.endpoints);
  const claimBackendNames = createBackendNameClaims();
  const topologies = createTopologyCache({ annotationsPrefix: opts.annotationsPrefix, defaultRoot, hostOwnership: opts.hostOwnership, dynamicRoutes: opts.dynamicRoutes, sharedServers: shared.servers });
  const dynamicRoutes = opts.dynamicRoutes === true;

  function settingsFor(store: StoreReader): { settings: NginxSettings; warnings: ModelWarning[] } {
    const key = store.options.configmap;
    const cm = key ? store.getConfigMap(key) : undefined;
    const memo = shared.settings.memo;
    if (memo && memo.key === key && memo.cm === cm && dependenciesCurrent(store, memo.deps)) return memo;
    const deps: Dependency[] = [];
    let settings: NginxSettings;
    let warnings: ModelWarning[] = [];
    if (!key) settings = defaultSettings();
    else if (!cm) {
      settings = defaultSettings();
      warnings = [{ object: `ConfigMap ${key}`, field: '', message: 'ConfigMap not found; using default settings' }];
    } else {
      ({ settings, warnings } = parseConfigMap(cm.data, { object: `ConfigMap ${key}`, store: trackingReader(store, deps) }));
    }
    shared.settings.memo = { key, cm, deps, settings, warnings };
    return shared.settings.memo;
  }

  function fragmentFor(store: StoreReader, ing: Ingress, settings: NginxSettings): IngressFragment {
    let entry = caches.ingresses.get(ing);
    // The controller's own status writes come back as new objects: the store says which object
    // one repeats but for its status, and that object's fragment is this one's.
    const origin = entry ? undefined : store.specOrigin?.(ing);
    if (origin) {
      entry = caches.ingresses.get(origin);
      if (entry) caches.ingresses.set(ing, entry);
    }
    if (!entry || entry.settings !== settings || (entry.deps.length > 0 && !dependenciesCurrent(store, entry.deps))) {
      const deps: Dependency[] = [];
      const parsed = parsedAnnotations(store, ing, settings, deps);
      entry = { settings, deps, fragment: buildFragment(ing, parsed.value, settings, parsed.warnings) };
      caches.ingresses.set(ing, entry);
      if (origin) caches.ingresses.set(origin, entry);
    }
    return entry.fragment;
  }

  function parsedAnnotations(store: StoreReader, ing: Ingress, settings: NginxSettings, deps: Dependency[]): ParseResult {
    const memo = caches.perSettings.parsed;
    if (memo.settings !== settings || memo.byAnnotations.size >= MAX_SHARED_ANNOTATION_SETS) {
      memo.settings = settings;
      memo.byAnnotations = caches.perSettings.newAnnotationMemo();
    }
    const key = prefixedAnnotationsKey(ing, opts.annotationsPrefix);
    const shared = memo.byAnnotations.get(key);
    if (shared) return { value: shared, warnings: [] };
    const parsed = parseAnnotations(ing, { prefix: opts.annotationsPrefix, settings, store: trackingReader(store, deps), addressPolicy });
    if (deps.length === 0 && parsed.warnings.length === 0) memo.byAnnotations.set(key, parsed.value);
    return parsed;
  }

  function defaultRoot(settings: NginxSettings): Location {
    const memo = caches.perSettings;
    if (memo.defaultRoot?.settings !== settings) {
      const d = defaultAnnotations(settings);
      // ingress-nginx's built-in default location carries no rewrite settings (no ssl-redirect)
      // and no global auth. Its access log follows enable-access-log-for-default-backend.
      const a = { ...d, rewrite: { ...d.rewrite, sslRedirect: false, forceSSLRedirect: false }, accessLog: settings.enableAccessLogForDefaultBackend, externalAuth: null };
      memo.defaultRoot = { settings, location: makeLocation(ROOT_PATH, 'Prefix', null, null, DEFAULT_UPSTREAM, locationTemplate(a), settings, true) };
    }
    return memo.defaultRoot.location;
  }

  function gatewayLocation(settings: NginxSettings): LocationFactory {
    if (caches.gatewayLocations?.settings !== settings) {
      // A host is one server on both ports: a route attached to an HTTP listener is served over
      // plain HTTP even when an HTTPS listener gives the host a certificate (no ssl-redirect).
      const d = defaultAnnotations(settings);
      const template = locationTemplate({ ...d, rewrite: { ...d.rewrite, sslRedirect: false } });
      caches.gatewayLocations = {
        settings,
        make: (path, pathType, route, use, backend) => makeLocation(path, pathType, route, use && { name: backend, namespace: route.namespace, serviceKey: `${route.namespace}/${use.service}`, ...use }, backend, template, settings, false),
      };
    }
    return caches.gatewayLocations.make;
  }

  /** The Ingresses' hosts of the topology, computed again only for a new topology. */
  function ingressHostsOf(topo: Topology): { hosts: Set<string>; key: string } {
    if (caches.ingressHosts?.topo !== topo) {
      const hosts = new Set<string>();
      for (const { host } of topo.hosts) if (host !== '_') hosts.add(host);
      caches.ingressHosts = { topo, hosts, key: [...hosts].join(',') };
    }
    return caches.ingressHosts;
  }

  /** The Gateway API front end's translation, redone only when its objects, the settings or the Ingresses' hosts changed. */
  function gatewayFor(store: StoreReader, settings: NginxSettings, topo: Topology): GatewayTranslation | null {
    const resources = store.gatewayResources?.();
    if (!resources || resources.gateways.length === 0) {
      caches.gateway = null;
      return null;
    }
    const { hosts, key: ingressHosts } = ingressHostsOf(topo);
    // A backendRef to a Service that does not exist answers 500: the translation depends on which exist.
    // So does the protocol a backendRef's Service port speaks (appProtocol kubernetes.io/h2c).
    const missing = new Set<string>();
    const h2cPorts = new Set<string>();
    for (const r of resources.httpRoutes) {
      for (const rule of r.spec.rules ?? []) {
        for (const b of rule.backendRefs ?? []) {
          const key = `${b.namespace ?? r.metadata.namespace ?? ''}/${b.name}`;
          const service = store.getService(key);
          if (service === undefined) missing.add(key);
          else if (service.spec?.ports?.some((p) => p.port === b.port && p.appProtocol === 'kubernetes.io/h2c')) h2cPorts.add(`${key}:${b.port}`);
        }
      }
    }
    const serviceFacts = `${[...missing].sort().join(',')} ${[...h2cPorts].sort().join(',')}`;
    const memo = caches.gateway;
    if (memo && memo.resources === resources && memo.settings === settings && memo.ingressHosts === ingressHosts && memo.serviceFacts === serviceFacts) return memo.translation;
    const translation = translateGateways({
      resources, namespaceOf: (name) => store.getNamespace(name), serviceExists: (key) => !missing.has(key), h2cPorts, ingressHosts: hosts, settings, dynamicRoutes,
      newLocation: gatewayLocation(settings), defaultRoot: defaultRoot(settings),
      portOptions: store.options.gatewayPorts,
    });
    caches.gateway = { resources, settings, ingressHosts, serviceFacts, translation };
    return translation;
  }

  function backendContext(store: StoreReader, settings: NginxSettings): BackendContext {
    return { cache: backendCache, store, settings, addressPolicy };
  }

  function l4Services(store: StoreReader, warnings: ModelWarning[]): Pick<Configuration, 'tcpEndpoints' | 'udpEndpoints'> {
    const l4 = (key: string, protocol: 'TCP' | 'UDP') => {
      if (!key) return [];
      const r = parseL4Services(key, store.getConfigMap(key), protocol, reserved, store, addressPolicy);
      for (const w of r.warnings) warnings.push(w);
      return r.services;
    };
    return { tcpEndpoints: l4(store.options.tcpServicesConfigmap, 'TCP'), udpEndpoints: l4(store.options.udpServicesConfigmap, 'UDP') };
  }

  /** Rebuilds only the backends of Services whose EndpointSlices changed; null: not possible. */
  function buildEndpointsOnly(store: StoreReader, changes: StoreChanges): BuildResult | null {
    const prev = caches.last;
    // HTTPRoutes' backends are resolved by the full build.
    if (!prev || now().getTime() >= prev.validUntil || caches.gateway !== null) return null;
    const services = changedServices(store, changes, prev, () => sliceServicesOf(backendCache));
    if (!services) return null;
    const started = performance.now();
    const { last, warnings } = rebuildServiceBackends(backendContext(store, prev.settings), prev, services);
    const { tcpEndpoints, udpEndpoints } = l4Services(store, warnings);
    caches.last = last;
    caches.backends = last.assembled.backends;
    const config: Configuration = {
      servers: prev.servers, backends: last.assembled.backends, tcpEndpoints, udpEndpoints,
      certificates: prev.certificates, defaultCertificate: prev.defaultCertificate, settings: prev.settings, dynamicRoutes,
    };
    logger?.debug({ services: services.size, warnings: warnings.length, ms: Math.round(performance.now() - started) }, 'model endpoints rebuilt');
    return { config, warnings, path: 'endpoints' };
  }

  /**
   * `backendsKept`: the caller says only Ingresses and Gateway API objects changed since the
   * previous build (no Service, EndpointSlice, Secret or ConfigMap did).
   */
  function buildAll(store: StoreReader, backendsKept: boolean): BuildResult {
    const started = performance.now();
    const previous = caches.last;
    caches.last = null; // a build that throws leaves nothing to reuse
    const warnings: ModelWarning[] = [];
    const { settings, warnings: settingsWarnings } = settingsFor(store);
    for (const w of settingsWarnings) warnings.push(w);

    const list = store.listIngresses();
    const fragments = new Array<IngressFragment>(list.length);
    for (let i = 0; i < list.length; i++) fragments[i] = fragmentFor(store, list[i]!, settings);
    const topo = topologies.topologyFor(settings, claimBackendNames(fragments));
    const path: BuildPath = topo === caches.topology ? 'kept' : topo.removed !== null && caches.topology !== null ? 'updated' : 'full';
    // A first build has nothing to forget.
    if (topo !== caches.topology && caches.topology !== null) {
      forgetHosts(tlsCache, topo);
      forgetBackends(backendCache, topo, store.options.defaultBackendService);
    }
    caches.topology = topo;
    for (const w of topo.warnings) warnings.push(w);

    const tls = selectTLS(tlsCache, topo.hosts, { store, readCertificate: shared.readCertificate, date: now(), warnings });
    const leading = warnings.slice();
    // With the same settings and no Service or EndpointSlice changed, a plan the topology kept
    // gives the same backend (a Gateway API change leaves every plan in place).
    const reuse = backendsKept && previous !== null && previous.settings === settings ? { topo: previous.topo, assembled: previous.assembled } : null;
    const assembled = assembleBackends(backendContext(store, settings), { topo, defaults: defaultAnnotations(settings), builtIn, reuse }, warnings);
    const { tcpEndpoints, udpEndpoints } = l4Services(store, warnings);

    let allServers: readonly Server[] = tls.servers;
    let allBackends: readonly Backend[] = assembled.backends;
    const gateway = gatewayFor(store, settings, topo);
    let gatewayStatus: GatewayAPIStatus | undefined;
    let certificates = tls.certificates;
    let frontends: FrontendTable | undefined;
    let backendTLSLocations: readonly BackendTLSLocation[] = [];
    if (gateway) {
      for (const w of gateway.warnings) warnings.push(w);
      const resources = caches.gateway!.resources;
      const gwTLS = gatewayTLS(gateway.servers, {
        resources, listenerSets: gateway.listenerSets, tlsListeners: gateway.tlsListeners, getSecret: (key) => store.getSecret(key), readCertificate: shared.readCertificate,
        defaultCertificate: tls.defaultCertificate, date: now(), warnings,
      }, caches.gatewayTLS);
      const btls = backendTLS(gwTLS.servers, {
        resources, plans: gateway.plans, routes: gateway.routes, getService: (key) => store.getService(key), getConfigMap: (key) => store.getConfigMap(key),
        getSecret: (key) => store.getSecret(key), warnings,
      });
      const ingressHosts = tls.servers.flatMap((s) => [s.hostname, ...s.aliases]);
      const gwFrontends = gatewayFrontends(resources, (key) => store.getConfigMap(key), ingressHosts, warnings, gwTLS.listenerCertificates,
        [...gateway.tlsListeners.keys()].filter((h) => !h.includes(':') && !gateway.plainHosts.has(h)));
      frontends = gwFrontends.table ?? undefined;
      backendTLSLocations = btls.locations;
      gatewayStatus = gatewayAPIStatus(resources, gateway, store.options.gatewayControllerName ?? '', (key) => store.getService(key) !== undefined, gwTLS.problems, btls, gwFrontends);
      const catchAlls = [gwFrontends.table?.catchAll, ...Object.values(gwFrontends.table?.portCatchAll ?? {})].filter((uid): uid is string => uid !== undefined && !gwTLS.certificates[uid]);
      const gatewayCertificates = catchAlls.length > 0
        ? { ...gwTLS.certificates, ...Object.fromEntries(catchAlls.map((uid) => [uid, [...gwTLS.listenerCertificates.values()].find((c) => c.uid === uid)!])) } : gwTLS.certificates;
      certificates = mergeCertificates(tls.certificates, gatewayCertificates);
      // Both lists are sorted already and the Gateway API's are few: merged, not sorted again.
      allServers = mergeSorted(tls.servers, [...btls.servers].sort(byServerOrder), byServerOrder);
      allBackends = mergeSorted(assembled.backends, resolveBackends(gateway.plans, store, settings, addressPolicy, warnings, caches.gatewayBackends).sort(byName), byName);
    }

    // Unchanged lists are handed back as the same arrays: decide() sees them equal at once.
    let servers: readonly Server[] = allServers;
    if (sameInputs(caches.servers, servers)) servers = caches.servers!;
    else caches.servers = servers;
    let backends: readonly Backend[] = allBackends;
    if (sameInputs(caches.backends, backends)) backends = caches.backends!;
    else caches.backends = backends;

    const config: Configuration = {
      servers, backends, tcpEndpoints, udpEndpoints, certificates, defaultCertificate: tls.defaultCertificate, settings, dynamicRoutes,
      ...(gateway && dynamicRoutes && gateway.ports.extra.length > 0 ? { listenerPorts: gateway.ports.extra } : {}),
      ...(frontends ? { frontends } : {}),
      ...(backendTLSLocations.length > 0 ? { backendTLSLocations } : {}),
    };
    caches.last = {
      topo, settings, servers, certificates, defaultCertificate: tls.defaultCertificate,
      validUntil: certificatesValidUntil(certificates), leading, assembled: { ...assembled, backends: backends as Backend[] },
      backendIndex: previous?.assembled.backends === backends ? previous.backendIndex : undefined,
      plansByService: previous?.topo === topo ? previous.plansByService : undefined,
    };
    logger?.debug({
      ingresses: fragments.length, servers: servers.length, backends: backends.length,
      warnings: warnings.length, ms: Math.round(performance.now() - started),
    }, 'model built');
    return gatewayStatus ? { config, warnings, path, gatewayStatus } : { config, warnings, path };
  }

  return {
    build(store, changes) {
      return (changes && buildEndpointsOnly(store, changes)) || buildAll(store, changes !== undefined && changes.every((c) => c.kind === 'Ingress' || isGatewayKind(c.kind)));
    },
  };
}

/** The Ingresses' certificates and the Gateway listeners', sorted by uid; the first unchanged when there are none of the second. */
function mergeCertificates(a: Readonly<Record<string, Certificate>>, b: Readonly<Record<string, Certificate>>): Record<string, Certificate> {
  const extra = Object.keys(b).filter((uid) => !(uid in a));
  if (extra.length === 0) return a as Record<string, Certificate>;
  const all: Record<string, Certificate> = {};
  for (const uid of [...Object.keys(a), ...extra].sort()) all[uid] = (a[uid] ?? b[uid])!;
  return all;
}

const isGatewayKind = (kind: StoredKind): boolean => (GATEWAY_KINDS as readonly StoredKind[]).includes(kind);

/** Two lists sorted by `order` as one sorted list (on a tie, `a`'s item first). */
function mergeSorted<T>(a: readonly T[], b: readonly T[], order: (x: T, y: T) => number): T[] {
  const out = new Array<T>(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = order(b[j]!, a[i]!) < 0 ? b[j++]! : a[i++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/** The model's order of servers: the default server `_` first, then by host name. */
function byServerOrder(a: Server, b: Server): number {
  if (a.hostname === b.hostname) return 0;
  if (a.hostname === '_') return -1;
  if (b.hostname === '_') return 1;
  return a.hostname < b.hostname ? -1 : 1;
}
