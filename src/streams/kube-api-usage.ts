// What ingress-rx asks of the Kubernetes API, declared next to nothing else: each module that
// talks to the API has its entry here, the RBAC rules in deploy/ are derived from the union, and
// the tests check every request the code makes against them.
import { KUBE_RESOURCES } from './kube-resources.js';
import { RESOURCE_KINDS, STORED_KINDS } from '../store/events.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

export interface ApiUsage {
  /** API group ('' for core). */
  group: string;
  /** Resource, or `resource/subresource`. */
  resource: string;
  verbs: Verb[];
  /** `cluster`: any namespace (ClusterRole); `pod-namespace`: only the controller's own (Role). */
  scope: 'cluster' | 'pod-namespace';
  /** Restricts the verbs to these object names (never possible for create or list). */
  resourceNames?: string[];
  /** The module making these calls. */
  by: string;
}

export const DEFAULT_ELECTION_ID = 'ingress-controller-leader';

/** src/streams/kube.ts: one list + watch per kind it caches (the Gateway API's with --enable-gateway-api). */
export function kubeSourceUsage(opts: { gatewayAPI?: boolean } = {}): ApiUsage[] {
  return (opts.gatewayAPI ? STORED_KINDS : RESOURCE_KINDS).map((kind) => KUBE_RESOURCES[kind]).map((r) => ({
    group: r.apiVersion.includes('/') ? r.apiVersion.split('/')[0]! : '',
    resource: r.plural,
    verbs: ['list', 'watch'],
    scope: 'cluster',
    by: 'src/streams/kube.ts',
  }));
}

/** src/actors/leader-election.ts: reads and renews its Lease, creates it the first time. */
export function leaderElectionUsage(electionId = DEFAULT_ELECTION_ID): ApiUsage[] {
  const by = 'src/actors/leader-election.ts';
  return [
    { group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'update'], scope: 'pod-namespace', resourceNames: [electionId], by },
    { group: 'coordination.k8s.io', resource: 'leases', verbs: ['create'], scope: 'pod-namespace', by },
  ];
}

/** src/actors/status*.ts: the controller's pod, its replicas and their nodes, --publish-service, and the status writes. */
export function statusUsage(): ApiUsage[] {
  const by = 'src/actors/status.ts, src/actors/status-address.ts';
  return [
    { group: 'networking.k8s.io', resource: 'ingresses', verbs: ['get'], scope: 'cluster', by },
    { group: 'networking.k8s.io', resource: 'ingresses/status', verbs: ['update'], scope: 'cluster', by },
    { group: '', resource: 'services', verbs: ['get'], scope: 'cluster', by },
    { group: '', resource: 'nodes', verbs: ['get'], scope: 'cluster', by },
    { group: '', resource: 'pods', verbs: ['get', 'list'], scope: 'pod-namespace', by },
  ];
}

/** src/actors/kube-events.ts: Events in the namespace of the object they are about. */
export function eventsUsage(): ApiUsage[] {
  return [{ group: '', resource: 'events', verbs: ['create', 'patch'], scope: 'cluster', by: 'src/actors/kube-events.ts' }];
}

/** src/actors/gateway-status.ts: the status subresource of our GatewayClasses, Gateways, HTTPRoutes, BackendTLSPolicies and ListenerSets. */
export function gatewayStatusUsage(): ApiUsage[] {
  const by = 'src/actors/gateway-status.ts';
  return ['gatewayclasses', 'gateways', 'httproutes', 'backendtlspolicies', 'listenersets'].map((plural) => ({ group: 'gateway.networking.k8s.io', resource: `${plural}/status`, verbs: ['update'], scope: 'cluster', by }));
}

/** src/actors/gateway-infrastructure.ts: the Services generated for our Gateways, in their namespaces (listed by the kube source's right). */
export function gatewayInfrastructureUsage(): ApiUsage[] {
  return [{ group: '', resource: 'services', verbs: ['create', 'update', 'delete'], scope: 'cluster', by: 'src/actors/gateway-infrastructure.ts' }];
}

export function kubeApiUsage(opts: { electionId?: string } = {}): ApiUsage[] {
  return [...kubeSourceUsage(), ...leaderElectionUsage(opts.electionId), ...statusUsage(), ...eventsUsage()];
}

/**
 * What --enable-gateway-api asks beyond kubeApiUsage(): list and watch of the Gateway API kinds
 * (Namespaces are already listed and watched), their status writes and the Gateways' Services. deploy/gateway-api/ holds
 * its RBAC, an opt-in addition to deploy/10-rbac.yaml.
 */
export function gatewayApiUsage(): ApiUsage[] {
  const base = new Set(kubeSourceUsage().map((u) => `${u.group}/${u.resource}`));
  return [...kubeSourceUsage({ gatewayAPI: true }).filter((u) => !base.has(`${u.group}/${u.resource}`)), ...gatewayStatusUsage(), ...gatewayInfrastructureUsage()];
}

/** An rbac.authorization.k8s.io/v1 PolicyRule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const VERB_ORDER: Verb[] = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

/** Least-privilege rules for a usage: one rule per (group, resource, names), verbs merged. */
export function rbacRules(usage: readonly ApiUsage[]): { clusterRole: PolicyRule[]; role: PolicyRule[] } {
  const merge = (scope: ApiUsage['scope']): PolicyRule[] => {
    const byKey = new Map<string, { group: string; resource: string; names?: string[]; verbs: Set<Verb> }>();
    for (const u of usage) {
      if (u.scope !== scope) continue;
      const names = u.resourceNames?.length ? [...u.resourceNames].sort() : undefined;
      const key = `${u.group}|${u.resource}|${names?.join(',') ?? ''}`;
      const entry = byKey.get(key) ?? { group: u.group, resource: u.resource, names, verbs: new Set<Verb>() };
      for (const v of u.verbs) entry.verbs.add(v);
      byKey.set(key, entry);
    }
    return [...byKey.values()]
      .sort((a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource) || (a.names?.join(',') ?? '').localeCompare(b.names?.join(',') ?? ''))
      .map((e) => ({
        apiGroups: [e.group],
        resources: [e.resource],
        verbs: VERB_ORDER.filter((v) => e.verbs.has(v)),
        ...(e.names ? { resourceNames: e.names } : {}),
      }));
  };
  return { clusterRole: merge('cluster'), role: merge('pod-namespace') };
}
