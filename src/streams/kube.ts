// The `kube` source: the cluster as an Observable<SourceEvent>. One informer per kind (per
// watched namespace); once all have listed, the whole initial state in one burst, Ingresses
// last; then live changes, and after any relist only what differs from what was emitted.
import { Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import type { KubeObject } from '../store/kube-types.js';
import { RESOURCE_KINDS, STORED_KINDS, objectKey, type ResourceKind, type SourceEvent, type StoredKind } from '../store/events.js';
import { runInformer, type InformerSpec, type InformerTiming } from './kube-informer.js';
import { isIgnoredObject, projectObject } from './kube-project.js';
import { storedForm } from '../store/project.js';
import { KUBE_RESOURCES } from './kube-resources.js';

export interface KubeSourceOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch; [] = all. Cluster-scoped kinds are watched regardless. */
  watchNamespaces: string[];
  /** A label selector for Namespaces; '' = none. When set, Namespaces are watched too. */
  namespaceSelector: string;
  /**
   * No IngressClass informer: the controller may not list IngressClasses (RBAC), and, as
   * ingress-nginx then, serves by the class annotation (and --watch-ingress-without-class) only.
   */
  withoutIngressClasses?: boolean;
  /**
   * --enable-gateway-api: also watch GatewayClasses, Gateways, HTTPRoutes, ReferenceGrants, ListenerSets and
   * BackendTLSPolicies (their CRDs must be installed, or the initial list never completes, except
   * those named in gatewayKindsNotServed), and Namespaces, whose
   * labels a listener's allowedRoutes selector reads.
   */
  gatewayAPI?: boolean;
  /** Gateway API kinds the API server does not serve (their CRDs are not installed): not watched. */
  gatewayKindsNotServed?: readonly StoredKind[];
  logger: Logger;
  /** Delay before restarting a stopped informer, doubling up to `max` (default 1 s → 30 s). */
  restartBackoffMs?: { initial: number; max: number };
  /** Least time between two watch starts of one informer (default 1 s). */
  minWatchGapMs?: number;
  /** Recycle a watch that sent nothing, not even a bookmark, for this long (default 5 min). */
  watchIdleTimeoutMs?: number;
  /** Give up on a list that takes longer (default 60 s); the informer restarts. */
  listTimeoutMs?: number;
  /** Timers come from here (default: asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Called once, right after the initial state of every informer was emitted (also when empty). */
  onInitialState?: () => void;
  /**
   * What is kept and emitted of each object. 'stored' (default): what the store keeps of it
   * (store/project), so that the informers' caches, this source and the store share one copy.
   * 'all' (for --record, whose log keeps the objects as the server sent them): all but
   * managedFields and kubectl's last-applied copy.
   */
  keep?: 'stored' | 'all';
}

const DEFAULT_TIMING: InformerTiming = {
  restartBackoffMs: { initial: 1000, max: 30_000 },
  minWatchGapMs: 1000,
  watchIdleTimeoutMs: 5 * 60_000,
  listTimeoutMs: 60_000,
};

/**
 * Cold: each subscription runs its own informers and unsubscribing stops them all; `share()`
 * it when several consumers need the same cluster view.
 */
export function kubeSource(opts: KubeSourceOptions & { gatewayAPI: true }): Observable<SourceEvent>;
export function kubeSource(opts: KubeSourceOptions): Observable<SourceEvent<ResourceKind>>;
export function kubeSource(opts: KubeSourceOptions): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const logger = opts.logger.child({ source: 'kube' });
    const timing: InformerTiming = {
      restartBackoffMs: opts.restartBackoffMs ?? DEFAULT_TIMING.restartBackoffMs,
      minWatchGapMs: opts.minWatchGapMs ?? DEFAULT_TIMING.minWatchGapMs,
      watchIdleTimeoutMs: opts.watchIdleTimeoutMs ?? DEFAULT_TIMING.watchIdleTimeoutMs,
      listTimeoutMs: opts.listTimeoutMs ?? DEFAULT_TIMING.listTimeoutMs,
    };
    // What this source has told its subscriber, per kind and key: every change is diffed against it.
    const emitted = new Map<StoredKind, Map<string, KubeObject>>(STORED_KINDS.map((k) => [k, new Map()]));
    const specs = informerSpecs(opts);
    const notListed = new Set(specs);
    let synced = false;

    const emit = (e: SourceEvent) => {
      if (synced) subscriber.next(e);
    };

    const upsert = (kind: StoredKind, object: KubeObject) => {
      if (!object.metadata.name) return;
      const key = objectKey(object);
      const seen = emitted.get(kind)!;
      const old = seen.get(key);
      if (isIgnoredObject(kind, object)) {
        if (old) {
          seen.delete(key);
          emit({ kind, type: 'delete', key, object });
        }
      } else if (!old) {
        seen.set(key, object);
        emit({ kind, type: 'add', key, object });
      } else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
        seen.set(key, object);
        emit({ kind, type: 'update', key, object, old });
      }
    };

    const remove = (kind: StoredKind, object: KubeObject) => {
      const key = objectKey(object);
      const seen = emitted.get(kind)!;
      if (!seen.has(key)) return;
      seen.delete(key);
      emit({ kind, type: 'delete', key, object });
    };

    const listed = (spec: InformerSpec) => {
      notListed.delete(spec);
      if (synced || notListed.size > 0) return;
      synced = true;
      let count = 0;
      for (const kind of STORED_KINDS) {
        const objects = [...emitted.get(kind)!].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        for (const [key, object] of objects) {
          subscriber.next({ kind, type: 'add', key, object });
          count++;
        }
      }
      logger.info({ objects: count, informers: specs.length }, 'initial list complete');
      opts.onInitialState?.();
    };

    const env = { kubeConfig: opts.kubeConfig, logger, scheduler: opts.scheduler ?? asyncScheduler, timing };
    const informers = specs.map((spec) =>
      runInformer(spec, env, {
        project: opts.keep === 'all'
          ? (raw) => projectObject(spec.kind, raw) as KubernetesObject
          : (raw) => storedForm(spec.kind, projectObject(spec.kind, raw)) as KubernetesObject,
        upsert: (o) => upsert(spec.kind, o as KubeObject),
        remove: (o) => remove(spec.kind, o as KubeObject),
        listed: () => listed(spec),
      }),
    );
    return () => {
      for (const informer of informers) informer.stop();
    };
  });
}

/**
 * Helm release Secrets and Tiller ConfigMaps can be many and large: like ingress-nginx, ask the
 * server not to send them at all (isIgnoredObject still drops any that arrive).
 */
const SERVER_SIDE_FILTERS: Partial<Record<StoredKind, Pick<InformerSpec, 'labelSelector' | 'fieldSelector'>>> = {
  Secret: { fieldSelector: 'type!=helm.sh/release.v1' },
  ConfigMap: { labelSelector: 'OWNER!=TILLER' },
};

/**
 * One informer per kind, per watched namespace for namespaced kinds; Namespaces only with a
 * selector or the Gateway API; the Gateway API kinds only with it.
 */
export function informerSpecs(opts: Pick<KubeSourceOptions, 'watchNamespaces' | 'namespaceSelector' | 'withoutIngressClasses' | 'gatewayAPI' | 'gatewayKindsNotServed'>): InformerSpec[] {
  const namespaces = [...new Set(opts.watchNamespaces.filter((ns) => ns !== ''))];
  const specs: InformerSpec[] = [];
  const kinds: readonly StoredKind[] = opts.gatewayAPI ? STORED_KINDS : RESOURCE_KINDS;
  for (const kind of kinds) {
    const filters = SERVER_SIDE_FILTERS[kind] ?? {};
    if (kind === 'IngressClass' && opts.withoutIngressClasses) continue;
    if (opts.gatewayKindsNotServed?.includes(kind)) continue;
    if (kind === 'Namespace') {
      // allowedRoutes selectors read every namespace's labels: no selector then (the store filters).
      if (opts.gatewayAPI) specs.push({ kind });
      else if (opts.namespaceSelector) specs.push({ kind, labelSelector: opts.namespaceSelector });
    } else if (KUBE_RESOURCES[kind].namespaced && namespaces.length > 0) {
      for (const namespace of namespaces) specs.push({ kind, namespace, ...filters });
    } else specs.push({ kind, ...filters });
  }
  return specs;
}
