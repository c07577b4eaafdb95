// Reviews a candidate HTTPRoute or Gateway against the current store, as ./review.ts reviews an
// Ingress: the candidate takes its stored version's place among the store's Gateway API objects,
// beside the Ingresses naming one of the hosts it can be served on (an Ingress host takes
// precedence over HTTPRoutes: docs/gateway-api.md), and one model build says what the controller
// would set aside. A route is only reviewed when a parentRef names a Gateway of ours, a Gateway
// when its class is ours; anything else is another controller's and allowed without a look.
import type { Gateway, HTTPRoute, Ingress, KubeObject, ParentReference } from '../store/kube-types.js';
import type { GatewayResources, Store, StoreReader } from '../store/types.js';
import { normaliseGateway, normaliseHTTPRoute } from '../store/normalise.js';
import { byIngressOrder, sortedObjects, timestamp } from '../store/store.js';
import { createModelBuilder, type SharedCaches } from '../model/build.js';
import { assignListenerPorts, attachParent, listenerProblem } from '../model/gateway/index.js';
import type { ModelWarning } from '../model/core/types.js';
import { storeView, type NeighbourIndex } from './candidate.js';
import { INGRESS_HOST_SAME_NAMESPACE, warnRuleOf } from './verdict.js';
import { NO_CONFIG_BYTES, type Finding, type ReviewResult, type ReviewerOptions } from './review-types.js';

const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export interface GatewayReviewer {
  reviewHTTPRoute(route: HTTPRoute): ReviewResult;
  reviewGateway(gateway: Gateway): ReviewResult;
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export function createGatewayReviewer(opts: ReviewerOptions, deps: { index: () => NeighbourIndex; shared: SharedCaches }): GatewayReviewer {
  const now = opts.now ?? (() => new Date());

  function notServed(reason: string): ReviewResult {
    return { served: false, reason, allowed: true, findings: [], tested: 0, viewMs: 0, buildMs: 0, configBytes: NO_CONFIG_BYTES };
  }

  /** The served Ingresses naming one of `hosts` (exactly, as the precedence rule compares them), in the store's order. */
  function ingressesOn(hosts: Iterable<string>): Ingress[] {
    const index = deps.index();
    const picked = new Set<Ingress>();
    for (const h of hosts) for (const ing of index.byName.get(h.toLowerCase()) ?? []) picked.add(ing);
    return [...picked].map((ing) => ({ t: timestamp(ing), key: keyOf(ing), ing })).sort(byIngressOrder).map((e) => e.ing);
  }

  /** One model build over the Ingresses and the Gateway API objects given; the warnings about `object`, as findings. */
  function judge(object: string, resources: GatewayResources, ingresses: Ingress[], annotations: Record<string, string>, started: number): ReviewResult {
    const view: StoreReader = { ...storeView(opts.store, ingresses), gatewayResources: () => resources };
    const built = performance.now();
    const { warnings } = createModelBuilder({
      annotationsPrefix: opts.annotationsPrefix, defaultServerPort: opts.defaultServerPort,
      reservedPorts: opts.reservedPorts, now, shared: deps.shared, addressPolicy: opts.addressPolicy, hostOwnership: opts.hostOwnership,
      dynamicRoutes: opts.dynamicRoutes ?? true,
    }).build(view);
    const done = performance.now();
    const findings = warnings.filter((w) => w.object === object).map((w) => precedence(w, object, ingresses));
    return verdict(findings, annotations, { tested: ingresses.length, viewMs: built - started, buildMs: done - built });
  }

  function verdict(warnings: ModelWarning[], annotations: Record<string, string>, figures: Pick<ReviewResult, 'tested' | 'viewMs' | 'buildMs'>): ReviewResult {
    const denials: Finding[] = [];
    const notes: Finding[] = [];
    const seen = new Set<string>();
    for (const w of warnings) {
      const k = `${w.field}\0${w.message}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const rule = warnRuleOf(w, { annotations });
      if (rule) notes.push({ ...w, severity: 'warn', rule: rule.name });
      else denials.push({ ...w, severity: 'deny' });
    }
    return { served: true, reason: 'of a Gateway of this controller', allowed: denials.length === 0, findings: [...denials, ...notes], ...figures, configBytes: NO_CONFIG_BYTES };
  }

  return {
    reviewHTTPRoute(raw) {
      const started = performance.now();
      const resources = opts.store.gatewayResources?.();
      if (!resources || resources.gateways.length === 0) return notServed('no Gateway of this controller');
      const route = withCreation(normaliseHTTPRoute(raw), now());
      const ns = route.metadata.namespace ?? '';
      const gateways = new Map(resources.gateways.map((g) => [keyOf(g), g]));
      const parents = (route.spec.parentRefs ?? []).map((ref) => gateways.get(gatewayKeyOf(ref, ns))).filter((g): g is Gateway => g !== undefined);
      if (parents.length === 0) return notServed('no parentRef names a Gateway of this controller');
      const hosts = new Set(route.spec.hostnames ?? []);
      for (const gw of parents) for (const l of gw.spec.listeners ?? []) if (l.hostname) hosts.add(l.hostname);
      const candidate = { ...resources, httpRoutes: replaced(resources.httpRoutes, route) };
      return judge(`HTTPRoute ${keyOf(route)}`, candidate, ingressesOn(hosts), route.metadata.annotations ?? {}, started);
    },

    reviewGateway(raw) {
      const started = performance.now();
      const resources = opts.store.gatewayResources?.();
      const className = raw.spec?.gatewayClassName;
      if (!resources || !resources.classes.some((c) => c.metadata.name === className)) return notServed(`GatewayClass "${className}" is not of this controller`);
      const gw = withCreation(normaliseGateway(raw), now());
      const key = keyOf(gw);
      const gateways = replaced(resources.gateways, gw);
      const routes = resources.httpRoutes.filter((r) => (r.spec.parentRefs ?? []).some((ref) => gatewayKeyOf(ref, r.metadata.namespace ?? '') === key));
      const hosts = new Set<string>();
      for (const l of gw.spec.listeners ?? []) if (l.hostname) hosts.add(l.hostname);
      for (const r of routes) for (const h of r.spec.hostnames ?? []) hosts.add(h);
      const result = judge(`Gateway ${key}`, { ...resources, gateways }, ingressesOn(hosts), gw.metadata.annotations ?? {}, started);
      const extra: ModelWarning[] = [];
      const ports = assignListenerPorts(gateways, opts.store.options.gatewayPorts);
      for (const [i, l] of (gw.spec.listeners ?? []).entries()) {
        const problem = listenerProblem(l, ports.of(key, l));
        if (problem) extra.push({ object: `Gateway ${key}`, field: `spec.listeners[${i}]`, message: `listener ${l.name}: ${problem}; the listener is not served` });
      }
      for (const w of detached(key, routes, resources.gateways, gateways, opts.store)) extra.push(w);
      if (extra.length === 0) return result;
      const more = verdict(extra, gw.metadata.annotations ?? {}, { tested: result.tested, viewMs: result.viewMs, buildMs: result.buildMs });
      const findings = [...result.findings, ...more.findings].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'deny' ? -1 : 1));
      return { ...result, allowed: result.allowed && more.allowed, findings };
    },
  };
}

function gatewayKeyOf(ref: ParentReference, routeNamespace: string): string {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return '';
  return `${ref.namespace ?? routeNamespace}/${ref.name}`;
}

/** The list with `obj` in place of the object of its key (or added), oldest first as the store orders it. */
function replaced<T extends KubeObject>(list: readonly T[], obj: T): T[] {
  const byKey = new Map(list.map((o) => [keyOf(o), o]));
  byKey.set(keyOf(obj), obj);
  return sortedObjects(byKey);
}

/** The candidate as the store would hold it: a new object is the newest. */
function withCreation<T extends KubeObject>(obj: T, now: Date): T {
  return obj.metadata.creationTimestamp ? obj : { ...obj, metadata: { ...obj.metadata, creationTimestamp: now.toISOString() } };
}

const PRECEDENCE = /^host (\S+) is served by an Ingress, /;

/** The precedence warning names the Ingresses holding the host; one of the route's own namespace only warns (a route being migrated to). */
function precedence(w: ModelWarning, object: string, ingresses: readonly Ingress[]): ModelWarning {
  const m = PRECEDENCE.exec(w.message);
  if (!m) return w;
  const host = m[1]!;
  const holders = ingresses.filter((ing) => (ing.spec?.rules ?? []).some((r) => r.host?.toLowerCase() === host));
  const ns = object.slice(object.indexOf(' ') + 1).split('/')[0];
  const names = holders.map((ing) => `Ingress ${keyOf(ing)}`).join(', ');
  if (holders.length > 0 && holders.every((ing) => ing.metadata.namespace === ns)) {
    return { ...w, message: `host ${host} is served by ${names}, ${INGRESS_HOST_SAME_NAMESPACE}; not served on it yet` };
  }
  return { ...w, message: `host ${host} is served by ${names || 'an Ingress'} of another namespace, which takes precedence over HTTPRoutes on a host; not served on it` };
}

/** Routes attached to the stored Gateway that the candidate would no longer take, each named with the reason. */
function detached(key: string, routes: readonly HTTPRoute[], before: readonly Gateway[], after: readonly Gateway[], store: Store): ModelWarning[] {
  const old = new Map(before.map((g) => [keyOf(g), g]));
  if (!old.has(key)) return [];
  const now = new Map(after.map((g) => [keyOf(g), g]));
  const namespaceOf = (name: string) => store.getNamespace(name);
  const portsBefore = assignListenerPorts(before, store.options.gatewayPorts);
  const portsAfter = assignListenerPorts(after, store.options.gatewayPorts);
  const out: ModelWarning[] = [];
  for (const r of routes) {
    for (const ref of r.spec.parentRefs ?? []) {
      if (gatewayKeyOf(ref, r.metadata.namespace ?? '') !== key) continue;
      const was = attachParent(r, ref, old, namespaceOf, portsBefore);
      const is = attachParent(r, ref, now, namespaceOf, portsAfter);
      if ('attached' in was && 'refused' in is) {
        out.push({ object: `Gateway ${key}`, field: 'spec.listeners', message: `HTTPRoute ${keyOf(r)} would no longer be attached: ${is.refused}` });
      }
    }
  }
  return out;
}
