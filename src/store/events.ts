// What flows through the pipeline: source events (a cluster object added, updated, deleted)
// and tasks (a file or setting changed that the store does not hold). Every source emits
// SourceEvent; the pipeline wraps each in a PipelineItem with an id for tracing.
import type { KubeObject } from './kube-types.js';

const INGRESS_KINDS = [
  'Namespace', 'IngressClass', 'ConfigMap', 'Secret', 'Service', 'EndpointSlice', 'Ingress',
] as const;
/** The kinds of the Ingress front end (and the shared ones). The manifests source turns core/v1 Endpoints into EndpointSlices. */
export type ResourceKind = (typeof INGRESS_KINDS)[number];
/** A list of the Ingress kinds that answers the position of any stored kind (-1 for a Gateway API one). */
interface IngressKindList extends ReadonlyArray<ResourceKind> {
  indexOf(kind: StoredKind, fromIndex?: number): number;
}
export const RESOURCE_KINDS: IngressKindList = INGRESS_KINDS;
/** The Gateway API kinds (gateway.networking.k8s.io), read beside the Ingress ones (docs/gateway-api.md). */
export const GATEWAY_KINDS = ['GatewayClass', 'Gateway', 'ReferenceGrant', 'BackendTLSPolicy', 'ListenerSet', 'HTTPRoute'] as const;
export type GatewayKind = (typeof GATEWAY_KINDS)[number];
/** Every kind the store caches, in the order a source's initial state comes: Ingresses, then the Gateway API's, routes last. */
export const STORED_KINDS: readonly StoredKind[] = [...INGRESS_KINDS, ...GATEWAY_KINDS];
export type StoredKind = ResourceKind | GatewayKind;

export type EventType = 'add' | 'update' | 'delete';

/** `K`: the kinds the source can emit (the kube source without the Gateway API emits ResourceKind only). */
export interface SourceEvent<K extends StoredKind = StoredKind> {
  kind: K;
  type: EventType;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  key: string;
  object: KubeObject;
  old?: KubeObject;
}

/**
 * `template-change` / `file-change` force a reload; `configmap-change` comes from the store;
 * `nginx-restart` means NGINX lost its state (new master): re-apply everything;
 * `retry` follows a sync whose actors failed, so the running state still converges;
 * `initial-sync` says a source's initial state is complete, so an empty cluster syncs too.
 */
export type TaskKind = 'template-change' | 'file-change' | 'configmap-change' | 'nginx-restart' | 'retry' | 'initial-sync';
export interface Task {
  kind: 'task';
  task: TaskKind;
  /** The file or ConfigMap key that changed. */
  detail?: string;
}

export type PipelineInput = SourceEvent | Task;

export interface PipelineItem {
  /** Monotonic per run; the tracer follows an event by it. */
  id: number;
  /** Scheduler time (ms) at which the item entered the pipeline. */
  t: number;
  /** Source events are skippable (a later sync reads the whole store); tasks never are. */
  skippable: boolean;
  input: PipelineInput;
}

export function isTask(x: PipelineInput): x is Task {
  return (x as Task).kind === 'task';
}

export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}
