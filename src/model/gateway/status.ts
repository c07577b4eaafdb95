// The status conditions the Gateway API defines, computed from the translation: on our
// GatewayClasses (Accepted), our Gateways (Accepted, Programmed, attachedListenerSets), the
// ListenerSets on them (Accepted, Programmed) and each listener of either (Accepted, ResolvedRefs,
// Programmed, Conflicted, with attachedRoutes and supportedKinds), and on each HTTPRoute, per
// parentRef that names one of our Gateways or a ListenerSet on one (Accepted, ResolvedRefs). Each
// condition carries the generation of the object it describes. Pure: writing them is the status
// actor's part (src/actors/gateway-status.ts).
import type { GatewayListener, HTTPRoute, ParentReference } from '../../store/kube-types.js';
import type { ListenerSetOutcome } from './listener-sets.js';
import type { GatewayResources } from '../../store/types.js';
import { admitsHTTPRoutes, allRouteKindsServed, gatewayProblem, listenerProblem } from './attachment.js';
import { GATEWAY_GROUP } from './references.js';
import { setOwnerKey, type ListenerPorts, type PortAssignment } from './listener-ports.js';
import type { FrontendProblem, GatewayFrontends } from './frontend-tls.js';
import type { ListenerRefProblem } from './listener-tls.js';
import type { BackendTLS } from './backend-tls.js';
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
  /** `namespace/name` → the Gateway's conditions and its listeners', and how many ListenerSets it took. */
  readonly gateways: ReadonlyMap<string, { readonly conditions: readonly Condition[]; readonly listeners: readonly ListenerStatus[]; readonly attachedListenerSets: number }>;
  /** `namespace/name` → the conditions of a ListenerSet on one of our Gateways and its listeners'. */
  readonly listenerSets: ReadonlyMap<string, { readonly conditions: readonly Condition[]; readonly listeners: readonly ListenerStatus[] }>;
  /** `namespace/name` → one entry per parentRef naming a Gateway of ours. */
  readonly routes: ReadonlyMap<string, readonly RouteParentStatus[]>;
  /** BackendTLSPolicy `namespace/name` → one entry per Gateway of ours it applies through (status.ancestors). */
  readonly backendTLSPolicies: ReadonlyMap<string, readonly PolicyAncestorStatus[]>;
}

export interface PolicyAncestorStatus {
  readonly ancestorRef: { readonly group: string; readonly kind: string; readonly namespace: string; readonly name: string };
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

const keyOf = (o: { metadata: { namespace?: string; name: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const generationOf = (o: { metadata: { generation?: number } }) => o.metadata.generation ?? 0;

function condition(type: string, ok: boolean, reason: string, message: string, observedGeneration: number): Condition {
  return { type, status: ok ? 'True' : 'False', reason, message, observedGeneration };
}

export function gatewayAPIStatus(
  resources: GatewayResources, translation: GatewayTranslation, controllerName: string, serviceExists: (key: string) => boolean,
  certificateProblems: ReadonlyMap<string, ListenerRefProblem> = new Map(), backend: Pick<BackendTLS, 'policies' | 'clientCertificates'> = { policies: new Map(), clientCertificates: new Map() },
  frontends?: GatewayFrontends,
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
      // A parentRef to a Gateway (or a ListenerSet on one) that is not ours is another controller's to answer.
      const parentKey = `${p.ref.namespace ?? route.metadata.namespace ?? ''}/${p.ref.name}`;
      if ((p.ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && (p.ref.kind ?? 'Gateway') === 'Gateway' && !ours.has(parentKey)) continue;
      if ((p.ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && p.ref.kind === 'ListenerSet' && !translation.listenerSets.has(parentKey)) continue;
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

  const listenerSets = new Map<string, { conditions: readonly Condition[]; listeners: readonly ListenerStatus[] }>();
  const setsAttached = new Map<string, number>();
  for (const [key, outcome] of translation.listenerSets) {
    const s = listenerSetStatus(outcome, attached, certificateProblems, translation.ports);
    listenerSets.set(key, s);
    if (s.conditions[0]!.status === 'True') setsAttached.set(outcome.gateway, (setsAttached.get(outcome.gateway) ?? 0) + 1);
  }

  const gateways = new Map<string, { conditions: readonly Condition[]; listeners: readonly ListenerStatus[]; attachedListenerSets: number }>();
  for (const gw of resources.gateways) {
    const g = generationOf(gw);
    const listeners = (gw.spec.listeners ?? []).map((l) => listenerStatus(`${keyOf(gw)}'s NGINX`, l, translation.ports.of(keyOf(gw), l), g, attached.get(`${keyOf(gw)}/${l.name}`) ?? 0, certificateProblems.get(`${keyOf(gw)}/${l.name}`), frontends?.problems.get(`${keyOf(gw)}/${l.name}`)));
    const served = listeners.filter((l) => l.conditions[0]!.status === 'True').length;
    const invalid = gatewayProblem(gw);
    const ok = served > 0 && invalid === null;
    // Accepted with some listeners set aside says so in its reason (the spec's ListenersNotValid).
    const accepted = invalid !== null ? condition('Accepted', false, invalid.reason, invalid.message, g)
      : condition('Accepted', ok, ok && served === listeners.length ? 'Accepted' : 'ListenersNotValid', ok ? `${served} of ${listeners.length} listeners served` : 'no listener can be served', g);
    // ResolvedRefs only for a Gateway with a backend client certificate (it stays Accepted without one).
    const client = backend.clientCertificates.get(keyOf(gw));
    const resolved = client === undefined ? [] : [client === null
      ? condition('ResolvedRefs', true, 'ResolvedRefs', 'spec.tls.backend.clientCertificateRef resolved', g)
      : condition('ResolvedRefs', false, client.reason, client.message, g)];
    gateways.set(keyOf(gw), {
      conditions: [
        accepted,
        condition('Programmed', ok, ok ? 'Programmed' : 'Invalid', ok ? 'served by NGINX' : invalid?.message ?? 'no listener can be served', g),
        ...resolved,
        ...(frontends?.insecure.has(keyOf(gw))
          ? [condition('InsecureFrontendValidationMode', true, 'ConfigurationChanged', 'a client certificate validation is AllowInsecureFallback: clients without a valid certificate are served', g)]
          : []),
      ],
      listeners,
      attachedListenerSets: setsAttached.get(keyOf(gw)) ?? 0,
    });
  }
  const backendTLSPolicies = new Map<string, PolicyAncestorStatus[]>();
  for (const [key, v] of backend.policies) {
    const g = generationOf(v.policy);
    backendTLSPolicies.set(key, v.ancestors.filter((a) => ours.has(a)).map((a) => ({
      ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace: a.split('/')[0]!, name: a.split('/')[1]! },
      controllerName,
      conditions: [
        condition('Accepted', v.accepted.ok, v.accepted.reason, v.accepted.message, g),
        condition('ResolvedRefs', v.resolvedRefs.ok, v.resolvedRefs.reason, v.resolvedRefs.message, g),
      ],
    })));
  }
  return { classes, gateways, routes, backendTLSPolicies, listenerSets };
}

/**
 * A ListenerSet's conditions: refused (NotAllowed, ParentNotAccepted) as a whole, else Accepted
 * and Programmed while at least one of its listeners is (ListenersNotValid when none is); a
 * conflicted listener says so in Accepted, Programmed and Conflicted.
 */
function listenerSetStatus(outcome: ListenerSetOutcome, attached: ReadonlyMap<string, number>, certificateProblems: ReadonlyMap<string, ListenerRefProblem>, ports: ListenerPorts) {
  const g = generationOf(outcome.set);
  if (outcome.refused) {
    const { reason, message } = outcome.refused;
    return { conditions: [condition('Accepted', false, reason, message, g), condition('Programmed', false, reason, message, g)], listeners: [] };
  }
  const where = `Gateway ${outcome.gateway}'s NGINX`;
  const listeners = outcome.listeners.map((l) => {
    const s = listenerStatus(where, l.listener, ports.of(setOwnerKey(outcome.set), l.listener), g, attached.get(l.key) ?? 0, certificateProblems.get(l.key));
    if (!l.conflict) return s;
    const { reason, message } = l.conflict;
    const conditions = s.conditions.map((c) => (c.type === 'Accepted' || c.type === 'Programmed' ? condition(c.type, false, reason, message, g)
      : c.type === 'Conflicted' && reason !== 'TooManyListeners' ? condition(c.type, true, reason, message, g) : c));
    return { ...s, supportedKinds: [], conditions };
  });
  const valid = listeners.filter((l) => l.conditions.every((c) => (c.type === 'Conflicted' ? c.status === 'False' : c.status === 'True'))).length;
  const ok = valid > 0;
  const summary = ok ? `${valid} of ${listeners.length} listeners served` : 'no listener can be served';
  return {
    conditions: [
      condition('Accepted', ok, ok && valid === listeners.length ? 'Accepted' : 'ListenersNotValid', summary, g),
      condition('Programmed', ok, ok ? 'Programmed' : 'ListenersNotValid', ok ? `served by ${where}` : summary, g),
    ],
    listeners,
  };
}

/** `where`: the NGINX the listener is served by, for its Programmed message; `port`: where ./listener-ports.ts serves it; `ca`: its client certificate validation's problem. */
function listenerStatus(where: string, l: GatewayListener, port: PortAssignment, g: number, attachedRoutes: number, refs: ListenerRefProblem | undefined, ca?: FrontendProblem): ListenerStatus {
  const own = listenerProblem(l, port);
  const problem = own ?? (ca?.noValidCA ? `no valid CA certificate: ${ca.message}` : null);
  const kindsOk = admitsHTTPRoutes(l);
  const reason = problem === null ? 'Accepted' : ca?.noValidCA && own === null ? 'NoValidCACertificate' : l.protocol !== 'HTTP' && l.protocol !== 'HTTPS' ? 'UnsupportedProtocol' : 'problem' in port ? 'PortUnavailable' : 'UnsupportedValue';
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
      condition('Programmed', programmed, programmed ? 'Programmed' : 'Invalid', problem ?? refs?.message ?? ca?.message ?? `served on port ${'local' in port ? port.local : l.port} of ${where}`, g),
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
