// The kinds the kube source watches: where each lives in the API and how to list it with
// client-node's typed clients (which return class instances; see kube-project).
import {
  CoreV1Api, CustomObjectsApi, DiscoveryV1Api, NetworkingV1Api,
  type ConfigurationOptions, type KubeConfig, type KubernetesListObject, type KubernetesObject,
} from '@kubernetes/client-node';
import type { GatewayKind, StoredKind } from '../store/events.js';
import { KUBE_RESOURCES } from './kube-kinds.js';

export { KUBE_RESOURCES, type KubeResource } from './kube-kinds.js';

/** The URL path of a kind's collection, in one namespace or across all. */
export function collectionPath(kind: StoredKind, namespace?: string): string {
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
export function makeLister(kc: KubeConfig, kind: StoredKind): Lister {
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
    default:
      return customLister(kc, kind);
  }
}

/** The Gateway API kinds are custom resources: listed untyped, as plain JSON. */
function customLister(kc: KubeConfig, kind: GatewayKind): Lister {
  const api = kc.makeApiClient(CustomObjectsApi);
  const r = KUBE_RESOURCES[kind];
  const [group, version] = r.apiVersion.split('/') as [string, string];
  return async ({ namespace, ...sel }, o) => (namespace
    ? await api.listNamespacedCustomObject({ group, version, namespace, plural: r.plural, ...sel }, o)
    : r.namespaced
      ? await api.listCustomObjectForAllNamespaces({ group, version, plural: r.plural, ...sel }, o)
      : await api.listClusterCustomObject({ group, version, plural: r.plural, ...sel }, o)) as KubeList;
}
