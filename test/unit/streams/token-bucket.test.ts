// The token bucket under virtual time: --sync-rate-limit tokens per second, burst 1.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createTokenBucket } from '../../../src/streams/token-bucket.js';
import { newScheduler } from '../../support/pipeline-harness.js';

const bucket = suite('token bucket');

bucket('burst 1 at 0.3/s: first token now, the next after 3334 ms', () => {
  const s = newScheduler();
  s.run(() => {
    const b = createTokenBucket({ ratePerSecond: 0.3, burst: 1, scheduler: s });
    assert.is(b.delay(), 0);
    b.take();
    assert.is(b.delay(), 3334);
  });
});

bucket('tokens refill with virtual time up to the burst', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const b = createTokenBucket({ ratePerSecond: 2, burst: 3, scheduler: s });
    b.take(); b.take(); b.take();
    assert.is(b.delay(), 500);
    s.schedule(() => {
      assert.is(b.delay(), 0);
      b.take(); b.take(); b.take(); // only 3 after 10 s: the burst caps the bucket
      assert.is(b.delay(), 500);
    }, 10_000);
    flush();
  });
});

bucket.run();
