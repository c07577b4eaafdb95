// The store as it would be with a candidate Ingress, narrowed to what the candidate can affect:
// the Ingresses that share one of its server names (rule hosts, the default server `_`,
// server aliases) or hold a wildcard host over one of them. The model builder run over this view builds only the candidate's hosts.
import type { Ingress } from '../store/kube-types.js';
import { byIngressOrder, timestamp } from '../store/store.js';
import type { StoreReader } from '../store/types.js';
import { wildcardOver } from '../model/takeovers.js';

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

/**
 * Server name → the served Ingresses that name it, built once per list of served Ingresses (the
 * store hands back the same array until an Ingress changes). Each Ingress object's names are kept
 * (the store's objects are immutable), so the index after a change regroups names, not rules.
 */
export function createNameIndex(annotationsPrefix: string): (list: readonly Ingress[]) => Map<string, Ingress[]> {
  const namesOf = new WeakMap<Ingress, readonly string[]>();
  let last: { list: readonly Ingress[]; index: Map<string, Ingress[]> } | null = null;
  return (list) => {
    if (last?.list === list) return last.index;
    const index = new Map<string, Ingress[]>();
    for (const ing of list) {
      let names = namesOf.get(ing);
      if (!names) {
        names = serverNames(ing, annotationsPrefix);
        namesOf.set(ing, names);
      }
      for (const name of names) {
        const at = index.get(name);
        if (at) at.push(ing);
        else index.set(name, [ing]);
      }
    }
    last = { list, index };
    return index;
  };
}

/**
 * The served Ingresses sharing a server name with the candidate, or holding the wildcard host one
 * of its names falls under (its host takes that name's requests), with the candidate in place of
 * its stored version, in the store's order.
 */
export function neighbourhood(candidate: Ingress, index: Map<string, Ingress[]>, annotationsPrefix: string): Ingress[] {
  const key = keyOf(candidate);
  const picked = new Set<Ingress>();
  for (const name of serverNames(candidate, annotationsPrefix)) {
    const wildcard = wildcardOver(name);
    for (const n of wildcard === null ? [name] : [name, wildcard]) {
      for (const ing of index.get(n) ?? []) if (keyOf(ing) !== key) picked.add(ing);
    }
  }
  const list = [...picked, candidate].map((ing) => ({ t: timestamp(ing), key: keyOf(ing), ing }));
  list.sort(byIngressOrder);
  return list.map((e) => e.ing);
}

/** A StoreReader whose served Ingresses are `ingresses`; every other look-up goes to the store. */
export function storeView(store: StoreReader, ingresses: Ingress[], candidate: Ingress): StoreReader {
  const key = keyOf(candidate);
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
  };
}
