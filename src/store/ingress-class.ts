// Which Ingresses this controller serves: ingress-nginx's class rules (spec.ingressClassName
// first, then the kubernetes.io/ingress.class annotation, then --watch-ingress-without-class)
// and the --disable-catch-all filter.
import type { Ingress, IngressClass } from './kube-types.js';
import type { StoreOptions } from './types.js';

export const INGRESS_CLASS_ANNOTATION = 'kubernetes.io/ingress.class';

export interface ClassVerdict {
  served: boolean;
  reason: string;
}

type ClassOptions = Pick<StoreOptions, 'ingressClass' | 'controllerClass' | 'ingressClassByName' | 'watchIngressWithoutClass'>;

/** Whether an IngressClass belongs to this controller (ingress-nginx watches only these). */
export function isOwnIngressClass(ic: IngressClass, opts: ClassOptions): boolean {
  return ic.spec?.controller === opts.controllerClass
    || (opts.ingressClassByName && ic.metadata.name === opts.ingressClass);
}

/**
 * ingress-nginx's order: an ingressClassName must name one of our IngressClasses (a name that
 * does not exist or belongs to another controller rejects the Ingress — the annotation is then
 * not consulted); without it the annotation must equal --ingress-class; without both, the
 * Ingress is served only with --watch-ingress-without-class. With --ingress-class-by-name an
 * ingressClassName equal to --ingress-class is ours even before (or without) its IngressClass.
 */
export function resolveIngressClass(
  ing: Ingress,
  opts: ClassOptions,
  getIngressClass: (name: string) => IngressClass | undefined,
): ClassVerdict {
  const className = ing.spec?.ingressClassName;
  if (className !== undefined && className !== null) {
    if (opts.ingressClassByName && className === opts.ingressClass) {
      return { served: true, reason: `ingressClassName ${quoted(className)} (--ingress-class-by-name)` };
    }
    const ic = getIngressClass(className);
    if (!ic) return { served: false, reason: `IngressClass ${quoted(className)} not found` };
    if (!isOwnIngressClass(ic, opts)) {
      return { served: false, reason: `IngressClass ${quoted(className)} belongs to controller ${quoted(ic.spec?.controller ?? '')}` };
    }
    return { served: true, reason: `ingressClassName ${quoted(className)}` };
  }
  const annotation = ing.metadata.annotations?.[INGRESS_CLASS_ANNOTATION];
  if (annotation !== undefined) {
    if (annotation !== opts.ingressClass) {
      return { served: false, reason: `annotation ${INGRESS_CLASS_ANNOTATION}=${quoted(annotation)} is not ${quoted(opts.ingressClass)}` };
    }
    return { served: true, reason: `annotation ${INGRESS_CLASS_ANNOTATION}=${quoted(annotation)}` };
  }
  if (opts.watchIngressWithoutClass) return { served: true, reason: 'no class, --watch-ingress-without-class' };
  return { served: false, reason: 'no ingress class' };
}

/** A user's string in a reason that render prints and the log and dbg show: quoted, escaped, short. */
function quoted(value: string): string {
  return JSON.stringify(String(value).slice(0, 100));
}

/** --disable-catch-all drops every Ingress with a spec.defaultBackend, rules or not (as ingress-nginx does). */
export function isCatchAll(ing: Ingress): boolean {
  return !!ing.spec?.defaultBackend;
}
