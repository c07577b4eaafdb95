// ingress-nginx test/e2e/annotations/alias.go, ported: each It hosts of its own on one controller.
// The echo upstream reports the Host it received (the e2e test reads `host=` in its body).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingress } from '../../../support/local-harness.js';
import { annotations, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'alias';

test.before(async () => {
  fx = await startFixture(NS);
  fx.apply('ingresses.json', [
    fx.single('plain', 'foo.plain.alias.test'),
    fx.single('aliased', 'foo.aliased.alias.test', { 'server-alias': 'bar.aliased.alias.test' }),
    ingress(NS, 'app-a', { host: 'foo.two.alias.test', paths: [{ path: '/app-a', service: 'echo' }] }),
    ingress(NS, 'app-b', { host: 'foo.two.alias.test', annotations: annotations({ 'server-alias': 'bar.two.alias.test' }), paths: [{ path: '/app-b', service: 'echo' }] }),
  ]);
  await Promise.all([['foo.plain.alias.test', '/'], ['bar.aliased.alias.test', '/'], ['bar.two.alias.test', '/app-a']]
    .map(([h, path]) => fx.ctl.until(h!, path!, (r) => r.backend !== undefined, { what: `${h}${path} served` })));
});
test.after(() => fx.stop());

/** The host's answer for `path` came from the echo Service, which received `host` as Host. */
async function served(p: ProtocolClient, host: string, path = '/'): Promise<void> {
  const r = await p.request(host, path);
  assert.is(r.status, 200, `${host}${path}`);
  assert.is(upstreamHeaders(r).host, host);
}

its.both('annotations/alias.go:38', async (p) => {
  await served(p, 'foo.plain.alias.test');
  const r = await p.request('bar.plain.alias.test', '/');
  assert.is(r.status, 404);
  assert.match(r.body, '404 Not Found');
});

its.both('annotations/alias.go:64', async (p) => {
  await served(p, 'foo.aliased.alias.test');
  await served(p, 'bar.aliased.alias.test');
});

its.both('annotations/alias.go:89', async (p) => {
  // The alias of one Ingress names the whole server: the other Ingress's path answers on it too.
  await served(p, 'foo.two.alias.test', '/app-a');
  await served(p, 'bar.two.alias.test', '/app-a');
  await served(p, 'bar.two.alias.test', '/app-b');
});

test.run();
