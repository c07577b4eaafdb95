// The regular-expression check answers as NGINX's PCRE2, and remembers its answer per pattern and
// flag: a full build and render check the same patterns again, and each native compile costs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkRegex } from '../../../src/model/checks/pcre.js';
import { nginxCompat } from '../../../src/model/checks/native.js';

/** Counts the native compiles `fn` makes, per pattern and flag. */
function compiles(fn: () => void): string[] {
  const native = nginxCompat();
  const real = native.pcreCompile;
  const seen: string[] = [];
  native.pcreCompile = (pattern, caseless) => {
    seen.push(`${caseless ? '~*' : '~'} ${pattern}`);
    return real.call(native, pattern, caseless);
  };
  try {
    fn();
  } finally {
    native.pcreCompile = real;
  }
  return seen;
}

test('a pattern is compiled once per flag; later checks give the same answer', () => {
  const p = `^/memo-${process.pid}/(.*)`;
  const bad = `^/memo-${process.pid}/(unclosed`;
  const named = `^/memo-${process.pid}/(?<id>[0-9]+)`;
  let answers: ReturnType<typeof checkRegex>[] = [];
  const seen = compiles(() => {
    answers = [
      checkRegex(p, { caseless: true }), checkRegex(p, { caseless: true }), checkRegex(p, { caseless: false }),
      checkRegex(bad, { caseless: true }), checkRegex(bad, { caseless: true }),
      checkRegex(named, { caseless: false }), checkRegex(named, { caseless: false }),
    ];
  });
  assert.equal(seen, [`~* ${p}`, `~ ${p}`, `~* ${bad}`, `~ ${named}`]);
  assert.equal(answers[0], { ok: true, names: [] });
  assert.is(answers[1], answers[0]);
  assert.equal(answers[2], { ok: true, names: [] });
  assert.is(answers[3]!.ok, false);
  assert.is(answers[4], answers[3]);
  assert.equal(answers[5], { ok: true, names: ['id'] });
  assert.is(answers[6], answers[5]);
});

test('a long pattern is compiled at every check, and still refused when NGINX would refuse it', () => {
  const long = `^/${'a'.repeat(300)}(`;
  let answers: ReturnType<typeof checkRegex>[] = [];
  const seen = compiles(() => {
    answers = [checkRegex(long, { caseless: true }), checkRegex(long, { caseless: true })];
  });
  assert.is(seen.length, 2);
  assert.is(answers[0]!.ok, false);
  assert.is(answers[1]!.ok, false);
});

test.run();
