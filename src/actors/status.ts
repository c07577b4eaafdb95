// The status writer: while this pod leads, keeps every served Ingress's
// status.loadBalancer.ingress equal to the controller's addresses — on a timer
// (--status-update-interval), after each sync, and when an Ingress's status alone changes (the
// store's statusOnly events, which cost no sync) — writing only the Ingresses that differ, at most
// ten at a time and --status-update-rate a second: its own writes coming back are left alone, a
// status someone else wrote is restored. On shutdown the last replica clears the status it wrote.
import type { NetworkingV1Api, V1Ingress } from '@kubernetes/client-node';
import Bottleneck from 'bottleneck';
import { asyncScheduler, interval, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { Logger } from '../log.js';
import type { Ingress, LoadBalancerIngress } from '../store/kube-types.js';
import { sameAddresses, standardizeAddresses } from './status-address.js';
import { describeForbidden } from '../streams/kube-errors.js';

export interface StatusWriterDeps {
  networking: NetworkingV1Api;
  /** The controller's current addresses (see discoverStatusAddresses). */
  addresses: () => Promise<LoadBalancerIngress[]>;
  /** Whether another replica is running: then it keeps the status when this pod shuts down. */
  otherReplicasRunning: () => Promise<boolean>;
  isLeader$: Observable<boolean>;
  /** --status-update-interval, in ms. */
  intervalMs: number;
  /** --update-status-on-shutdown. */
  updateStatusOnShutdown: boolean;
  logger: Logger;
  scheduler?: SchedulerLike;
  /** Concurrent status writes (ingress-nginx: 10). */
  maxConcurrent?: number;
  /**
   * At most this many status writes start per second (default 100): at 10k Ingresses the first
   * run's writes, and their echoes on the Ingress watch, then leave the controller's CPU to the
   * syncs of new routes. 0: unpaced.
   */
  writesPerSecond?: number;
}

export interface StatusRun {
  /** False when this pod did not lead, so nothing was looked at. */
  leader: boolean;
  addresses: LoadBalancerIngress[];
  written: string[];
  unchanged: number;
  failed: Array<{ ingress: string; error: string }>;
}

export interface StatusWriter {
  /** Starts the timer and follows leadership (a new leader writes at once). */
  start(): void;
  /** After a sync: these are the Ingresses this controller serves now; brings their status up to date. */
  sync(ingresses: readonly Ingress[]): Promise<StatusRun>;
  /**
   * The store holds a new status for this Ingress, nothing else changed: kept (the shutdown clears
   * what the object holds); when it is not what this controller wants, a run writes it again.
   * Undefined when nothing is written (not served by the last sync, not leading, or up to date).
   */
  statusChanged(ing: Ingress): Promise<StatusRun> | undefined;
  /** The controller's addresses may have changed (the --publish-service Service's status): a run, when leading. */
  addressesChanged(): Promise<StatusRun> | undefined;
  /** Stops the timer; with --update-status-on-shutdown, the last replica clears the status. */
  shutdown(): Promise<void>;
}

interface Written { basedOn: string | undefined; addresses: LoadBalancerIngress[] }

export function createStatusWriter(deps: StatusWriterDeps): StatusWriter {
  const log = deps.logger.child({ actor: 'status' });
  const scheduler = deps.scheduler ?? asyncScheduler;
  const writesPerSecond = deps.writesPerSecond ?? DEFAULT_WRITES_PER_SECOND;
  const limiter = new Bottleneck({ maxConcurrent: deps.maxConcurrent ?? 10, ...(writesPerSecond > 0 ? { minTime: 1000 / writesPerSecond } : {}) });
  /** The Ingresses of the last sync, by namespace/name, each as the store last held it. */
  let ingresses = new Map<string, Ingress>();
  /** The addresses of the last run: what a status must hold to be up to date. */
  let lastAddresses: LoadBalancerIngress[] | undefined;
  let leader = false;
  let stopped = false;
  const subs: Subscription[] = [];
  /** What we last wrote per Ingress, and over which resourceVersion: the store lags our writes. */
  const written = new Map<string, Written>();
  /** Objects found up to date with `checkedFor`: a run after each sync compares only the Ingresses that changed. */
  let checked = new WeakSet<Ingress>();
  let checkedFor: LoadBalancerIngress[] | undefined;
  let current: Promise<StatusRun> | undefined;
  let pending: Promise<StatusRun> | undefined;

  function request(): Promise<StatusRun> {
    if (pending) return pending;
    if (current) {
      pending = current.then(() => { pending = undefined; return begin(); });
      return pending;
    }
    return begin();
  }

  function begin(): Promise<StatusRun> {
    const run = runOnce(ingresses).catch((err): StatusRun => {
      log.warn({ err: String(err) }, 'could not update the Ingress status');
      return { leader, addresses: [], written: [], unchanged: 0, failed: [{ ingress: '*', error: String(err) }] };
    });
    current = run.finally(() => { current = undefined; });
    return current;
  }

  /** A run writes the Ingresses as they were when it began; a later sync() queues the next run. */
  async function runOnce(list: ReadonlyMap<string, Ingress>): Promise<StatusRun> {
    if (!leader || stopped) return { leader: false, addresses: [], written: [], unchanged: 0, failed: [] };
    const addresses = standardizeAddresses(await deps.addresses());
    lastAddresses = addresses;
    return writeAll(list, addresses);
  }

  async function writeAll(list: ReadonlyMap<string, Ingress>, addresses: LoadBalancerIngress[]): Promise<StatusRun> {
    const out: StatusRun = { leader: true, addresses, written: [], unchanged: 0, failed: [] };
    const jobs: Array<Promise<void>> = [];
    for (const key of written.keys()) if (!list.has(key)) written.delete(key);
    if (checkedFor === undefined || !sameAddresses(checkedFor, addresses)) {
      checked = new WeakSet();
      checkedFor = addresses;
    }
    for (const [key, ing] of list) {
      if (checked.has(ing)) {
        out.unchanged++;
        continue;
      }
      if (sameAddresses(ing.status?.loadBalancer?.ingress, addresses)) {
        checked.add(ing);
        out.unchanged++;
        continue;
      }
      if (writtenByUs(key, ing, addresses)) {
        out.unchanged++;
        continue;
      }
      jobs.push(limiter.schedule(() => write(ing, addresses)).then(
        () => { out.written.push(key); written.set(key, { basedOn: ing.metadata.resourceVersion, addresses }); },
        (err) => {
          out.failed.push({ ingress: key, error: String(err) });
          const forbidden = describeForbidden(err, `reading Ingress ${key} or updating its status (ingresses get, ingresses/status update)`);
          if (forbidden) log.error({ ingress: key }, forbidden);
          else log.warn({ ingress: key, err: String(err) }, 'could not update the Ingress status');
        },
      ));
    }
    await Promise.all(jobs);
    out.written.sort();
    if (out.written.length > 0) log.info({ addresses, ingresses: out.written.length }, 'updated the Ingress status');
    return out;
  }

  function isUpToDate(key: string, ing: Ingress, addresses: LoadBalancerIngress[]): boolean {
    return sameAddresses(ing.status?.loadBalancer?.ingress, addresses) || writtenByUs(key, ing, addresses);
  }

  /** Whether our last write to this Ingress, over this very object, put `addresses` (the store lags our writes). */
  function writtenByUs(key: string, ing: Ingress, addresses: LoadBalancerIngress[]): boolean {
    const mine = written.get(key);
    return mine !== undefined && mine.basedOn === ing.metadata.resourceVersion && sameAddresses(mine.addresses, addresses);
  }

  /**
   * As ingress-nginx: read the Ingress, then update its status subresource with that object's
   * resourceVersion (its RBAC grants ingresses get and ingresses/status update, not patch). If
   * its class changed since the store saw it, it may be another controller's now: left alone;
   * the store's next event says whether it is still ours.
   */
  async function write(ing: Ingress, addresses: LoadBalancerIngress[]): Promise<void> {
    const name = ing.metadata.name;
    const namespace = ing.metadata.namespace ?? 'default';
    const current = await deps.networking.readNamespacedIngress({ name, namespace });
    if (classOf(current) !== classOf(ing)) {
      log.info({ ingress: `${namespace}/${name}` }, 'the Ingress changed class since it was last seen; its status is left alone');
      return;
    }
    // Already so (another replica, or our own write the store has not seen yet): no write, no echo.
    if (sameAddresses(current.status?.loadBalancer?.ingress as LoadBalancerIngress[] | undefined, addresses)) return;
    current.status = { ...current.status, loadBalancer: { ingress: addresses.length > 0 ? addresses : undefined } };
    await deps.networking.replaceNamespacedIngressStatus({ name, namespace, body: current });
  }

  return {
    start() {
      if (subs.length > 0 || stopped) return;
      subs.push(deps.isLeader$.subscribe((isLeader) => {
        leader = isLeader;
        if (isLeader) void request();
      }));
      subs.push(interval(deps.intervalMs, scheduler).subscribe(() => { void request(); }));
    },
    sync(list) {
      ingresses = new Map(list.map((ing) => [keyOf(ing), ing]));
      return request();
    },
    statusChanged(ing) {
      const key = keyOf(ing);
      if (!ingresses.has(key)) return undefined;
      ingresses.set(key, ing);
      if (!leader || stopped || (lastAddresses !== undefined && isUpToDate(key, ing, lastAddresses))) return undefined;
      return request();
    },
    addressesChanged() {
      return leader && !stopped ? request() : undefined;
    },
    async shutdown() {
      if (stopped) return;
      stopped = true;
      for (const s of subs) s.unsubscribe();
      await current;
      await pending;
      if (!deps.updateStatusOnShutdown) {
        log.info('leaving the Ingress status as it is (--update-status-on-shutdown=false)');
        return;
      }
      try {
        if (await deps.otherReplicasRunning()) {
          log.info('another controller replica is running; leaving the Ingress status to it');
          return;
        }
        // Unpaced: the pod is going away, and its grace period is shorter than 10k writes at the rate.
        limiter.updateSettings({ minTime: 0 });
        const run = await writeAll(ingresses, []);
        log.info({ cleared: run.written.length }, 'cleared the Ingress status (last controller replica)');
      } catch (err) {
        log.warn({ err: String(err) }, 'could not clear the Ingress status on shutdown');
      }
    },
  };
}

const DEFAULT_WRITES_PER_SECOND = 100;

const keyOf = (ing: Ingress) => `${ing.metadata.namespace}/${ing.metadata.name}`;

/** What decides an Ingress's class: spec.ingressClassName and the class annotation. */
function classOf(ing: Ingress | V1Ingress): string {
  return `${ing.spec?.ingressClassName ?? ''}|${ing.metadata?.annotations?.['kubernetes.io/ingress.class'] ?? ''}`;
}
