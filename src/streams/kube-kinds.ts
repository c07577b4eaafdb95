// Where each kind the kube source watches lives in the API: a plain table, so that projecting an
// object (kube-project) does not load client-node's generated API clients (~60 MB of RSS).
import type { StoredKind } from '../store/events.js';

export interface KubeResource {
  apiVersion: string;
  /** The collection's name in the URL. */
  plural: string;
  namespaced: boolean;
}

export const KUBE_RESOURCES: Record<StoredKind, KubeResource> = {
  Namespace: { apiVersion: 'v1', plural: 'namespaces', namespaced: false },
  IngressClass: { apiVersion: 'networking.k8s.io/v1', plural: 'ingressclasses', namespaced: false },
  ConfigMap: { apiVersion: 'v1', plural: 'configmaps', namespaced: true },
  Secret: { apiVersion: 'v1', plural: 'secrets', namespaced: true },
  Service: { apiVersion: 'v1', plural: 'services', namespaced: true },
  EndpointSlice: { apiVersion: 'discovery.k8s.io/v1', plural: 'endpointslices', namespaced: true },
  Ingress: { apiVersion: 'networking.k8s.io/v1', plural: 'ingresses', namespaced: true },
  GatewayClass: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'gatewayclasses', namespaced: false },
  Gateway: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'gateways', namespaced: true },
  ReferenceGrant: { apiVersion: 'gateway.networking.k8s.io/v1beta1', plural: 'referencegrants', namespaced: true },
  ListenerSet: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'listenersets', namespaced: true },
  HTTPRoute: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'httproutes', namespaced: true },
  BackendTLSPolicy: { apiVersion: 'gateway.networking.k8s.io/v1', plural: 'backendtlspolicies', namespaced: true },
};
