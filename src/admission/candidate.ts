// The store as it would be with a candidate Ingress, narrowed to what the candidate can affect:
// the Ingresses that share one of its server names (rule hosts, the default server `_`,
// server aliases) or hold a wildcard host over one of them, and of those sharing one of its
// backends, the ones that decide the backend's settings (the oldest user, and those setting a
// backend-level annotation). The model builder run over this view builds only the candidate's hosts.
import type { Ingress, IngressBackend } from '../store/kube-types.js';
import { byIngressOrder, timestamp } from '../store/store.js';
import type { StoreReader } from '../store/types.js';
import { SHARED_BACKEND_KEYS } from '../model/ingress/backend-plans.js';
import { wildcardOver } from '../model/ingress/takeovers.js';

const DEFAULT_SERVER = '_';

/** The server names an Ingress takes part in: its rule hosts, `_` (a rule without host, or a catch-all), its aliases. */
export function serverNames(ing: Ingress, annotationsPrefix: string): string[] {
  const names = new Set<string>();
  const rules = ing.spec?.rules ?? [];
  for (const r of rules) names.add(r.host ? r.host : DEFAULT_SERVER);
  if (rules.length === 0 && ing.spec?.defaultBackend) names.add(DEFAULT_SERVER);
  const aliases = ing.metadata.annotations?.[`${annotationsPrefix}/server-alias`];
  if (typeof aliases === 'string') {
    for (const a of aliases.split(',')) {
      const name = a.trim().toLowerCase();
      if (name !== '') names.add(name);
    }
  }
  return [...names];
}

export const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? ''}/${ing.metadata.name}`;

/** The backends an Ingress uses (`namespace/service:port`, from its paths and spec.defaultBackend). */
export function backendKeys(ing: Ingress): string[] {
  const keys = new Set<string>();
  const add = (b: IngressBackend | undefined) => {
    const s = b?.service;
    if (s?.name) keys.add(`${ing.metadata.namespace ?? ''}/${s.name}:${s.port?.number ?? s.port?.name ?? ''}`);
  };
  add(ing.spec?.defaultBackend);
  for (const r of ing.spec?.rules ?? []) for (const p of r.http?.paths ?? []) add(p.backend);
  return [...keys];
}

/** What the review looks Ingresses up by: their server names and their backends. */
export interface NeighbourIndex {
  byName: Map<string, Ingress[]>;
  byBackend: Map<string, Ingress[]>;
}

const add = (index: Map<string, Ingress[]>, key: string, ing: Ingress) => {
  const at = index.get(key);
  if (at) at.push(ing);
  else index.set(key, [ing]);
};

/**
 * Server name and backend → the served Ingresses that name it, built once per list of served
 * Ingresses (the store hands back the same array until an Ingress changes). Each Ingress object's
 * names and backends are kept (the store's objects are immutable), so the index after a change
 * regroups them instead of reading every Ingress again.
 */
export function createNameIndex(annotationsPrefix: string): (list: readonly Ingress[]) => NeighbourIndex {
  const keysOf = new WeakMap<Ingress, { names: readonly string[]; backends: readonly string[] }>();
  let last: { list: readonly Ingress[]; index: NeighbourIndex } | null = null;
  return (list) => {
    if (last?.list === list) return last.index;
    const index: NeighbourIndex = { byName: new Map(), byBackend: new Map() };
    for (const ing of list) {
      let keys = keysOf.get(ing);
      if (!keys) {
        keys = { names: serverNames(ing, annotationsPrefix), backends: backendKeys(ing) };
        keysOf.set(ing, keys);
      }
      for (const name of keys.names) add(index.byName, name, ing);
      for (const b of keys.backends) add(index.byBackend, b, ing);
    }
    last = { list, index };
    return index;
  };
}

/**
 * The served Ingresses sharing a server name with the candidate, or holding the wildcard host one
 * of its names falls under (its host takes that name's requests), and those deciding the
 * settings of a backend it uses, with the candidate in place of its stored version, in the
 * store's order.
 */
export function neighbourhood(candidate: Ingress, index: NeighbourIndex, annotationsPrefix: string): Ingress[] {
  const key = keyOf(candidate);
  const picked = new Set<Ingress>();
  for (const name of serverNames(candidate, annotationsPrefix)) {
    const wildcard = wildcardOver(name);
    for (const n of wildcard === null ? [name] : [name, wildcard]) {
      for (const ing of index.byName.get(n) ?? []) if (keyOf(ing) !== key) picked.add(ing);
    }
  }
  const sets = (ing: Ingress) => SHARED_BACKEND_KEYS.some((k) => ing.metadata.annotations?.[`${annotationsPrefix}/${k}`] !== undefined);
  for (const b of backendKeys(candidate)) {
    let oldest: { t: number; key: string; ing: Ingress } | null = null;
    for (const ing of index.byBackend.get(b) ?? []) {
      const k = keyOf(ing);
      if (k === key) continue;
      if (sets(ing)) picked.add(ing);
      const e = { t: timestamp(ing), key: k, ing };
      if (!oldest || byIngressOrder(e, oldest) < 0) oldest = e;
    }
    if (oldest) picked.add(oldest.ing);
  }
  const list = [...picked, candidate].map((ing) => ({ t: timestamp(ing), key: keyOf(ing), ing }));
  list.sort(byIngressOrder);
  return list.map((e) => e.ing);
}

/** A StoreReader whose served Ingresses are `ingresses` (with `candidate` in place of its stored version); every other look-up goes to the store. */
export function storeView(store: StoreReader, ingresses: Ingress[], candidate?: Ingress): StoreReader {
  const key = candidate ? keyOf(candidate) : null;
  return {
    options: store.options,
    listIngresses: () => ingresses,
    getIngress: (k) => (k === key ? candidate : store.getIngress(k)),
    getService: (k) => store.getService(k),
    getEndpointSlices: (k) => store.getEndpointSlices(k),
    getSecret: (k) => store.getSecret(k),
    getConfigMap: (k) => store.getConfigMap(k),
    getIngressClass: (n) => store.getIngressClass(n),
    getNamespace: (n) => store.getNamespace(n),
    ingressesReferencingSecret: (k) => store.ingressesReferencingSecret(k),
    ...(store.gatewayResources ? { gatewayResources: () => store.gatewayResources!() } : {}),
  };
}
