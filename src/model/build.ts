// The model builder: store → Configuration, following ingress-nginx's rules. Memo caches in its
// closure (per Ingress object, per host, per backend, per Service endpoints, per Secret) make a
// rebuild redo only what a change touches, and hand back unchanged fragments as the same
// objects, which the hashing in ./hash.ts relies on. The Ingress-only part lives in
// ./topology.ts; TLS, endpoints and L4 services are rechecked here at every build.
import type { Logger } from '../log.js';
import type { ConfigMap, EndpointSlice, Ingress, Service } from '../store/kube-types.js';
import type { StoreReader } from '../store/types.js';
import type { ResourceKind } from '../store/events.js';
import { defaultAnnotations, parseAnnotations } from './annotations/index.js';
import type { ParsedAnnotations } from './annotations/types.js';
import type { NginxSettings } from './config/settings.js';
import { defaultSettings, parseConfigMap } from './config/parse.js';
import type { Backend, Certificate, Configuration, Endpoint, Location, ModelWarning, Server } from './types.js';
import { NO_AFFINITY, makeBackend, trafficShaping, upstreamHashBy } from './backends.js';
import {
  certificateCoversHost, certificateExpired, createCertificateCache, type ParsedCertificate,
} from './certificates.js';
import { resolveServiceEndpoints, type ServiceEndpoints } from './endpoints.js';
import { DEFAULT_UPSTREAM, buildFragment, makeLocation, type IngressFragment } from './fragments.js';
import { parseL4Services } from './l4.js';
import { FALLBACK_UID } from './payload.js';
import { DEFAULT_SERVER, ROOT_PATH } from './paths.js';
import { createTopologyCache, endpointsKey, type BackendPlan, type Topology } from './topology.js';
import { dependenciesCurrent, sameInputs, trackingReader, type Dependency } from './tracking.js';
import { byName, isSortedByName } from './sort.js';
import { STRICT_ADDRESS_POLICY, type AddressPolicy } from './address-policy.js';
import { createBackendNameClaims } from './backend-names.js';

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
  /** Caches several builders may share (the admission webhook makes a builder per review). */
  shared?: SharedCaches;
}

/** What builders can share: parsed certificates (by Secret object) and the settings of the last ConfigMap. */
export interface SharedCaches {
  readCertificate: ReturnType<typeof createCertificateCache>;
  settings: { memo: SettingsMemo | null };
}

interface SettingsMemo { key: string; cm: ConfigMap | undefined; deps: Dependency[]; settings: NginxSettings; warnings: ModelWarning[] }

export function createSharedCaches(): SharedCaches {
  return { readCertificate: createCertificateCache(), settings: { memo: null } };
}

export interface BuildResult {
  config: Configuration;
  warnings: ModelWarning[];
}

/** What changed in the store since the previous build (the sync batch's source events). */
export type StoreChanges = ReadonlyArray<{ kind: ResourceKind; key: string }>;

export interface ModelBuilder {
  /**
   * `changes`, when given, must name every object changed since the previous build; when they
   * are all EndpointSlices, only the backends of their Services are rebuilt. Undefined: unknown.
   */
  build(store: StoreReader, changes?: StoreChanges): BuildResult;
}


interface IngressEntry {
  settings: NginxSettings;
  deps: Dependency[];
  fragment: IngressFragment;
}

interface TLSEntry {
  base: Server;
  certificate: string | null;
  tlsSecret: string | null;
  server: Server;
}

interface EndpointsEntry {
  svc: Service | undefined;
  slices: EndpointSlice[];
  result: ServiceEndpoints;
}

/** What the last build left for an endpoints-only rebuild to reuse. */
interface LastBuild {
  topo: Topology;
  settings: NginxSettings;
  servers: Server[];
  certificates: Record<string, Certificate>;
  defaultCertificate: string | null;
  /** Certificates are rechecked (full build) once the first of them expires. */
  validUntil: number;
  /** Warnings before the backends (settings, topology, certificates), per plan, and after the plans. */
  leading: ModelWarning[];
  planWarnings: Array<ModelWarning | undefined>;
  /** The backend of each of `topo.plans`. */
  planBackends: Backend[];
  trailing: ModelWarning[];
  /** Services of custom and upstream default backends: a change to them takes the full build. */
  otherServices: Set<string>;
  backends: Backend[];
  backendIndex?: Map<string, number>;
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

export function createModelBuilder(opts: ModelBuildOptions): ModelBuilder {
  const now = opts.now ?? (() => new Date());
  const logger = opts.logger;
  const shared = opts.shared ?? createSharedCaches();
  const readCertificate = shared.readCertificate;
  const coverage = new WeakMap<ParsedCertificate, Map<string, boolean>>();
  const fallbackEndpoints: Endpoint[] = [{ address: '127.0.0.1', port: String(opts.defaultServerPort) }];
  const reserved = new Set(opts.reservedPorts ?? [80, 443, 442, opts.defaultServerPort, 10246, 10247, 10254]);
  const addressPolicy = opts.addressPolicy ?? STRICT_ADDRESS_POLICY;

  const ingressMemo = new WeakMap<Ingress, IngressEntry>();
  let tlsMemo = new Map<string, TLSEntry>();
  let endpointsMemo = new Map<string, EndpointsEntry>();
  let backendMemo = new Map<string, BackendEntry>();
  let defaultRootMemo: { settings: NginxSettings; location: Location } | null = null;
  let lastServers: Server[] | undefined;
  let lastBackends: Backend[] | undefined;
  let last: LastBuild | null = null;
  /** EndpointSlice key → its Service, for the slices the builder has read. */
  const sliceServices = new Map<string, string>();
  const plansByService = new WeakMap<Topology, Map<string, number[]>>();

  function covers(parsed: ParsedCertificate, host: string): boolean {
    let m = coverage.get(parsed);
    if (!m) coverage.set(parsed, (m = new Map()));
    let v = m.get(host);
    if (v === undefined) m.set(host, (v = certificateCoversHost(parsed, host)));
    return v;
  }

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
    let entry = ingressMemo.get(ing);
    if (!entry || entry.settings !== settings || (entry.deps.length > 0 && !dependenciesCurrent(store, entry.deps))) {
      const deps: Dependency[] = [];
      const parsed = parseAnnotations(ing, { prefix: opts.annotationsPrefix, settings, store: trackingReader(store, deps) });
      entry = { settings, deps, fragment: buildFragment(ing, parsed.value, settings, parsed.warnings) };
      ingressMemo.set(ing, entry);
    }
    return entry.fragment;
  }

  function endpointsFor(
    store: StoreReader, svcKey: string, port: string, serviceUpstream: boolean, key = endpointsKey(svcKey, port, serviceUpstream),
  ): ServiceEndpoints {
    const svc = store.getService(svcKey);
    const slices = store.getEndpointSlices(svcKey);
    let entry = endpointsMemo.get(key);
    if (!entry || entry.svc !== svc || !sameInputs(entry.slices, slices)) {
      entry = { svc, slices, result: resolveServiceEndpoints(svc, slices, port, serviceUpstream, addressPolicy) };
      endpointsMemo.set(key, entry);
      for (const s of slices) sliceServices.set(`${s.metadata.namespace ?? ''}/${s.metadata.name ?? ''}`, svcKey);
    }
    return entry.result;
  }

  function defaultRoot(settings: NginxSettings): Location {
    if (defaultRootMemo?.settings !== settings) {
      const d = defaultAnnotations(settings);
      // ingress-nginx's built-in default location carries no rewrite settings (no ssl-redirect).
      // Its access log follows enable-access-log-for-default-backend.
      const a = { ...d, rewrite: { ...d.rewrite, sslRedirect: false, forceSSLRedirect: false }, accessLog: settings.enableAccessLogForDefaultBackend };
      defaultRootMemo = { settings, location: makeLocation(ROOT_PATH, 'Prefix', null, null, DEFAULT_UPSTREAM, a, settings, true) };
    }
    return defaultRootMemo.location;
  }

  const claimBackendNames = createBackendNameClaims();
  const topologies = createTopologyCache({ annotationsPrefix: opts.annotationsPrefix, defaultRoot, hostOwnership: opts.hostOwnership });
  let lastTopology: Topology | null = null;

  /** Drops memo entries for hosts, backends and Services the new topology no longer has. */
  function forgetRemoved(topo: Topology, defaultBackendService: string): void {
    if (topo.removed) {
      for (const h of topo.removed.hosts) tlsMemo.delete(h);
      for (const b of topo.removed.backends) backendMemo.delete(b);
      return;
    }
    const keep = <T>(m: Map<string, T>, names: Iterable<string>) => {
      const next = new Map<string, T>();
      for (const n of names) { const e = m.get(n); if (e) next.set(n, e); }
      return next;
    };
    tlsMemo = keep(tlsMemo, topo.hosts.map((h) => h.host));
    backendMemo = keep(backendMemo, [...topo.planned, ...topo.customDefaults.map((c) => c.name), DEFAULT_UPSTREAM]);
    const services = new Set(topo.plans.map((p) => p.use.serviceKey));
    for (const c of topo.customDefaults) services.add(c.svcKey);
    services.add(defaultBackendService);
    endpointsMemo = new Map([...endpointsMemo].filter(([k]) => services.has(k.slice(0, k.indexOf('|')))));
  }

  function build(store: StoreReader, changes?: StoreChanges): BuildResult {
    return (changes && buildEndpointsOnly(store, changes)) || buildAll(store, changes !== undefined && changes.every((c) => c.kind === 'Ingress'));
  }

  /** The Services whose EndpointSlices `changes` touched, or null when the full build must run. */
  function changedServices(store: StoreReader, changes: StoreChanges, prev: LastBuild): Set<string> | null {
    const services = new Set<string>();
    for (const c of changes) {
      if (c.kind !== 'EndpointSlice') return null;
      // A slice the builder never read (new, or of an unused Service), or one that left its
      // Service (deleted or relabelled): where it went is unknown here.
      const svcKey = sliceServices.get(c.key);
      if (svcKey === undefined || prev.otherServices.has(svcKey)) return null;
      const slash = c.key.indexOf('/');
      const ns = c.key.slice(0, slash);
      const name = c.key.slice(slash + 1);
      if (!store.getEndpointSlices(svcKey).some((s) => (s.metadata.namespace ?? '') === ns && s.metadata.name === name)) return null;
      services.add(svcKey);
    }
    return services;
  }

  /** Rebuilds only the backends of Services whose EndpointSlices changed; null: not possible. */
  function buildEndpointsOnly(store: StoreReader, changes: StoreChanges): BuildResult | null {
    const prev = last;
    if (!prev || now().getTime() >= prev.validUntil) return null;
    const services = changedServices(store, changes, prev);
    if (!services) return null;
    const started = performance.now();
    const { topo, settings } = prev;
    let byService = plansByService.get(topo);
    if (!byService) {
      byService = new Map();
      for (let i = 0; i < topo.plans.length; i++) {
        const k = topo.plans[i]!.use.serviceKey;
        const list = byService.get(k);
        if (list) list.push(i);
        else byService.set(k, [i]);
      }
      plansByService.set(topo, byService);
    }
    if (!prev.backendIndex) prev.backendIndex = new Map(prev.backends.map((b, i) => [b.name, i]));
    let backends = prev.backends;
    const planWarnings = prev.planWarnings.slice();
    const planBackends = prev.planBackends.slice();
    for (const svcKey of services) {
      for (const i of byService.get(svcKey) ?? []) {
        const p = topo.plans[i]!;
        const ends = endpointsFor(store, p.use.serviceKey, p.use.port, p.serviceUpstream, p.endpointsKey);
        planWarnings[i] = planWarning(p, ends);
        const b = planBackend(p, ends, settings);
        planBackends[i] = b;
        const at = prev.backendIndex.get(p.name)!;
        if (backends[at] !== b) {
          if (backends === prev.backends) backends = backends.slice();
          backends[at] = b;
        }
      }
    }
    const warnings = [...prev.leading];
    for (const w of planWarnings) if (w) warnings.push(w);
    for (const w of prev.trailing) warnings.push(w);
    const { tcpEndpoints, udpEndpoints } = l4Services(store, warnings);
    lastBackends = backends;
    last = { ...prev, planWarnings, planBackends, backends, backendIndex: prev.backendIndex };
    const config: Configuration = {
      servers: prev.servers, backends, tcpEndpoints, udpEndpoints,
      certificates: prev.certificates, defaultCertificate: prev.defaultCertificate, settings,
    };
    logger?.debug({ services: services.size, warnings: warnings.length, ms: Math.round(performance.now() - started) }, 'model endpoints rebuilt');
    return { config, warnings };
  }

  function planWarning(p: BackendPlan, ends: ServiceEndpoints): ModelWarning | undefined {
    const warning = (message: string): ModelWarning => ({ object: `Ingress ${p.ownerKey}`, field: 'spec', message: `backend ${p.name}: Service ${p.use.serviceKey}${message}` });
    // Refused addresses first, each naming its EndpointSlice or Service.
    const refused = ends.refused.length > 0 ? `: ${ends.refused.join('; ')}` : '';
    if (ends.problem) return warning(`${refused || ':'}${refused ? '; ' : ' '}${ends.problem}`);
    if (ends.endpoints.length === 0) return warning(`${refused}${refused ? '; no ready endpoints (503)' : ' has no ready endpoints (503)'}`);
    return refused ? warning(refused) : undefined;
  }

  /** The memoised backend of a name: rebuilt when its endpoints, owner or plan changed. */
  function memoBackend(
    name: string, ends: ServiceEndpoints, owner: ParsedAnnotations, p: BackendPlan | null, settings: NginxSettings, make: () => Backend,
  ): Backend {
    let e = backendMemo.get(name);
    const canary = p?.canary ?? false;
    const affinityKey = p?.affinityKey ?? '';
    const alternativesKey = p?.alternativesKey ?? '';
    const sslPassthrough = p?.sslPassthrough ?? false;
    if (!e || e.ends !== ends || e.owner !== owner || e.canary !== canary || e.affinityKey !== affinityKey
      || e.alternativesKey !== alternativesKey || e.sslPassthrough !== sslPassthrough || e.loadBalance !== settings.loadBalance) {
      e = { ends, owner, canary, affinityKey, alternativesKey, sslPassthrough, loadBalance: settings.loadBalance, backend: make() };
      backendMemo.set(name, e);
    }
    return e.backend;
  }

  function planBackend(p: BackendPlan, ends: ServiceEndpoints, settings: NginxSettings): Backend {
    return memoBackend(p.name, ends, p.owner, p, settings, () => makeBackend({
      name: p.name,
      service: ends.service,
      port: p.use.port,
      endpoints: ends.endpoints,
      sessionAffinityConfig: p.affinity,
      upstreamHashByConfig: upstreamHashBy(p.owner),
      loadBalance: p.owner.loadBalance || settings.loadBalance,
      noServer: p.canary,
      trafficShapingPolicy: p.canary ? trafficShaping(p.owner) : undefined,
      alternativeBackends: [...p.alternatives],
      sslPassthrough: p.sslPassthrough,
    }));
  }

  function l4Services(store: StoreReader, warnings: ModelWarning[]): Pick<Configuration, 'tcpEndpoints' | 'udpEndpoints'> {
    const l4 = (key: string, protocol: 'TCP' | 'UDP') => {
      if (!key) return [];
      const r = parseL4Services(key, store.getConfigMap(key), protocol, reserved, store, addressPolicy);
      for (const w of r.warnings) warnings.push(w);
      return r.services;
    };
    const tcpEndpoints = l4(store.options.tcpServicesConfigmap, 'TCP');
    const udpEndpoints = l4(store.options.udpServicesConfigmap, 'UDP');
    return { tcpEndpoints, udpEndpoints };
  }

  /** `ingressesOnly`: the caller says only Ingresses changed since the previous build (Services and EndpointSlices did not). */
  function buildAll(store: StoreReader, ingressesOnly = false): BuildResult {
    const started = performance.now();
    const previous = last;
    last = null; // a build that throws leaves nothing to reuse
    const warnings: ModelWarning[] = [];
    const { settings, warnings: settingsWarnings } = settingsFor(store);
    for (const w of settingsWarnings) warnings.push(w);
    const date = now();

    const list = store.listIngresses();
    const fragments = new Array<IngressFragment>(list.length);
    for (let i = 0; i < list.length; i++) fragments[i] = fragmentFor(store, list[i]!, settings);
    const topo = topologies.topologyFor(settings, claimBackendNames(fragments));
    // A first build has nothing to forget.
    if (topo !== lastTopology && lastTopology !== null) forgetRemoved(topo, store.options.defaultBackendService);
    lastTopology = topo;
    for (const w of topo.warnings) warnings.push(w);

    // ---- Certificates
    const certificates: Record<string, Certificate> = {};
    let defaultCertificate: string | null = null;
    const defaultKey = store.options.defaultSSLCertificate;
    if (defaultKey) {
      const secret = store.getSecret(defaultKey);
      const object = `Secret ${defaultKey}`;
      if (!secret) warnings.push({ object, field: '', message: '--default-ssl-certificate: Secret not found; using the self-signed certificate' });
      else {
        const r = readCertificate(defaultKey, secret);
        if (!r.ok) warnings.push({ object, field: '', message: `--default-ssl-certificate: ${r.reason}; using the self-signed certificate` });
        else {
          if (certificateExpired(r.value, date)) warnings.push({ object, field: '', message: `--default-ssl-certificate expired at ${r.value.certificate.notAfter}` });
          defaultCertificate = r.value.certificate.uid;
          certificates[defaultCertificate] = r.value.certificate;
        }
      }
    }

    /** The certificate of a host: the oldest Ingress of the host with a TLS section decides, as in ingress-nginx. */
    function tlsFor(host: string, frags: IngressFragment[]): { certificate: string | null; tlsSecret: string | null } {
      if (host === DEFAULT_SERVER) return { certificate: defaultCertificate, tlsSecret: null };
      // A host with TLS but no usable Secret keeps HTTPS (and ssl-redirect) with the default certificate.
      const fallback = { certificate: defaultCertificate ?? FALLBACK_UID, tlsSecret: null };
      const f = frags.find((x) => x.tls.length > 0);
      if (!f) return { certificate: null, tlsSecret: null };
      const ns = f.ref.namespace;
      const lower = host.toLowerCase();
      let index = f.tls.findIndex((t) => (t.hosts ?? []).some((h) => h.toLowerCase() === lower));
      if (index < 0) index = f.tls.findIndex((t) => (t.hosts ?? []).length === 0 && !!t.secretName);
      if (index < 0) {
        index = f.tls.findIndex((t) => {
          if (!t.secretName) return false;
          const s = store.getSecret(`${ns}/${t.secretName}`);
          const r = s ? readCertificate(`${ns}/${t.secretName}`, s) : null;
          return r?.ok === true && covers(r.value, host);
        });
      }
      // A host its Ingress's TLS section does not name, and no certificate of it covers, has no TLS
      // (ingress-nginx gives it the default certificate and so redirects it: its issue #3258).
      if (index < 0) return NO_TLS;
      const secretName = f.tls[index]!.secretName ?? '';
      if (secretName === '') return fallback;
      const secretKey = `${ns}/${secretName}`;
      const bad = (reason: string) => {
        warnings.push({
          object: `Ingress ${f.key}`, field: `spec.tls[${index}].secretName`,
          message: `Secret ${secretKey}: ${reason}; host ${host} uses the default certificate`,
        });
        return fallback;
      };
      const secret = store.getSecret(secretKey);
      if (!secret) return bad('not found');
      const r = readCertificate(secretKey, secret);
      if (!r.ok) return bad(r.reason);
      if (!covers(r.value, host)) return bad(`certificate is not valid for ${host} (it names ${r.value.certificate.hosts.join(', ') || 'no host'})`);
      if (certificateExpired(r.value, date)) return bad(`certificate expired at ${r.value.certificate.notAfter}`);
      certificates[r.value.certificate.uid] = r.value.certificate;
      return { certificate: r.value.certificate.uid, tlsSecret: secretKey };
    }

    // ---- Servers: the topology's servers with this build's certificates
    let servers = new Array<Server>(topo.hosts.length);
    for (let i = 0; i < topo.hosts.length; i++) {
      const { host, frags, base } = topo.hosts[i]!;
      // Most hosts have no TLS section and keep their certificate-less server.
      if (host !== DEFAULT_SERVER && !hasTLS(frags)) {
        servers[i] = base;
        continue;
      }
      const tls = tlsFor(host, frags);
      if (tls.certificate === null && tls.tlsSecret === null) {
        servers[i] = base;
        continue;
      }
      let e = tlsMemo.get(host);
      if (!e || e.base !== base || e.certificate !== tls.certificate || e.tlsSecret !== tls.tlsSecret) {
        e = { base, ...tls, server: { ...base, ...tls } };
        tlsMemo.set(host, e);
      }
      servers[i] = e.server;
    }

    // ---- Backends: memoised per name; endpoints rechecked every build
    let backends: Backend[] = [];
    const leading = warnings.slice();
    const planWarnings = new Array<ModelWarning | undefined>(topo.plans.length);
    const planBackends = new Array<Backend>(topo.plans.length);
    // With the same settings and no Service or EndpointSlice changed, a plan the topology kept
    // (the same object at the same place) gives the same backend.
    const reuse = ingressesOnly && previous !== null && previous.settings === settings ? previous : null;
    for (let i = 0; i < topo.plans.length; i++) {
      const p = topo.plans[i]!;
      if (reuse && reuse.topo.plans[i] === p) {
        const w = reuse.planWarnings[i];
        if (w) warnings.push(w);
        planWarnings[i] = w;
        backends.push((planBackends[i] = reuse.planBackends[i]!));
        continue;
      }
      const ends = endpointsFor(store, p.use.serviceKey, p.use.port, p.serviceUpstream, p.endpointsKey);
      const w = planWarning(p, ends);
      if (w) warnings.push(w);
      planWarnings[i] = w;
      backends.push((planBackends[i] = planBackend(p, ends, settings)));
    }
    const trailingFrom = warnings.length;
    const otherServices = new Set<string>();

    const defaults = defaultAnnotations(settings);
    for (const { name, svcKey, ownerKey } of topo.customDefaults) {
      if (topo.planned.has(name)) continue;
      otherServices.add(svcKey);
      const svc = store.getService(svcKey);
      const port = svc?.spec.ports?.[0];
      const ends = port ? endpointsFor(store, svcKey, String(port.port), false) : NO_ENDPOINTS;
      const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : [...ends.refused, ...(ends.problem ? [ends.problem] : [])].join('; ') || null;
      if (problem) {
        warnings.push({ object: `Ingress ${ownerKey}`, field: 'metadata.annotations', message: `default-backend: Service ${svcKey}: ${problem}` });
      }
      backends.push(memoBackend(name, ends, defaults, null, settings, () => makeBackend({
        name, service: ends.service, port: port ? String(port.port) : '', endpoints: ends.endpoints,
        sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {}, loadBalance: settings.loadBalance,
      })));
    }

    // upstream-default-backend: --default-backend-service, else (or without endpoints) the built-in server.
    const dbKey = store.options.defaultBackendService;
    let dbEnds = BUILT_IN;
    let dbPort = String(opts.defaultServerPort);
    if (dbKey) {
      otherServices.add(dbKey);
      const svc = store.getService(dbKey);
      const port = svc?.spec.ports?.[0];
      const ends = port ? endpointsFor(store, dbKey, String(port.port), false) : NO_ENDPOINTS;
      if (port && ends.endpoints.length > 0) {
        dbEnds = ends;
        dbPort = String(port.port);
        if (ends.refused.length > 0) warnings.push({ object: `Service ${dbKey}`, field: '', message: `--default-backend-service: ${ends.refused.join('; ')}` });
      } else {
        const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : [...ends.refused, ends.problem ?? 'no ready endpoints'].join('; ');
        warnings.push({ object: `Service ${dbKey}`, field: '', message: `--default-backend-service: ${problem}; using the built-in default server` });
      }
    }
    backends.push(memoBackend(DEFAULT_UPSTREAM, dbEnds, defaults, null, settings, () => makeBackend({
      name: DEFAULT_UPSTREAM,
      service: dbEnds.service,
      port: dbPort,
      endpoints: dbEnds === BUILT_IN ? fallbackEndpoints : dbEnds.endpoints,
      sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {}, loadBalance: settings.loadBalance,
    })));
    const trailing = warnings.slice(trailingFrom);
    if (!isSortedByName(backends)) backends.sort(byName);

    // ---- TCP/UDP services
    const { tcpEndpoints, udpEndpoints } = l4Services(store, warnings);

    const sortedCertificates: Record<string, Certificate> = {};
    for (const uid of Object.keys(certificates).sort()) sortedCertificates[uid] = certificates[uid]!;

    // Unchanged lists are handed back as the same arrays: decide() sees them equal at once.
    if (sameInputs(lastServers, servers)) servers = lastServers!;
    else lastServers = servers;
    if (sameInputs(lastBackends, backends)) backends = lastBackends!;
    else lastBackends = backends;

    const config: Configuration = {
      servers, backends, tcpEndpoints, udpEndpoints, certificates: sortedCertificates, defaultCertificate, settings,
    };
    let validUntil = Infinity;
    for (const c of Object.values(sortedCertificates)) {
      const t = Date.parse(c.notAfter);
      validUntil = Number.isNaN(t) ? -Infinity : Math.min(validUntil, t);
    }
    last = {
      topo, settings, servers, certificates: sortedCertificates, defaultCertificate, validUntil,
      leading, planWarnings, planBackends, trailing, otherServices, backends,
      backendIndex: previous?.backends === backends ? previous.backendIndex : undefined,
    };
    logger?.debug({
      ingresses: fragments.length, servers: servers.length, backends: backends.length,
      warnings: warnings.length, ms: Math.round(performance.now() - started),
    }, 'model built');
    return { config, warnings };
  }

  return { build };
}

function hasTLS(frags: readonly IngressFragment[]): boolean {
  for (const f of frags) if (f.tls.length > 0) return true;
  return false;
}

const NO_TLS = { certificate: null, tlsSecret: null };

/** Stand-ins for "no Service" in memo comparisons (one object each, so they compare equal). */
const NO_ENDPOINTS: ServiceEndpoints = { service: null, endpoints: [], problem: null, refused: [] };
const BUILT_IN: ServiceEndpoints = { service: null, endpoints: [], problem: null, refused: [] };
