// ingress-nginx test/e2e/settings/badannotationvalues.go, ported: with the default
// annotation-value-word-blocklist (empty) a configuration-snippet naming `bla_by_lua` in a comment
// is served as written. The three Its where a blocklisted word drops the whole Ingress are set
// aside in dispositions.ts: ingress-rx rejects the annotation, not the Ingress (docs/differences.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'custom-allowed-value-test';

test.before(async () => {
  fx = await startFixture('bad-annotation', { configmap: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } });
  await fx.applyAndWait('ingress.json', [fx.single('allowed', HOST, { 'configuration-snippet': '\n# bla_by_lua' })], HOST);
});
test.after(() => fx.stop());

its.both('settings/badannotationvalues.go:105', async (p) => {
  const r = await p.request(HOST, '/');
  assert.is(r.status, 200);
  assert.ok(r.backend !== undefined, 'the echo Service answers');
  // A comment has no effect a request can see: the running configuration shows the snippet kept.
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.match(conf, '# bla_by_lua');
  assert.equal(fx.warnings().filter((w) => w.includes('configuration-snippet')), [], 'no warning about the snippet');
});

test.run();
