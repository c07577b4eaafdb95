// Plain-JSON shapes of the Kubernetes objects ingress-rx reads. Every source projects what it
// receives (client-node class instances, YAML documents, watch JSON) into these before emitting,
// so objects compare and hash the same whichever source produced them.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string; // RFC 3339
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface IngressServiceBackend { name: string; port?: { name?: string; number?: number } }
export interface IngressBackend {
  service?: IngressServiceBackend;
  resource?: { apiGroup?: string; kind: string; name: string };
}
export type PathType = 'Exact' | 'Prefix' | 'ImplementationSpecific';
export interface HTTPIngressPath { path?: string; pathType?: PathType; backend: IngressBackend }
export interface IngressRule { host?: string; http?: { paths: HTTPIngressPath[] } }
export interface IngressTLS { hosts?: string[]; secretName?: string }
export interface LoadBalancerIngress { ip?: string; hostname?: string; ports?: Array<{ port: number; protocol: string }> }

export interface Ingress extends KubeObject {
  spec: {
    ingressClassName?: string;
    defaultBackend?: IngressBackend;
    tls?: IngressTLS[];
    rules?: IngressRule[];
  };
  status?: { loadBalancer?: { ingress?: LoadBalancerIngress[] } };
}

export interface IngressClass extends KubeObject {
  spec: { controller?: string; parameters?: Record<string, unknown> };
}

export interface ServicePort { name?: string; protocol?: string; port: number; targetPort?: number | string; nodePort?: number; appProtocol?: string }
export interface Service extends KubeObject {
  spec: {
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    clusterIP?: string;
    clusterIPs?: string[];
    externalName?: string;
    externalIPs?: string[];
    ports?: ServicePort[];
    selector?: Record<string, string>;
    sessionAffinity?: string;
  };
  status?: { loadBalancer?: { ingress?: LoadBalancerIngress[] } };
}

export interface EndpointSlice extends KubeObject {
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints?: Array<{
    addresses: string[];
    conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
    nodeName?: string;
    targetRef?: { kind?: string; name?: string; namespace?: string };
  }>;
  ports?: Array<{ name?: string; port?: number; protocol?: string; appProtocol?: string }>;
}

/** core/v1 Endpoints: accepted by the manifests source and turned into an EndpointSlice. */
export interface Endpoints extends KubeObject {
  subsets?: Array<{
    addresses?: Array<{ ip: string; nodeName?: string }>;
    notReadyAddresses?: Array<{ ip: string }>;
    ports?: Array<{ name?: string; port: number; protocol?: string }>;
  }>;
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>; // base64
  stringData?: Record<string, string>;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

export interface Namespace extends KubeObject {
  status?: { phase?: string };
}

export interface Pod extends KubeObject {
  spec: { nodeName?: string; containers?: unknown[] };
  status?: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string }> };
}

export interface Node extends KubeObject {
  status?: { addresses?: Array<{ type: string; address: string }> };
}

// ---- Gateway API (gateway.networking.k8s.io/v1; ReferenceGrant v1beta1): the fields we read.

export interface GatewayClass extends KubeObject {
  spec: { controllerName?: string; description?: string };
}

export interface RouteNamespaces {
  /** `Same` (the default), `All` or `Selector`. */
  from?: string;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
}
export interface RouteGroupKind { group?: string; kind: string }
export interface SecretObjectReference { group?: string; kind?: string; name: string; namespace?: string }
export interface GatewayListener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: { mode?: string; certificateRefs?: SecretObjectReference[] };
  allowedRoutes?: { namespaces?: RouteNamespaces; kinds?: RouteGroupKind[] };
}
export interface FrontendTLSValidation {
  mode?: string;
  caCertificateRefs?: Array<{ group?: string; kind?: string; name: string; namespace?: string }>;
}
export interface GatewaySpecAddress { type?: string; value?: string }
export interface Gateway extends KubeObject {
  spec: {
    gatewayClassName: string; listeners?: GatewayListener[]; addresses?: GatewaySpecAddress[];
    infrastructure?: { labels?: Record<string, string>; annotations?: Record<string, string>; parametersRef?: { group?: string; kind?: string; name?: string } };
    tls?: {
      /** `backend.clientCertificateRef`: the certificate NGINX shows to TLS backends (GatewayBackendClientCertificate). */
      backend?: { clientCertificateRef?: SecretObjectReference };
      frontend?: { default?: { validation?: FrontendTLSValidation }; perPort?: Array<{ port: number; tls?: { validation?: FrontendTLSValidation } }> };
    };
    /** Which namespaces' ListenerSets may attach (`from`: None, the default, Same, Selector or All). */
    allowedListeners?: { namespaces?: RouteNamespaces };
  };
}

/** Listeners added to a Gateway that allows them (gateway.networking.k8s.io/v1 ListenerSet). */
export interface ListenerSet extends KubeObject {
  spec: { parentRef: { group?: string; kind?: string; name: string; namespace?: string }; listeners?: GatewayListener[] };
}

export interface ParentReference { group?: string; kind?: string; namespace?: string; name: string; sectionName?: string; port?: number }
export interface HTTPPathMatch { type?: 'Exact' | 'PathPrefix' | 'RegularExpression'; value?: string }
export interface HTTPRouteMatch {
  path?: HTTPPathMatch;
  headers?: Array<{ type?: string; name: string; value: string }>;
  queryParams?: Array<{ type?: string; name: string; value: string }>;
  method?: string;
}
export interface HTTPBackendRef { group?: string; kind?: string; name: string; namespace?: string; port?: number; weight?: number; filters?: unknown[] }
export interface HTTPRouteRule { name?: string; matches?: HTTPRouteMatch[]; filters?: unknown[]; backendRefs?: HTTPBackendRef[]; timeouts?: unknown; retry?: unknown }
export interface HTTPRoute extends KubeObject {
  spec: { parentRefs?: ParentReference[]; hostnames?: string[]; rules?: HTTPRouteRule[] };
}

/** BackendTLSPolicy (gateway.networking.k8s.io/v1): TLS from the Gateway to the Services it targets. */
export interface BackendTLSPolicy extends KubeObject {
  spec: {
    targetRefs?: Array<{ group?: string; kind?: string; name: string; sectionName?: string }>;
    validation?: {
      caCertificateRefs?: Array<{ group?: string; kind?: string; name: string }>;
      wellKnownCACertificates?: string;
      hostname?: string;
      subjectAltNames?: Array<{ type?: string; hostname?: string; uri?: string }>;
    };
    options?: Record<string, string>;
  };
}

export interface ReferenceGrant extends KubeObject {
  spec: {
    from: Array<{ group: string; kind: string; namespace: string }>;
    to: Array<{ group: string; kind: string; name?: string }>;
  };
}
