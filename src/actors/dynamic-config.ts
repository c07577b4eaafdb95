// The dynamic-config actor: POSTs backends, servers (certificates) and routes to the
// Lua configuration endpoint on NGINX's control server, retrying on the design's backoff until
// each part is answered 201. It never errors: every outcome is a DynamicResult.
import {
  Observable, catchError, concatMap, defer, from, last, map, of, retry, switchMap, throwError, timeout, timer,
  type SchedulerLike,
} from 'rxjs';
import type { Logger } from '../log.js';
import { DESIGN_BACKOFF, backoffDelays, type BackoffOptions } from './backoff.js';
import { createBackendsSerialiser, type DynamicPart, type DynamicUpdate } from '../model/core/payload.js';
import { createRoutesSerialiser } from '../model/core/routes-payload.js';
import type { ControlChannel } from '../render/control.js';
import { controlRequest, describeChannel, type ControlBody } from './control-client.js';

export interface DynamicResult {
  ok: boolean;
  /** Attempts made (1 when the first POSTs succeeded; 0 when there was nothing to post). */
  attempts: number;
  error?: string;
  durationMs: number;
  /** The parts NGINX accepted (all of them when ok). */
  posted: DynamicPart[];
  /** The part the configuration endpoint refused as too large (413): not retried, the same body would be refused again. */
  tooLarge?: DynamicPart;
  /** How many bytes `tooLarge` lacked, when NGINX's answer said (lua/configuration.lua: "N bytes short"). */
  tooLargeBy?: number;
  /** Scheduler time the actor started. */
  startedAt: number;
  /** Milliseconds from each accepted part's request to NGINX's answer (the last attempt's). */
  partMs: Partial<Record<DynamicPart, number>>;
}

/** A serialiser of a part posted as changes (the route table, the backends). */
interface DeltaSerialiser<T> {
  post(payload: T): { readonly body: readonly string[]; readonly delta: boolean; accepted(): void };
  forget(): void;
}

export interface HttpResponseLike {
  status: number;
  body: string;
}

export type RequestBody = ControlBody;

/**
 * One HTTP exchange with the control server (`path` on it); `signal` aborts it when the actor
 * gives up on it (timeout). An Observable may be returned instead of a promise (tests under
 * TestScheduler, where promises cannot run).
 */
export type RequestFn = (method: string, path: string, body?: RequestBody, signal?: AbortSignal) => Promise<HttpResponseLike> | Observable<HttpResponseLike>;

export interface DynamicConfigDeps {
  /** NGINX's control server. */
  control: ControlChannel;
  scheduler: SchedulerLike;
  logger: Logger;
  /** Per request; 5000 by default. */
  timeoutMs?: number;
  backoff?: Partial<BackoffOptions>;
  request?: RequestFn;
}

const PARTS: readonly DynamicPart[] = ['backends', 'servers', 'routes'];

/** The default RequestFn: the control server over its socket, with the token. */
export const controlRequestFn = (control: ControlChannel) => (method: string, path: string, body?: RequestBody, signal?: AbortSignal): Promise<HttpResponseLike> =>
  controlRequest(control, method, path, { body, signal });

/** A lazy, cancellable request bounded by `timeoutMs` on the scheduler. */
function exchange(request: RequestFn, method: string, path: string, body: RequestBody | undefined, timeoutMs: number, scheduler: SchedulerLike): Observable<HttpResponseLike> {
  return new Observable<HttpResponseLike>((subscriber) => {
    const abort = new AbortController();
    const inner = from(request(method, path, body, abort.signal)).subscribe(subscriber);
    return () => {
      inner.unsubscribe();
      abort.abort();
    };
  }).pipe(timeout({
    first: timeoutMs,
    scheduler,
    with: () => throwError(() => new Error(`no answer within ${timeoutMs} ms`)),
  }));
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

export function createDynamicConfigActor(deps: DynamicConfigDeps): (update: DynamicUpdate) => Observable<DynamicResult> {
  const { scheduler, logger } = deps;
  const timeoutMs = deps.timeoutMs ?? 5000;
  const request = deps.request ?? controlRequestFn(deps.control);
  const backoff = { ...DESIGN_BACKOFF, ...deps.backoff };
  const serialiseBackends = createBackendsSerialiser();
  const serialiseRoutes = createRoutesSerialiser();

  return (update) => defer(() => {
    const startedAt = scheduler.now();
    const pending = PARTS.filter((p) => update[p] !== undefined);
    const bodies = new Map<DynamicPart, RequestBody>();
    if (update.servers) bodies.set('servers', JSON.stringify(update.servers));
    const posted: DynamicPart[] = [];
    const partMs: Partial<Record<DynamicPart, number>> = {};
    const delays = backoffDelays(backoff);
    let attempts = 0;
    let tooLarge: DynamicPart | undefined;
    let tooLargeBy: number | undefined;
    const result = (ok: boolean, error?: string): DynamicResult => ({
      ok, attempts, durationMs: scheduler.now() - startedAt, posted: [...posted], startedAt, partMs, ...(error ? { error } : {}), ...(tooLarge ? { tooLarge } : {}), ...(tooLargeBy ? { tooLargeBy } : {}),
    });
    if (pending.length === 0) return of(result(true));

    // The route table and the backends go as a change to what NGINX accepted last; when NGINX
    // holds something else (it restarted, or someone else posted), it answers 409 and the whole
    // follows at once. Any other failure leaves what NGINX holds unknown: the next body is whole.
    const postDelta = <T>(part: 'routes' | 'backends', serialiser: DeltaSerialiser<T>, payload: T, again = true): Observable<HttpResponseLike> => defer(() => {
      const sent = serialiser.post(payload);
      return exchange(request, 'POST', `/configuration/${part}`, sent.body, timeoutMs, scheduler).pipe(
        switchMap((res) => {
          if (res.status === 201) sent.accepted();
          else serialiser.forget();
          if (res.status === 409 && sent.delta && again) {
            logger.info({ answer: res.body.trim().slice(0, 200) }, part === 'routes' ? 'route table: NGINX holds another table; posting the whole table' : 'backends: NGINX holds another list; posting the whole list');
            return postDelta(part, serialiser, payload, false);
          }
          return of(res);
        }),
        catchError((err: unknown) => { serialiser.forget(); return throwError(() => err); }),
      );
    });

    const post = (part: DynamicPart) => defer(() => {
      const sent = scheduler.now();
      return (part === 'routes' && update.routes ? postDelta(part, serialiseRoutes, update.routes)
        : part === 'backends' && update.backends ? postDelta(part, serialiseBackends, update.backends)
        : exchange(request, 'POST', `/configuration/${part}`, bodies.get(part), timeoutMs, scheduler)).pipe(map((res) => ({ res, ms: scheduler.now() - sent })));
    }).pipe(
      map(({ res, ms }) => {
        if (res.status === 413) {
          tooLarge = part;
          const short = /, (\d+) bytes short /.exec(res.body);
          tooLargeBy = short ? Number(short[1]) : undefined;
        }
        if (res.status !== 201) throw new Error(`POST /configuration/${part}: HTTP ${res.status}${res.body ? `: ${res.body.trim().slice(0, 200)}` : ''}`);
        partMs[part] = ms;
        posted.push(part);
        return part;
      }),
      catchError((err: unknown) => throwError(() => new Error(describe(err).startsWith('POST ') ? describe(err) : `POST /configuration/${part}: ${describe(err)}`))),
    );

    // One attempt posts, in order, the parts not accepted yet.
    const attempt = defer(() => {
      attempts += 1;
      return from(pending.filter((p) => !posted.includes(p))).pipe(concatMap(post), last(undefined, null));
    });

    return attempt.pipe(
      retry({
        count: delays.length,
        delay: (err: Error, retryCount) => {
          if (tooLarge) return throwError(() => err);
          const wait = delays[retryCount - 1];
          logger.warn({ attempt: retryCount, nextInMs: wait, error: err.message }, 'dynamic configuration failed; retrying');
          return timer(wait, scheduler);
        },
      }),
      map(() => result(true)),
      catchError((err: unknown) => {
        const error = `dynamic configuration failed after ${attempts} attempts: ${describe(err)}`;
        logger.error({ attempts, posted }, error);
        return of(result(false, error));
      }),
    );
  });
}

export interface WaitForControlOptions {
  scheduler: SchedulerLike;
  timeoutMs: number;
  /** Between probes; 100 ms by default. */
  intervalMs?: number;
  request?: RequestFn;
}

/**
 * Emits once (then completes) as soon as NGINX answers HTTP on the control server — any status,
 * /is-dynamic-lb-initialized is 404 until backends are posted — and errors after `timeoutMs`.
 */
export function waitForControl(control: ControlChannel, opts: WaitForControlOptions): Observable<void> {
  const { scheduler, timeoutMs } = opts;
  const request = opts.request ?? controlRequestFn(control);
  const intervalMs = opts.intervalMs ?? 100;
  const probe = defer(() => exchange(request, 'GET', '/is-dynamic-lb-initialized', undefined, Math.min(1000, timeoutMs), scheduler));
  return probe.pipe(
    retry({ delay: () => timer(intervalMs, scheduler) }),
    map((): void => undefined),
    timeout({
      first: timeoutMs,
      scheduler,
      with: () => throwError(() => new Error(`NGINX did not answer on ${describeChannel(control)} within ${timeoutMs} ms`)),
    }),
  );
}
