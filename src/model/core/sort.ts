// Sorting for the model. sortShort: a stable in-place sort for the short lists sorted once per
// host or backend: V8's Array.prototype.sort allocates its work arrays on every call (~0.8 KB
// even for three elements), which over a 10k-host build is tens of MB of garbage; longer lists
// use it. And the by-name order of backends and plans.
const SHORT = 16;

export function sortShort<T>(list: T[], compare: (a: T, b: T) => number): T[] {
  if (list.length > SHORT) return list.sort(compare);
  for (let i = 1; i < list.length; i++) {
    const item = list[i]!;
    let j = i - 1;
    while (j >= 0 && compare(list[j]!, item) > 0) {
      list[j + 1] = list[j]!;
      j--;
    }
    list[j + 1] = item;
  }
  return list;
}

/** Orders named things (backends, plans) by name. */
export const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function isSortedByName(list: readonly { name: string }[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i - 1]!.name > list[i]!.name) return false;
  return true;
}
