// ingress-nginx test/e2e/annotations/log.go, ported: each It a host of its own on one controller.
// The e2e tests grep nginx.conf for access_log off and rewrite_log on; the port reads the access
// log NGINX writes for a request of the host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';
import { serverBlock } from '../../../../src/cli/dbg.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('log');
  fx.apply('ingresses.json', [
    fx.single('no-access-log', 'no-access-log.log.foo.com', { 'enable-access-log': 'false' }),
    fx.single('logged', 'logged.log.foo.com'),
    fx.single('rewrite-log', 'rewrite-log.log.foo.com', { 'enable-rewrite-log': 'true' }),
  ]);
  await Promise.all(['no-access-log', 'logged', 'rewrite-log'].map((h) => fx.ctl.until(`${h}.log.foo.com`, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

const lines = (file: string, text: string) => readFileSync(file, 'utf8').split('\n').filter((l) => l.includes(text));

its.both('annotations/log.go:34', async (p) => {
  const path = `/unlogged-${p.tag}-${Date.now()}`;
  assert.is((await p.request('no-access-log.log.foo.com', path)).status, 200);
  // A request of another host, sent after, is logged: once it is, the first would have been too.
  const other = `/logged-${p.tag}-${Date.now()}`;
  assert.is((await p.request('logged.log.foo.com', other)).status, 200);
  await waitFor(() => lines(fx.accessLog, other).length > 0, { timeoutMs: 5000, what: 'the other host\'s request in the access log' });
  assert.equal(lines(fx.accessLog, path), []);
});

its.noClient('annotations/log.go:49', 'rewrite_log writes only what a regex rewrite does; the host has none, so the running configuration is read', async () => {
  // What rewrite_log logs with a rewrite-target is the port of rewrite.go:39 (rewrite.test.ts).
  const block = serverBlock((await fx.ctl.control('/nginx.conf')).body, 'rewrite-log.log.foo.com');
  assert.ok(block, 'the host has a server block of its own (rewrite_log is a location directive)');
  assert.match(block, /\n\s*rewrite_log on;\n/);
  assert.not.match(serverBlock((await fx.ctl.control('/nginx.conf')).body, 'no-access-log.log.foo.com') ?? '', /rewrite_log on/);
});

test.run();
