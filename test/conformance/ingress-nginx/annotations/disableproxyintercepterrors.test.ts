// ingress-nginx test/e2e/annotations/disableproxyintercepterrors.go, ported: an echo named
// "httpbun" behind the Ingress, the echo Service as its default-backend, custom-http-errors 404.
// With disable-proxy-intercept-errors the upstream's own 404 reaches the client; without it the
// default backend answers, told X-Code and the rest. The It changes the Ingress: each protocol
// has a host of its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { service, slices } from '../../../support/local-harness.js';

let fx: Fixture;
let httpbun: EchoServer;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('disable-proxy-intercept-errors');
  httpbun = await startEchoServer({ address: '127.0.9.80', name: 'httpbun' });
  fx.apply('httpbun.json', [service(fx.ns, 'httpbun'), ...slices(fx.ns, 'httpbun', [httpbun])]);
});
test.after(async () => {
  await fx.stop();
  await httpbun.close();
});

its.both('annotations/disableproxyintercepterrors.go:39', async (p) => {
  const host = `pie-${p.tag}.foo.com`;
  const ing = (disable: string) => fx.single(host, host, { 'custom-http-errors': '404', 'disable-proxy-intercept-errors': disable, 'default-backend': 'echo' }, { svc: 'httpbun' });
  const headers = { 'x-request-id': 'proxy_intercept_errors' };
  const file = `${host}.json`;
  try {
    fx.apply(file, [ing('true')]);
    const own = await p.until(host, '/__status/404', (r) => r.backend === 'httpbun', { headers, what: 'the upstream\'s 404 passed' });
    assert.is(own.status, 404);

    fx.apply(file, [ing('false')]);
    const r = await p.until(host, '/__status/404', (x) => x.backend?.startsWith('echo-') === true, { headers, what: 'the 404 intercepted' });
    assert.is(r.status, 200);
    const h = upstreamHeaders(r);
    assert.equal([h['x-code'], h['x-ingress-name'], h['x-service-name'], h['x-request-id']], ['404', host, 'httpbun', 'proxy_intercept_errors']);
  } finally {
    fx.ctl.remove(file);
  }
});

test.run();
