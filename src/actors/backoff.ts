// The retry schedule of the dynamic-config actor, as the design card gives it: `steps` attempts
// with a wait before each retry that starts at `initialMs`, is multiplied by `factor` each time
// (0.8: the waits shrink) and stretched by up to `jitter` of itself.

export interface BackoffOptions {
  /** Attempts in all; the schedule has `steps - 1` waits. */
  steps: number;
  initialMs: number;
  factor: number;
  /** Each wait grows by `jitter × random() × wait`. */
  jitter: number;
  /** [0, 1) source, Math.random by default; inject a constant for exact tests. */
  random?: () => number;
}

export const DESIGN_BACKOFF: Readonly<BackoffOptions> = { steps: 15, initialMs: 1000, factor: 0.8, jitter: 0.1 };

/** The waits (ms, rounded) between consecutive attempts: 15 steps → 14 waits, ~4.8 s in all. */
export function backoffDelays(opts: BackoffOptions): number[] {
  const random = opts.random ?? Math.random;
  const delays: number[] = [];
  let base = opts.initialMs;
  for (let i = 1; i < opts.steps; i++) {
    delays.push(Math.round(base * (1 + opts.jitter * random())));
    base *= opts.factor;
  }
  return delays;
}
