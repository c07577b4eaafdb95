// ingress-nginx test/e2e/settings/lua_shared_dicts.go, ported: lua-shared-dicts resizes the
// built-in dictionaries (in megabytes), adds new ones, caps certificate_data at its default
// (20M) as ingress-nginx does for a size above it, and skips an entry whose size is not a number
// while the others apply. A dictionary's size has no effect a request shows, so the running
// configuration is read; that NGINX runs it shows NGINX took it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'lua-shared-dicts.test';

test.before(async () => {
  fx = await startFixture('lua-shared-dicts', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('lua-shared-dicts', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/lua_shared_dicts.go:29', async (p) => {
  await fx.configure({ 'lua-shared-dicts': 'configuration_data:60,certificate_data:300, my_dict: 15 , invalid: 1a' });
  const r = await p.request(HOST, '/');
  assert.is(r.status, 200, "served: Lua's data was posted again into the resized dictionaries");
  assert.ok(r.backend !== undefined);
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  // NGINX reads 60m and 60M alike.
  assert.match(conf, /lua_shared_dict configuration_data 60m;/i);
  assert.match(conf, /lua_shared_dict certificate_data 20m;/i);
  assert.match(conf, /lua_shared_dict my_dict 15m;/i);
  assert.not.match(conf, 'lua_shared_dict invalid');
  const leftOut = () => fx.warnings().filter((w) => w.includes('left out')).length;
  await waitFor(() => leftOut() >= 2, { what: 'the two bad entries named' });
  assert.equal(leftOut(), 2, 'the two bad entries are named, no more');
});

test.run();
