// A StoreReader that serves a chosen list of Ingresses and reads every other kind through to the
// store: the admission review's neighbourhood and the sync warm-up's probe build from one.
import type { Ingress } from './kube-types.js';
import type { StoreReader } from './types.js';

export interface IngressViewOptions {
  listIngresses: () => Ingress[];
  getIngress: (key: string) => Ingress | undefined;
  /** Default: the store's own answer. */
  ingressesReferencingSecret?: (secretKey: string) => string[];
  /** false: no Gateway API objects (the store's otherwise). */
  gateway?: false;
}

export function ingressView(store: StoreReader, view: IngressViewOptions): StoreReader {
  return {
    options: store.options,
    listIngresses: view.listIngresses,
    getIngress: view.getIngress,
    getService: (k) => store.getService(k),
    getEndpointSlices: (k) => store.getEndpointSlices(k),
    getSecret: (k) => store.getSecret(k),
    getConfigMap: (k) => store.getConfigMap(k),
    getIngressClass: (n) => store.getIngressClass(n),
    getNamespace: (n) => store.getNamespace(n),
    ingressesReferencingSecret: view.ingressesReferencingSecret ?? ((k) => store.ingressesReferencingSecret(k)),
    ...(store.gatewayResources && view.gateway !== false ? { gatewayResources: () => store.gatewayResources!() } : {}),
    ...(store.specOrigin ? { specOrigin: (ing: Ingress) => store.specOrigin!(ing) } : {}),
  };
}
