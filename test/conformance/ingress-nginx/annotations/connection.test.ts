// ingress-nginx test/e2e/annotations/connection.go, ported: the Connection header the upstream receives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'connection.foo.com';

test.before(async () => {
  fx = await startFixture('connection');
  await fx.applyAndWait('ingresses.json', [fx.single('connection', HOST, { 'connection-proxy-header': 'keep-alive' })], HOST);
});
test.after(() => fx.stop());

its.both('annotations/connection.go:35', async (p) => {
  const r = await p.request(HOST, '/');
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r).connection, 'keep-alive');
});

test.run();
