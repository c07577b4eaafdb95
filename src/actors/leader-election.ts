// Leader election on a coordination.k8s.io/v1 Lease, as client-go's elector does it: acquire a
// free or expired lease, renew it while leading, step down when renewals fail past the
// deadline, and keep trying to come back. Only the leader writes Ingress status.
import { ApiException, V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { BehaviorSubject, asyncScheduler, distinctUntilChanged, of, type Observable, type SchedulerLike } from 'rxjs';
import type { Logger } from '../log.js';
import { describeForbidden } from '../streams/kube-errors.js';

export interface LeaderElectionTimings {
  /** How long a lease is valid after its last renewal (written as leaseDurationSeconds, rounded up). */
  leaseDurationMs: number;
  /** The leader steps down when it could not renew for this long. */
  renewDeadlineMs: number;
  /** Pause between two attempts to acquire or renew. */
  retryPeriodMs: number;
}

/** ingress-nginx derives all three from --election-ttl: TTL, TTL/2, TTL/4 (30 s, 15 s, 7.5 s). */
export function timingsFromElectionTTL(electionTTLMs: number): LeaderElectionTimings {
  return { leaseDurationMs: electionTTLMs, renewDeadlineMs: electionTTLMs / 2, retryPeriodMs: electionTTLMs / 4 };
}

export interface LeaderElectorDeps extends Partial<LeaderElectionTimings> {
  coordination: CoordinationV1Api;
  /** The pod's namespace (POD_NAMESPACE). */
  namespace: string;
  /** The Lease's name: --election-id. */
  name: string;
  /** This candidate: the pod's name (POD_NAME). */
  identity: string;
  logger: Logger;
  /** Time for the lease records and the retry timer; asyncScheduler (wall clock) by default. */
  scheduler?: SchedulerLike;
}

export interface LeaderElector {
  /** Whether this pod leads now; starts false, never repeats a value. */
  isLeader$: Observable<boolean>;
  start(): void;
  /** Stops campaigning and releases the lease if this pod holds it. */
  stop(): Promise<void>;
}

type Attempt = 'held' | 'held-by-other' | 'conflict';

export function createLeaderElector(deps: LeaderElectorDeps): LeaderElector {
  const defaults = timingsFromElectionTTL(30_000);
  const leaseDurationMs = deps.leaseDurationMs ?? defaults.leaseDurationMs;
  const renewDeadlineMs = deps.renewDeadlineMs ?? defaults.renewDeadlineMs;
  const retryPeriodMs = deps.retryPeriodMs ?? defaults.retryPeriodMs;
  const scheduler = deps.scheduler ?? asyncScheduler;
  const { coordination: api, namespace, name, identity } = deps;
  const log = deps.logger.child({ actor: 'leader-election', lease: `${namespace}/${name}`, identity });
  const leaseDurationSeconds = Math.max(1, Math.ceil(leaseDurationMs / 1000));

  const leader = new BehaviorSubject(false);
  let running: Promise<void> | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;
  let lastRenew = 0;
  let lastHolder = '';

  const now = () => scheduler.now();

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sub = scheduler.schedule(() => { wake = undefined; resolve(); }, ms);
      wake = () => { sub.unsubscribe(); wake = undefined; resolve(); };
    });
  }

  /** Races an API call against a timer: a hung request must not keep a stale leader leading. */
  function bounded<T>(p: Promise<T>, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const sub = scheduler.schedule(() => reject(new Error(`${what} timed out after ${retryPeriodMs} ms`)), retryPeriodMs);
      p.then((v) => { sub.unsubscribe(); resolve(v); }, (e) => { sub.unsubscribe(); reject(e); });
    });
  }

  function expired(lease: V1Lease, t: number): boolean {
    const spec = lease.spec ?? {};
    const renewed = timeOf(spec.renewTime ?? spec.acquireTime);
    const duration = (spec.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    return renewed === undefined || renewed + duration <= t;
  }

  async function tryAcquireOrRenew(): Promise<Attempt> {
    let lease: V1Lease | undefined;
    try {
      lease = await bounded(api.readNamespacedLease({ name, namespace }), 'reading the lease');
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
    }
    const t = now();
    if (!lease) {
      const body: V1Lease = {
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: micro(t), renewTime: micro(t), leaseTransitions: 0 },
      };
      try {
        await bounded(api.createNamespacedLease({ namespace, body }), 'creating the lease');
      } catch (err) {
        if (statusOf(err) === 409) return 'conflict';
        throw err;
      }
      return 'held';
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    if (holder !== lastHolder) {
      if (holder !== '' && holder !== identity) log.info({ leader: holder }, 'new leader observed');
      lastHolder = holder;
    }
    if (holder !== '' && holder !== identity && !expired(lease, t)) return 'held-by-other';
    const mine = holder === identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds,
        renewTime: micro(t),
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : micro(t),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      // resourceVersion rides along in metadata: a concurrent writer makes this a 409.
      await bounded(api.replaceNamespacedLease({ name, namespace, body }), 'updating the lease');
    } catch (err) {
      if (statusOf(err) === 409) return 'conflict';
      throw err;
    }
    return 'held';
  }

  async function campaign(): Promise<void> {
    let rereadAfterConflict = false;
    while (!stopped) {
      let attempt: Attempt | 'error';
      try {
        attempt = await tryAcquireOrRenew();
      } catch (err) {
        attempt = 'error';
        const forbidden = describeForbidden(err, `get, create or update of the Lease ${namespace}/${name}`);
        if (forbidden) log.error(forbidden);
        else log.warn({ err: String(err) }, 'leader election: could not reach the lease');
      }
      if (stopped) break;
      if (attempt === 'held') {
        lastRenew = now();
        if (!leader.value) {
          log.info('started leading');
          leader.next(true);
        }
      } else if (leader.value && (attempt === 'held-by-other' || now() - lastRenew >= renewDeadlineMs)) {
        log.warn({ attempt }, 'stopped leading');
        leader.next(false);
      } else if (attempt === 'conflict' && !rereadAfterConflict) {
        rereadAfterConflict = true;
        continue; // re-read once at once: someone wrote the lease between our read and write
      }
      rereadAfterConflict = false;
      await sleep(retryPeriodMs);
    }
  }

  async function release(): Promise<void> {
    try {
      const lease = await bounded(api.readNamespacedLease({ name, namespace }), 'reading the lease');
      if (lease.spec?.holderIdentity !== identity) return;
      const t = micro(now());
      const body: V1Lease = {
        ...lease,
        spec: { ...lease.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: t, acquireTime: t },
      };
      await bounded(api.replaceNamespacedLease({ name, namespace, body }), 'releasing the lease');
      log.info('released the lease');
    } catch (err) {
      log.warn({ err: String(err) }, 'could not release the lease; it expires on its own');
    }
  }

  return {
    isLeader$: leader.pipe(distinctUntilChanged()),
    start() {
      if (running || stopped) return;
      running = campaign();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      wake?.();
      await running;
      const wasLeader = leader.value;
      if (wasLeader) leader.next(false);
      if (wasLeader) await release();
      leader.complete();
    },
  };
}

/** For --disable-leader-election (and --update-status=false callers that still want the type). */
export function createStaticLeader(isLeader: boolean): LeaderElector {
  return { isLeader$: of(isLeader), start() {}, async stop() {} };
}

function micro(ms: number): V1MicroTime {
  return new V1MicroTime(ms);
}

/** Lease times come back as strings from the API (client-node does not revive MicroTime). */
function timeOf(t: unknown): number | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(String(t));
  return Number.isNaN(ms) ? undefined : ms;
}

function statusOf(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}
