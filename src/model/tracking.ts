// Dependency tracking for memoised parsing: a StoreReader that records every object it hands
// out, and a check that those objects are still the ones in the store (the store keeps
// unchanged objects by identity), so a memo can tell when a parse is stale.
import type { StoreReader } from '../store/types.js';

type Lookup = 'getIngress' | 'getService' | 'getEndpointSlices' | 'getSecret' | 'getConfigMap'
  | 'getIngressClass' | 'getNamespace' | 'ingressesReferencingSecret' | 'listIngresses';

export interface Dependency {
  lookup: Lookup;
  key: string;
  value: unknown;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function lookUp(store: StoreReader, dep: Dependency): unknown {
  switch (dep.lookup) {
    case 'listIngresses': return store.listIngresses();
    case 'getIngress': return store.getIngress(dep.key);
    case 'getService': return store.getService(dep.key);
    case 'getEndpointSlices': return store.getEndpointSlices(dep.key);
    case 'getSecret': return store.getSecret(dep.key);
    case 'getConfigMap': return store.getConfigMap(dep.key);
    case 'getIngressClass': return store.getIngressClass(dep.key);
    case 'getNamespace': return store.getNamespace(dep.key);
    case 'ingressesReferencingSecret': return store.ingressesReferencingSecret(dep.key);
  }
}

/** A reader over `store` that appends each look-up to `deps`. */
export function trackingReader(store: StoreReader, deps: Dependency[]): StoreReader {
  const record = <T>(lookup: Lookup, key: string, value: T): T => {
    deps.push({ lookup, key, value });
    return value;
  };
  return {
    get options() { return store.options; },
    listIngresses: () => record('listIngresses', '', store.listIngresses()),
    getIngress: (k) => record('getIngress', k, store.getIngress(k)),
    getService: (k) => record('getService', k, store.getService(k)),
    getEndpointSlices: (k) => record('getEndpointSlices', k, store.getEndpointSlices(k)),
    getSecret: (k) => record('getSecret', k, store.getSecret(k)),
    getConfigMap: (k) => record('getConfigMap', k, store.getConfigMap(k)),
    getIngressClass: (k) => record('getIngressClass', k, store.getIngressClass(k)),
    getNamespace: (k) => record('getNamespace', k, store.getNamespace(k)),
    ingressesReferencingSecret: (k) => record('ingressesReferencingSecret', k, store.ingressesReferencingSecret(k)),
  };
}

/** Whether every recorded look-up still returns the same object(s). */
export function dependenciesCurrent(store: StoreReader, deps: readonly Dependency[]): boolean {
  for (const dep of deps) if (!sameValue(lookUp(store, dep), dep.value)) return false;
  return true;
}

/** Element-wise identity comparison of memo inputs. */
export function sameInputs(a: readonly unknown[] | undefined, b: readonly unknown[]): boolean {
  if (!a || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
