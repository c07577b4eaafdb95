// ingress-nginx test/e2e/dbg/main.go, ported: `ingress-rx dbg` (ingress-nginx's /dbg) against a
// local controller serving one Ingress: the backends it lists, one backend by name, and the
// general configuration as JSON. dbg talks to NGINX's control server, not over HTTP.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { runDbg } from '../../../../src/cli/dbg.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const WHY = 'the dbg command reads NGINX\'s control server';

test.before(async () => {
  fx = await startFixture('debug-tool');
  await fx.applyAndWait('ingress.json', [fx.single('foo.com', 'foo.com')], 'foo.com');
});
test.after(() => fx.stop());

async function dbg(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runDbg(args, { workdir: fx.ctl.workdir }, (s) => { out += s; });
  return { code, out };
}

its.noClient('dbg/main.go:37', WHY, async () => {
  const r = await dbg('backends', 'list');
  assert.is(r.code, 0);
  // The Ingress's backend and the default backend, as ingress-nginx lists them.
  assert.equal(r.out.trim().split('\n').sort(), ['debug-tool-echo-80', 'upstream-default-backend']);
});

its.noClient('dbg/main.go:56', WHY, async () => {
  const first = (await dbg('backends', 'list')).out.split('\n')[0]!;
  const r = await dbg('backends', 'get', first);
  assert.is(r.code, 0);
  assert.is((JSON.parse(r.out) as { name: string }).name, first);
});

its.noClient('dbg/main.go:85', WHY, async () => {
  const r = await dbg('general');
  assert.is(r.code, 0);
  // No general document is posted (ingress-nginx posts none either): `{}`, as its dbg prints.
  assert.equal(JSON.parse(r.out), {});
});

test.run();
