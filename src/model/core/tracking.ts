// Dependency tracking for memoised parsing: a StoreReader that records every object it hands
// out, and a check that those objects are still the ones in the store (the store keeps
// unchanged objects by identity), so a memo can tell when a parse is stale.
import type { StoreReader } from '../../store/types.js';

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
  return new TrackingReader(store, deps);
}

/** A class, not an object of closures: one is made for every Ingress parsed. */
class TrackingReader implements StoreReader {
  constructor(private readonly store: StoreReader, private readonly deps: Dependency[]) {}

  get options(): StoreReader['options'] { return this.store.options; }
  listIngresses() { return this.record('listIngresses', '', this.store.listIngresses()); }
  getIngress(k: string) { return this.record('getIngress', k, this.store.getIngress(k)); }
  getService(k: string) { return this.record('getService', k, this.store.getService(k)); }
  getEndpointSlices(k: string) { return this.record('getEndpointSlices', k, this.store.getEndpointSlices(k)); }
  getSecret(k: string) { return this.record('getSecret', k, this.store.getSecret(k)); }
  getConfigMap(k: string) { return this.record('getConfigMap', k, this.store.getConfigMap(k)); }
  getIngressClass(k: string) { return this.record('getIngressClass', k, this.store.getIngressClass(k)); }
  getNamespace(k: string) { return this.record('getNamespace', k, this.store.getNamespace(k)); }
  ingressesReferencingSecret(k: string) { return this.record('ingressesReferencingSecret', k, this.store.ingressesReferencingSecret(k)); }

  private record<T>(lookup: Lookup, key: string, value: T): T {
    this.deps.push({ lookup, key, value });
    return value;
  }
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
