// Kubernetes Events (core/v1) for what operators look for with `kubectl describe`: NGINX reloads
// on the controller pod, invalid Ingresses on the Ingress. Like client-go's recorder, a repeat of
// the same event bumps the count of the existing one (a patch), and each object has a token
// bucket, so a storm costs a bounded number of API calls.
import { ApiException, PatchStrategy, setHeaderOptions, type CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { Logger } from '../log.js';
import type { Ingress } from '../store/kube-types.js';
import { describeForbidden } from '../streams/kube-errors.js';

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderDeps {
  core: CoreV1Api;
  logger: Logger;
  /** source.component (ingress-nginx: nginx-ingress-controller). */
  component?: string;
  /** source.host and reportingInstance: the pod (or node) name. */
  host?: string;
  scheduler?: SchedulerLike;
  /** Per involved object: events allowed at once, and ms to earn one more (client-go: 25, 5 min). */
  burst?: number;
  refillMs?: number;
  /** Events remembered for aggregation (oldest forgotten first). */
  cacheSize?: number;
  /** Events waiting for the API beyond this are dropped. */
  maxQueued?: number;
}

export interface EventRecorder {
  /** Queues an event; never throws, never blocks. */
  record(object: InvolvedObject, type: EventType, reason: string, message: string): void;
  /** Resolves once every queued event reached the API (or failed). */
  flush(): Promise<void>;
  /** Events not sent because of the per-object rate limit or a full queue. */
  readonly dropped: number;
}

interface Sent { name: string; namespace: string; count: number }
interface Bucket { tokens: number; at: number }

export const RELOAD_REASON = 'RELOAD';
export const RELOAD_OK_MESSAGE = 'NGINX reload triggered due to a change in configuration';

export function createEventRecorder(deps: EventRecorderDeps): EventRecorder {
  const log = deps.logger.child({ actor: 'kube-events' });
  const scheduler = deps.scheduler ?? asyncScheduler;
  const component = deps.component ?? 'nginx-ingress-controller';
  const burst = deps.burst ?? 25;
  const refillMs = deps.refillMs ?? 5 * 60_000;
  const cacheSize = deps.cacheSize ?? 4096;
  const maxQueued = deps.maxQueued ?? 1000;
  const sent = new Map<string, Sent>();
  const buckets = new Map<string, Bucket>();
  let queued = 0;
  let chain: Promise<void> = Promise.resolve();
  let dropped = 0;
  let seq = 0;

  function allow(objectKey: string): boolean {
    const t = scheduler.now();
    const b = buckets.get(objectKey) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + (t - b.at) / refillMs);
    b.at = t;
    buckets.set(objectKey, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  async function send(object: InvolvedObject, type: EventType, reason: string, message: string): Promise<void> {
    const key = [object.kind, object.namespace ?? '', object.name, object.uid ?? '', type, reason, message].join('\u0000');
    const now = new Date(scheduler.now());
    const previous = sent.get(key);
    if (previous) {
      try {
        const count = previous.count + 1;
        await deps.core.patchNamespacedEvent(
          { name: previous.name, namespace: previous.namespace, body: { count, lastTimestamp: now.toISOString() } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        previous.count = count;
        return;
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 404)) throw err;
        sent.delete(key); // the event expired on the server: start a new one
      }
    }
    const namespace = object.namespace || 'default';
    const name = `${object.name}.${(now.getTime() * 1000 + (seq++ % 1000)).toString(16)}`;
    const body: CoreV1Event = {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name, namespace },
      involvedObject: { ...object, namespace: object.namespace },
      type, reason, message,
      count: 1, firstTimestamp: now, lastTimestamp: now,
      source: { component, host: deps.host },
      reportingComponent: component, reportingInstance: deps.host,
    };
    await deps.core.createNamespacedEvent({ namespace, body });
    sent.set(key, { name, namespace, count: 1 });
    if (sent.size > cacheSize) sent.delete(sent.keys().next().value!);
  }

  return {
    record(object, type, reason, message) {
      const objectKey = `${object.kind}/${object.namespace ?? ''}/${object.name}`;
      if (queued >= maxQueued || !allow(objectKey)) {
        dropped++;
        log.debug({ object: objectKey, reason }, 'event dropped (rate limit)');
        return;
      }
      queued++;
      chain = chain.then(() => send(object, type, reason, message)).catch((err) => {
        const forbidden = describeForbidden(err, `create or patch of events in namespace ${object.namespace ?? 'default'}`);
        if (forbidden) log.error({ object: objectKey, reason }, forbidden);
        else log.warn({ object: objectKey, reason, err: String(err) }, 'could not record a Kubernetes event');
      }).finally(() => { queued--; });
    },
    flush() {
      return chain;
    },
    get dropped() {
      return dropped;
    },
  };
}

export function ingressObject(ing: Ingress): InvolvedObject {
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    name: ing.metadata.name, namespace: ing.metadata.namespace,
    uid: ing.metadata.uid, resourceVersion: ing.metadata.resourceVersion,
  };
}

export function podObject(pod: { name: string; namespace: string; uid?: string }): InvolvedObject {
  return { apiVersion: 'v1', kind: 'Pod', name: pod.name, namespace: pod.namespace, uid: pod.uid };
}

/** ingress-nginx's RELOAD events on the controller pod. */
export function recordReload(recorder: EventRecorder, pod: InvolvedObject, error?: string): void {
  if (error === undefined) recorder.record(pod, 'Normal', RELOAD_REASON, RELOAD_OK_MESSAGE);
  else recorder.record(pod, 'Warning', RELOAD_REASON, `Error reloading NGINX: ${error}`);
}

/** ingress-nginx's Normal Event (reason Sync) on an Ingress it serves, each time it is added or changed. */
export function recordIngressSync(recorder: EventRecorder, ing: Ingress): void {
  recorder.record(ingressObject(ing), 'Normal', 'Sync', 'Scheduled for sync');
}

/** A Warning on an Ingress the controller cannot serve as written (the message names the field). */
export function recordInvalidIngress(recorder: EventRecorder, ing: Ingress, message: string, reason = 'Invalid'): void {
  recorder.record(ingressObject(ing), 'Warning', reason, message);
}
