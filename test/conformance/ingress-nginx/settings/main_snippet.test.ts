// ingress-nginx test/e2e/settings/main_snippet.go, ported: the ConfigMap's main-snippet lands in
// NGINX's main context. The e2e snippet is a comment, which has no effect a request can show, so
// this reads the running nginx.conf: the comment before the events block (the main context).
// ingress-rx applies it only under annotations-risk-level Critical and names it otherwise
// (docs/differences.md, the operator's snippets).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const COMMENT = '# main snippet';

test.before(async () => {
  fx = await startFixture('main-snippet', { configmap: {} });
});
test.after(() => fx.stop());

/** The running nginx.conf up to its events block: the main context's directives. */
const mainContext = async () => {
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  return conf.slice(0, conf.search(/^events \{/m));
};

its.noClient('settings/main_snippet.go:31', 'the snippet is a comment: only the running nginx.conf shows it', async () => {
  await fx.configure({ 'main-snippet': COMMENT });
  assert.not.ok((await mainContext()).includes(COMMENT), 'left out below Critical');
  await fx.warned((w) => w.includes('main-snippet'), 'the ignored snippet is named');
  await fx.configure({ 'main-snippet': COMMENT, 'annotations-risk-level': 'Critical' });
  assert.ok((await mainContext()).includes(COMMENT));
});

test.run();
