// Projects what client-node hands us — class instances with Date timestamps from a list, plain
// JSON from a watch — into the plain shapes of store/kube-types, so both compare and hash equal.
import type { KubeObject } from '../store/kube-types.js';
import type { StoredKind } from '../store/events.js';
import { KUBE_RESOURCES } from './kube-kinds.js';

/** kubectl's copy of the applied manifest: a second copy of the whole object that nothing reads. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * A plain-JSON copy of `raw` with `apiVersion` and `kind` set (list items carry neither),
 * without the metadata nothing reads: `managedFields` (on every object) and kubectl's
 * last-applied-configuration annotation (on every object `kubectl apply` wrote; a Secret's holds
 * its data). Each is often larger than the rest of the object. Left out by copying, not
 * `delete`, so the objects stay in V8's compact fast mode.
 */
export function projectObject(kind: StoredKind, raw: unknown): KubeObject {
  // managedFields is left out before the copy: its keys are field paths, many unique to one object
  // (`k:{"uid":…}`), and copying them key by key makes V8 give later objects maps of their own.
  const source = raw as { metadata?: { managedFields?: unknown } };
  const plain = toPlain(source.metadata?.managedFields === undefined ? raw : { ...source, metadata: { ...source.metadata, managedFields: undefined } }) as KubeObject;
  let meta = (plain.metadata ?? { name: '' }) as KubeObject['metadata'];
  if (meta.annotations && LAST_APPLIED_ANNOTATION in meta.annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _applied, ...annotations } = meta.annotations;
    meta = { ...meta, annotations };
  }
  return { ...plain, apiVersion: KUBE_RESOURCES[kind].apiVersion, kind, metadata: meta };
}

function toPlain(v: unknown): unknown {
  if (v instanceof Date) return rfc3339(v);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    // Deserialised class instances hold every known field, unset ones as undefined; JSON may hold nulls.
    if (x === undefined || x === null) continue;
    out[k] = toPlain(x);
  }
  return out;
}

/** Kubernetes writes metav1.Time with second precision: `2024-05-01T10:00:00Z`. */
function rfc3339(d: Date): string {
  const iso = d.toISOString();
  return d.getUTCMilliseconds() === 0 ? iso.replace(/\.000Z$/, 'Z') : iso;
}

/** Objects ingress-nginx never looks at: Helm release Secrets and Helm 2 (Tiller) ConfigMaps. */
export function isIgnoredObject(kind: StoredKind, obj: KubeObject): boolean {
  if (kind === 'Secret') return (obj as { type?: string }).type === 'helm.sh/release.v1';
  if (kind === 'ConfigMap') return obj.metadata.labels?.OWNER === 'TILLER';
  return false;
}
