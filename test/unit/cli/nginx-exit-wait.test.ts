// How long the shutdown waits for NGINX after QUIT: its worker-shutdown-timeout and a margin,
// never a delay a Node timer would fire at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nginxExitWaitMs } from '../../../src/cli/serve.js';

test('worker-shutdown-timeout and 10 s; 0 (NGINX waits for its requests) and a month wait as long as a timer can', () => {
  assert.is(nginxExitWaitMs(240_000), 250_000);
  assert.is(nginxExitWaitMs(2_000), 12_000);
  assert.is(nginxExitWaitMs(0), 2 ** 31 - 1);
  assert.is(nginxExitWaitMs(30 * 24 * 3600_000), 2 ** 31 - 1);
});

test.run();
