// ReferenceGrant: whether an object in one namespace may name an object in another. A reference
// within one namespace always may; across namespaces only when a ReferenceGrant in the target's
// namespace allows it: from that group, kind and namespace, to that group and kind, and to that
// name when the grant names one.
import type { ReferenceGrant } from '../../store/kube-types.js';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export interface ReferenceFrom { readonly group: string; readonly kind: string; readonly namespace: string }
export interface ReferenceTo { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string }

export function referencePermitted(grants: readonly ReferenceGrant[], from: ReferenceFrom, to: ReferenceTo): boolean {
  if (from.namespace === to.namespace) return true;
  return grants.some((g) => g.metadata.namespace === to.namespace
    && (g.spec?.from ?? []).some((f) => (f.group ?? '') === from.group && f.kind === from.kind && f.namespace === from.namespace)
    && (g.spec?.to ?? []).some((t) => (t.group ?? '') === to.group && t.kind === to.kind && (!t.name || t.name === to.name)));
}

/** Why the reference is refused, for a warning. */
export function refusedReference(from: ReferenceFrom, to: ReferenceTo): string {
  return `${to.kind} ${to.namespace}/${to.name} is in another namespace and no ReferenceGrant in "${to.namespace}" allows ${from.kind}s of "${from.namespace}" to refer to it; refused`;
}
