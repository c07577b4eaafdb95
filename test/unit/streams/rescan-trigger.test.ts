// When the manifests source rescans, under virtual time: a file renamed into place at once, a
// write in place (maybe half done) only after the quiet time.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rescanTrigger, type Notice } from '../../../src/streams/rescan-trigger.js';
import { newScheduler } from '../../support/pipeline-harness.js';

const trigger = suite('rescan trigger');

// The directory as the trigger sees it: a.yaml and b.yaml whole, e.yaml empty, gone.yaml removed.
const whole = new Set(['/m/a.yaml', '/m/b.yaml']);
const notices: Record<string, Notice> = {
  r: { event: 'rename', path: '/m/a.yaml' }, // a.yaml renamed into place
  b: { event: 'rename', path: '/m/b.yaml' },
  e: { event: 'rename', path: '/m/e.yaml' }, // created, nothing written yet
  d: { event: 'rename', path: '/m/gone.yaml' }, // removed (or renamed away)
  w: { event: 'change', path: '/m/a.yaml' }, // written in place
  t: { event: 'change', path: '/m/a.yaml.tmp' }, // the temporary file written before its rename
  m: { event: 'rename', path: '/m/a.yaml.tmp' }, // …and renamed away
  x: { event: 'rename', path: '/m/..data' }, // a mounted ConfigMap's swap
  n: { event: 'change', path: null },
};

function expectRescans(input: string, expected: string) {
  const s = newScheduler();
  s.run(({ hot, expectObservable }) => {
    const out = rescanTrigger(hot(input, notices), {
      debounceMs: 50,
      scheduler: s,
      isManifest: (p) => /\.(ya?ml|json)$/.test(p),
      isWhole: (p) => whole.has(p),
    });
    expectObservable(out).toBe(expected, { p: 'prompt', q: 'quiet' });
  });
}

trigger('a file written to a temporary name and renamed into place is read at once, with no quiet-time rescan after', () => {
  expectRescans('(tmr)', 'p');
  expectRescans('(tmrb)', 'p');
});

trigger('a write in place waits for the quiet time, also when a rename came with it', () => {
  expectRescans('w', '50ms q');
  expectRescans('(rw)', '50ms q');
  expectRescans('(wr)', '50ms q');
  expectRescans('w 9ms r', '60ms q');
});

trigger('a file created but not yet written, a removal, an unnamed notification: the quiet time', () => {
  expectRescans('e', '50ms q');
  expectRescans('(re)', '50ms q');
  expectRescans('d', '50ms q');
  expectRescans('(rd)', '50ms q');
  expectRescans('n', '50ms q');
});

trigger('notifications on other entries only restart the quiet time', () => {
  expectRescans('t', '50ms q');
  expectRescans('x 29ms t', '80ms q');
});

trigger('each rename after a rescan is a burst of its own; a write after a prompt rescan gets the quiet time', () => {
  expectRescans('r 99ms r', 'p 99ms p');
  expectRescans('r 19ms w', 'p 69ms q');
});

trigger('a file renamed in while a write burst waits joins that burst', () => {
  expectRescans('w 9ms r 9ms b', '70ms q');
});

trigger.run();
