// The token bucket that paces syncs (--sync-rate-limit, default 0.3/s, burst 1): a lone change
// passes at once, a storm is paced. Time is read from the injected scheduler, never Date.now().
import type { SchedulerLike } from 'rxjs';

export interface TokenBucket {
  /** Milliseconds until a token is available (0 = now). Does not consume. */
  delay(): number;
  /** Consumes one token; call only when delay() is 0. */
  take(): void;
}

export function createTokenBucket(opts: { ratePerSecond: number; burst: number; scheduler: SchedulerLike }): TokenBucket {
  const { ratePerSecond, burst, scheduler } = opts;
  if (!(ratePerSecond > 0)) throw new Error(`sync rate limit must be > 0, got ${ratePerSecond}`);
  if (!(burst >= 1)) throw new Error(`burst must be ≥ 1, got ${burst}`);
  const msPerToken = 1000 / ratePerSecond;
  let tokens = burst;
  let last = scheduler.now();

  const refill = () => {
    const now = scheduler.now();
    tokens = Math.min(burst, tokens + (now - last) / msPerToken);
    last = now;
  };

  return {
    delay() {
      refill();
      // A hair of tolerance so floating-point dust does not cost a whole extra timer round.
      return tokens >= 1 - 1e-9 ? 0 : Math.ceil((1 - tokens) * msPerToken);
    },
    take() {
      refill();
      tokens = Math.max(0, tokens - 1);
    },
  };
}
