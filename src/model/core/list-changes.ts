// What changed between two lists of objects compared by identity, costing what changed: the
// common head and tail are skipped by reference (no allocation), and only the middle is compared
// as sets. A new or removed Ingress in a list of 10k is a middle of one.

export interface ListChanges<T> {
  /** In `before`, not in `after`. */
  removed: T[];
  /** In `after`, not in `before`. */
  added: T[];
}

/**
 * The items removed and added between two lists whose items are each there once; null when the
 * lists differ in more than `limit` places (the caller recomputes) or an item is there twice.
 */
export function listChanges<T>(before: readonly T[], after: readonly T[], limit: number): ListChanges<T> | null {
  let head = 0;
  const shorter = Math.min(before.length, after.length);
  while (head < shorter && before[head] === after[head]) head++;
  let tailBefore = before.length;
  let tailAfter = after.length;
  while (tailBefore > head && tailAfter > head && before[tailBefore - 1] === after[tailAfter - 1]) {
    tailBefore--;
    tailAfter--;
  }
  if (tailBefore - head > limit || tailAfter - head > limit) return null;
  const was = new Set(before.slice(head, tailBefore));
  const is = new Set(after.slice(head, tailAfter));
  if (was.size !== tailBefore - head || is.size !== tailAfter - head) return null;
  const removed: T[] = [];
  const added: T[] = [];
  for (const x of was) if (!is.has(x)) removed.push(x);
  for (const x of is) if (!was.has(x)) added.push(x);
  return { removed, added };
}
