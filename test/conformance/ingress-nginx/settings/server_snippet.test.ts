// ingress-nginx test/e2e/settings/server_snippet.go, ported: the ConfigMap's server-snippet adds
// its response header to every host, next to an Ingress's own server-snippet while snippet
// annotations are allowed; with allow-snippet-annotations false only the ConfigMap's remains.
// ingress-rx applies the operator's snippets only under annotations-risk-level Critical, which
// both Its set (docs/differences.md, the operator's snippets).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { Reply } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const GLOBAL = '\n    more_set_headers "Globalfoo: Foooo";';
const OWN = '\n      more_set_headers "Foo: Bar";\n      more_set_headers "Xpto: Lalala";';
const withGlobal = (allowAnnotations: boolean) => ({ 'allow-snippet-annotations': String(allowAnnotations), 'annotations-risk-level': 'Critical', 'server-snippet': GLOBAL });

test.before(async () => {
  fx = await startFixture('cm-server-snippet', { configmap: {} });
  fx.apply('ingresses.json', [
    fx.single('plain1', 'serverglobalsnippet1.foo.com'),
    fx.single('annots1', 'serverannotssnippet1.foo.com', { 'server-snippet': OWN }),
    fx.single('plain2', 'serverglobalsnippet2.foo.com'),
    fx.single('annots2', 'serverannotssnippet2.foo.com', { 'server-snippet': OWN }),
  ]);
  await Promise.all(['serverglobalsnippet1.foo.com', 'serverannotssnippet1.foo.com', 'serverglobalsnippet2.foo.com', 'serverannotssnippet2.foo.com']
    .map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(() => fx.stop());

const headersOf = (r: Reply) => ({ status: r.status, globalfoo: r.headers.globalfoo, foo: r.headers.foo, xpto: r.headers.xpto });

its.both('settings/server_snippet.go:35', async (p) => {
  await fx.configure(withGlobal(true));
  assert.equal(headersOf(await p.request('serverglobalsnippet1.foo.com', '/')), { status: 200, globalfoo: 'Foooo', foo: undefined, xpto: undefined });
  assert.equal(headersOf(await p.request('serverannotssnippet1.foo.com', '/')), { status: 200, globalfoo: 'Foooo', foo: 'Bar', xpto: 'Lalala' });
});

its.both('settings/server_snippet.go:100', async (p) => {
  await fx.configure(withGlobal(false));
  assert.equal(headersOf(await p.request('serverglobalsnippet2.foo.com', '/')), { status: 200, globalfoo: 'Foooo', foo: undefined, xpto: undefined });
  // The Ingress's own snippet is dropped by the administrator's allow-snippet-annotations.
  assert.equal(headersOf(await p.request('serverannotssnippet2.foo.com', '/')), { status: 200, globalfoo: 'Foooo', foo: undefined, xpto: undefined });
});

test.run();
