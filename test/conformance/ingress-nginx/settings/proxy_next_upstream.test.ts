// ingress-nginx test/e2e/settings/proxy_next_upstream.go, ported: proxy-next-upstream
// `timeout http_502` passes a request whose endpoint answers 502 on to the next endpoint (by
// default, `error timeout`, it does not). The echo Service has two endpoints that both answer
// /__status/502 with 502: the request reaches both, and the client gets the last 502. The
// timeout and tries (999999, 888888) are bounds no request in a test's time reaches, so for them
// the port reads the configuration NGINX runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'proxy-next-upstream.test';

test.before(async () => {
  fx = await startFixture('proxy-next-upstream', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('proxy-next-upstream', HOST)], HOST);
});
test.after(() => fx.stop());

/** How many endpoints one request answered 502 by every endpoint reached. */
async function endpointsTried(p: ProtocolClient): Promise<number> {
  const hits = () => fx.echo.reduce((n, e) => n + e.hits(), 0);
  const before = hits();
  const r = await p.request(HOST, '/__status/502');
  assert.is(r.status, 502);
  return hits() - before;
}

its.both('settings/proxy_next_upstream.go:36', async (p) => {
  await fx.configure({});
  assert.is(await endpointsTried(p), 1, 'by default a 502 is the answer');
  await fx.configure({ 'proxy-next-upstream': 'timeout http_502', 'proxy-next-upstream-timeout': '999999', 'proxy-next-upstream-tries': '888888' });
  assert.is(await endpointsTried(p), 2, 'with http_502 the next endpoint is tried');
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.match(conf, /\n\s*proxy_next_upstream timeout http_502;/);
  // NGINX reads a time without a unit as seconds: `999999s` is ingress-nginx's `999999`.
  assert.match(conf, /\n\s*proxy_next_upstream_timeout 999999s?;/);
  assert.match(conf, /\n\s*proxy_next_upstream_tries 888888;/);
});

test.run();
