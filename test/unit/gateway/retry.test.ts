// HTTPRoute rule `retry` → the route's retries (src/model/gateway/retry.ts): the codes NGINX can
// retry on, attempts, and what is named (unserved codes, a cap, a backoff) or refused (what the CRD refuses).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ruleRetry } from '../../../src/model/gateway/retry.js';

const at = 'spec.rules[0]';
const of = (retry: unknown) => ruleRetry({ retry }, at);

test('absent: none; codes 500, 502, 503, 504 kept ascending, duplicates once; attempts 1 by default', () => {
  assert.is(ruleRetry({}, at), null);
  assert.is(of(null), null);
  assert.equal(of({ codes: [504, 500, 500], attempts: 3 }), { retry: { codes: [500, 504], attempts: 3 }, notes: [] });
  assert.equal(of({}), { retry: { codes: [], attempts: 1 }, notes: [] });
  assert.equal(of({ attempts: 2, backoff: '0s' }), { retry: { codes: [], attempts: 2 }, notes: [] });
});

test('codes NGINX cannot tell apart are named, the others served; attempts above 10 capped, named; a backoff: no retries, named', () => {
  assert.equal(of({ codes: [429, 500, 501] }), {
    retry: { codes: [500], attempts: 1 },
    notes: [
      { field: 'spec.rules[0].retry.codes[0]', message: '429 is not retried: NGINX retries on 500, 502, 503, 504 only (and on connection errors and timeouts)' },
      { field: 'spec.rules[0].retry.codes[2]', message: '501 is not retried: NGINX retries on 500, 502, 503, 504 only (and on connection errors and timeouts)' },
    ],
  });
  const capped = of({ attempts: 1_000_000 });
  assert.ok(capped && 'retry' in capped);
  assert.equal(capped.retry, { codes: [], attempts: 10 });
  assert.match(capped.notes[0]!.message, /10 apply/);
  const backoff = of({ codes: [500], backoff: '100ms' });
  assert.ok(backoff && 'retry' in backoff);
  assert.is(backoff.retry, null);
  assert.match(backoff.notes[0]!.message, /backoff \(100ms\) is not served/);
});

test('values the CRD refuses are problems naming the field', () => {
  const problem = (retry: unknown) => { const r = of(retry); return r && 'problem' in r ? r.field : null; };
  assert.is(problem([500]), 'spec.rules[0].retry');
  assert.is(problem('500'), 'spec.rules[0].retry');
  assert.is(problem({ codes: [600] }), 'spec.rules[0].retry.codes[0]');
  assert.is(problem({ codes: [500, 399] }), 'spec.rules[0].retry.codes[1]');
  assert.is(problem({ codes: [500.5] }), 'spec.rules[0].retry.codes[0]');
  assert.is(problem({ codes: '500' }), 'spec.rules[0].retry.codes');
  assert.is(problem({ codes: Array(201).fill(500) }), 'spec.rules[0].retry.codes');
  assert.is(problem({ attempts: 0 }), 'spec.rules[0].retry.attempts');
  assert.is(problem({ attempts: 1.5 }), 'spec.rules[0].retry.attempts');
  assert.is(problem({ attempts: '3\nreturn 200' }), 'spec.rules[0].retry.attempts');
  assert.is(problem({ backoff: '1s;\nreturn 200' }), 'spec.rules[0].retry.backoff');
  assert.is(problem({ backoff: '0.5s' }), 'spec.rules[0].retry.backoff');
});

test.run();
