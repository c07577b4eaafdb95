// The Gateway API status writer (--enable-gateway-api, with --update-status): while this pod
// leads, after each applied sync, writes the conditions the model computed (../model/gateway/
// status.ts) to the status of our GatewayClasses, Gateways, the ListenerSets on them, the HTTPRoutes' parents and the
// BackendTLSPolicies' ancestors — only where they differ from what the object holds. A condition
// keeps its lastTransitionTime while its status stays the same; the entries of other controllers
// in an HTTPRoute's parents and a BackendTLSPolicy's ancestors are kept. A Gateway's
// status.addresses are those of the controller (the Ingress status's) it is bound to
// (../model/gateway/addresses.ts), looked up at each write (a change of the --publish-service
// Service, its load balancer's address, brings a sync). A change of one of these objects' status
// alone costs no sync (the store's statusOnly events): statusChanged compares everything again
// with the last sync's conditions, so its own writes coming back write nothing and a status
// someone else wrote is restored.
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Observable, Subscription } from 'rxjs';
import type { Logger } from '../log.js';
import type { KubeObject, LoadBalancerIngress } from '../store/kube-types.js';
import type { GatewayResources } from '../store/types.js';
import { bindAddresses, withAddressConditions, type Condition, type GatewayAPIStatus, type ListenerStatus } from '../model/gateway/index.js';
import { deepEqual } from '../store/normalise.js';

const GROUP = 'gateway.networking.k8s.io';

export interface GatewayStatusWriter {
  sync(status: GatewayAPIStatus | undefined, resources: GatewayResources | undefined): Promise<{ written: string[]; failed: string[] }>;
  /** An object's status alone changed in the store: writes again what differs from the last sync's status (coalesced while a pass runs). */
  statusChanged(resources: () => GatewayResources | undefined): Promise<void> | undefined;
  stop(): void;
}

interface Stamped extends Condition { lastTransitionTime: string }
type StatusBody = Record<string, unknown>;

export interface GatewayStatusDeps {
  custom: CustomObjectsApi; isLeader$: Observable<boolean>; controllerName: string; logger: Logger; now?: () => Date;
  /** The controller's published addresses (see ./status-address.ts discoverStatusAddresses). */
  addresses?: () => Promise<LoadBalancerIngress[]>;
}

export function createGatewayStatusWriter(deps: GatewayStatusDeps): GatewayStatusWriter {
  const log = deps.logger.child({ actor: 'gateway-status' });
  const now = deps.now ?? (() => new Date());
  let leader = false;
  /** The conditions of the last sync, which statusChanged writes again where an object differs. */
  let last: GatewayAPIStatus | undefined;
  let passing: Promise<void> | undefined;
  let again = false;
  const sub: Subscription = deps.isLeader$.subscribe((v) => { leader = v; });

  /** The published addresses, or undefined when they cannot be read now (status.addresses then stay as they are). */
  async function published(): Promise<LoadBalancerIngress[] | undefined> {
    if (!deps.addresses) return [];
    try {
      return await deps.addresses();
    } catch (err) {
      log.warn({ err: String(err) }, 'could not read the controller\'s addresses for the Gateways\' status');
      return undefined;
    }
  }

  /** The conditions with their transition times: kept from `old` when the status did not change. */
  function stamp(conditions: readonly Condition[], old: unknown): Stamped[] {
    const before = Array.isArray(old) ? (old as Stamped[]) : [];
    const time = now().toISOString().replace(/\.\d{3}Z$/, 'Z');
    return conditions.map((c) => {
      const prev = before.find((p) => p.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : time };
    });
  }

  /** Whether two statuses differ in what we write (transition times aside). */
  function differs(a: unknown, b: unknown): boolean {
    return !deepEqual(JSON.parse(JSON.stringify(a ?? {}, (k, v) => (k === 'lastTransitionTime' ? undefined : v))),
      JSON.parse(JSON.stringify(b ?? {}, (k, v) => (k === 'lastTransitionTime' ? undefined : v))));
  }

  /** A Gateway's or ListenerSet's status with our conditions and listeners, each stamped against what it holds. */
  function withListeners(obj: KubeObject, s: { conditions: readonly Condition[]; listeners: readonly ListenerStatus[] }): StatusBody {
    const old = (obj as { status?: { conditions?: unknown; listeners?: Array<{ name: string; conditions?: unknown }> } }).status;
    return {
      ...old,
      conditions: stamp(s.conditions, old?.conditions),
      listeners: s.listeners.map((l) => ({ ...l, conditions: stamp(l.conditions, old?.listeners?.find((o) => o.name === l.name)?.conditions) })),
    };
  }

  async function write(kind: string, plural: string, obj: KubeObject, status: StatusBody, out: { written: string[]; failed: string[] }): Promise<void> {
    const current = (obj as { status?: StatusBody }).status;
    if (!differs(current, status)) return;
    const name = obj.metadata.name;
    const namespace = obj.metadata.namespace;
    const version = (obj.apiVersion ?? `${GROUP}/v1`).split('/')[1] ?? 'v1';
    const body = { ...obj, status };
    const key = `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
    try {
      if (namespace) await deps.custom.replaceNamespacedCustomObjectStatus({ group: GROUP, version, namespace, plural, name, body });
      else await deps.custom.replaceClusterCustomObjectStatus({ group: GROUP, version, plural, name, body });
      out.written.push(key);
    } catch (err) {
      // A conflict (the object changed since the store saw it) is retried when its change arrives (a sync, or statusChanged).
      out.failed.push(key);
      log.warn({ object: key, err: String(err) }, 'could not update the Gateway API status');
    }
  }

  const writer: GatewayStatusWriter = {
    async sync(status, resources) {
      if (status) last = status;
      const out = { written: [] as string[], failed: [] as string[] };
      if (!leader || !status || !resources) return out;
      const addresses = resources.gateways.length > 0 ? await published() : [];
      const jobs: Array<Promise<void>> = [];
      for (const c of resources.classes) {
        const conditions = status.classes.get(c.metadata.name);
        const old = (c as { status?: StatusBody }).status;
        if (conditions) jobs.push(write('GatewayClass', 'gatewayclasses', c, { ...old, conditions: stamp(conditions, old?.conditions) }, out));
      }
      for (const gw of resources.gateways) {
        const s = status.gateways.get(`${gw.metadata.namespace}/${gw.metadata.name}`);
        if (!s) continue;
        const old = (gw as { status?: { addresses?: unknown } }).status;
        const bound = addresses && bindAddresses(gw, addresses);
        // Addresses only for an accepted Gateway: one that is not has none bound.
        const accepted = s.conditions.some((c) => c.type === 'Accepted' && c.status === 'True');
        const conditions = bound ? withAddressConditions(s.conditions, bound) : s.conditions;
        const statusAddresses = !accepted ? [] : bound ? bound.addresses : old?.addresses;
        const rest: StatusBody = { ...withListeners(gw, { ...s, conditions }), attachedListenerSets: s.attachedListenerSets };
        delete rest.addresses;
        jobs.push(write('Gateway', 'gateways', gw, {
          ...rest,
          ...(Array.isArray(statusAddresses) && statusAddresses.length > 0 ? { addresses: statusAddresses } : {}),
        }, out));
      }
      for (const set of resources.listenerSets) {
        const s = status.listenerSets.get(`${set.metadata.namespace}/${set.metadata.name}`);
        if (s) jobs.push(write('ListenerSet', 'listenersets', set, withListeners(set, s), out));
      }
      // An HTTPRoute's parents and a BackendTLSPolicy's ancestors: ours replaced, other controllers' kept.
      const entries = <T extends KubeObject>(kind: string, plural: string, objects: readonly T[], field: 'parents' | 'ancestors', ref: 'parentRef' | 'ancestorRef',
        mine: ReadonlyMap<string, ReadonlyArray<{ readonly conditions: readonly Condition[] }>>) => {
        for (const obj of objects) {
          const ours = mine.get(`${obj.metadata.namespace}/${obj.metadata.name}`);
          const old = (obj as { status?: Record<string, Array<{ controllerName?: string; conditions?: unknown } & Record<string, unknown>> | undefined> }).status;
          const others = (old?.[field] ?? []).filter((p) => p.controllerName !== deps.controllerName);
          const mineBefore = (old?.[field] ?? []).filter((p) => p.controllerName === deps.controllerName);
          if (!ours && mineBefore.length === 0) continue;
          const list = [...others, ...(ours ?? []).map((p) => ({
            ...p, conditions: stamp(p.conditions, mineBefore.find((o) => deepEqual(o[ref], (p as Record<string, unknown>)[ref]))?.conditions),
          }))];
          jobs.push(write(kind, plural, obj, { ...old, [field]: list }, out));
        }
      };
      entries('HTTPRoute', 'httproutes', resources.httpRoutes, 'parents', 'parentRef', status.routes);
      entries('BackendTLSPolicy', 'backendtlspolicies', resources.backendTLSPolicies, 'ancestors', 'ancestorRef', status.backendTLSPolicies);
      await Promise.all(jobs);
      if (out.written.length > 0) log.info({ objects: out.written.length }, 'updated the Gateway API status');
      return out;
    },
    statusChanged(resources) {
      if (!leader || !last) return undefined;
      if (passing) { again = true; return passing; }
      passing = (async () => {
        try {
          do {
            again = false;
            await writer.sync(last, resources());
          } while (again);
        } catch (err) {
          log.warn({ err: String(err) }, 'could not update the Gateway API status');
        } finally {
          passing = undefined;
        }
      })();
      return passing;
    },
    stop() { sub.unsubscribe(); },
  };
  return writer;
}
