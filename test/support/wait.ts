// Await a condition instead of sleeping: polls `check` until it returns a truthy value.
export async function waitFor<T>(check: () => T | Promise<T>, opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${lastErr ? `: ${String(lastErr)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
  }
}

/**
 * Polls until `check` holds `times` times in a row. Each NGINX worker takes up a posted change
 * on its own timer: one answer from the new state says nothing of the next request's worker.
 */
export async function waitForSteady(check: () => Promise<boolean>, opts: { times?: number; timeoutMs?: number; what?: string } = {}): Promise<void> {
  await waitFor(async () => {
    for (let i = 0; i < (opts.times ?? 6); i++) if (!(await check())) return false;
    return true;
  }, opts);
}
