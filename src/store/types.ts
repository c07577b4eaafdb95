// The store's contract: what sources put in (SourceEvent) and what the model reads out.
// Objects are kept by identity: an object the store did not replace is the same JS object at
// the next sync, so the model can memoise per object.
import type { SourceEvent } from './events.js';
import type {
  BackendTLSPolicy, ConfigMap, EndpointSlice, Gateway, GatewayClass, HTTPRoute, Ingress, IngressClass, ListenerSet, Namespace, ReferenceGrant, Secret, Service,
} from './kube-types.js';

export interface StoreOptions {
  /** --ingress-class (annotation kubernetes.io/ingress.class and IngressClass name). Default `nginx`. */
  ingressClass: string;
  /** --controller-class, matched against IngressClass spec.controller. Default `k8s.io/ingress-nginx`. */
  controllerClass: string;
  /** --watch-ingress-without-class. Local mode sets it. */
  watchIngressWithoutClass: boolean;
  /** --ingress-class-by-name: accept spec.ingressClassName === ingressClass without an IngressClass object. */
  ingressClassByName: boolean;
  /** --watch-namespace (empty: all namespaces). */
  watchNamespaces: string[];
  /** --watch-namespace-selector as a label selector string ('' = none). */
  watchNamespaceSelector: string;
  /** --disable-catch-all: ignore Ingresses with a spec.defaultBackend (as ingress-nginx: with rules or not). */
  disableCatchAll: boolean;
  /** --configmap as `namespace/name` ('' = none). */
  configmap: string;
  /** --tcp-services-configmap / --udp-services-configmap as `namespace/name` ('' = none). */
  tcpServicesConfigmap: string;
  udpServicesConfigmap: string;
  /** --default-ssl-certificate as `namespace/name` ('' = none). */
  defaultSSLCertificate: string;
  /** --default-backend-service as `namespace/name` ('' = built-in 404). */
  defaultBackendService: string;
  /**
   * --publish-service as `namespace/name` ('' = none): a change of its status alone (its load
   * balancer's addresses, which the Ingress and Gateway statuses publish) is a statusOnly event.
   */
  publishService?: string;
  /** --annotations-prefix (default `nginx.ingress.kubernetes.io`): finds the auth/proxy-ssl Secret references. */
  annotationsPrefix?: string;
  /** --gateway-controller-name: the GatewayClass spec.controllerName served. Default `ingress-rx.io/gateway`. */
  gatewayControllerName?: string;
  /** --gateway-listener-ports and the ports the controller uses itself (src/model/gateway/listener-ports.ts). */
  gatewayPorts?: GatewayPortOptions;
}

/** Where NGINX serves Gateway listeners on ports other than 80 and 443 (src/model/gateway/listener-ports.ts). */
export interface GatewayPortOptions {
  /** --gateway-listener-ports: listener port → the port NGINX listens on for it. */
  readonly map: ReadonlyMap<number, number>;
  /** Ports the controller or NGINX use themselves, each with its flag: no listener is served there. */
  readonly reserved: ReadonlyMap<number, string>;
  /** Local mode: a listener port below 1024 without a mapping cannot be bound. */
  readonly unprivileged: boolean;
}

/** The Gateway API objects the store holds in watched namespaces, each list oldest first (ties: `ns/name`). */
export interface GatewayResources {
  /** GatewayClasses whose spec.controllerName is ours. */
  readonly classes: readonly GatewayClass[];
  /** Gateways of those classes (normalised: every listener's allowedRoutes.namespaces.from set). */
  readonly gateways: readonly Gateway[];
  /** Every HTTPRoute (normalised: rules, matches, paths and weights defaulted); which attach is the model's question. */
  readonly httpRoutes: readonly HTTPRoute[];
  readonly referenceGrants: readonly ReferenceGrant[];
  /** BackendTLSPolicies of every watched namespace; which apply is the model's question (../model/gateway/backend-tls.ts). */
  readonly backendTLSPolicies: readonly BackendTLSPolicy[];
  /** Every ListenerSet, oldest first (then by namespace/name): the order of the spec's listener precedence. */
  readonly listenerSets: readonly ListenerSet[];
}

/**
 * What the store must know of the annotations, which it reads without importing the model: the
 * CLI wiring passes the list the annotation groups declare (ANNOTATION_REFERENCES).
 */
export interface AnnotationReferences {
  /** Annotation keys (without prefix) whose value names a Secret, `name` or `namespace/name`. */
  secretAnnotations: readonly string[];
  /** Annotation keys whose value names a ConfigMap the same way (custom-headers). */
  configMapAnnotations?: readonly string[];
}

export interface ApplyResult {
  /** Whether the event can change the model (and so should trigger a sync). */
  relevant: boolean;
  /** Why it was filtered out or let through (traced). */
  reason: string;
  /** Set when the event changed the main ConfigMap: the pipeline emits a `configmap-change` task. */
  configmapChanged?: boolean;
  /**
   * Set (with `relevant` false) when a served object's `.status` changed and nothing else: the
   * store keeps the new object, the model never reads status, so no sync; the status actors compare it
   * with the status they want (the controller's own writes come back this way).
   */
  statusOnly?: boolean;
}

/** An Ingress the store holds but does not serve, and why (class not found, another controller's, …). */
export interface LeftOutIngress {
  /** `namespace/name`. */
  key: string;
  reason: string;
}

export interface StoreReader {
  readonly options: StoreOptions;
  /** Ingresses this controller serves, oldest first (ties: `ns/name`, greater first). */
  listIngresses(): Ingress[];
  getIngress(key: string): Ingress | undefined;
  getService(key: string): Service | undefined;
  /** All slices of a Service (label kubernetes.io/service-name), any order. */
  getEndpointSlices(serviceKey: string): EndpointSlice[];
  getSecret(key: string): Secret | undefined;
  getConfigMap(key: string): ConfigMap | undefined;
  getIngressClass(name: string): IngressClass | undefined;
  getNamespace(name: string): Namespace | undefined;
  /** Keys of the served Ingresses that reference a Secret (TLS or auth annotations). */
  ingressesReferencingSecret(secretKey: string): string[];
  /** The Gateway API objects; the same object until one of them changes. Absent: a reader without them (none). */
  gatewayResources?(): GatewayResources;
  /**
   * When the store took this Ingress in after objects that differ from it in status alone: the
   * first of them, whose model this one shares (the model never reads status). Undefined
   * otherwise, and from a reader that does not know.
   */
  specOrigin?(ing: Ingress): Ingress | undefined;
}

export interface Store extends StoreReader {
  /** Ingresses left out, sorted by key; the same array until the set or a reason changes. */
  leftOutIngresses(): readonly LeftOutIngress[];
  /** Applies an event and says whether it matters. Never throws on bad input. */
  apply(event: SourceEvent): ApplyResult;
  /** Whether this controller would serve the Ingress (class, watched namespace, --disable-catch-all), and why. */
  serves(ing: Ingress): { served: boolean; reason: string };
}
