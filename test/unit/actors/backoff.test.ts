// The design card's backoff: 15 attempts, waits starting at 1 s shrinking by 0.8, jitter 0.1.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { backoffDelays, DESIGN_BACKOFF } from '../../../src/actors/backoff.js';

test('without jitter the 14 waits shrink by 0.8 from 1 s and span ~4.8 s', () => {
  const delays = backoffDelays({ ...DESIGN_BACKOFF, random: () => 0 });
  assert.is(delays.length, 14);
  assert.equal(delays.slice(0, 5), [1000, 800, 640, 512, 410]);
  for (let i = 1; i < delays.length; i++) assert.ok(delays[i] < delays[i - 1]);
  const total = delays.reduce((a, b) => a + b, 0);
  assert.ok(total > 4700 && total < 4850, `total ${total}`);
});

test('jitter stretches each wait by at most 10%', () => {
  const plain = backoffDelays({ ...DESIGN_BACKOFF, random: () => 0 });
  const most = backoffDelays({ ...DESIGN_BACKOFF, random: () => 0.999999 });
  plain.forEach((d, i) => assert.ok(most[i] >= d && most[i] <= Math.round(d * 1.1) + 1, `${most[i]} vs ${d}`));
  const random = backoffDelays(DESIGN_BACKOFF);
  random.forEach((d, i) => assert.ok(d >= plain[i] && d <= most[i]));
  const total = random.reduce((a, b) => a + b, 0);
  assert.ok(total < 5300, `the whole schedule stays near 4.8 s (${total})`);
});

test('steps is the number of attempts: one wait fewer', () => {
  assert.equal(backoffDelays({ steps: 1, initialMs: 10, factor: 2, jitter: 0 }), []);
  assert.equal(backoffDelays({ steps: 4, initialMs: 10, factor: 2, jitter: 0 }), [10, 20, 40]);
});

test.run();
