// Where the controller can be reached, for the Ingresses' load-balancer status: from
// --publish-status-address, else from --publish-service, else from the nodes of the running,
// ready controller pods. Pure rules first, then the one function that reads the API.
import { isIP } from 'node:net';
import type { CoreV1Api, V1Node, V1Pod, V1Service } from '@kubernetes/client-node';
import type { LoadBalancerIngress } from '../store/kube-types.js';

/** This controller's pod: POD_NAME / POD_NAMESPACE and the labels shared by its replicas. */
export interface ControllerPod {
  name: string;
  namespace: string;
  /** The pod's labels without the per-revision ones, selecting every replica of the controller. */
  labels: Record<string, string>;
  uid?: string;
}

export interface StatusAddressOptions {
  publishStatusAddress: string;
  publishService: string;
  reportNodeInternalIpAddress: boolean;
}

/** Labels that differ between revisions of the same controller (Deployment, DaemonSet). */
const REVISION_LABELS = ['pod-template-hash', 'controller-revision-hash', 'pod-template-generation'];

export function replicaLabels(labels: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (!REVISION_LABELS.includes(k)) out[k] = v;
  return out;
}

export function labelSelector(labels: Record<string, string>): string {
  return Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join(',');
}

export function nameOrIP(value: string): LoadBalancerIngress {
  return isIP(value) ? { ip: value } : { hostname: value };
}

/** --publish-status-address: comma-separated IPs or hostnames. */
export function addressesFromFlag(publishStatusAddress: string): LoadBalancerIngress[] {
  return standardizeAddresses(publishStatusAddress.split(',').map((s) => s.trim()).filter((s) => s !== '').map(nameOrIP));
}

/**
 * --publish-service: a LoadBalancer's ingress points and external IPs; a ClusterIP's cluster IP;
 * an ExternalName's name; a NodePort's external IPs, else the nodes the controller runs on.
 */
export async function addressesFromService(svc: Pick<V1Service, 'spec' | 'status'>, controllerNodes: () => Promise<LoadBalancerIngress[]>): Promise<LoadBalancerIngress[]> {
  const spec = svc.spec ?? {};
  const externalIPs = (spec.externalIPs ?? []).map((ip) => ({ ip }));
  switch (spec.type ?? 'ClusterIP') {
    case 'ExternalName':
      return spec.externalName ? [{ hostname: spec.externalName }] : [];
    case 'ClusterIP':
      return spec.clusterIP && spec.clusterIP !== 'None' ? [{ ip: spec.clusterIP }] : [];
    case 'NodePort':
      return externalIPs.length > 0 ? standardizeAddresses(externalIPs) : controllerNodes();
    case 'LoadBalancer': {
      const points = (svc.status?.loadBalancer?.ingress ?? []).map((p) => (p.ip ? { ip: p.ip } : { hostname: p.hostname ?? '' }));
      return standardizeAddresses([...points.filter((p) => p.ip || p.hostname), ...externalIPs]);
    }
    default:
      return [];
  }
}

/** Running pods whose Ready condition is True (and that are not being deleted). */
export function isRunningAndReady(pod: Pick<V1Pod, 'metadata' | 'status'>): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  if (pod.status?.phase !== 'Running') return false;
  return (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** A node's ExternalIP, or its InternalIP when asked for (or when it has no external one). */
export function nodeAddress(node: Pick<V1Node, 'status'>, useInternalIP: boolean): string | undefined {
  const addresses = node.status?.addresses ?? [];
  const internal = addresses.find((a) => a.type === 'InternalIP' && a.address)?.address;
  if (useInternalIP) return internal;
  return addresses.find((a) => a.type === 'ExternalIP' && a.address)?.address ?? internal;
}

/** Sorted (hostname, then IP) and de-duplicated, as the status is compared and written. */
export function standardizeAddresses(list: readonly LoadBalancerIngress[]): LoadBalancerIngress[] {
  const seen = new Set<string>();
  const out: LoadBalancerIngress[] = [];
  for (const a of list) {
    const item: LoadBalancerIngress = a.ip ? { ip: a.ip } : { hostname: a.hostname ?? '' };
    if (!item.ip && !item.hostname) continue;
    const key = `${item.hostname ?? ''}|${item.ip ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out.sort((a, b) => cmp(a.hostname ?? '', b.hostname ?? '') || cmp(a.ip ?? '', b.ip ?? ''));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Equal as sets of IPs and hostnames (ports are not ours to compare). */
export function sameAddresses(a: readonly LoadBalancerIngress[] | undefined, b: readonly LoadBalancerIngress[] | undefined): boolean {
  const x = standardizeAddresses(a ?? []);
  const y = standardizeAddresses(b ?? []);
  return x.length === y.length && x.every((p, i) => p.ip === y[i]!.ip && p.hostname === y[i]!.hostname);
}

/** Reads this pod's labels: they select the controller's replicas. */
export async function readControllerPod(core: CoreV1Api, name: string, namespace: string): Promise<ControllerPod> {
  const pod = await core.readNamespacedPod({ name, namespace });
  return { name, namespace, labels: replicaLabels(pod.metadata?.labels), ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}) };
}

export async function listControllerPods(core: CoreV1Api, pod: ControllerPod): Promise<V1Pod[]> {
  // Without labels the selector would match every pod of the namespace: then only this pod is known.
  const selector = labelSelector(pod.labels);
  const list = await core.listNamespacedPod({ namespace: pod.namespace, labelSelector: selector, ...(selector === '' ? { fieldSelector: `metadata.name=${pod.name}` } : {}) });
  return list.items;
}

/** The addresses of the nodes running a ready replica of the controller. */
export async function controllerNodeAddresses(core: CoreV1Api, pod: ControllerPod, useInternalIP: boolean): Promise<LoadBalancerIngress[]> {
  const nodeNames = new Set<string>();
  for (const p of await listControllerPods(core, pod)) {
    if (isRunningAndReady(p) && p.spec?.nodeName) nodeNames.add(p.spec.nodeName);
  }
  const out: LoadBalancerIngress[] = [];
  for (const name of [...nodeNames].sort()) {
    const address = nodeAddress(await core.readNode({ name }), useInternalIP);
    if (address) out.push(nameOrIP(address));
  }
  return standardizeAddresses(out);
}

/** The status addresses by ingress-nginx's order of sources. */
export async function discoverStatusAddresses(core: CoreV1Api, pod: ControllerPod, o: StatusAddressOptions): Promise<LoadBalancerIngress[]> {
  if (o.publishStatusAddress !== '') return addressesFromFlag(o.publishStatusAddress);
  const nodes = () => controllerNodeAddresses(core, pod, o.reportNodeInternalIpAddress);
  if (o.publishService !== '') {
    const [namespace, name] = o.publishService.split('/') as [string, string];
    const svc = await core.readNamespacedService({ namespace, name });
    return addressesFromService(svc, nodes);
  }
  return nodes();
}

/** Whether another replica is running and not terminating (then it keeps the status on our shutdown). */
export async function otherReplicasRunning(core: CoreV1Api, pod: ControllerPod): Promise<boolean> {
  const pods = await listControllerPods(core, pod);
  return pods.some((p) => p.metadata?.name !== pod.name && !p.metadata?.deletionTimestamp
    && (p.status?.phase === 'Running' || p.status?.phase === 'Pending'));
}
