// One client-node informer (ListWatch) for one kind in one scope, kept alive: an `error` stops
// a 1.4 informer for good, so it is restarted after a backoff (one timer, never a loop); lists
// are bounded in time; every callback is guarded so a throwing handler cannot crash the process.
import {
  ListWatch, Observable as ApiObservable, type KubeConfig, type KubernetesObject, type ObservableMiddleware,
} from '@kubernetes/client-node';
import type { SchedulerLike, Subscription } from 'rxjs';
import type { Logger } from '../log.js';
import type { StoredKind } from '../store/events.js';
import { KUBE_RESOURCES, collectionPath, makeLister, type KubeList } from './kube-resources.js';
import { describeForbidden } from './kube-errors.js';
import { KubeWatch } from './kube-watch.js';

export interface InformerSpec {
  kind: StoredKind;
  /** Unset: all namespaces (or a cluster-scoped kind). */
  namespace?: string;
  /** Sent to both the list and the watch. */
  labelSelector?: string;
  fieldSelector?: string;
}

export interface InformerTiming {
  restartBackoffMs: { initial: number; max: number };
  minWatchGapMs: number;
  watchIdleTimeoutMs: number;
  listTimeoutMs: number;
}

export interface InformerHandlers {
  /**
   * What is kept of each object listed or watched. client-node's ListWatch caches every object it
   * is handed for as long as it exists: given the projection, that cache holds the objects the
   * handlers get (and pass on), not a second, whole copy of the cluster as the server sent it.
   */
  project(raw: KubernetesObject): KubernetesObject;
  /** An object was added or its resourceVersion changed (from a list or a watch); projected. */
  upsert(obj: KubernetesObject): void;
  /** An object was deleted (from a watch, or missing from a relist); projected. */
  remove(obj: KubernetesObject): void;
  /** The first list has been applied. */
  listed(): void;
}

export interface RunningInformer {
  stop(): void;
}

export function runInformer(
  spec: InformerSpec,
  env: { kubeConfig: KubeConfig; logger: Logger; scheduler: SchedulerLike; timing: InformerTiming },
  handlers: InformerHandlers,
): RunningInformer {
  const { kubeConfig, scheduler, timing } = env;
  const logger = env.logger.child({ kind: spec.kind, ...(spec.namespace ? { namespace: spec.namespace } : {}) });
  const lister = makeLister(kubeConfig, spec.kind);
  const project = (raw: KubernetesObject) => handlers.project(raw);
  const listsInFlight = new Set<AbortController>();
  let stopped = false;
  let listed = false;
  let restartTimer: Subscription | undefined;
  let backoff = timing.restartBackoffMs.initial;

  const guard = <A extends unknown[]>(what: string, fn: (...a: A) => void) => (...a: A) => {
    if (stopped) return;
    try {
      fn(...a);
    } catch (err) {
      logger.error({ err }, `informer ${what} handler threw`);
    }
  };

  const list = async (): Promise<KubeList> => {
    const abort = new AbortController();
    listsInFlight.add(abort);
    const timeout = scheduler.schedule(() => abort.abort(), timing.listTimeoutMs);
    try {
      const listed = await lister(
        { namespace: spec.namespace, labelSelector: spec.labelSelector, fieldSelector: spec.fieldSelector },
        { middleware: [withSignal(abort.signal)], middlewareMergeStrategy: 'append' },
      );
      return { ...listed, items: listed.items.map(project) };
    } finally {
      timeout.unsubscribe();
      listsInFlight.delete(abort);
    }
  };

  const watch = new KubeWatch(kubeConfig, {
    minGapMs: timing.minWatchGapMs,
    idleTimeoutMs: timing.watchIdleTimeoutMs,
    scheduler,
    logger,
    project,
    onStart: guard('listed', () => {
      if (listed) return;
      listed = true;
      handlers.listed();
    }),
    onConnected: () => {
      backoff = timing.restartBackoffMs.initial;
    },
  });

  const path = collectionPath(spec.kind, spec.namespace);
  const scope = spec.namespace ? `in namespace ${spec.namespace}` : 'in all namespaces';
  const informer = new ListWatch<KubernetesObject>(path, watch, list, false, spec.labelSelector, spec.fieldSelector);
  informer.on('add', guard('add', handlers.upsert));
  informer.on('update', guard('update', handlers.upsert));
  informer.on('delete', guard('delete', handlers.remove));
  informer.on('error', guard('error', (err: unknown) => scheduleRestart(err)));

  // Once stopped, errors are the informer's own AbortErrors: ignored (the guard drops them).
  function scheduleRestart(err: unknown): void {
    if (stopped || restartTimer) return;
    const delay = backoff;
    backoff = Math.min(backoff * 2, timing.restartBackoffMs.max);
    const forbidden = describeForbidden(err, `list and watch of ${KUBE_RESOURCES[spec.kind].plural} (${scope})`);
    // Until every kind has listed, the controller serves nothing and is not ready: never an empty list.
    if (forbidden) logger.error({ path, retryInMs: delay }, forbidden);
    else logger.warn({ err: describe(err), path, retryInMs: delay }, 'informer stopped on an error; restarting it');
    restartTimer = scheduler.schedule(() => {
      restartTimer = undefined;
      begin();
    }, delay);
  }

  function begin(): void {
    if (stopped) return;
    informer.start().catch((err: unknown) => {
      if (!stopped) scheduleRestart(err);
    });
  }

  begin();
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      restartTimer?.unsubscribe();
      watch.close();
      for (const abort of listsInFlight) abort.abort();
      informer.stop().catch(() => undefined);
    },
  };
}

/** Lets a list be aborted (on stop, or when it takes too long). */
function withSignal(signal: AbortSignal): ObservableMiddleware {
  return {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new ApiObservable(Promise.resolve(ctx));
    },
    post: (rsp) => new ApiObservable(Promise.resolve(rsp)),
  };
}

function describe(err: unknown): Record<string, unknown> | string {
  if (err instanceof Error) {
    const e = err as Error & { statusCode?: number; code?: number | string };
    return { name: e.name, message: e.message, ...(e.statusCode ? { statusCode: e.statusCode } : {}), ...(e.code ? { code: e.code } : {}) };
  }
  return String(err);
}
