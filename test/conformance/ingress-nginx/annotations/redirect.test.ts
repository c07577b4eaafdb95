// ingress-nginx test/e2e/annotations/redirect.go, ported: permanent-redirect and its code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const TARGET = 'http://redirect.example.com';

test.before(async () => {
  fx = await startFixture('redirect');
  const on = (host: string, a: Record<string, string>) => fx.single(host.split('.')[0]!, host, a, { path: '/something' });
  fx.apply('ingresses.json', [
    on('standard.redirect.test', { 'permanent-redirect': TARGET }),
    on('custom.redirect.test', { 'permanent-redirect': TARGET, 'permanent-redirect-code': '302' }),
  ]);
  await Promise.all(['standard.redirect.test', 'custom.redirect.test'].map((h) => fx.ctl.until(h, '/something', (r) => r.headers.location === TARGET, { what: `${h} redirects` })));
});
test.after(() => fx.stop());

its.both('annotations/redirect.go:33', async (p) => {
  const r = await p.request('standard.redirect.test', '/something');
  assert.is(r.status, 301);
  assert.is(r.headers.location, TARGET);
});

its.both('annotations/redirect.go:61', async (p) => {
  const r = await p.request('custom.redirect.test', '/something');
  assert.is(r.status, 302);
  assert.is(r.headers.location, TARGET);
});

test.run();
