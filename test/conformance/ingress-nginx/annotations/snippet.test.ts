// ingress-nginx test/e2e/annotations/snippet.go (configuration-snippet), ported: the snippet's
// response header while snippets are allowed, and none once the administrator allows them no more.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitForSteady } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const SNIPPET = 'more_set_headers "Foo1: Bar1";';

test.before(async () => {
  // The e2e framework's AllowSnippetConfiguration.
  fx = await startFixture('snippet', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  fx.apply('ingresses.json', [
    fx.single('on', 'configurationsnippet.foo.com', { 'configuration-snippet': SNIPPET }),
    fx.single('off', 'noconfigurationsnippet.foo.com', { 'configuration-snippet': SNIPPET }),
  ]);
  await Promise.all(['configurationsnippet.foo.com', 'noconfigurationsnippet.foo.com'].map((h) =>
    waitForSteady(async () => { const r = await fx.ctl.request(h, '/'); return r.status === 200 && r.headers.foo1 === 'Bar1'; }, { what: `${h} with its snippet, from every worker` })));
});
test.after(() => fx.stop());

its.both('annotations/snippet.go:34', async (p) => {
  const r = await p.request('configurationsnippet.foo.com', '/');
  assert.is(r.status, 200);
  assert.is(r.headers.foo1, 'Bar1');
});

its.both('annotations/snippet.go:66', async (p) => {
  await fx.configure({ 'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'false' });
  await p.until('noconfigurationsnippet.foo.com', '/', (x) => x.status === 200 && x.headers.foo1 === undefined, { what: 'the snippet dropped' });
});

test.run();
