// The kinds the kube source watches: where each lives in the API and how to list it with
// client-node's typed clients (which return class instances; see kube-project).
import {
  CoreV1Api, DiscoveryV1Api, NetworkingV1Api,
  type ConfigurationOptions, type KubeConfig, type KubernetesListObject, type KubernetesObject,
} from '@kubernetes/client-node';
import type { ResourceKind } from '../store/events.js';

export interface KubeResource {
  apiVersion: string;
  /** The collection's name in the URL. */
  plural: string;
  namespaced: boolean;
}

export const KUBE_RESOURCES: Record<ResourceKind, KubeResource> = {
  Namespace: { apiVersion: 'v1', plural: 'namespaces', namespaced: false },
  IngressClass: { apiVersion: 'networking.k8s.io/v1', plural: 'ingressclasses', namespaced: false },
  ConfigMap: { apiVersion: 'v1', plural: 'configmaps', namespaced: true },
  Secret: { apiVersion: 'v1', plural: 'secrets', namespaced: true },
  Service: { apiVersion: 'v1', plural: 'services', namespaced: true },
  EndpointSlice: { apiVersion: 'discovery.k8s.io/v1', plural: 'endpointslices', namespaced: true },
  Ingress: { apiVersion: 'networking.k8s.io/v1', plural: 'ingresses', namespaced: true },
};

/** The URL path of a kind's collection, in one namespace or across all. */
export function collectionPath(kind: ResourceKind, namespace?: string): string {
  const r = KUBE_RESOURCES[kind];
  const base = r.apiVersion.includes('/') ? `/apis/${r.apiVersion}` : `/api/${r.apiVersion}`;
  return r.namespaced && namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.plural}` : `${base}/${r.plural}`;
}

export interface ListQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export type KubeList = KubernetesListObject<KubernetesObject>;
export type Lister = (q: ListQuery, options?: ConfigurationOptions) => Promise<KubeList>;

/** A function that lists one kind, in a namespace or across all, with the typed clients. */
export function makeLister(kc: KubeConfig, kind: ResourceKind): Lister {
  const core = () => kc.makeApiClient(CoreV1Api);
  const net = () => kc.makeApiClient(NetworkingV1Api);
  const discovery = () => kc.makeApiClient(DiscoveryV1Api);
  switch (kind) {
    case 'Namespace': {
      const api = core();
      return ({ labelSelector, fieldSelector }, o) => api.listNamespace({ labelSelector, fieldSelector }, o);
    }
    case 'IngressClass': {
      const api = net();
      return ({ labelSelector, fieldSelector }, o) => api.listIngressClass({ labelSelector, fieldSelector }, o);
    }
    case 'ConfigMap': {
      const api = core();
      return ({ namespace, ...sel }, o) =>
        namespace ? api.listNamespacedConfigMap({ namespace, ...sel }, o) : api.listConfigMapForAllNamespaces(sel, o);
    }
    case 'Secret': {
      const api = core();
      return ({ namespace, ...sel }, o) =>
        namespace ? api.listNamespacedSecret({ namespace, ...sel }, o) : api.listSecretForAllNamespaces(sel, o);
    }
    case 'Service': {
      const api = core();
      return ({ namespace, ...sel }, o) =>
        namespace ? api.listNamespacedService({ namespace, ...sel }, o) : api.listServiceForAllNamespaces(sel, o);
    }
    case 'EndpointSlice': {
      const api = discovery();
      return ({ namespace, ...sel }, o) =>
        namespace ? api.listNamespacedEndpointSlice({ namespace, ...sel }, o) : api.listEndpointSliceForAllNamespaces(sel, o);
    }
    case 'Ingress': {
      const api = net();
      return ({ namespace, ...sel }, o) =>
        namespace ? api.listNamespacedIngress({ namespace, ...sel }, o) : api.listIngressForAllNamespaces(sel, o);
    }
  }
}
