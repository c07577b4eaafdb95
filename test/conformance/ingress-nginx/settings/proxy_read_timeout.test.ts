// ingress-nginx test/e2e/settings/proxy_read_timeout.go, ported: proxy-read-timeout bounds how
// long NGINX waits for the upstream's answer (504 past it); a value that is not a number of
// seconds is refused with a warning naming the key, and the default (60s) stays. The upstream
// answers late through the echo's /__delay/<ms>; one second stands in for the e2e test's 20.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'proxy-read-timeout.test';
const LATE = '/__delay/2500';

test.before(async () => {
  fx = await startFixture('proxy-read-timeout', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('proxy-read-timeout', HOST)], HOST);
});
test.after(() => fx.stop());

its.both('settings/proxy_read_timeout.go:37', async (p) => {
  await fx.configure({ 'proxy-read-timeout': '1' });
  assert.is((await p.request(HOST, '/')).status, 200, 'an upstream that answers at once');
  assert.is((await p.request(HOST, LATE)).status, 504, 'an upstream that answers after 2.5s, past the 1s read timeout');
});

its.both('settings/proxy_read_timeout.go:53', async (p) => {
  await fx.configure({ 'proxy-read-timeout': '1k' });
  await fx.warned((w) => w.includes(`data["proxy-read-timeout"]: "1k" is not an integer; default "60" kept`), 'the refused value is named, and the default kept');
  assert.not.match((await fx.ctl.control('/nginx.conf')).body, /proxy_read_timeout 1ks?;/);
  const r = await p.request(HOST, LATE);
  assert.is(r.status, 200, 'the default 60s read timeout waits for an answer after 2.5s');
});

test.run();
