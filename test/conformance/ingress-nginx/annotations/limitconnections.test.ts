// ingress-nginx test/e2e/annotations/limitconnections.go, ported: with limit-connections 8, of
// 20 requests from one address held open together by a slow upstream, 8 are served and 12 are
// refused with 503. The e2e test first serves the host without the limit, then adds it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { untilRunning } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'limit-connections';
const LIMIT = 8;
const REQUESTS = 20;

test.before(async () => {
  fx = await startFixture('limit-connections');
  await fx.applyAndWait('ingress.json', [fx.single('limit-connections', HOST)], HOST);
  fx.apply('ingress.json', [fx.single('limit-connections', HOST, { 'limit-connections': String(LIMIT) })]);
  await untilRunning(fx.ctl, `conn ${LIMIT};`);
});
test.after(() => fx.stop());

its.both('annotations/limitconnections.go:38', async (p) => {
  // Each request on a connection of its own; the upstream answers after 2 s, so all 20 are in
  // progress together.
  const statuses = await Promise.all(Array.from({ length: REQUESTS }, () => p.request(HOST, '/__delay/2000').then((r) => r.status)));
  const count = (s: number) => statuses.filter((x) => x === s).length;
  assert.is(count(200), LIMIT, statuses.join(' '));
  assert.is(count(503), REQUESTS - LIMIT, statuses.join(' '));
});

test.run();
