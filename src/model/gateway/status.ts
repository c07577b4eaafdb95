// The status conditions the Gateway API defines, computed from the translation: on our
// GatewayClasses (Accepted), our Gateways (Accepted, Programmed) and each of their listeners
// (Accepted, ResolvedRefs, Programmed, Conflicted, with attachedRoutes and supportedKinds), and
// on each HTTPRoute, per parentRef that names one of our Gateways (Accepted, ResolvedRefs). Each
// condition carries the generation of the object it describes. Pure: writing them is the status
// actor's part (not built yet: docs/gateway-api.md).
import type { Gateway, GatewayListener, HTTPRoute, ParentReference } from '../../store/kube-types.js';
import type { GatewayResources } from '../../store/types.js';
import { admitsHTTPRoutes, allRouteKindsServed, gatewayProblem, listenerProblem } from './attachment.js';
import { GATEWAY_GROUP } from './references.js';
import type { FrontendProblem, GatewayFrontends } from './frontend-tls.js';
import type { ListenerRefProblem } from './listener-tls.js';
import type { GatewayTranslation } from './translate.js';

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
}

export interface ListenerStatus {
  readonly name: string;
  readonly attachedRoutes: number;
  readonly supportedKinds: ReadonlyArray<{ readonly group: string; readonly kind: string }>;
  readonly conditions: readonly Condition[];
}

export interface RouteParentStatus {
  readonly parentRef: ParentReference;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface GatewayAPIStatus {
  /** GatewayClass name → its conditions. */
  readonly classes: ReadonlyMap<string, readonly Condition[]>;
  /** `namespace/name` → the Gateway's conditions and its listeners'. */
  readonly gateways: ReadonlyMap<string, { readonly conditions: readonly Condition[]; readonly listeners: readonly ListenerStatus[] }>;
  /** `namespace/name` → one entry per parentRef naming a Gateway of ours. */
  readonly routes: ReadonlyMap<string, readonly RouteParentStatus[]>;
}

const keyOf = (o: { metadata: { namespace?: string; name: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const generationOf = (o: { metadata: { generation?: number } }) => o.metadata.generation ?? 0;

function condition(type: string, ok: boolean, reason: string, message: string, observedGeneration: number): Condition {
  return { type, status: ok ? 'True' : 'False', reason, message, observedGeneration };
}

export function gatewayAPIStatus(
  resources: GatewayResources, translation: GatewayTranslation, controllerName: string, serviceExists: (key: string) => boolean,
  certificateProblems: ReadonlyMap<string, ListenerRefProblem> = new Map(), frontends?: GatewayFrontends,
): GatewayAPIStatus {
  const classes = new Map<string, readonly Condition[]>();
  for (const c of resources.classes) {
    classes.set(c.metadata.name, [condition('Accepted', true, 'Accepted', `handled by ${controllerName}`, generationOf(c))]);
  }

  const attached = new Map<string, number>();
  const routes = new Map<string, RouteParentStatus[]>();
  const ours = new Set(resources.gateways.map(keyOf));
  for (const outcome of translation.routes) {
    const route = outcome.route;
    const g = generationOf(route);
    const refs = outcome.refs ?? missingService(route, serviceExists);
    const entries: RouteParentStatus[] = [];
    for (const p of outcome.parents) {
      // A parentRef to a Gateway that is not ours is another controller's to answer.
      if ((p.ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && (p.ref.kind ?? 'Gateway') === 'Gateway'
        && !ours.has(`${p.ref.namespace ?? route.metadata.namespace ?? ''}/${p.ref.name}`)) continue;
      const accepted = 'listeners' in p
        ? condition('Accepted', true, 'Accepted', `attached to ${p.listeners.join(', ')}`, g)
        : condition('Accepted', false, p.reason, p.message, g);
      if ('listeners' in p) for (const l of p.listeners) attached.set(l, (attached.get(l) ?? 0) + 1);
      const resolved = refs === null
        ? condition('ResolvedRefs', true, 'ResolvedRefs', 'every backendRef is resolved', g)
        : condition('ResolvedRefs', false, refs.reason, refs.message, g);
      entries.push({ parentRef: p.ref, controllerName, conditions: [accepted, resolved] });
    }
    if (entries.length > 0) routes.set(keyOf(route), entries);
  }

  const gateways = new Map<string, { conditions: readonly Condition[]; listeners: readonly ListenerStatus[] }>();
  for (const gw of resources.gateways) {
    const g = generationOf(gw);
    const listeners = (gw.spec.listeners ?? []).map((l) => listenerStatus(gw, l, g, attached.get(`${keyOf(gw)}/${l.name}`) ?? 0, certificateProblems.get(`${keyOf(gw)}/${l.name}`), frontends?.problems.get(`${keyOf(gw)}/${l.name}`)));
    const served = listeners.filter((l) => l.conditions[0]!.status === 'True').length;
    const invalid = gatewayProblem(gw);
    const ok = served > 0 && invalid === null;
    // Accepted with some listeners set aside says so in its reason (the spec's ListenersNotValid).
    const accepted = invalid !== null ? condition('Accepted', false, 'InvalidParameters', invalid, g)
      : condition('Accepted', ok, ok && served === listeners.length ? 'Accepted' : 'ListenersNotValid', ok ? `${served} of ${listeners.length} listeners served` : 'no listener can be served', g);
    gateways.set(keyOf(gw), {
      conditions: [
        accepted,
        condition('Programmed', ok, ok ? 'Programmed' : 'Invalid', ok ? 'served by NGINX' : invalid ?? 'no listener can be served', g),
        ...(frontends?.insecure.has(keyOf(gw))
          ? [condition('InsecureFrontendValidationMode', true, 'ConfigurationChanged', 'a client certificate validation is AllowInsecureFallback: clients without a valid certificate are served', g)]
          : []),
      ],
      listeners,
    });
  }
  return { classes, gateways, routes };
}

function listenerStatus(gw: Gateway, l: GatewayListener, g: number, attachedRoutes: number, refs: ListenerRefProblem | undefined, ca: FrontendProblem | undefined): ListenerStatus {
  const problem = listenerProblem(l) ?? (ca?.noValidCA ? `no valid CA certificate: ${ca.message}` : null);
  const kindsOk = admitsHTTPRoutes(l);
  const reason = problem === null ? 'Accepted' : ca?.noValidCA && listenerProblem(l) === null ? 'NoValidCACertificate' : l.protocol !== 'HTTP' && l.protocol !== 'HTTPS' ? 'UnsupportedProtocol' : problem.startsWith('port ') ? 'PortUnavailable' : 'UnsupportedValue';
  const resolved = !kindsOk || !allRouteKindsServed(l)
    ? condition('ResolvedRefs', false, 'InvalidRouteKinds', kindsOk ? 'allowedRoutes.kinds names a kind this listener does not serve (HTTPRoute only)' : 'allowedRoutes.kinds names no kind this listener serves (HTTPRoute)', g)
    : refs ?? ca
      ? condition('ResolvedRefs', false, (refs ?? ca)!.reason, (refs ?? ca)!.message, g)
      : condition('ResolvedRefs', true, 'ResolvedRefs', 'references resolved', g);
  const programmed = problem === null && refs === undefined && ca === undefined;
  return {
    name: l.name,
    attachedRoutes,
    supportedKinds: problem === null && kindsOk ? [{ group: GATEWAY_GROUP, kind: 'HTTPRoute' }] : [],
    conditions: [
      condition('Accepted', problem === null, reason, problem ?? 'served', g),
      resolved,
      condition('Programmed', programmed, programmed ? 'Programmed' : 'Invalid', problem ?? refs?.message ?? ca?.message ?? `served on the ${l.protocol} port of ${keyOf(gw)}'s NGINX`, g),
      condition('Conflicted', false, 'NoConflicts', 'no conflict', g),
    ],
  };
}

/** BackendNotFound for the first backendRef whose Service does not exist. */
function missingService(route: HTTPRoute, serviceExists: (key: string) => boolean): { reason: 'BackendNotFound'; message: string } | null {
  for (const [i, rule] of (route.spec.rules ?? []).entries()) {
    for (const [j, b] of (rule.backendRefs ?? []).entries()) {
      const key = `${b.namespace ?? route.metadata.namespace ?? ''}/${b.name}`;
      if (!serviceExists(key)) return { reason: 'BackendNotFound', message: `spec.rules[${i}].backendRefs[${j}]: Service ${key} not found` };
    }
  }
  return null;
}
