// sortShort: the same order as Array.prototype.sort (which is stable), on short and long lists.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sortShort } from '../../../src/model/core/sort.js';

test('gives the order of the native stable sort, ties kept in place, for lengths 0 to 40', () => {
  let seed = 7;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
  const byKey = (a: { k: number }, b: { k: number }) => a.k - b.k;
  for (let n = 0; n <= 40; n++) {
    for (let round = 0; round < 20; round++) {
      const list = Array.from({ length: n }, (_, i) => ({ k: rnd(5), i }));
      const expected = [...list].sort(byKey);
      const sorted = sortShort(list, byKey);
      assert.is(sorted, list, 'in place');
      assert.equal(sorted.map((x) => x.i), expected.map((x) => x.i), `n=${n}`);
    }
  }
});

test.run();
