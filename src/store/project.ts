// What the store keeps of the Services, EndpointSlices, Secrets and ConfigMaps it caches: the
// fields some reader uses (the model, admission, the store's own rules). A cluster's objects carry
// much more (an EndpointSlice's Pod references, nodes and zones, the copied Service labels, owners,
// annotations), held for as long as the object lives, 10k times over.
import type { StoredKind } from './events.js';
import type { KubeObject } from './kube-types.js';

/**
 * Which fields of an object are kept: `true` keeps a field whole; an object keeps the fields it
 * names, projected by their own rule; a one-element array projects every element of an array.
 */
export type Keep = true | { readonly [field: string]: Keep } | readonly [Keep];

/** Identity, order and deletion. */
const IDENTITY = {
  name: true, namespace: true, uid: true, resourceVersion: true, generation: true, creationTimestamp: true, deletionTimestamp: true,
} as const;
/** With the labels the store's rules read (Helm's, Tiller's). */
const META: Keep = { ...IDENTITY, labels: true };

/** The fields kept per kind; kinds not named here are kept whole. */
export const STORED_FIELDS: Partial<Record<StoredKind, Keep>> = {
  Service: {
    // No reader looks at a Service's labels (a Helm chart writes five or six on each).
    apiVersion: true, kind: true, metadata: IDENTITY,
    spec: { type: true, clusterIP: true, externalName: true, externalIPs: true, ports: true },
    // --publish-service: a change of the status alone is told apart.
    status: true,
  },
  EndpointSlice: {
    apiVersion: true, kind: true,
    // Of the labels only the Service's name (the EndpointSlice controller copies every label of the Service).
    metadata: { ...IDENTITY, labels: { 'kubernetes.io/service-name': true } },
    addressType: true, ports: true,
    endpoints: [{ addresses: true, conditions: true }],
  },
  Secret: { apiVersion: true, kind: true, metadata: META, type: true, data: true, stringData: true },
  ConfigMap: { apiVersion: true, kind: true, metadata: META, data: true },
};

/** The object as the store keeps it: a copy with the kept fields, or the object itself when it holds nothing else. */
export function storedForm(kind: StoredKind, obj: KubeObject): KubeObject {
  const keep = STORED_FIELDS[kind];
  return keep === undefined ? obj : (project(obj, keep) as KubeObject);
}

/** `value` with only the fields `keep` names: a copy where something is left out, else `value` itself (never changed). */
export function project(value: unknown, keep: Keep): unknown {
  if (keep === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(keep)) {
    if (!Array.isArray(value)) return value;
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const p = project(value[i], keep[0]);
      if (p !== value[i]) (copy ??= value.slice())[i] = p;
    }
    return copy ?? value;
  }
  if (Array.isArray(value)) return value;
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let kept = 0;
  let same = true;
  for (const field in keep) {
    const v = src[field];
    if (v === undefined || !Object.hasOwn(src, field)) continue;
    const p = project(v, (keep as Record<string, Keep>)[field]!);
    out[field] = p;
    kept++;
    if (p !== v) same = false;
  }
  return same && kept === Object.keys(src).length ? src : out;
}

/** Whether `path` (field names, `[]` for an array's elements) lies in what `keep` keeps. */
export function keeps(keep: Keep, path: readonly string[]): boolean {
  let k: Keep = keep;
  for (const step of path) {
    if (k === true) return true;
    if (Array.isArray(k)) {
      if (step !== '[]') return false;
      k = k[0];
      continue;
    }
    const next: Keep | undefined = (k as Record<string, Keep>)[step];
    if (next === undefined) return false;
    k = next;
  }
  return true;
}
