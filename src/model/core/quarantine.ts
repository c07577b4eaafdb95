// Quarantine: the objects NGINX refused (an Ingress whose server or location fails `nginx -t`,
// a ConfigMap whose settings do), and the Ingresses over a budget (./budgets.ts), set aside so
// that everything else applies. The model is built from a view of the store without them. An
// object leaves quarantine when it changes, or when what surrounds it changes (the template, the
// main ConfigMap, an Ingress of one of its hosts, a Secret it names; for a budget, what its
// scope says), so that it is tried again: if it is still refused, it comes back.
import type { ConfigMap, Ingress } from '../../store/kube-types.js';
import type { StoreReader } from '../../store/types.js';
import type { StoredKind } from '../../store/events.js';
import type { BudgetScope } from './budgets.js';

export interface QuarantineEntry {
  kind: 'Ingress' | 'ConfigMap';
  /** `namespace/name`; for one entry of a TCP/UDP services ConfigMap, `namespace/name:port`. */
  key: string;
  /** What NGINX said, mapped to the object and field where possible. */
  reason: string;
  /** When it was set aside (ms since the epoch). */
  since: number;
  /** Set when a budget set it aside rather than NGINX: what lets it go (./budgets.ts). */
  budget?: BudgetScope;
}

/** What the sync knows changed: source events, and whether tasks or dropped events blur it. */
export interface QuarantineChanges {
  objects: ReadonlyArray<{ kind: StoredKind; key: string }>;
  /** A template or ConfigMap change, a restart of NGINX, or a batch the ring dropped from. */
  everything: boolean;
}

interface Held<T> {
  entry: QuarantineEntry;
  /** The object as it was when refused: another object under the key means it changed. */
  object: T | undefined;
  hosts: Set<string>;
  /** The older Ingresses it clashes with: a change to one of them may end the clash. */
  clashesWith?: ReadonlySet<string>;
}

const namespaceOf = (key: string) => key.slice(0, key.indexOf('/'));

export interface Quarantine {
  /** Lets go of what the changes may have fixed; returns the keys released. */
  release(store: StoreReader, changes: QuarantineChanges): string[];
  /**
   * Sets an Ingress aside (as it is in the store now); `budget` when a budget does, not NGINX;
   * `clashesWith`: the Ingresses NGINX refuses it together with (a change to one lets it go).
   */
  addIngress(store: StoreReader, key: string, reason: string, budget?: BudgetScope, clashesWith?: readonly string[]): void;
  /** Sets the main ConfigMap aside: its last accepted version (or defaults) is used instead. */
  addConfigMap(store: StoreReader, reason: string): void;
  /** Sets one entry (`port`) of a TCP/UDP services ConfigMap aside; the others are served. */
  addServiceEntry(store: StoreReader, configmap: string, port: string, reason: string): void;
  /** Records that NGINX took a configuration built from `view`: its ConfigMap is the last good one. */
  accepted(view: StoreReader): void;
  entries(): QuarantineEntry[];
  has(kind: QuarantineEntry['kind'], key: string): boolean;
  readonly size: number;
  /** Changes whenever the set changes. */
  readonly version: number;
  /** The store as the model sees it: quarantined Ingresses absent, the ConfigMap replaced. */
  view(store: StoreReader): StoreReader;
}

export function createQuarantine(opts: { now?: () => number } = {}): Quarantine {
  const now = opts.now ?? Date.now;
  const ingresses = new Map<string, Held<Ingress>>();
  let configMap: Held<ConfigMap> | null = null;
  /** Entries of the TCP/UDP services ConfigMaps, by `namespace/name:port`. */
  const serviceEntries = new Map<string, { entry: QuarantineEntry; configmap: string; port: string; object: ConfigMap | undefined; service: string }>();
  /** The main ConfigMap NGINX last took (undefined: none was ever taken, defaults are used). */
  let lastGoodConfigMap: ConfigMap | undefined;
  let version = 0;
  let viewMemo: { store: StoreReader; version: number; view: StoreReader } | null = null;

  function hostsOf(ing: Ingress | undefined): Set<string> {
    return new Set((ing?.spec.rules ?? []).map((r) => r.host ?? ''));
  }

  function changedNearby(store: StoreReader, held: Held<Ingress>, key: string, changes: QuarantineChanges): boolean {
    for (const c of changes.objects) {
      if (c.kind === 'Ingress' && c.key !== key) {
        const other = store.getIngress(c.key);
        // A deleted Ingress may have shared a host: try again.
        if (!other || held.clashesWith?.has(c.key)) return true;
        for (const h of hostsOf(other)) if (held.hosts.has(h)) return true;
      } else if (c.kind === 'Secret' && store.ingressesReferencingSecret(c.key).includes(key)) {
        return true;
      }
    }
    return false;
  }

  /** A budget's room may have changed: something in the namespace did (or, for `cluster`, any Ingress). */
  function roomChanged(key: string, scope: BudgetScope, changes: QuarantineChanges): boolean {
    if (scope === 'object') return false;
    const ns = namespaceOf(key);
    return changes.objects.some((c) => (c.kind !== 'Namespace' && c.kind !== 'IngressClass' && c.key.startsWith(`${ns}/`)) || (scope === 'cluster' && c.kind === 'Ingress'));
  }

  return {
    release(store, changes) {
      const released: string[] = [];
      for (const [key, held] of ingresses) {
        const budget = held.entry.budget;
        if (changes.everything || !sameIngress(store.getIngress(key), held.object)
          || (budget === undefined ? changedNearby(store, held, key, changes) : roomChanged(key, budget, changes))) {
          ingresses.delete(key);
          released.push(`Ingress ${key}`);
        }
      }
      for (const [key, held] of serviceEntries) {
        // The ConfigMap changed, or the Service the entry names or an EndpointSlice of its namespace did.
        const ns = held.service.slice(0, held.service.indexOf('/') + 1);
        if (changes.everything || store.getConfigMap(held.configmap) !== held.object
          || changes.objects.some((c) => (c.kind === 'Service' || c.kind === 'EndpointSlice') && ns !== '' && c.key.startsWith(ns))) {
          serviceEntries.delete(key);
          released.push(`ConfigMap ${key}`);
        }
      }
      if (configMap) {
        const key = store.options.configmap;
        if (store.getConfigMap(key) !== configMap.object || changes.objects.some((c) => c.kind === 'ConfigMap' && c.key === key)) {
          released.push(`ConfigMap ${configMap.entry.key}`);
          configMap = null;
        }
      }
      if (released.length > 0) version++;
      return released;
    },
    addIngress(store, key, reason, budget, clashesWith) {
      const object = store.getIngress(key);
      ingresses.set(key, {
        entry: { kind: 'Ingress', key, reason, since: now(), ...(budget ? { budget } : {}) }, object, hosts: hostsOf(object),
        ...(clashesWith && clashesWith.length > 0 ? { clashesWith: new Set(clashesWith) } : {}),
      });
      version++;
    },
    addConfigMap(store, reason) {
      const key = store.options.configmap;
      configMap = { entry: { kind: 'ConfigMap', key, reason, since: now() }, object: store.getConfigMap(key), hosts: new Set() };
      version++;
    },
    addServiceEntry(store, configmap, port, reason) {
      const key = `${configmap}:${port}`;
      const object = store.getConfigMap(configmap);
      const service = (object?.data?.[port] ?? '').split(':')[0] ?? '';
      serviceEntries.set(key, { entry: { kind: 'ConfigMap', key, reason, since: now() }, configmap, port, object, service });
      version++;
    },
    accepted(view) {
      const key = view.options.configmap;
      if (key) lastGoodConfigMap = view.getConfigMap(key);
    },
    entries() {
      const out = [...ingresses.values()].map((h) => h.entry);
      for (const h of serviceEntries.values()) out.unshift(h.entry);
      if (configMap) out.unshift(configMap.entry);
      return out;
    },
    has(kind, key) {
      return kind === 'Ingress' ? ingresses.has(key) : configMap?.entry.key === key || serviceEntries.has(key);
    },
    get size() {
      return ingresses.size + (configMap ? 1 : 0) + serviceEntries.size;
    },
    get version() {
      return version;
    },
    view(store) {
      if (ingresses.size === 0 && configMap === null && serviceEntries.size === 0) return store;
      if (viewMemo && viewMemo.store === store && viewMemo.version === version) return viewMemo.view;
      const entries = new Map<string, Set<string>>();
      for (const h of serviceEntries.values()) {
        const ports = entries.get(h.configmap) ?? new Set<string>();
        ports.add(h.port);
        entries.set(h.configmap, ports);
      }
      const view = quarantinedView(store, new Set(ingresses.keys()), configMap === null ? undefined : { fallback: lastGoodConfigMap }, entries);
      viewMemo = { store, version, view };
      return view;
    },
  };
}

/** The same Ingress as far as NGINX is concerned: a status update (the Ingress's address) is no change. */
function sameIngress(a: Ingress | undefined, b: Ingress | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  return JSON.stringify(a.spec) === JSON.stringify(b.spec) && JSON.stringify(a.metadata.annotations ?? {}) === JSON.stringify(b.metadata.annotations ?? {});
}

/**
 * The store without some Ingresses, with the main ConfigMap replaced by `configMap.fallback`
 * (an empty one: defaults) when `configMap` is given, and without the given entries (ports) of
 * TCP/UDP services ConfigMaps.
 */
export function quarantinedView(
  store: StoreReader, hidden: ReadonlySet<string>, configMap?: { fallback: ConfigMap | undefined }, serviceEntries: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
): StoreReader {
  const trimmed = new Map<string, { from: ConfigMap | undefined; to: ConfigMap | undefined }>();
  const withoutEntries = (key: string, cm: ConfigMap | undefined): ConfigMap | undefined => {
    const ports = serviceEntries.get(key);
    if (!ports || !cm) return cm;
    const memo = trimmed.get(key);
    if (memo?.from === cm) return memo.to;
    const data = Object.fromEntries(Object.entries(cm.data ?? {}).filter(([k]) => !ports.has(k)));
    const to = { ...cm, data };
    trimmed.set(key, { from: cm, to });
    return to;
  };
  const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`;
  let listed: { from: Ingress[]; list: Ingress[] } | null = null;
  const mainKey = store.options.configmap;
  const slash = mainKey.indexOf('/');
  const empty: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: mainKey.slice(0, slash), name: mainKey.slice(slash + 1) }, data: {} };
  return {
    options: store.options,
    listIngresses() {
      const from = store.listIngresses();
      if (listed?.from !== from) listed = { from, list: hidden.size === 0 ? from : from.filter((i) => !hidden.has(keyOf(i))) };
      return listed.list;
    },
    getIngress: (key) => (hidden.has(key) ? undefined : store.getIngress(key)),
    getService: (key) => store.getService(key),
    getEndpointSlices: (key) => store.getEndpointSlices(key),
    getSecret: (key) => store.getSecret(key),
    getConfigMap: (key) => (configMap && key === mainKey ? configMap.fallback ?? empty : withoutEntries(key, store.getConfigMap(key))),
    getIngressClass: (name) => store.getIngressClass(name),
    getNamespace: (name) => store.getNamespace(name),
    ingressesReferencingSecret: (key) => store.ingressesReferencingSecret(key).filter((k) => !hidden.has(k)),
    ...(store.gatewayResources ? { gatewayResources: () => store.gatewayResources!() } : {}),
    ...(store.specOrigin ? { specOrigin: (ing: Ingress) => store.specOrigin!(ing) } : {}),
  };
}

/** The store with only the given Ingresses (a probe: is the trouble among these?). */
export function onlyIngressesView(store: StoreReader, keep: ReadonlySet<string>): StoreReader {
  const hidden = new Set<string>();
  for (const ing of store.listIngresses()) {
    const key = `${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`;
    if (!keep.has(key)) hidden.add(key);
  }
  return quarantinedView(store, hidden);
}
