// ingress-nginx test/e2e/annotations/serversnippet.go, ported: a server-snippet's response
// headers while snippets are allowed, and none once the administrator allows them no more.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitForSteady } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const SNIPPET = '\n        more_set_headers "Foo: Bar";\n        more_set_headers "Xpto: Lalala";';

test.before(async () => {
  // The e2e framework's AllowSnippetConfiguration.
  fx = await startFixture('serversnippet', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  fx.apply('ingresses.json', [
    fx.single('on', 'serversnippet.foo.com', { 'server-snippet': SNIPPET }),
    fx.single('off', 'noserversnippet.foo.com', { 'server-snippet': SNIPPET }),
  ]);
  await Promise.all(['serversnippet.foo.com', 'noserversnippet.foo.com'].map((h) =>
    waitForSteady(async () => { const r = await fx.ctl.request(h, '/'); return r.status === 200 && r.headers.foo === 'Bar'; }, { what: `${h} with its snippet, from every worker` })));
});
test.after(() => fx.stop());

its.both('annotations/serversnippet.go:35', async (p) => {
  const r = await p.request('serversnippet.foo.com', '/');
  assert.is(r.status, 200);
  assert.is(r.headers.foo, 'Bar');
  assert.is(r.headers.xpto, 'Lalala');
});

its.both('annotations/serversnippet.go:64', async (p) => {
  // annotations-risk-level Critical alone: allow-snippet-annotations is false again.
  await fx.configure({ 'annotations-risk-level': 'Critical' });
  const r = await p.until('noserversnippet.foo.com', '/', (x) => x.status === 200 && x.headers.foo === undefined, { what: 'the snippet dropped' });
  assert.is(r.headers.xpto, undefined);
});

test.run();
