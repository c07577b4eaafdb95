// Which front end and object a location came from (an Ingress, or one rule of an HTTPRoute), as
// requests are labelled with it and as people read it.
import type { IngressRef } from './types.js';

/**
 * The name a location's requests carry in `$ingress_name`, the `ingress` label of the request
 * metrics and the route table: an Ingress's name, or `httproute/<name>/<rule index>` for a rule
 * of an HTTPRoute. No Kubernetes name holds a `/`, so an HTTPRoute never shares the series of an
 * Ingress of the same name (a migration keeps both).
 */
export function locationLabel(ref: IngressRef): string {
  return ref.rule === undefined ? ref.name : `httproute/${ref.name}/${ref.rule}`;
}

/** The object a location came from, for people (`dbg routes`): `Ingress ns/name` or `HTTPRoute ns/name spec.rules[i]`. */
export function locationOrigin(ref: IngressRef): string {
  return ref.rule === undefined ? `Ingress ${ref.namespace}/${ref.name}` : `HTTPRoute ${ref.namespace}/${ref.name} spec.rules[${ref.rule}]`;
}
