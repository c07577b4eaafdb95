// Stable in-place sort for the short lists the model sorts once per host or backend: V8's
// Array.prototype.sort allocates its work arrays on every call (~0.8 KB even for three
// elements), which over a 10k-host build is tens of MB of garbage. Longer lists use it.
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
