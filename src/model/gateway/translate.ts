// HTTPRoutes attached to our Gateways → servers, locations and backends of the core. Each host
// gets the locations of every route served on it (oldest route first; a path already taken
// stays with the older route); each backendRef of a rule becomes a backend (two or more weighted,
// or one with filters: the location's `split`, which the Lua router draws from per request). What
// cannot be served is named (`HTTPRoute ns/name`, the field, the reason) and set aside; a rule
// whose backendRefs cannot all be used answers 500 rather than send its traffic elsewhere.
import type { EndpointSlice, Gateway, HTTPBackendRef, HTTPRoute, HTTPRouteMatch, HTTPRouteRule, Namespace, ParentReference, Service } from '../../store/kube-types.js';
import type { GatewayResources } from '../../store/types.js';
import type { NginxSettings } from '../core/config/settings.js';
import type { Backend, Endpoint, HeaderEdits, IngressRef, Location, LocationSettings, ModelWarning, PathType, RouteConditions, RouteFilters, Server, ValueMatch, WeightedBackend } from '../core/types.js';
import { withLocationSettings } from '../core/location-settings.js';
import { hostProblem, pathProblem, ROOT_PATH, sortLocations, splitPrefixLocations } from '../core/paths.js';
import { DEFAULT_UPSTREAM, NO_AFFINITY, makeBackend } from '../core/backend-parts.js';
import { resolveServiceEndpoints } from '../core/endpoints.js';
import { checkRegex } from '../checks/pcre.js';
import { regexCostMessage, regexLocationProblem } from '../checks/regex-cost.js';
import { deepEqual } from '../../store/normalise.js';
import type { AddressPolicy } from '../checks/address-policy.js';
import { attachParent, type NotAcceptedReason } from './attachment.js';
import { assignListenerPorts, HTTP_LISTENER_PORT, HTTPS_LISTENER_PORT, hostKey, type GatewayPortOptions, type ListenerPorts } from './listener-ports.js';
import { listenerSetsOf, shadowedHosts, type ListenerSets } from './listener-sets.js';
import { GATEWAY_GROUP, referencePermitted, refusedReference } from './references.js';
import { CONTROL, HEADER_NAME, MAX_HEADER_VALUE, backendFilters, ruleFilters, type MirrorRef } from './filters.js';
import { ruleTimeouts } from './timeouts.js';
import { ruleRetry } from './retry.js';

/** Makes a location with the default settings of every group (the model's entry supplies it). */
export type LocationFactory = (
  path: string, pathType: PathType, route: IngressRef, service: { service: string; port: string } | null, backend: string,
) => Location;

/** What became of one route, for its status (./status.ts). */
export interface RouteOutcome {
  readonly route: HTTPRoute;
  /** Per parentRef, in order: the listeners (`ns/gateway/listener`) it attached to, or why none. */
  readonly parents: ReadonlyArray<{ readonly ref: ParentReference; readonly listeners: readonly string[] } | { readonly ref: ParentReference; readonly reason: NotAcceptedReason | 'UnsupportedValue'; readonly message: string }>;
  /** The first backendRef that cannot be used, or null. */
  readonly refs: RefProblem | null;
}

export interface RefProblem { readonly reason: 'RefNotPermitted' | 'InvalidKind' | 'BackendNotFound'; readonly message: string }

export interface GatewayTranslation {
  readonly servers: readonly Server[];
  readonly routes: readonly RouteOutcome[];
  /** What each rule's backend is made of; endpoints are resolved at every build (resolveBackends). */
  readonly plans: readonly BackendPlan[];
  readonly warnings: readonly ModelWarning[];
  /** Served host (`host:port` off 443) → the HTTPS listeners it is served through, whose certificates it takes (./listener-tls.ts). */
  readonly tlsListeners: ReadonlyMap<string, readonly string[]>;
  /** Where each listener of a Gateway or of a ListenerSet it admitted is served. */
  readonly ports: ListenerPorts;
  /** The ListenerSets on our Gateways and what became of each (./listener-sets.ts). */
  readonly listenerSets: ListenerSets;
  /** Served hosts (`host:port` off 80) attached through at least one HTTP listener (the others take no plain HTTP when validated: ./frontend-tls.ts). */
  readonly plainHosts: ReadonlySet<string>;
}

export interface BackendPlan {
  readonly name: string;
  readonly namespace: string;
  readonly service: string;
  readonly port: string;
  /** The backendRef's weight (summed over equal refs). */
  readonly weight: number;
  /** The backendRef's own header filters. */
  readonly filters?: { readonly requestHeaders?: HeaderEdits; readonly responseHeaders?: HeaderEdits };
}

export interface TranslateInput {
  readonly resources: GatewayResources;
  readonly namespaceOf: (name: string) => Namespace | undefined;
  /** Whether the Service `namespace/name` exists (a backendRef to one that does not answers 500). */
  readonly serviceExists: (key: string) => boolean;
  /** The Service ports (`namespace/name:port`) whose appProtocol is kubernetes.io/h2c; absent: none. */
  readonly h2cPorts?: ReadonlySet<string>;
  /** Hosts the Ingress front end serves: an HTTPRoute is not served on them (docs/gateway-api.md). */
  readonly ingressHosts: ReadonlySet<string>;
  readonly settings: NginxSettings;
  readonly dynamicRoutes: boolean;
  readonly newLocation: LocationFactory;
  /** The location of the built-in default backend (404), for hosts with no `/` of their own. */
  readonly defaultRoot: Location;
  /** --gateway-listener-ports and the controller's own ports: where each listener is served (./listener-ports.ts). */
  readonly portOptions: GatewayPortOptions | undefined;
}

const DYNAMIC_ROUTES_OFF = 'dynamic routes are off (--enable-dynamic-routes=false)';

interface Planned { readonly loc: Location; readonly origin: string }

export function translateGateways(input: TranslateInput): GatewayTranslation {
  const warnings: ModelWarning[] = [];
  const gateways = new Map(input.resources.gateways.map((g) => [`${g.metadata.namespace ?? ''}/${g.metadata.name}`, g]));
  const hosts = new Map<string, Map<string, Planned>>();
  const plans: BackendPlan[] = [];
  const routes: RouteOutcome[] = [];
  const tlsListeners = new Map<string, string[]>();
  const listenerSets = listenerSetsOf(input.resources, input.namespaceOf, (object, field, message) => warnings.push({ object, field, message }));
  const shadowed = shadowedHosts(input.resources.gateways, listenerSets);
  const ports = assignListenerPorts(input.resources.gateways, input.portOptions,
    [...listenerSets.values()].filter((o) => !o.refused).map((o) => ({ set: o.set, listeners: o.listeners.filter((l) => !l.conflict).map((l) => l.listener) })));
  const plainHosts = new Set<string>();
  for (const route of input.resources.httpRoutes) {
    const key = `${route.metadata.namespace ?? ''}/${route.metadata.name}`;
    const warn = (field: string, message: string) => warnings.push({ object: `HTTPRoute ${key}`, field, message });
    const outcome: { route: HTTPRoute; parents: RouteOutcome['parents'][number][]; refs: RefProblem | null } = { route, parents: [], refs: null };
    routes.push(outcome);
    const hostnames = routeHostnames(route, input, ports, gateways, listenerSets, shadowed, warn, outcome.parents, tlsListeners, plainHosts);
    if (hostnames.length === 0) continue;
    const rules = route.spec.rules ?? [];
    for (let i = 0; i < rules.length; i++) {
      const made = ruleLocations(route, rules[i]!, i, input, warn, (p) => { outcome.refs ??= p; });
      if (!made) continue;
      plans.push(...made.plans);
      for (const host of hostnames) {
        let locations = hosts.get(host);
        if (!locations) hosts.set(host, (locations = new Map()));
        for (const loc of listenerPortRedirect(made.locations, host)) {
          const id = `${loc.pathRegex ? 'RegularExpression' : loc.pathType} ${loc.path}${loc.when ? ` ${JSON.stringify(loc.when)}` : ''}`;
          const taken = locations.get(id);
          if (taken) {
            warn(`spec.rules[${i}].matches`, `${loc.pathRegex ? 'RegularExpression' : loc.pathType} path ${JSON.stringify(loc.path)}${loc.when ? ' with the same header, query parameter and method conditions' : ''} on host ${host} is already routed by ${taken.origin} (the older route keeps it); set aside`);
            continue;
          }
          locations.set(id, { loc, origin: `HTTPRoute ${key}` });
        }
      }
    }
  }
  const servers: Server[] = [];
  for (const [hostname, planned] of [...hosts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let locations = [...planned.values()].map((p) => p.loc);
    if (!locations.some((l) => l.path === ROOT_PATH && l.pathType === 'Prefix' && !l.when)) locations.push(input.defaultRoot);
    locations = byMatchPrecedence(splitPrefixLocations(sortLocations(locations)));
    servers.push({
      hostname, aliases: [], sslPassthrough: false, certificate: null, tlsSecret: null, redirectFromToWWW: false,
      useRegex: false, serverSnippet: '', locations, staticBecause: staticReason(input),
      ...(hostname.startsWith('*.') ? { wildcardCoversLabels: 'several' as const } : {}),
    });
  }
  for (const host of [...tlsListeners.keys()]) if (!hosts.has(host)) tlsListeners.delete(host);
  for (const listeners of tlsListeners.values()) listeners.sort();
  return { servers, routes, plans, warnings, tlsListeners, ports, listenerSets, plainHosts };
}

/** The host names the route is served on: those of every listener it attaches to, less the Ingresses' hosts. */
function routeHostnames(
  route: HTTPRoute, input: TranslateInput, ports: ListenerPorts, gateways: Map<string, Gateway>, listenerSets: ListenerSets, shadowed: (listener: string, host: string) => boolean, warn: (field: string, message: string) => void, parents: RouteOutcome['parents'][number][],
  tlsListeners: Map<string, string[]>, plainHosts: Set<string>,
): string[] {
  for (const [j, h] of (route.spec.hostnames ?? []).entries()) {
    const problem = h.startsWith('*.') || !h.includes('*') ? hostProblem(h.toLowerCase()) : `hostname ${JSON.stringify(h)}: "*" only as the first label`;
    if (problem) {
      warn(`spec.hostnames[${j}]`, `${problem}; route set aside`);
      for (const ref of route.spec.parentRefs ?? []) parents.push({ ref, reason: 'UnsupportedValue', message: `spec.hostnames[${j}]: ${problem}` });
      return [];
    }
  }
  const refs = route.spec.parentRefs ?? [];
  if (refs.length === 0) {
    warn('spec.parentRefs', 'no parentRefs: the route attaches to no Gateway');
    return [];
  }
  const out = new Set<string>();
  // Hosts of listeners on other ports than 80 and 443, as the route table names them (`host:port`).
  const ported = new Set<string>();
  for (const [j, ref] of refs.entries()) {
    const r = attachParent(route, ref, gateways, input.namespaceOf, ports, listenerSets);
    if ('refused' in r) {
      warn(`spec.parentRefs[${j}]`, `${r.refused}; not attached`);
      parents.push({ ref, reason: r.reason, message: r.refused });
      continue;
    }
    parents.push({ ref, listeners: r.attached.map((a) => a.listener) });
    const attached = r.attached.map((a) => {
      const taken = a.hostnames.filter((h) => shadowed(a.listener, h));
      if (taken.length === 0) return a;
      warn(`spec.parentRefs[${j}]`, `host ${taken.join(', ')} is taken by a more specific listener of another owner on the Gateway; not served through ${a.listener}`);
      return { ...a, hostnames: a.hostnames.filter((h) => !taken.includes(h)) };
    });
    for (const a of r.attached) {
      if (a.hostnames.length === 0) warn(`spec.parentRefs[${j}]`, `neither the route nor listener ${a.listener} names a hostname (every host), which is not served yet; attached, not served`);
    }
    for (const a of attached) {
      if (a.port === HTTP_LISTENER_PORT || a.port === HTTPS_LISTENER_PORT) {
        for (const h of a.hostnames) out.add(h);
        continue;
      }
      // Served by the Lua router only, in the listener port's own server (./listener-ports.ts).
      const reason = staticReason(input);
      if (reason !== null && a.hostnames.length > 0) {
        warn(`spec.parentRefs[${j}]`, `listener ${a.listener} (port ${a.port}) is served by the Lua router only, and ${reason}; not served through it`);
        continue;
      }
      for (const h of a.hostnames) ported.add(hostKey(h, a.port));
    }
    for (const a of attached) {
      if (!a.https) {
        for (const h of a.hostnames) plainHosts.add(hostKey(h, a.port));
        continue;
      }
      for (const h of a.hostnames.map((name) => hostKey(name, a.port))) {
        const list = tlsListeners.get(h) ?? [];
        if (!list.includes(a.listener)) tlsListeners.set(h, [...list, a.listener]);
      }
    }
  }
  const served: string[] = [];
  for (const h of [...out].sort()) {
    if (input.ingressHosts.has(h)) warn('spec.hostnames', `host ${h} is served by an Ingress, which takes precedence over HTTPRoutes on a host; not served on it`);
    else served.push(h);
  }
  return [...served, ...[...ported].sort()];
}

/**
 * A rule's locations as served on `host`: on a listener port other than 80 and 443, a redirect
 * naming neither scheme nor port goes to the listener's port (the spec: the redirect port is the
 * listener's when the scheme is not given), which the router writes in Location.
 */
function listenerPortRedirect(locations: readonly Location[], host: string): readonly Location[] {
  const colon = host.lastIndexOf(':');
  if (colon < 0) return locations;
  const port = Number(host.slice(colon + 1));
  return locations.map((loc) => {
    const r = loc.filters?.redirect;
    if (!r || r.scheme !== '' || r.port !== 0) return loc;
    return { ...loc, filters: { ...loc.filters!, redirect: { ...r, port } } };
  });
}

/** A rule's locations and backend plans; null when the rule is set aside. */
function ruleLocations(
  route: HTTPRoute, rule: HTTPRouteRule, i: number, input: TranslateInput, warn: (field: string, message: string) => void, badRef: (p: RefProblem) => void,
): { locations: Location[]; plans: BackendPlan[] } | null {
  const at = `spec.rules[${i}]`;
  const prefixOnly = (rule.matches ?? []).every((m) => (m.path?.type ?? 'PathPrefix') === 'PathPrefix');
  const filters = ruleFilters(rule, at, prefixOnly, input.settings.strictValidatePathType);
  if (filters !== null && 'problem' in filters) {
    warn(filters.field, `${filters.problem}; rule set aside`);
    return null;
  }
  const reason = staticReason(input);
  if (filters !== null && reason !== null) {
    warn(`${at}.filters`, `filters are served by the Lua router only, and ${reason}; rule set aside`);
    return null;
  }
  const timeouts = ruleTimeouts(rule, at);
  if (timeouts !== null && 'problem' in timeouts) {
    warn(timeouts.field, `${timeouts.problem}; rule set aside`);
    return null;
  }
  if (timeouts !== null && reason !== null) {
    warn(`${at}.timeouts`, `timeouts are set by the Lua router only, and ${reason}; rule set aside`);
    return null;
  }
  if (timeouts?.note) warn(`${at}.timeouts`, timeouts.note);
  const retried = ruleRetry(rule, at);
  if (retried !== null && 'problem' in retried) {
    warn(retried.field, `${retried.problem}; rule set aside`);
    return null;
  }
  if (retried?.retry && reason !== null) {
    warn(`${at}.retry`, `retries are served by the Lua router only, and ${reason}; rule set aside`);
    return null;
  }
  for (const n of retried?.notes ?? []) warn(n.field, n.message);
  const retry = retried?.retry ? { retry: retried.retry } : {};
  // The rule's locations share one settings object: bounded once, not per location.
  let boundedSettings: { from: LocationSettings; to: LocationSettings } | null = null;
  const bounded = (loc: Location): Location => {
    if (timeouts === null) return loc;
    if (boundedSettings?.from !== loc.settings) {
      const proxy = loc.settings.proxy;
      boundedSettings = {
        from: loc.settings,
        to: withLocationSettings(loc.settings, { proxy: { ...proxy, connectTimeout: Math.min(proxy.connectTimeout, timeouts.seconds), sendTimeout: timeouts.seconds, readTimeout: timeouts.seconds } }),
      };
    }
    return { ...loc, settings: boundedSettings.to };
  };
  const ns = route.metadata.namespace ?? '';
  // The rule names the location's requests in logs and metrics (../core/origin.ts).
  const ref: IngressRef = { namespace: ns, name: route.metadata.name, rule: i };
  // A redirect answers by itself: its rule needs no backend.
  const backends = filters?.redirect ? { plans: [], denied: null } : ruleBackends(route, rule, i, input, warn, badRef);
  if (backends === 'skip') return null;
  let served: RouteFilters | null = filters;
  const mirrors: BackendPlan[] = [];
  if (filters?.mirrorRefs) {
    const { mirrorRefs, ...rest } = filters;
    const m = ruleMirrors(route, mirrorRefs, i, input, warn, badRef);
    mirrors.push(...m.plans);
    served = { ...rest, ...(m.mirrors.length > 0 ? { mirrors: m.mirrors } : {}) };
  }
  const locations: Location[] = [];
  for (const [k, m] of (rule.matches ?? []).entries()) {
    const field = `${at}.matches[${k}]`;
    const when = routeConditions(m, field, input, warn);
    if (when === 'bad') continue;
    const type = m.path?.type ?? 'PathPrefix';
    const value = m.path?.value ?? ROOT_PATH;
    if (type !== 'Exact' && type !== 'PathPrefix' && type !== 'RegularExpression') {
      warn(`${field}.path.type`, `unknown path match type ${JSON.stringify(type)}; match set aside`);
      continue;
    }
    const regex = type === 'RegularExpression';
    const pathType: PathType = type === 'Exact' ? 'Exact' : regex ? 'ImplementationSpecific' : 'Prefix';
    const problem = regex ? regexMatchProblem(value) : pathProblem(value, pathType, input.settings.strictValidatePathType);
    if (problem) {
      warn(`${field}.path.value`, `${problem}; match set aside`);
      continue;
    }
    const extra = { ...(when ? { when } : {}), ...(served ? { filters: served } : {}), ...(regex ? { pathRegex: true as const } : {}) };
    if (backends.denied !== null) {
      locations.push({ ...input.newLocation(value, pathType, ref, null, DEFAULT_UPSTREAM), denied: backends.denied, deniedStatus: 500, ...(when ? { when } : {}), ...(regex ? { pathRegex: true as const } : {}) });
    } else if (backends.plans.length === 0) {
      locations.push({ ...input.newLocation(value, pathType, ref, null, DEFAULT_UPSTREAM), ...extra });
    } else {
      const primary = backends.plans[0]!;
      const split = backends.plans.length > 1 || backends.plans.some((b) => b.filters) ? { split: backends.plans.map(weightedBackend) } : {};
      const h2c = backends.h2c ? { upstreamProtocol: 'h2c' as const } : {};
      locations.push({ ...bounded(input.newLocation(value, pathType, ref, { service: primary.service, port: primary.port }, primary.name)), ...extra, ...split, ...retry, ...h2c });
    }
  }
  return { locations, plans: backends.denied === null ? [...backends.plans, ...mirrors] : [] };
}

/** The CRD's bound on a path match's value. */
const MAX_PATH_VALUE = 1024;

/**
 * Why a RegularExpression path match cannot be served, or null. The dialect is PCRE2's, as for
 * Ingress regex paths and the header and query matches; the pattern is searched in the path as
 * NGINX's `location ~` does (case-sensitive; anchor it with `^…$` to match the whole path).
 */
function regexMatchProblem(value: string): string | null {
  if (value.length === 0 || value.length > MAX_PATH_VALUE) return `a regular expression must have 1 to ${MAX_PATH_VALUE} characters`;
  if (CONTROL.test(value)) return 'the regular expression has a control character (CR, LF, NUL…)';
  const problem = regexLocationProblem(value, false, 0);
  return problem === null ? null : `path ${JSON.stringify(value.slice(0, 200))} ${problem}`;
}

/**
 * A rule's RequestMirror targets: backends of their own (`…mirror.<Service ns>.<Service>.<port>`)
 * and the share each gets. A ref that cannot be used (not a Service, no port, another namespace
 * without a ReferenceGrant) is named and its copies not sent; the rule is served.
 */
function ruleMirrors(
  route: HTTPRoute, refs: readonly MirrorRef[], i: number, input: TranslateInput, warn: (field: string, message: string) => void, badRef: (p: RefProblem) => void,
): { plans: BackendPlan[]; mirrors: NonNullable<RouteFilters['mirrors']> } {
  const ns = route.metadata.namespace ?? '';
  const plans = new Map<string, BackendPlan>();
  const mirrors: Array<NonNullable<RouteFilters['mirrors']>[number]> = [];
  for (const m of refs) {
    const problem = backendRefProblem(m.ref, ns, input);
    if (problem) {
      warn(`${m.field}.backendRef`, `${problem.message}; no copy is sent`);
      badRef({ reason: problem.reason, message: `${m.field}.backendRef: ${problem.message}` });
      continue;
    }
    const namespace = m.ref.namespace ?? ns;
    const name = `httproute.${ns}.${route.metadata.name}.${i}.mirror.${namespace}.${m.ref.name}.${m.ref.port}`;
    plans.set(name, { name, namespace, service: m.ref.name, port: String(m.ref.port), weight: 1 });
    if (m.numerator > 0) mirrors.push({ backend: name, numerator: m.numerator, denominator: m.denominator });
  }
  return { plans: [...plans.values()], mirrors };
}

function weightedBackend(b: BackendPlan): WeightedBackend {
  return { backend: b.name, weight: b.weight, ...b.filters };
}

/** The Gateway API's methods (HTTPMethod). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
const MAX_MATCH_VALUE = MAX_HEADER_VALUE;
const MAX_VALUE_MATCHES = 16;

/**
 * A match's header, query parameter and method conditions (null: none), or 'bad' when one
 * cannot be served (named; the match is set aside). Conditions are served by the Lua router
 * only: on a host whose routes are static they are set aside.
 */
function routeConditions(m: HTTPRouteMatch, field: string, input: TranslateInput, warn: (field: string, message: string) => void): RouteConditions | null | 'bad' {
  const headers = m.headers ?? [];
  const query = m.queryParams ?? [];
  if (headers.length === 0 && query.length === 0 && m.method === undefined) return null;
  const reason = staticReason(input);
  if (reason !== null) {
    warn(field, `header, query parameter and method matches are served by the Lua router only, and ${reason}; match set aside`);
    return 'bad';
  }
  let method = '';
  if (m.method !== undefined) {
    if (!METHODS.has(m.method)) {
      warn(`${field}.method`, `method ${JSON.stringify(String(m.method).slice(0, 40))} is not one of ${[...METHODS].join(', ')}; match set aside`);
      return 'bad';
    }
    method = m.method;
  }
  const h = valueMatches(headers, `${field}.headers`, 'header', warn);
  const q = valueMatches(query, `${field}.queryParams`, 'query parameter', warn);
  if (h === null || q === null) return 'bad';
  return { method, headers: h.map((v) => ({ ...v, name: v.name.toLowerCase() })), query: q };
}

/** Checked header or query parameter matches (the first of equal names kept, as the spec says), or null when one is bad (named). */
function valueMatches(list: ReadonlyArray<{ type?: string; name: string; value: string }>, field: string, what: string, warn: (field: string, message: string) => void): ValueMatch[] | null {
  if (list.length > MAX_VALUE_MATCHES) {
    warn(field, `${list.length} ${what} matches: at most ${MAX_VALUE_MATCHES}; match set aside`);
    return null;
  }
  const out: ValueMatch[] = [];
  const names = new Set<string>();
  for (const [j, v] of list.entries()) {
    const at = `${field}[${j}]`;
    const type = v.type ?? 'Exact';
    const name = typeof v.name === 'string' ? v.name : '';
    const value = typeof v.value === 'string' ? v.value : '';
    let problem: string | null = null;
    if (type !== 'Exact' && type !== 'RegularExpression') problem = `unknown match type ${JSON.stringify(String(type).slice(0, 40))}`;
    else if (what === 'header' ? !HEADER_NAME.test(name) : name.length === 0 || name.length > 256 || /[\x00-\x20\x7f&=#%]/.test(name)) problem = `name ${JSON.stringify(name.slice(0, 100))} is not a valid ${what} name`;
    else if (value.length === 0 || value.length > MAX_MATCH_VALUE) problem = `value must have 1 to ${MAX_MATCH_VALUE} characters`;
    else if (CONTROL.test(value)) problem = 'value has a control character (CR, LF, NUL…)';
    else if (type === 'RegularExpression') {
      const r = checkRegex(value, { caseless: false });
      // The router runs it on every request of the host: the bound Ingress and path patterns get.
      const cost = r.ok ? regexCostMessage(value, false) : null;
      if (!r.ok) problem = `regular expression ${JSON.stringify(value.slice(0, 200))} does not compile: ${r.error} (at ${r.offset})`;
      else if (cost) problem = `regular expression ${JSON.stringify(value.slice(0, 200))} ${cost}`;
    }
    if (problem) {
      warn(at, `${problem}; match set aside`);
      return null;
    }
    const key = what === 'header' ? name.toLowerCase() : name;
    if (names.has(key)) continue;
    names.add(key);
    out.push({ name, type: type as ValueMatch['type'], value });
  }
  return out;
}

/**
 * The Gateway API's precedence among locations of one match (path and type): those from an
 * Exact path before the Exact twins of PathPrefix paths, then with a method, more headers, more
 * query parameters; the rest (route age, rule order) as listed. The router tries them in this
 * order, then shorter prefixes (lua/route_match.lua).
 */
function byMatchPrecedence(locations: Location[]): Location[] {
  const group = new Map<string, number>();
  const rank = (l: Location) => [
    group.get(`${l.pathType} ${l.path}`)!,
    l.pathType === 'Exact' && l.ingressPath !== undefined ? 1 : 0,
    l.when ? 0 : 1,
    l.when?.method ? 0 : 1,
    -(l.when?.headers.length ?? 0),
    -(l.when?.query.length ?? 0),
  ];
  for (const l of locations) if (!group.has(`${l.pathType} ${l.path}`)) group.set(`${l.pathType} ${l.path}`, group.size);
  const ranks = new Map(locations.map((l) => [l, rank(l)]));
  return [...locations].sort((a, b) => {
    const x = ranks.get(a)!;
    const y = ranks.get(b)!;
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
}

/** The CRD's bound on a backendRef's weight (so a sum of 16 fits the router's draw exactly). */
const MAX_WEIGHT = 1_000_000;
const MAX_BACKEND_REFS = 16;

/**
 * The rule's backends: plans, or why the rule answers 500 (`denied`: a refused or unusable
 * backendRef, or every weight 0), or `skip` (weights the Lua router does not draw from).
 */
function ruleBackends(
  route: HTTPRoute, rule: HTTPRouteRule, i: number, input: TranslateInput, warn: (field: string, message: string) => void, badRef: (p: RefProblem) => void,
): { plans: BackendPlan[]; denied: string | null; h2c?: boolean } | 'skip' {
  const ns = route.metadata.namespace ?? '';
  const weighted = new Map<string, { ref: HTTPBackendRef; namespace: string; weight: number; filters: BackendPlan['filters'] | null }>();
  let denied: string | null = null;
  const refs = rule.backendRefs ?? [];
  if (refs.length > MAX_BACKEND_REFS) {
    warn(`spec.rules[${i}].backendRefs`, `${refs.length} backendRefs: at most ${MAX_BACKEND_REFS}; rule set aside`);
    return 'skip';
  }
  for (const [j, b] of refs.entries()) {
    const field = `spec.rules[${i}].backendRefs[${j}]`;
    const problem = backendRefProblem(b, ns, input);
    if (problem) {
      warn(field, `${problem.message}; the rule answers 500`);
      denied ??= `${field}: ${problem.message}`;
      badRef({ reason: problem.reason, message: `${field}: ${problem.message}` });
      continue;
    }
    const filters = backendFilters(b.filters, field);
    if (filters !== null && 'problem' in filters) {
      warn(filters.field, `${filters.problem}; the rule answers 500`);
      denied ??= `${filters.field}: ${filters.problem}`;
      continue;
    }
    const weight = b.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) {
      warn(`${field}.weight`, `weight ${JSON.stringify(weight)} is not an integer from 0 to ${MAX_WEIGHT}; the rule answers 500`);
      denied ??= `${field}.weight: out of range`;
      continue;
    }
    if (weight === 0) continue;
    // Equal refs add up; the same Service with other filters is a backend of its own.
    const target = `${b.namespace ?? ns}/${b.name}:${b.port}${filters ? ` ${JSON.stringify(filters)}` : ''}`;
    const seen = weighted.get(target);
    weighted.set(target, { ref: b, namespace: b.namespace ?? ns, weight: (seen?.weight ?? 0) + weight, filters: seen?.filters ?? filters });
  }
  if (denied !== null) return { plans: [], denied };
  if (refs.length === 0) return { plans: [], denied: 'the rule has no backendRefs' };
  const list = [...weighted.values()];
  if (list.length === 0) return { plans: [], denied: 'every backendRef has weight 0' };
  if ((list.length > 1 || list.some((e) => e.filters)) && staticReason(input) !== null) {
    warn(`spec.rules[${i}].backendRefs`, `weighted backendRefs and their filters are served by the Lua router only, and ${staticReason(input)}; rule set aside`);
    return 'skip';
  }
  // One location per request: its backends speak one protocol upstream (HTTP/1.1, or HTTP/2 cleartext).
  const h2c = list.map((e) => input.h2cPorts?.has(`${e.namespace}/${e.ref.name}:${e.ref.port}`) === true);
  if (h2c.some((x) => x) && staticReason(input) !== null) {
    warn(`spec.rules[${i}].backendRefs`, `kubernetes.io/h2c backends are served by the Lua router only, and ${staticReason(input)}; rule set aside`);
    return 'skip';
  }
  if (h2c.some((x) => x) && !h2c.every((x) => x)) {
    warn(`spec.rules[${i}].backendRefs`, 'the backendRefs mix Service ports of appProtocol kubernetes.io/h2c with others, which one rule cannot serve; rule set aside');
    return 'skip';
  }
  return {
    ...(h2c[0] ? { h2c: true } : {}),
    plans: list.map((e) => ({
      name: sharedBackendName(e.namespace, e.ref.name, String(e.ref.port)), namespace: e.namespace, service: e.ref.name, port: String(e.ref.port), weight: e.weight,
      ...(e.filters ? { filters: e.filters } : {}),
    })),
    denied: null,
  };
}

/**
 * The backend of a Service port, one for every rule and route that sends to it (as an Ingress's
 * `<namespace>-<service>-<port>`): its endpoints and balancing are the Service's alone (a rule's
 * weights and header filters are the route entry's), so a new route to a Service some route
 * already uses changes no backend, and the whole backends document is not posted again.
 */
function sharedBackendName(namespace: string, service: string, port: string): string {
  return `httproute.${namespace}.${service}.${port}`;
}

function backendRefProblem(b: HTTPBackendRef, routeNs: string, input: TranslateInput): RefProblem | null {
  if ((b.group ?? '') !== '' || (b.kind ?? 'Service') !== 'Service') return { reason: 'InvalidKind', message: `backendRef ${b.group ?? ''}/${b.kind} is not a Service (only Services are supported)` };
  if (b.port === undefined) return { reason: 'BackendNotFound', message: 'port is required for a Service' };
  const namespace = b.namespace ?? routeNs;
  const to = { group: '', kind: 'Service', namespace, name: b.name };
  const from = { group: GATEWAY_GROUP, kind: 'HTTPRoute', namespace: routeNs };
  if (!referencePermitted(input.resources.referenceGrants, from, to)) return { reason: 'RefNotPermitted', message: refusedReference(from, to) };
  if (!input.serviceExists(`${namespace}/${b.name}`)) return { reason: 'BackendNotFound', message: `Service ${namespace}/${b.name} not found` };
  return null;
}

function staticReason(input: TranslateInput): string | null {
  if (!input.dynamicRoutes) return DYNAMIC_ROUTES_OFF;
  if (input.settings.sslRejectHandshake) return 'ssl-reject-handshake (ConfigMap) refuses TLS for hosts without a server block';
  if (input.settings.serverSnippet !== '') return 'server-snippet (ConfigMap) goes into every server block';
  if (input.settings.locationSnippet !== '') return 'location-snippet (ConfigMap) goes into every location';
  return null;
}

/**
 * The backends of the plans with their Services' endpoints now; problems are warned. A backend
 * equal to the one of the same name in `previous` is handed back as that object (and `previous`
 * is updated), so an unchanged list compares equal by identity.
 */
export function resolveBackends(
  plans: readonly BackendPlan[], look: { getService(key: string): Service | undefined; getEndpointSlices(key: string): EndpointSlice[] },
  settings: NginxSettings, policy: AddressPolicy, warnings: ModelWarning[], previous: Map<string, Backend>,
): Backend[] {
  const out: Backend[] = [];
  const seen = new Set<string>();
  for (const p of plans) {
    // A Service port's backend serves every rule that sends to it: made once.
    if (seen.has(p.name)) continue;
    const key = `${p.namespace}/${p.service}`;
    const r = resolveServiceEndpoints(look.getService(key), look.getEndpointSlices(key), p.port, false, policy);
    if (r.problem) warnings.push({ object: `Service ${key}`, field: '', message: `${r.problem} (backend ${p.name} of an HTTPRoute)` });
    const made = makeBackend({
      name: p.name, service: r.service, port: p.port, endpoints: r.endpoints as Endpoint[], sessionAffinityConfig: NO_AFFINITY, upstreamHashByConfig: {},
      loadBalance: settings.loadBalance,
    });
    const before = previous.get(p.name);
    const backend = before && deepEqual(before, made) ? before : made;
    previous.set(p.name, backend);
    seen.add(p.name);
    out.push(backend);
  }
  for (const name of previous.keys()) if (!seen.has(name)) previous.delete(name);
  return out;
}
