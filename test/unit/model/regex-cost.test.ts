// The bound on one regex match: recheck's verdict, the attack pumped to a request line and run
// through the PCRE2 NGINX links. Patterns that backtrack catastrophically are refused with an
// attack that really costs PCRE2 more than the bound; ordinary Ingress patterns pass.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ATTACK_LENGTH, MATCH_STEPS, describeAttack, regexCostProblem } from '../../../src/model/checks/regex-cost.js';
import { nginxCompat } from '../../../src/model/checks/native.js';

test('patterns Ingresses use every day are bounded', () => {
  for (const p of ['^/api/v1/(.*)', '^/foo(/|$)(.*)', '^/(.*)/bar/(.*)', '^/static/.+\\.(css|js)$', '^/users/[0-9]+/edit', '^/plain/path', '^/', '^/v[0-9]+/(items|orders)/?$']) {
    assert.is(regexCostProblem(p, true), null, p);
  }
});

test('exponential and steep polynomial patterns are refused, with an attack that costs PCRE2 more than the bound', () => {
  for (const p of ['^/r/(a|aa)+$', '^/(a+)+b', '^/x/(\\w+\\s?)*$', '^/.*a.*b.*c.*d.*e']) {
    const problem = regexCostProblem(p, true);
    assert.ok(problem, `${p} is refused`);
    assert.match(problem!.reason, /backtrack catastrophically/);
    assert.ok(problem!.attack && problem!.attack.length <= ATTACK_LENGTH + p.length, p);
    assert.is(nginxCompat().pcreWithinLimit(p, true, problem!.attack!, MATCH_STEPS), false, `${p}: the attack really exceeds ${MATCH_STEPS} steps`);
  }
});

test('PCRE2-only forms are judged as the costlier forms recheck reads; what it cannot read at all is refused, saying why', () => {
  for (const p of ['^/a++', '^/(?>a+)b', '^(?i)/a*b', '^/x*+y']) assert.is(regexCostProblem(p, true), null, p);
  // A possessive quantifier cannot save a pattern whose other part backtracks.
  assert.ok(regexCostProblem('^/b++(a|aa)+$', true), 'the (a|aa)+ part still refuses it');
  const problem = regexCostProblem('^/(a(?1)?b)', true);
  assert.ok(problem);
  assert.match(problem!.reason, /cannot be shown to match in bounded time \(recheck: invalid/);
});

test('the verdict is the same each time (no clock, a fixed seed) and attacks are shown short', () => {
  assert.equal(regexCostProblem('^/(a+)+b', false), regexCostProblem('^/(a+)+b', false));
  const shown = describeAttack(`/a${'a'.repeat(5000)}`);
  assert.match(shown, /^"\/a+…a+ \(5002 bytes\)"$/);
  assert.ok(shown.length < 100);
});

test('patterns that differ only in their leading literal share one verdict; the attack starts with that literal', () => {
  const a = regexCostProblem('^/shop-1/(a|aa)+$', true);
  const b = regexCostProblem('^/shop\\.two/(a|aa)+$', true);
  assert.ok(a && b);
  assert.ok(a!.attack!.startsWith('/shop-1/') && b!.attack!.startsWith('/shop.two/'), `${a!.attack!.slice(0, 20)} ${b!.attack!.slice(0, 20)}`);
  assert.is(nginxCompat().pcreWithinLimit('^/shop\\.two/(a|aa)+$', true, b!.attack!, MATCH_STEPS), false, 'the attack works on the whole pattern');
  for (let i = 0; i < 50; i++) assert.is(regexCostProblem(`^/svc-${i}(/|$)(.*)`, true), null);
});

test.run();
