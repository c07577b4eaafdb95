// HTTPRoute rule timeouts → the per-wait bound the Lua router sets (src/model/gateway/timeouts.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ruleTimeouts } from '../../../src/model/gateway/timeouts.js';

const of = (timeouts: unknown) => ruleTimeouts({ timeouts }, 'spec.rules[0]');

test('durations: parts of h, m, s, ms add up; the shorter of request and backendRequest applies; 0s turns one off', () => {
  assert.equal(of({ request: '500ms' }), { seconds: 0.5, note: null });
  assert.equal(of({ backendRequest: '1m30s' }), { seconds: 90, note: null });
  assert.equal(of({ request: '1h', backendRequest: '250ms' }), { seconds: 0.25, note: null });
  assert.equal(of({ request: '0s', backendRequest: '2s' }), { seconds: 2, note: null });
  assert.is(of({ request: '0s' }), null, 'disabled: the http level applies');
  assert.is(of(undefined), null);
  assert.is(of({}), null);
});

test('bad input is named: not a duration, a fraction, a negative, too many digits or parts, backendRequest longer than request', () => {
  for (const v of ['0.5s', '-1s', '1d', '123456s', '1h1m1s1ms1h', 's', '', '1s ', '1s\r\nX: y']) {
    const r = of({ request: v });
    assert.ok(r !== null && 'problem' in r, v);
    assert.is((r as { field: string }).field, 'spec.rules[0].timeouts.request', v);
  }
  assert.equal(of({ request: 5 }), { field: 'spec.rules[0].timeouts.request', problem: '"5" is not a duration (1 to 4 parts like 1h, 30m, 10s, 500ms)' });
  assert.equal(of({ request: '1s', backendRequest: '2s' }), { field: 'spec.rules[0].timeouts.backendRequest', problem: 'must not be longer than timeouts.request' });
  assert.equal(of('10s'), { field: 'spec.rules[0].timeouts', problem: 'must be an object' });
});

test('a timeout longer than a route can wait (24 h) is capped, with a note', () => {
  const r = of({ request: '99999h' });
  assert.equal(r, { seconds: 86400, note: '359996400 s is longer than the 86400 s a route can wait; 86400 s applies' });
});

test.run();
