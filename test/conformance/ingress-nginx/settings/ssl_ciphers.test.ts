// ingress-nginx test/e2e/settings/ssl_ciphers.go, ported: an ssl-ciphers list in OpenSSL's
// syntax, with the old names it still parses (RC4, SSLv2, EXP), is NGINX's ssl_ciphers as
// written, and HTTPS keeps working with it (TLSv1.2 negotiates a suite of the list; TLSv1.3's
// suites are set apart). The list is in the running configuration as the e2e test reads it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'ssl-ciphers.test';
const CIPHERS = 'ALL:!aNULL:!EXPORT56:RC4+RSA:+HIGH:+MEDIUM:+LOW:+SSLv2:+EXP';

test.before(async () => {
  fx = await startFixture('ssl-ciphers', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('ssl-ciphers', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/ssl_ciphers.go:31', async (p) => {
  await fx.configure({ 'ssl-ciphers': CIPHERS });
  assert.ok(fx.warnings().every((w) => !w.includes('ssl-ciphers')), fx.warnings().join('\n'));
  // ingress-nginx quotes the list ('…'); NGINX reads it the same without quotes, as ours writes it.
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  assert.ok(conf.includes(`ssl_ciphers '${CIPHERS}';`) || conf.includes(`ssl_ciphers ${CIPHERS};`), 'the list as written');
  const r = await p.request(HOST, '/', { https: true });
  assert.is(r.status, 200);
});

test.run();
