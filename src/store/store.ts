// The local cache of cluster objects, with ingress-nginx's filters: it applies source events,
// says whether each one can change the model, and answers the model's look-ups from indexes.
import type { SourceEvent } from './events.js';
import { silentLogger, type Logger } from '../log.js';
import type {
  BackendTLSPolicy, ConfigMap, EndpointSlice, Gateway, GatewayClass, HTTPRoute, Ingress, IngressClass, KubeObject, ListenerSet, Namespace, ReferenceGrant, Secret, Service,
} from './kube-types.js';
import type { AnnotationReferences, ApplyResult, GatewayResources, LeftOutIngress, Store, StoreOptions } from './types.js';
import { isCatchAll, resolveIngressClass } from './ingress-class.js';
import { parseLabelSelector, type LabelSelector } from './label-selector.js';
import { deepEqual, normaliseGateway, normaliseHTTPRoute, normaliseIngress, normaliseListenerSet, sameApartFromStatus, sameObject } from './normalise.js';
import { STORED_FIELDS, storedForm } from './project.js';
import { secretRef } from './secret-ref.js';
import { createServedOrder } from './served-order.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const DEFAULT_ANNOTATIONS_PREFIX = 'nginx.ingress.kubernetes.io';
/** --gateway-controller-name's default: the GatewayClass spec.controllerName this controller serves. */
export const DEFAULT_GATEWAY_CONTROLLER_NAME = 'ingress-rx.io/gateway';
const HELM_RELEASE_SECRET_TYPE = 'helm.sh/release.v1';
/** Keys of the main ConfigMap whose value names another ConfigMap (`namespace/name`). */
const CONFIGMAP_REFERENCE_KEYS = ['add-headers', 'proxy-set-headers'];
/** Keys of the main ConfigMap that name a Secret (`namespace/name`) the model reads. */
const CONFIGMAP_SECRET_KEYS = ['ssl-dh-param'];

/** ingress-nginx's flag defaults. */
export function defaultStoreOptions(): StoreOptions {
  return {
    ingressClass: 'nginx',
    controllerClass: 'k8s.io/ingress-nginx',
    watchIngressWithoutClass: false,
    ingressClassByName: false,
    watchNamespaces: [],
    watchNamespaceSelector: '',
    disableCatchAll: false,
    configmap: '',
    tcpServicesConfigmap: '',
    udpServicesConfigmap: '',
    defaultSSLCertificate: '',
    defaultBackendService: '',
    annotationsPrefix: DEFAULT_ANNOTATIONS_PREFIX,
    gatewayControllerName: DEFAULT_GATEWAY_CONTROLLER_NAME,
  };
}

const relevant = (reason: string): ApplyResult => ({ relevant: true, reason });
const irrelevant = (reason: string): ApplyResult => ({ relevant: false, reason });
const statusOnly = (reason: string): ApplyResult => ({ relevant: false, reason, statusOnly: true });

/** Whether `old` and `now` differ in their `.status` alone (resourceVersion and the like aside). */
function onlyStatusDiffers(old: KubeObject, now: KubeObject): boolean {
  return !deepEqual((old as { status?: unknown }).status, (now as { status?: unknown }).status) && sameApartFromStatus(old, now);
}

/**
 * `references`: the annotations that name other objects (the model's ANNOTATION_REFERENCES).
 * Throws only on options that cannot work (a bad --watch-namespace-selector).
 */
export function createStore(options: StoreOptions, references: AnnotationReferences, logger: Logger = silentLogger()): Store {
  const opts: StoreOptions = { ...options, watchNamespaces: [...options.watchNamespaces] };
  const prefix = opts.annotationsPrefix || DEFAULT_ANNOTATIONS_PREFIX;
  const secretAnnotations = references.secretAnnotations.map((name) => `${prefix}/${name}`);
  const configMapAnnotations = (references.configMapAnnotations ?? []).map((name) => `${prefix}/${name}`);
  const watchedNamespaces = new Set(opts.watchNamespaces.filter((n) => n !== ''));
  const nsSelector: LabelSelector | null = opts.watchNamespaceSelector.trim()
    ? parseLabelSelector(opts.watchNamespaceSelector) : null;

  // All Ingresses seen (normalised), and which of them this controller serves.
  const ingresses = new Map<string, Ingress>();
  /** An Ingress taken in after one that differs from it in status alone → the first object of that run (see specOrigin). */
  const specOrigins = new WeakMap<Ingress, Ingress>();
  const served = new Set<string>();
  /** Ingresses seen but not served, with the reason (render, logs and dbg name them). */
  const leftOut = new Map<string, string>();
  let leftOutList: readonly LeftOutIngress[] | null = null;
  const servedOrder = createServedOrder(timestamp, byIngressOrder);
  const ingressesByClassName = new Map<string, Set<string>>();
  const ingressesByNamespace = new Map<string, Set<string>>();
  const secretsOfIngress = new Map<string, string[]>();
  const ingressesBySecret = new Map<string, Set<string>>();
  const configMapsOfIngress = new Map<string, string[]>();
  const ingressesByConfigMap = new Map<string, Set<string>>();

  const ingressClasses = new Map<string, IngressClass>();
  const namespaces = new Map<string, Namespace>();
  const services = new Map<string, Service>();
  const secrets = new Map<string, Secret>();
  const configMaps = new Map<string, ConfigMap>();
  const slices = new Map<string, EndpointSlice>();
  const slicesByService = new Map<string, Map<string, EndpointSlice>>();
  const gatewayClasses = new Map<string, GatewayClass>();
  const gateways = new Map<string, Gateway>();
  const httpRoutes = new Map<string, HTTPRoute>();
  const referenceGrants = new Map<string, ReferenceGrant>();
  const backendTLSPolicies = new Map<string, BackendTLSPolicy>();
  const listenerSets = new Map<string, ListenerSet>();
  const gatewayControllerName = opts.gatewayControllerName || DEFAULT_GATEWAY_CONTROLLER_NAME;
  let gatewayView: GatewayResources | null = null;
  let referencedConfigMaps = new Set<string>();
  let referencedSecrets = new Set<string>();

  // ---- Ingress filters

  function namespaceWatched(ns: string): boolean {
    if (watchedNamespaces.size > 0 && !watchedNamespaces.has(ns)) return false;
    if (nsSelector) return namespaces.has(ns) && nsSelector.matches(namespaces.get(ns)!.metadata.labels);
    return true;
  }

  function evaluate(ing: Ingress): { served: boolean; reason: string } {
    const ns = ing.metadata.namespace ?? '';
    if (!namespaceWatched(ns)) return { served: false, reason: `namespace "${ns}" is not watched` };
    const cls = resolveIngressClass(ing, opts, (name) => ingressClasses.get(name));
    if (!cls.served) return cls;
    if (opts.disableCatchAll && isCatchAll(ing)) return { served: false, reason: 'catch-all Ingress with --disable-catch-all' };
    return cls;
  }

  function noteVerdict(key: string, verdict: { served: boolean; reason: string } | null): void {
    const before = leftOut.get(key);
    const after = verdict && !verdict.served ? verdict.reason : undefined;
    if (before === after) return;
    if (after === undefined) leftOut.delete(key);
    else leftOut.set(key, after);
    leftOutList = null;
  }

  /** Re-evaluates the given Ingresses; returns how many started or stopped being served. */
  function reevaluate(keys: Iterable<string> | undefined): number {
    let changed = 0;
    for (const key of keys ?? []) {
      const ing = ingresses.get(key);
      if (!ing) continue;
      const verdict = evaluate(ing);
      noteVerdict(key, verdict);
      const now = verdict.served;
      if (now !== served.has(key)) {
        if (now) served.add(key);
        else served.delete(key);
        servedOrder.change(key, now ? undefined : ing, now ? ing : undefined);
        changed++;
      }
    }
    return changed;
  }

  // ---- Indexes

  function addToIndex(index: Map<string, Set<string>>, key: string, value: string): void {
    let set = index.get(key);
    if (!set) index.set(key, (set = new Set()));
    set.add(value);
  }

  function removeFromIndex(index: Map<string, Set<string>>, key: string, value: string): void {
    const set = index.get(key);
    if (!set) return;
    set.delete(value);
    if (set.size === 0) index.delete(key);
  }

  function secretReferences(ing: Ingress): string[] {
    const ns = ing.metadata.namespace ?? '';
    const refs = new Set<string>();
    for (const tls of ing.spec?.tls ?? []) {
      if (tls.secretName) refs.add(`${ns}/${tls.secretName}`);
    }
    const annotations = ing.metadata.annotations ?? {};
    for (const key of secretAnnotations) {
      const ref = secretRef(annotations[key], ns);
      if (ref) refs.add(ref);
    }
    return [...refs];
  }

  function configMapReferences(ing: Ingress): string[] {
    const ns = ing.metadata.namespace ?? '';
    const annotations = ing.metadata.annotations ?? {};
    const refs = new Set<string>();
    for (const key of configMapAnnotations) {
      const ref = secretRef(annotations[key], ns);
      if (ref) refs.add(ref);
    }
    return [...refs];
  }

  function indexIngress(key: string, ing: Ingress): void {
    const className = ing.spec?.ingressClassName;
    if (className) addToIndex(ingressesByClassName, className, key);
    addToIndex(ingressesByNamespace, ing.metadata.namespace ?? '', key);
    const refs = secretReferences(ing);
    secretsOfIngress.set(key, refs);
    for (const ref of refs) addToIndex(ingressesBySecret, ref, key);
    if (configMapAnnotations.length === 0) return;
    const cms = configMapReferences(ing);
    if (cms.length > 0) configMapsOfIngress.set(key, cms);
    for (const ref of cms) addToIndex(ingressesByConfigMap, ref, key);
  }

  function unindexIngress(key: string, ing: Ingress): void {
    const className = ing.spec?.ingressClassName;
    if (className) removeFromIndex(ingressesByClassName, className, key);
    removeFromIndex(ingressesByNamespace, ing.metadata.namespace ?? '', key);
    for (const ref of secretsOfIngress.get(key) ?? []) removeFromIndex(ingressesBySecret, ref, key);
    secretsOfIngress.delete(key);
    for (const ref of configMapsOfIngress.get(key) ?? []) removeFromIndex(ingressesByConfigMap, ref, key);
    configMapsOfIngress.delete(key);
  }

  function servedReferencing(secretKey: string): string[] {
    const keys: string[] = [];
    for (const key of ingressesBySecret.get(secretKey) ?? []) if (served.has(key)) keys.push(key);
    return keys;
  }

  // ---- Ingresses and EndpointSlices: cached with indexes of their own

  function applyIngress(ev: SourceEvent): ApplyResult {
    const key = ev.key;
    const old = ingresses.get(key);
    const wasServed = served.has(key);
    if (ev.type === 'delete') {
      if (!old) return irrelevant('unknown Ingress deleted');
      unindexIngress(key, old);
      ingresses.delete(key);
      noteVerdict(key, null);
      if (!wasServed) return irrelevant('deleted Ingress was not served');
      served.delete(key);
      servedOrder.change(key, old, undefined);
      return relevant('served Ingress deleted');
    }
    const ing = normaliseIngress(ev.object as Ingress);
    // Decided once here, for the builder too (specOrigin): the status writer's own writes come
    // back as such objects, one per served Ingress.
    if (old && sameApartFromStatus(old, ing)) {
      if (deepEqual(old.status, ing.status)) return irrelevant('Ingress unchanged');
      ingresses.set(key, ing);
      specOrigins.set(ing, specOrigins.get(old) ?? old);
      if (!wasServed) return irrelevant(`Ingress not served: ${leftOut.get(key) ?? 'status changed'}`);
      servedOrder.change(key, old, ing);
      return statusOnly('Ingress status changed, nothing else');
    }
    if (old) unindexIngress(key, old);
    ingresses.set(key, ing);
    indexIngress(key, ing);
    const verdict = evaluate(ing);
    noteVerdict(key, verdict);
    if (verdict.served) served.add(key);
    else served.delete(key);
    if (verdict.served || wasServed) servedOrder.change(key, wasServed ? old : undefined, verdict.served ? ing : undefined);
    if (verdict.served) return relevant(wasServed || !old ? `Ingress served: ${verdict.reason}` : `Ingress now served: ${verdict.reason}`);
    if (wasServed) return relevant(`Ingress no longer served: ${verdict.reason}`);
    return irrelevant(`Ingress not served: ${verdict.reason}`);
  }

  // ---- Kinds cached as they are: one rule each, applied by applyCached

  /**
   * How the store treats one kind of object it caches as it is: objects it does not cache at all
   * (with the reason), and whether a change (`now` undefined: deleted) can change the model.
   */
  interface CachedKind<T extends KubeObject> {
    cache: Map<string, T>;
    skip?(obj: T): string | null;
    verdict(key: string, old: T | undefined, now: T | undefined, ev: SourceEvent): ApplyResult;
  }

  function referencedBy(cm: ConfigMap | undefined, keys = CONFIGMAP_REFERENCE_KEYS): Set<string> {
    const refs = new Set<string>();
    for (const k of keys) {
      const value = cm?.data?.[k]?.trim();
      if (value) refs.add(value);
    }
    return refs;
  }

  /** Re-evaluates the Ingresses an object decides on: relevant when some started or stopped being served. */
  function servedChange(what: string, keys: Iterable<string> | undefined): ApplyResult {
    const changed = reevaluate(keys);
    return changed > 0
      ? relevant(`${what} changed which Ingresses are served (${changed})`)
      : irrelevant(`${what} did not change which Ingresses are served`);
  }

  const ingressClassRules: CachedKind<IngressClass> = {
    cache: ingressClasses,
    verdict: (name) => servedChange(`IngressClass "${name}"`, ingressesByClassName.get(name)),
  };

  const namespaceRules: CachedKind<Namespace> = {
    cache: namespaces,
    verdict(name, old, now) {
      if (gateways.size > 0 && !deepEqual(old?.metadata.labels, now?.metadata.labels)) {
        gatewayView = null;
        return relevant(`Namespace "${name}" labels changed (Gateway listeners' allowedRoutes read them)`);
      }
      return nsSelector ? servedChange(`Namespace "${name}"`, ingressesByNamespace.get(name)) : irrelevant('no --watch-namespace-selector');
    },
  };

  // ---- Gateway API kinds: cached normalised; whether a route attaches is the model's question.

  const ours = (cls: GatewayClass | undefined) => cls?.spec?.controllerName === gatewayControllerName;

  /** A Gateway API object in a namespace this controller does not watch is not cached at all. */
  const unwatched = (obj: KubeObject) => (namespaceWatched(obj.metadata.namespace ?? '') ? null : `namespace "${obj.metadata.namespace ?? ''}" is not watched`);

  function gatewayKind<T extends KubeObject>(kind: string, cache: Map<string, T>, why: (old: T | undefined, now: T | undefined) => string | null): CachedKind<T> {
    return {
      cache,
      skip: kind === 'GatewayClass' ? undefined : unwatched,
      verdict(key, old, now) {
        const reason = why(old, now);
        if (reason === null) return irrelevant(`${kind} not ours`);
        gatewayView = null;
        if (old && now && onlyStatusDiffers(old, now)) return statusOnly(`${kind} status changed, nothing else`);
        return relevant(`${kind} ${reason}`);
      },
    };
  }

  const anyOfOurClasses = () => [...gatewayClasses.values()].some(ours);
  const gatewayClassRules = gatewayKind('GatewayClass', gatewayClasses, (old, now) => (ours(old) || ours(now) ? `controllerName ${gatewayControllerName}` : null));
  const gatewayRules = gatewayKind('Gateway', gateways, (old, now) =>
    (ours(gatewayClasses.get(old?.spec?.gatewayClassName ?? '')) || ours(gatewayClasses.get(now?.spec?.gatewayClassName ?? '')) ? 'of our GatewayClass' : null));
  const httpRouteRules = gatewayKind('HTTPRoute', httpRoutes, () => (anyOfOurClasses() ? 'changed' : null));
  const referenceGrantRules = gatewayKind('ReferenceGrant', referenceGrants, () => (anyOfOurClasses() ? 'changed' : null));
  const backendTLSPolicyRules = gatewayKind('BackendTLSPolicy', backendTLSPolicies, () => (anyOfOurClasses() ? 'changed' : null));
  const listenerSetRules = gatewayKind('ListenerSet', listenerSets, () => (anyOfOurClasses() ? 'changed' : null));

  function gatewayResources(): GatewayResources {
    if (gatewayView) return gatewayView;
    const classes = sortedObjects(gatewayClasses).filter(ours);
    const names = new Set(classes.map((c) => c.metadata.name));
    gatewayView = Object.freeze({
      classes,
      gateways: sortedObjects(gateways).filter((g) => names.has(g.spec?.gatewayClassName)),
      httpRoutes: sortedObjects(httpRoutes),
      referenceGrants: sortedObjects(referenceGrants),
      backendTLSPolicies: sortedObjects(backendTLSPolicies),
      listenerSets: sortedObjects(listenerSets),
    });
    return gatewayView;
  }

  /** Whether an HTTPS listener of one of our Gateways names the Secret (`namespace/name`). */
  function listenerReferences(key: string): boolean {
    const view = gatewayResources();
    for (const owner of [...view.gateways, ...view.listenerSets]) {
      for (const l of owner.spec.listeners ?? []) {
        for (const ref of l.tls?.certificateRefs ?? []) if (`${ref.namespace ?? owner.metadata.namespace ?? ''}/${ref.name}` === key) return true;
      }
      const client = 'tls' in owner.spec ? owner.spec.tls?.backend?.clientCertificateRef : undefined;
      if (client && `${client.namespace ?? owner.metadata.namespace ?? ''}/${client.name}` === key) return true;
    }
    return false;
  }

  /** Whether a BackendTLSPolicy names the ConfigMap (`namespace/name`) among its CA certificates. */
  function policyReferences(key: string): boolean {
    if (!anyOfOurClasses()) return false;
    return gatewayResources().backendTLSPolicies.some((p) => (p.spec?.validation?.caCertificateRefs ?? [])
      .some((ref) => `${p.metadata.namespace ?? ''}/${ref.name}` === key));
  }

  /** Whether spec.tls.frontend of one of our Gateways names the ConfigMap (`namespace/name`). */
  function frontendReferences(key: string): boolean {
    for (const gw of gatewayResources().gateways) {
      const f = gw.spec.tls?.frontend;
      for (const v of [f?.default?.validation, ...(f?.perPort ?? []).map((p) => p.tls?.validation)]) {
        for (const ref of v?.caCertificateRefs ?? []) if (`${ref.namespace ?? gw.metadata.namespace ?? ''}/${ref.name}` === key) return true;
      }
    }
    return false;
  }

  const secretRules: CachedKind<Secret> = {
    cache: secrets,
    skip: (secret) => (secret.type === HELM_RELEASE_SECRET_TYPE || secret.metadata.labels?.owner === 'helm' ? 'Helm release Secret (not cached)' : null),
    verdict(key) {
      if (key === opts.defaultSSLCertificate) return relevant('default SSL certificate');
      if (referencedSecrets.has(key)) return relevant('Secret referenced by the main ConfigMap');
      if (listenerReferences(key)) return relevant('Secret referenced by our Gateway');
      const users = servedReferencing(key);
      return users.length > 0
        ? relevant(`Secret referenced by ${users.length} served Ingress(es)`)
        : irrelevant('Secret not referenced by a served Ingress');
    },
  };

  const configMapRules: CachedKind<ConfigMap> = {
    cache: configMaps,
    skip: (cm) => (cm.metadata.labels?.OWNER === 'TILLER' ? 'Tiller release ConfigMap (not cached)' : null),
    verdict(key) {
      if (key === opts.configmap) {
        referencedConfigMaps = referencedBy(configMaps.get(key));
        referencedSecrets = referencedBy(configMaps.get(key), CONFIGMAP_SECRET_KEYS);
        return { relevant: true, reason: 'main ConfigMap', configmapChanged: true };
      }
      if (key === opts.tcpServicesConfigmap) return relevant('TCP services ConfigMap');
      if (key === opts.udpServicesConfigmap) return relevant('UDP services ConfigMap');
      if (referencedConfigMaps.has(key)) return relevant('ConfigMap referenced by the main ConfigMap');
      if (policyReferences(key)) return relevant('ConfigMap referenced by a BackendTLSPolicy');
      if (frontendReferences(key)) return relevant('ConfigMap referenced by the client certificate validation of our Gateway');
      let users = 0;
      for (const ing of ingressesByConfigMap.get(key) ?? []) if (served.has(ing)) users++;
      if (users > 0) return relevant(`ConfigMap referenced by ${users} served Ingress(es)`);
      return irrelevant('ConfigMap not used');
    },
  };

  const serviceRules: CachedKind<Service> = {
    cache: services,
    verdict(key, old, svc, ev) {
      const ns = ev.object.metadata.namespace ?? key.split('/')[0] ?? '';
      const isDefaultBackend = key === opts.defaultBackendService;
      if (key === opts.publishService && old && svc && onlyStatusDiffers(old, svc)) return statusOnly('--publish-service Service status changed');
      if (!namespaceWatched(ns) && !isDefaultBackend) return irrelevant('Service namespace not watched');
      if (!svc) {
        if (isDefaultBackend) return relevant('default backend Service deleted');
        return old?.spec?.type === 'ExternalName'
          ? relevant('ExternalName Service deleted')
          : irrelevant('Service deleted (its EndpointSlices carry the change)');
      }
      if (old) return deepEqual(old.spec, svc.spec) ? irrelevant('Service spec unchanged') : relevant('Service spec changed');
      if (isDefaultBackend) return relevant('default backend Service added');
      if (svc.spec?.type === 'ExternalName') return relevant('ExternalName Service added');
      // Informers of different kinds are not ordered: slices that came first could not be used.
      if (slicesByService.has(key)) return relevant('Service added after its EndpointSlices');
      return irrelevant('Service added (its EndpointSlices carry the change)');
    },
  };

  /** Stores or removes the object as its kind's rules say, then judges the change. */
  function applyCached<T extends KubeObject>(kind: string, rules: CachedKind<T>, ev: SourceEvent): ApplyResult {
    const key = ev.key;
    const old = rules.cache.get(key);
    if (ev.type === 'delete') {
      if (!old) return irrelevant(`unknown ${kind} deleted`);
      rules.cache.delete(key);
      return rules.verdict(key, old, undefined, ev);
    }
    const obj = ev.object as T;
    const skipped = rules.skip?.(obj) ?? null;
    if (skipped !== null) {
      rules.cache.delete(key);
      return irrelevant(skipped);
    }
    if (old && sameObject(old, obj)) return irrelevant(`${kind} unchanged`);
    rules.cache.set(key, obj);
    return rules.verdict(key, old, obj, ev);
  }

  function serviceKeyOf(slice: EndpointSlice): string | undefined {
    const svc = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    return svc ? `${slice.metadata.namespace ?? ''}/${svc}` : undefined;
  }

  function applyEndpointSlice(ev: SourceEvent): ApplyResult {
    const key = ev.key;
    const old = slices.get(key);
    const oldService = old && serviceKeyOf(old);
    if (oldService) {
      const bySlice = slicesByService.get(oldService);
      bySlice?.delete(key);
      if (bySlice?.size === 0) slicesByService.delete(oldService);
    }
    if (ev.type === 'delete') {
      if (!old) return irrelevant('unknown EndpointSlice deleted');
      slices.delete(key);
      return sliceVerdict(old, oldService, 'EndpointSlice deleted');
    }
    const slice = ev.object as EndpointSlice;
    const unchanged = old && sameObject(old, slice);
    const stored = unchanged ? old : slice;
    slices.set(key, stored);
    const service = serviceKeyOf(stored);
    if (service) {
      let bySlice = slicesByService.get(service);
      if (!bySlice) slicesByService.set(service, (bySlice = new Map()));
      bySlice.set(key, stored);
    }
    if (unchanged) return irrelevant('EndpointSlice unchanged');
    if (old && oldService === service && sameEndpoints(old, slice)) {
      return irrelevant('EndpointSlice endpoints unchanged');
    }
    return sliceVerdict(stored, service ?? oldService, old ? 'EndpointSlice endpoints changed' : 'EndpointSlice added');
  }

  function sliceVerdict(slice: EndpointSlice, service: string | undefined, why: string): ApplyResult {
    if (!service) return irrelevant(`EndpointSlice without label ${SERVICE_NAME_LABEL}`);
    if (!namespaceWatched(slice.metadata.namespace ?? '') && service !== opts.defaultBackendService) {
      return irrelevant('EndpointSlice namespace not watched');
    }
    return relevant(why);
  }

  function sameEndpoints(a: EndpointSlice, b: EndpointSlice): boolean {
    return a.addressType === b.addressType && deepEqual(a.endpoints ?? [], b.endpoints ?? [])
      && deepEqual(a.ports ?? [], b.ports ?? []);
  }

  const handlers: Record<SourceEvent['kind'], (ev: SourceEvent) => ApplyResult> = {
    Ingress: applyIngress,
    EndpointSlice: applyEndpointSlice,
    IngressClass: (ev) => applyCached('IngressClass', ingressClassRules, ev),
    Namespace: (ev) => applyCached('Namespace', namespaceRules, ev),
    Secret: (ev) => applyCached('Secret', secretRules, ev),
    ConfigMap: (ev) => applyCached('ConfigMap', configMapRules, ev),
    Service: (ev) => applyCached('Service', serviceRules, ev),
    GatewayClass: (ev) => applyCached('GatewayClass', gatewayClassRules, ev),
    Gateway: (ev) => applyCached('Gateway', gatewayRules, ev.type === 'delete' ? ev : { ...ev, object: normaliseGateway(ev.object as Gateway) }),
    HTTPRoute: (ev) => applyCached('HTTPRoute', httpRouteRules, ev.type === 'delete' ? ev : { ...ev, object: normaliseHTTPRoute(ev.object as HTTPRoute) }),
    ReferenceGrant: (ev) => applyCached('ReferenceGrant', referenceGrantRules, ev),
    BackendTLSPolicy: (ev) => applyCached('BackendTLSPolicy', backendTLSPolicyRules, ev),
    ListenerSet: (ev) => applyCached('ListenerSet', listenerSetRules, ev.type === 'delete' ? ev : { ...ev, object: normaliseListenerSet(ev.object as ListenerSet) }),
  };

  function apply(ev: SourceEvent): ApplyResult {
    try {
      const handler = handlers[ev.kind];
      if (!handler) return irrelevant(`kind ${String(ev.kind)} not cached`);
      if (!isObject(ev.object) || !ev.object.metadata?.name) {
        return irrelevant(`${ev.kind} ${ev.key}: event without object metadata`);
      }
      // Kept as the store keeps it from the start, so an update that changes only dropped fields is unchanged.
      return handler(ev.type === 'delete' || STORED_FIELDS[ev.kind] === undefined ? ev : { ...ev, object: storedForm(ev.kind, ev.object) });
    } catch (err) {
      logger.warn({ err, kind: ev.kind, key: ev.key }, 'store: event could not be applied');
      return irrelevant(`error: ${(err as Error).message}`);
    }
  }

  function* servedIngresses(): Iterable<[string, Ingress]> {
    for (const key of served) yield [key, ingresses.get(key)!];
  }

  function listIngresses(): Ingress[] {
    return servedOrder.list(servedIngresses) as Ingress[];
  }

  return {
    options: opts,
    apply,
    serves: evaluate,
    listIngresses,
    getIngress: (key) => (served.has(key) ? ingresses.get(key) : undefined),
    specOrigin: (ing) => specOrigins.get(ing),
    getService: (key) => services.get(key),
    getEndpointSlices: (serviceKey) => [...(slicesByService.get(serviceKey)?.values() ?? [])],
    getSecret: (key) => secrets.get(key),
    getConfigMap: (key) => configMaps.get(key),
    getIngressClass: (name) => ingressClasses.get(name),
    getNamespace: (name) => namespaces.get(name),
    ingressesReferencingSecret: servedReferencing,
    gatewayResources,
    leftOutIngresses() {
      leftOutList ??= Object.freeze([...leftOut].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, reason]) => ({ key, reason })));
      return leftOutList;
    },
  };
}

/** The served order of Ingresses: oldest first (by `t`, the creation time in ms), ties by `ns/name` descending. */
export function byIngressOrder(a: { t: number; key: string }, b: { t: number; key: string }): number {
  return a.t !== b.t ? (a.t < b.t ? -1 : 1) : a.key > b.key ? -1 : a.key < b.key ? 1 : 0;
}

/** The objects oldest first, ties by `ns/name` (the Gateway API's order of precedence among routes). */
export function sortedObjects<T extends KubeObject>(objects: Map<string, T>): T[] {
  const list = [...objects].map(([key, obj]) => ({ t: timestamp(obj), key, obj }));
  list.sort((a, b) => (a.t !== b.t ? (a.t < b.t ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return list.map((e) => e.obj);
}

// Missing or unparsable timestamps sort first, like Go's zero time.
export function timestamp(obj: KubeObject): number {
  const t = obj.metadata.creationTimestamp ? Date.parse(obj.metadata.creationTimestamp) : NaN;
  return Number.isNaN(t) ? -Infinity : t;
}

function isObject(x: unknown): x is KubeObject {
  return typeof x === 'object' && x !== null;
}
