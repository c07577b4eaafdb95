// How the store compares and normalises objects on the way in: Ingress paths get the defaults
// ingress-nginx gives them, and an update that changes nothing but bookkeeping is recognised.
import type { Gateway, HTTPIngressPath, HTTPRoute, HTTPRouteMatch, HTTPRouteRule, Ingress, KubeObject, ListenerSet } from './kube-types.js';

/** ingress-nginx gives a path without pathType this one. */
export const DEFAULT_PATH_TYPE = 'Prefix' as const;

/**
 * An Ingress with empty paths set to '/' and missing pathTypes set to Prefix. Returns the same
 * object when nothing needs defaulting; otherwise a copy (the input is never mutated).
 */
export function normaliseIngress(ing: Ingress): Ingress {
  const rules = ing.spec?.rules;
  if (ing.spec && rules?.every((r) => r.http?.paths?.every(isNormalPath) ?? true)) return ing;
  return {
    ...ing,
    spec: {
      ...(ing.spec ?? {}),
      ...(rules ? {
        rules: rules.map((r) => r.http?.paths?.every(isNormalPath) ?? true ? r : {
          ...r,
          http: { ...r.http, paths: r.http!.paths.map(normalisePath) },
        }),
      } : {}),
    },
  };
}

function isNormalPath(p: HTTPIngressPath): boolean {
  return !!p.path && !!p.pathType;
}

function normalisePath(p: HTTPIngressPath): HTTPIngressPath {
  if (isNormalPath(p)) return p;
  return { ...p, path: p.path || '/', pathType: p.pathType ?? DEFAULT_PATH_TYPE };
}

// Bookkeeping the API server changes without the object changing.
const IGNORED_META = new Set(['resourceVersion', 'managedFields', 'generation']);

/** Deep equality of two objects, ignoring metadata.resourceVersion/managedFields/generation. */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    const va = (a as unknown as Record<string, unknown>)[k];
    const vb = (b as unknown as Record<string, unknown>)[k];
    if (k === 'metadata') {
      if (!sameMeta(va, vb)) return false;
    } else if (!deepEqual(va, vb)) return false;
  }
  return true;
}

/** Whether two objects are the same but for their `.status` (and the bookkeeping sameObject ignores). */
export function sameApartFromStatus(a: KubeObject, b: KubeObject): boolean {
  const { status: _a, ...restA } = a as KubeObject & { status?: unknown };
  const { status: _b, ...restB } = b as KubeObject & { status?: unknown };
  return sameObject(restA as KubeObject, restB as KubeObject);
}

function sameMeta(a: unknown, b: unknown): boolean {
  if (!isRecord(a) || !isRecord(b)) return deepEqual(a, b);
  return sameRecords(a, b, IGNORED_META);
}

const NOTHING_IGNORED: ReadonlySet<string> = new Set();

/** The keys of `a` and `b` outside `ignored` whose values are defined: the same keys, deeply equal values. */
function sameRecords(a: Record<string, unknown>, b: Record<string, unknown>, ignored: ReadonlySet<string>): boolean {
  let count = 0;
  for (const k in a) {
    const va = a[k];
    if (va === undefined || ignored.has(k) || !Object.hasOwn(a, k)) continue;
    count++;
    if (!Object.hasOwn(b, k) || !deepEqual(va, b[k])) return false;
  }
  for (const k in b) if (b[k] !== undefined && !ignored.has(k) && Object.hasOwn(b, k)) count--;
  return count === 0;
}

/** Structural equality of plain JSON values; keys whose value is undefined count as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  return sameRecords(a as Record<string, unknown>, b as Record<string, unknown>, NOTHING_IGNORED);
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

// ---- Gateway API: the defaults the CRDs' schemas give, which the API server writes and a
// manifest may leave out, so every source's object reads the same.

/** An HTTPRoute with its rules, matches, path matches and backendRef weights defaulted; the same object when nothing is missing. */
export function normaliseHTTPRoute(route: HTTPRoute): HTTPRoute {
  const rules = route.spec?.rules;
  if (route.spec && rules && rules.length > 0 && rules.every(isNormalRule)) return route;
  return { ...route, spec: { ...(route.spec ?? {}), rules: (rules && rules.length > 0 ? rules : [{}]).map(normaliseRule) } };
}

const DEFAULT_MATCH: HTTPRouteMatch = { path: { type: 'PathPrefix', value: '/' } };

function isNormalRule(r: HTTPRouteRule): boolean {
  return !!r.matches && r.matches.length > 0 && r.matches.every((m) => !!m.path?.type && m.path.value !== undefined)
    && (r.backendRefs ?? []).every((b) => b.weight !== undefined);
}

function normaliseRule(r: HTTPRouteRule): HTTPRouteRule {
  if (isNormalRule(r)) return r;
  const matches = r.matches && r.matches.length > 0
    ? r.matches.map((m) => ({ ...m, path: { type: m.path?.type ?? 'PathPrefix', value: m.path?.value ?? '/' } }))
    : [DEFAULT_MATCH];
  return { ...r, matches, ...(r.backendRefs ? { backendRefs: r.backendRefs.map((b) => (b.weight === undefined ? { ...b, weight: 1 } : b)) } : {}) };
}

/** A Gateway whose listeners all say which namespaces' routes they take (`Same` by default); the same object when all do. */
export function normaliseGateway(gw: Gateway): Gateway {
  return withDefaultAllowedRoutes(gw);
}

/** A ListenerSet whose listeners all say which namespaces' routes they take (`Same`, the ListenerSet's, by default). */
export function normaliseListenerSet(set: ListenerSet): ListenerSet {
  return withDefaultAllowedRoutes(set);
}

function withDefaultAllowedRoutes<T extends Gateway | ListenerSet>(owner: T): T {
  const listeners = owner.spec?.listeners ?? [];
  if (owner.spec && listeners.every((l) => !!l.allowedRoutes?.namespaces?.from)) return owner;
  return {
    ...owner,
    spec: {
      ...owner.spec,
      listeners: listeners.map((l) => (l.allowedRoutes?.namespaces?.from ? l : {
        ...l, allowedRoutes: { ...l.allowedRoutes, namespaces: { ...l.allowedRoutes?.namespaces, from: 'Same' } },
      })),
    },
  };
}
