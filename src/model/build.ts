// The model builder: store → Configuration, following ingress-nginx's rules. Memo caches in its
// closure (per Ingress object, per host, per backend, per Service endpoints, per Secret) make a
// rebuild redo only what a change touches, and hand back unchanged fragments as the same
// objects, which the hashing in ./hash.ts relies on. What depends only on the Ingresses and the
// settings (hosts, locations, backend plans, canary merges) is kept as one "topology" and
// recomputed only when an Ingress or the settings changed; TLS and endpoints are rechecked
// every build.
import type { Logger } from '../log.js';
import type { ConfigMap, EndpointSlice, Ingress, Service } from '../store/kube-types.js';
import type { StoreReader } from '../store/types.js';
import { defaultAnnotations, parseAnnotations } from './annotations/index.js';
import type { ParsedAnnotations } from './annotations/types.js';
import type { NginxSettings } from './config/settings.js';
import { defaultSettings, parseConfigMap } from './config/parse.js';
import type {
  Backend, Certificate, Configuration, Endpoint, Location, ModelWarning, Server, SessionAffinityConfig,
} from './types.js';
import { NO_AFFINITY, makeBackend, sessionAffinity, trafficShaping, upstreamHashBy } from './backends.js';
import {
  certificateCoversHost, certificateExpired, createCertificateCache, type ParsedCertificate,
} from './certificates.js';
import { resolveServiceEndpoints, type ServiceEndpoints } from './endpoints.js';
import {
  DEFAULT_UPSTREAM, buildFragment, customDefaultBackendName, makeLocation, type BackendUse, type IngressFragment,
} from './fragments.js';
import { parseL4Services } from './l4.js';
import { DEFAULT_SERVER, ROOT_PATH } from './paths.js';
import { assembleServer, pathKey, rawAliases, type AssembledServer } from './servers.js';
import { dependenciesCurrent, sameInputs, trackingReader, type Dependency } from './tracking.js';

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
}

export interface BuildResult {
  config: Configuration;
  warnings: ModelWarning[];
}

export interface ModelBuilder {
  build(store: StoreReader): BuildResult;
}


interface IngressEntry {
  settings: NginxSettings;
  deps: Dependency[];
  fragment: IngressFragment;
}

interface ServerEntry {
  inputs: unknown[];
  assembled: AssembledServer;
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

/** How one backend is built, from the Ingresses that use it (first one wins its policies). */
interface BackendPlan {
  name: string;
  use: BackendUse;
  ownerKey: string;
  owner: ParsedAnnotations;
  /** Only canary Ingresses use it. */
  canary: boolean;
  serviceUpstream: boolean;
  /** Cookie-affinity locations, host → paths (collected while planning). */
  locations: Map<string, string[]> | null;
  // Set when the topology is final:
  affinity: SessionAffinityConfig;
  /** Stands for `affinity` in memo comparisons. */
  affinityKey: string;
  alternatives: string[];
  alternativesKey: string;
  sslPassthrough: boolean;
  /** Key of the endpoints memo. */
  endpointsKey: string;
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

interface HostEntry {
  host: string;
  frags: IngressFragment[];
  /** The server without certificate. */
  base: Server;
}

/** Everything that depends only on the served Ingresses and the settings. */
interface Topology {
  settings: NginxSettings;
  fragments: IngressFragment[];
  /** Sorted by hostname, `_` first. */
  hosts: HostEntry[];
  /** Sorted by name; canary backends without a primary are left out. */
  plans: BackendPlan[];
  /** Names of `plans`. */
  planned: Set<string>;
  customDefaults: Array<{ name: string; svcKey: string; ownerKey: string }>;
  warnings: ModelWarning[];
  // For the incremental update:
  /** The default server's root (catch-all or built-in). */
  root: Location;
  fragmentSet: Set<IngressFragment>;
  byHost: Map<string, IngressFragment[]>;
  assembled: Map<string, AssembledServer>;
  planIndex: Map<string, BackendPlan>;
  aliasWarnings: ModelWarning[];
  /** Every alias any Ingress asks for. */
  aliasNames: Set<string>;
  canaryWarnings: ModelWarning[];
  hasCanary: boolean;
}

/** Most Ingresses an incremental topology update handles; more is a full recompute. */
const INCREMENTAL_LIMIT = 32;

function compareHosts(a: string, b: string): number {
  if (a === b) return 0;
  if (a === DEFAULT_SERVER) return -1;
  if (b === DEFAULT_SERVER) return 1;
  return a < b ? -1 : 1;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function createModelBuilder(opts: ModelBuildOptions): ModelBuilder {
  const now = opts.now ?? (() => new Date());
  const logger = opts.logger;
  const readCertificate = createCertificateCache();
  const coverage = new WeakMap<ParsedCertificate, Map<string, boolean>>();
  const fallbackEndpoints: Endpoint[] = [{ address: '127.0.0.1', port: String(opts.defaultServerPort) }];
  const reserved = new Set(opts.reservedPorts ?? [80, 443, 442, opts.defaultServerPort, 10246, 10247, 10254]);

  let settingsMemo: { key: string; cm: ConfigMap | undefined; deps: Dependency[]; settings: NginxSettings; warnings: ModelWarning[] } | null = null;
  const ingressMemo = new WeakMap<Ingress, IngressEntry>();
  let topology: Topology | null = null;
  let serverMemo = new Map<string, ServerEntry>();
  let tlsMemo = new Map<string, TLSEntry>();
  let endpointsMemo = new Map<string, EndpointsEntry>();
  let backendMemo = new Map<string, BackendEntry>();
  let defaultRootMemo: { settings: NginxSettings; location: Location } | null = null;

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
    if (settingsMemo && settingsMemo.key === key && settingsMemo.cm === cm && dependenciesCurrent(store, settingsMemo.deps)) {
      return settingsMemo;
    }
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
    settingsMemo = { key, cm, deps, settings, warnings };
    return settingsMemo;
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
      entry = { svc, slices, result: resolveServiceEndpoints(svc, slices, port, serviceUpstream) };
      endpointsMemo.set(key, entry);
    }
    return entry.result;
  }

  function defaultRoot(settings: NginxSettings): Location {
    if (defaultRootMemo?.settings !== settings) {
      const a = defaultAnnotations(settings);
      // ingress-nginx's built-in default location carries no rewrite settings (no ssl-redirect).
      a.rewrite = { ...a.rewrite, sslRedirect: false, forceSSLRedirect: false };
      defaultRootMemo = { settings, location: makeLocation(ROOT_PATH, 'Prefix', null, null, DEFAULT_UPSTREAM, a, settings, true) };
    }
    return defaultRootMemo.location;
  }

  // ---- Topology: hosts, servers without certificates, backend plans, canary merges

  /** A host's server without certificate, memoised on the identity of its inputs. */
  function serverFor(settings: NginxSettings, host: string, frags: IngressFragment[], root: Location, aliases: string[]): AssembledServer {
    const defaultRootLocation = host === DEFAULT_SERVER ? root : null;
    const inputs: unknown[] = [settings, defaultRootLocation, aliases.join(','), ...frags];
    let entry = serverMemo.get(host);
    if (!entry || !sameInputs(entry.inputs, inputs)) {
      entry = {
        inputs,
        assembled: assembleServer({
          host, fragments: frags, defaultRoot: defaultRootLocation, aliases, allowSnippets: settings.allowSnippetAnnotations,
        }),
      };
      serverMemo.set(host, entry);
    }
    return entry.assembled;
  }

  function newPlan(use: BackendUse, f: IngressFragment): BackendPlan {
    return {
      name: use.name, use, ownerKey: f.key, owner: f.parsed, canary: f.canary, serviceUpstream: f.parsed.serviceUpstream,
      locations: null, affinity: NO_AFFINITY, affinityKey: '', alternatives: [], alternativesKey: '',
      sslPassthrough: false, endpointsKey: endpointsKey(use.serviceKey, use.port, f.parsed.serviceUpstream),
    };
  }

  /** Adds a non-canary fragment's uses to the plans (the first user owns a plan). */
  function planUses(plans: Map<string, BackendPlan>, f: IngressFragment, only?: Set<string>): void {
    const plan = (use: BackendUse): BackendPlan | null => {
      if (only && !only.has(use.name)) return null;
      let p = plans.get(use.name);
      if (!p) plans.set(use.name, (p = newPlan(use, f)));
      return p;
    };
    if (f.defaultBackend) plan(f.defaultBackend);
    for (const e of f.paths) {
      const p = plan(e.use);
      if (p && f.parsed.affinity.type === 'cookie') {
        p.locations ??= new Map();
        const list = p.locations.get(e.host);
        if (list) list.push(e.location.path);
        else p.locations.set(e.host, [e.location.path]);
      }
    }
  }

  function finishPlan(p: BackendPlan, aliasesOf: (host: string) => readonly string[], passthrough: Set<string>): void {
    p.sslPassthrough = passthrough.has(p.name);
    p.alternativesKey = p.alternatives.join(',');
    if (p.canary || p.owner.affinity.type !== 'cookie' || !p.locations) return;
    const locations: Record<string, string[]> = {};
    for (const [h, paths] of p.locations) {
      locations[h] = paths;
      for (const a of aliasesOf(h)) locations[a] = [...(locations[a] ?? []), ...paths];
    }
    p.affinity = sessionAffinity(p.owner, locations);
    p.affinityKey = JSON.stringify(p.affinity);
  }

  function passthroughOf(hosts: HostEntry[]): Set<string> {
    const out = new Set<string>();
    for (const { base } of hosts) {
      if (!base.sslPassthrough) continue;
      const r = base.locations.find((l) => l.path === ROOT_PATH && l.pathType !== 'Exact');
      if (r && r.backend !== DEFAULT_UPSTREAM) out.add(r.backend);
    }
    return out;
  }

  function collectWarnings(fragments: IngressFragment[], hosts: HostEntry[], t: Pick<Topology, 'aliasWarnings' | 'assembled' | 'canaryWarnings'>): ModelWarning[] {
    const warnings: ModelWarning[] = [];
    for (const f of fragments) for (const w of f.warnings) warnings.push(w);
    for (const w of t.aliasWarnings) warnings.push(w);
    for (const { host } of hosts) for (const w of t.assembled.get(host)!.warnings) warnings.push(w);
    for (const w of t.canaryWarnings) warnings.push(w);
    return warnings;
  }

  function computeTopology(settings: NginxSettings, fragments: IngressFragment[], defaultBackendService: string): Topology {
    // Hosts: non-canary fragments per server name, oldest first.
    const byHost = new Map<string, IngressFragment[]>([[DEFAULT_SERVER, []]]);
    let catchAll: IngressFragment | null = null;
    let hasCanary = false;
    for (const f of fragments) {
      if (f.canary) { hasCanary = true; continue; }
      if (f.catchAll && !catchAll) catchAll = f;
      for (const h of f.hosts) {
        const list = byHost.get(h);
        if (list) list.push(f);
        else byHost.set(h, [f]);
      }
    }
    const root = catchAll?.catchAllLocation ?? defaultRoot(settings);

    // Servers. An alias belongs to the first host (oldest Ingress) claiming it, and never shadows a host.
    const aliasOwner = new Map<string, string>();
    const aliasNames = new Set<string>();
    const aliasWarnings: ModelWarning[] = [];
    const assembled = new Map<string, AssembledServer>();
    for (const [host, frags] of byHost) {
      const raw = rawAliases(frags);
      const aliases: string[] = [];
      for (const a of raw.length === 0 ? raw : [...new Set(raw)].sort()) {
        aliasNames.add(a);
        if (a === host || byHost.has(a)) continue;
        const owner = aliasOwner.get(a);
        if (owner !== undefined && owner !== host) {
          aliasWarnings.push({
            object: `Ingress ${frags.find((f) => f.parsed.serverAliases.includes(a))?.key ?? host}`,
            field: `metadata.annotations["${opts.annotationsPrefix}/server-alias"]`,
            message: `alias ${a} of host ${host} is already an alias of ${owner}; ignored`,
          });
          continue;
        }
        aliasOwner.set(a, host);
        aliases.push(a);
      }
      assembled.set(host, serverFor(settings, host, frags, root, aliases));
    }
    const hosts: HostEntry[] = [...byHost.keys()].sort(compareHosts)
      .map((host) => ({ host, frags: byHost.get(host)!, base: assembled.get(host)!.server }));

    // Backend plans: the first Ingress using a backend gives its policies.
    const plans = new Map<string, BackendPlan>();
    const customDefaults = new Map<string, { name: string; svcKey: string; ownerKey: string }>();
    for (const f of fragments) {
      if (f.canary) continue;
      planUses(plans, f);
      if (f.parsed.defaultBackendService) {
        const name = customDefaultBackendName(f.parsed.defaultBackendService);
        if (!customDefaults.has(name)) customDefaults.set(name, { name, svcKey: f.parsed.defaultBackendService, ownerKey: f.key });
      }
    }
    for (const f of fragments) {
      if (!f.canary) continue;
      const plan = (use: BackendUse) => { if (!plans.has(use.name)) plans.set(use.name, newPlan(use, f)); };
      if (f.defaultBackend) plan(f.defaultBackend);
      for (const e of f.paths) plan(e.use);
    }

    // Canary: alternative backends merged into the primary location's backend.
    const canaryWarnings: ModelWarning[] = [];
    const affinityFrom = new Map<string, string>();
    const merged = new Set<string>();
    const unmerged = new Map<string, { f: IngressFragment; where: string[] }>();
    const canMerge = (primary: string, alt: string) =>
      primary !== alt && primary !== DEFAULT_UPSTREAM && plans.get(primary)?.canary !== true;
    for (const f of fragments) {
      if (!f.canary) continue;
      const tryLocations = (alt: string, locs: Iterable<Location>, where: string) => {
        let found = false;
        for (const loc of locs) {
          if (loc.backend === alt) {
            canaryWarnings.push({ object: `Ingress ${f.key}`, field: 'metadata.annotations', message: `canary backend ${alt} is the primary backend of ${where}; not merged` });
            return;
          }
          if (!canMerge(loc.backend, alt)) continue;
          const primary = plans.get(loc.backend)!;
          if (!primary.alternatives.includes(alt)) primary.alternatives.push(alt);
          if (f.parsed.affinity.canaryBehavior !== 'legacy' && !affinityFrom.has(alt)) affinityFrom.set(alt, loc.backend);
          merged.add(alt);
          found = true;
        }
        if (!found) {
          const u = unmerged.get(alt);
          if (u) u.where.push(where);
          else unmerged.set(alt, { f, where: [where] });
        }
      };
      if (f.defaultBackend) {
        tryLocations(f.defaultBackend.name, assembled.get(DEFAULT_SERVER)!.server.locations, `the default server ${DEFAULT_SERVER}`);
      }
      for (const e of f.paths) {
        const primary = assembled.get(e.host)?.primaries.get(pathKey(e.location.path, e.location.pathType));
        tryLocations(e.use.name, primary ? [primary] : [], `host ${e.host} path ${e.location.path} (${e.location.pathType})`);
      }
    }
    for (const [alt, { f, where }] of unmerged) {
      if (merged.has(alt)) continue;
      plans.delete(alt);
      canaryWarnings.push({
        object: `Ingress ${f.key}`, field: 'metadata.annotations',
        message: `canary: no primary Ingress serves ${where.join(', ')}; backend ${alt} dropped`,
      });
    }

    // Finish the plans: ssl-passthrough, affinity (a sticky canary shares its primary's).
    const passthrough = passthroughOf(hosts);
    const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
    const sorted = [...plans.values()].sort(byName);
    for (const p of sorted) finishPlan(p, aliasesOf, passthrough);
    for (const [alt, primary] of affinityFrom) {
      const a = plans.get(alt);
      const from = plans.get(primary);
      if (a && from) {
        a.affinity = from.affinity;
        a.affinityKey = from.affinityKey;
      }
    }

    // Memo maps only keep what this topology can use.
    const keep = <T>(m: Map<string, T>, names: Iterable<string>) => {
      const next = new Map<string, T>();
      for (const n of names) { const e = m.get(n); if (e) next.set(n, e); }
      return next;
    };
    serverMemo = keep(serverMemo, byHost.keys());
    tlsMemo = keep(tlsMemo, byHost.keys());
    backendMemo = keep(backendMemo, [...plans.keys(), ...customDefaults.keys(), DEFAULT_UPSTREAM]);
    const services = new Set([...plans.values()].map((p) => p.use.serviceKey));
    for (const c of customDefaults.values()) services.add(c.svcKey);
    services.add(defaultBackendService);
    endpointsMemo = new Map([...endpointsMemo].filter(([k]) => services.has(k.slice(0, k.indexOf('|')))));

    const t = { aliasWarnings, assembled, canaryWarnings };
    return {
      settings, fragments, hosts, plans: sorted, planned: new Set(plans.keys()), customDefaults: [...customDefaults.values()],
      warnings: collectWarnings(fragments, hosts, t), root, fragmentSet: new Set(fragments), byHost, assembled, planIndex: plans,
      aliasWarnings, aliasNames, canaryWarnings, hasCanary,
    };
  }

  /**
   * The topology after a few plain Ingresses changed (no canary anywhere; the changed ones have
   * no aliases, catch-all, default backend or default-backend annotation, and no host of theirs
   * is an alias): only their hosts and backends are recomputed. Null when a full recompute is needed.
   */
  function updateTopology(prev: Topology, settings: NginxSettings, fragments: IngressFragment[]): Topology | null {
    if (prev.settings !== settings || prev.hasCanary) return null;
    const nextSet = new Set(fragments);
    if (nextSet.size !== fragments.length) return null;
    const changed: IngressFragment[] = [];
    for (const f of prev.fragments) if (!nextSet.has(f)) changed.push(f);
    for (const f of fragments) if (!prev.fragmentSet.has(f)) changed.push(f);
    if (changed.length === 0 || changed.length > INCREMENTAL_LIMIT) return null;
    const hostsTouched = new Set<string>();
    const backendsTouched = new Set<string>();
    for (const f of changed) {
      if (f.canary || f.catchAll || f.defaultBackend || f.parsed.serverAliases.length > 0 || f.parsed.defaultBackendService
        || f.parsed.sslPassthrough) return null;
      for (const h of f.hosts) {
        if (prev.aliasNames.has(h) || prev.assembled.get(h)?.server.sslPassthrough) return null;
        hostsTouched.add(h);
      }
      for (const e of f.paths) backendsTouched.add(e.use.name);
    }
    if (hostsTouched.size > INCREMENTAL_LIMIT || backendsTouched.size > INCREMENTAL_LIMIT) return null;

    // From here on the previous topology is updated in place (it is not used again).
    // Hosts of the changed Ingresses: their fragment lists and servers.
    const { byHost, assembled, planIndex } = prev;
    let hostSetChanged = false;
    for (const h of hostsTouched) {
      const frags = fragments.filter((f) => !f.canary && f.hosts.includes(h));
      if (frags.length === 0 && h !== DEFAULT_SERVER) {
        byHost.delete(h);
        assembled.delete(h);
        serverMemo.delete(h);
        tlsMemo.delete(h);
        hostSetChanged = true;
        continue;
      }
      if (!byHost.has(h)) hostSetChanged = true;
      byHost.set(h, frags);
      assembled.set(h, serverFor(settings, h, frags, prev.root, prev.assembled.get(h)?.server.aliases ?? []));
    }
    const hosts: HostEntry[] = hostSetChanged
      ? [...byHost.keys()].sort(compareHosts).map((host) => ({ host, frags: byHost.get(host)!, base: assembled.get(host)!.server }))
      : prev.hosts.map((e) => (hostsTouched.has(e.host) ? { host: e.host, frags: byHost.get(e.host)!, base: assembled.get(e.host)!.server } : e));

    // Backends of the changed Ingresses: owner and cookie locations from every user, oldest first.
    const previousPlans = new Map([...backendsTouched].map((n) => [n, planIndex.get(n)]));
    for (const name of backendsTouched) planIndex.delete(name);
    const fresh = new Map<string, BackendPlan>();
    for (const f of fragments) {
      if (f.canary) continue;
      if (f.paths.some((e) => backendsTouched.has(e.use.name)) || (f.defaultBackend && backendsTouched.has(f.defaultBackend.name))) {
        planUses(fresh, f, backendsTouched);
      }
    }
    // No changed host is ssl-passthrough (checked above), so passthrough backends stay as they were.
    const passthrough = new Set(prev.plans.filter((p) => p.sslPassthrough).map((p) => p.name));
    const aliasesOf = (h: string) => assembled.get(h)?.server.aliases ?? [];
    for (const [name, p] of fresh) {
      finishPlan(p, aliasesOf, passthrough);
      planIndex.set(name, p);
    }
    const namesChanged = [...backendsTouched].some((n) => planIndex.has(n) !== (previousPlans.get(n) !== undefined));
    const plans = namesChanged
      ? [...planIndex.values()].sort(byName)
      : prev.plans.map((p) => (backendsTouched.has(p.name) ? planIndex.get(p.name)! : p));
    for (const name of backendsTouched) if (!planIndex.has(name)) backendMemo.delete(name);

    const t = { aliasWarnings: prev.aliasWarnings, assembled, canaryWarnings: prev.canaryWarnings };
    return {
      settings, fragments, hosts, plans, planned: namesChanged ? new Set(planIndex.keys()) : prev.planned,
      customDefaults: prev.customDefaults, warnings: collectWarnings(fragments, hosts, t), root: prev.root, fragmentSet: nextSet, byHost,
      assembled, planIndex, aliasWarnings: prev.aliasWarnings, aliasNames: prev.aliasNames, canaryWarnings: prev.canaryWarnings,
      hasCanary: false,
    };
  }

  function build(store: StoreReader): BuildResult {
    const started = performance.now();
    const warnings: ModelWarning[] = [];
    const { settings, warnings: settingsWarnings } = settingsFor(store);
    for (const w of settingsWarnings) warnings.push(w);
    const date = now();

    const list = store.listIngresses();
    const fragments = new Array<IngressFragment>(list.length);
    for (let i = 0; i < list.length; i++) fragments[i] = fragmentFor(store, list[i]!, settings);
    let topo = topology;
    if (!topo || topo.settings !== settings || !sameInputs(topo.fragments, fragments)) {
      topo = topology = (topo && updateTopology(topo, settings, fragments))
        ?? computeTopology(settings, fragments, store.options.defaultBackendService);
    }
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
      const fallback = { certificate: defaultCertificate, tlsSecret: null };
      if (host === DEFAULT_SERVER) return fallback;
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
      const secretName = index >= 0 ? f.tls[index]!.secretName ?? '' : '';
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
    const servers = new Array<Server>(topo.hosts.length);
    topo.hosts.forEach(({ host, frags, base }, i) => {
      const tls = tlsFor(host, frags);
      if (tls.certificate === null && tls.tlsSecret === null) {
        servers[i] = base;
        return;
      }
      let e = tlsMemo.get(host);
      if (!e || e.base !== base || e.certificate !== tls.certificate || e.tlsSecret !== tls.tlsSecret) {
        e = { base, ...tls, server: { ...base, ...tls } };
        tlsMemo.set(host, e);
      }
      servers[i] = e.server;
    });

    // ---- Backends: memoised per name; endpoints rechecked every build
    const backends: Backend[] = [];
    const memoBackend = (
      name: string, ends: ServiceEndpoints, owner: ParsedAnnotations, p: BackendPlan | null, make: () => Backend,
    ) => {
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
      backends.push(e.backend);
    };
    for (const p of topo.plans) {
      const ends = endpointsFor(store, p.use.serviceKey, p.use.port, p.serviceUpstream, p.endpointsKey);
      if (ends.problem) {
        warnings.push({ object: `Ingress ${p.ownerKey}`, field: 'spec', message: `backend ${p.name}: Service ${p.use.serviceKey}: ${ends.problem}` });
      } else if (ends.endpoints.length === 0) {
        warnings.push({ object: `Ingress ${p.ownerKey}`, field: 'spec', message: `backend ${p.name}: Service ${p.use.serviceKey} has no ready endpoints (503)` });
      }
      memoBackend(p.name, ends, p.owner, p, () => makeBackend({
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

    const defaults = defaultAnnotationsOf(settings);
    for (const { name, svcKey, ownerKey } of topo.customDefaults) {
      if (topo.planned.has(name)) continue;
      const svc = store.getService(svcKey);
      const port = svc?.spec.ports?.[0];
      const ends = port ? endpointsFor(store, svcKey, String(port.port), false) : NO_ENDPOINTS;
      const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : ends.problem;
      if (problem) {
        warnings.push({ object: `Ingress ${ownerKey}`, field: 'metadata.annotations', message: `default-backend: Service ${svcKey}: ${problem}` });
      }
      memoBackend(name, ends, defaults, null, () => makeBackend({
        name, service: ends.service, port: port ? String(port.port) : '', endpoints: ends.endpoints,
        sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {}, loadBalance: settings.loadBalance,
      }));
    }

    // upstream-default-backend: --default-backend-service, else (or without endpoints) the built-in server.
    const dbKey = store.options.defaultBackendService;
    let dbEnds = BUILT_IN;
    let dbPort = String(opts.defaultServerPort);
    if (dbKey) {
      const svc = store.getService(dbKey);
      const port = svc?.spec.ports?.[0];
      const ends = port ? endpointsFor(store, dbKey, String(port.port), false) : NO_ENDPOINTS;
      if (port && ends.endpoints.length > 0) {
        dbEnds = ends;
        dbPort = String(port.port);
      } else {
        const problem = !svc ? 'Service not found' : !port ? 'Service has no ports' : ends.problem ?? 'no ready endpoints';
        warnings.push({ object: `Service ${dbKey}`, field: '', message: `--default-backend-service: ${problem}; using the built-in default server` });
      }
    }
    memoBackend(DEFAULT_UPSTREAM, dbEnds, defaults, null, () => makeBackend({
      name: DEFAULT_UPSTREAM,
      service: dbEnds.service,
      port: dbPort,
      endpoints: dbEnds === BUILT_IN ? fallbackEndpoints : dbEnds.endpoints,
      sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {}, loadBalance: settings.loadBalance,
    }));
    backends.sort(byName);

    // ---- TCP/UDP services
    const l4 = (key: string, protocol: 'TCP' | 'UDP') => {
      if (!key) return [];
      const r = parseL4Services(key, store.getConfigMap(key), protocol, reserved, store);
      for (const w of r.warnings) warnings.push(w);
      return r.services;
    };
    const tcpEndpoints = l4(store.options.tcpServicesConfigmap, 'TCP');
    const udpEndpoints = l4(store.options.udpServicesConfigmap, 'UDP');

    const sortedCertificates: Record<string, Certificate> = {};
    for (const uid of Object.keys(certificates).sort()) sortedCertificates[uid] = certificates[uid]!;

    const config: Configuration = {
      servers, backends, tcpEndpoints, udpEndpoints, certificates: sortedCertificates, defaultCertificate, settings,
    };
    logger?.debug({
      ingresses: fragments.length, servers: servers.length, backends: backends.length,
      warnings: warnings.length, ms: Math.round(performance.now() - started),
    }, 'model built');
    return { config, warnings };
  }

  const defaultsBySettings = new WeakMap<NginxSettings, ParsedAnnotations>();
  function defaultAnnotationsOf(settings: NginxSettings): ParsedAnnotations {
    let a = defaultsBySettings.get(settings);
    if (!a) defaultsBySettings.set(settings, (a = defaultAnnotations(settings)));
    return a;
  }

  return { build };
}

function endpointsKey(svcKey: string, port: string, serviceUpstream: boolean): string {
  return `${svcKey}|${port}|${serviceUpstream ? 1 : 0}`;
}

/** Stand-ins for "no Service" in memo comparisons (one object each, so they compare equal). */
const NO_ENDPOINTS: ServiceEndpoints = { service: null, endpoints: [], problem: null };
const BUILT_IN: ServiceEndpoints = { service: null, endpoints: [], problem: null };
