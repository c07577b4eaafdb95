// ingress-nginx test/e2e/annotations/customhttperrors.go, ported. The e2e test reads the
// error_page lines and error locations NGINX is given; here the echo answers the status a path
// asks for (`/__status/<code>`), and who answers the client shows whether NGINX intercepted it:
// the built-in default backend (404, no echo) or the default-backend annotation's Service (its
// echo, told X-Code), else the echo's own status. Its steps change the Ingresses: each protocol
// has a host of its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { annotations, startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { ingress, service, slices, type Reply } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let fromAnnotation: EchoServer;
const its = ported(test, () => fx.ctl);

test.before(async () => {
  fx = await startFixture('custom-http-errors');
  fromAnnotation = await startEchoServer({ address: '127.0.9.70', name: 'from-annotation' });
  fx.apply('from-annotation.json', [service(fx.ns, 'from-annotation'), ...slices(fx.ns, 'from-annotation', [fromAnnotation])]);
});
test.after(async () => {
  await fx.stop();
  await fromAnnotation.close();
});

const passed = (code: number) => (r: Reply) => r.status === code && r.backend?.startsWith('echo-') === true;
const byBuiltIn = (r: Reply) => r.status === 404 && r.backend === undefined;

its.both('annotations/customhttperrors.go:41', async (p: ProtocolClient) => {
  const host = `customerrors-${p.tag}.foo.com`;
  const file = `${host}.json`;
  const main = (a: Record<string, string>) => ingress(fx.ns, host, { host, annotations: annotations(a), paths: [{ path: '/', service: 'echo' }] });
  const other = ingress(fx.ns, `${host}-else`, { host, annotations: annotations({ 'custom-http-errors': '404, 503' }), paths: [{ path: '/else', service: 'echo' }] });
  const until = (path: string, check: (r: Reply) => boolean, what: string) => p.until(host, path, check, { what });
  const expect = async (path: string, check: (r: Reply) => boolean, what: string) => {
    const r = await p.request(host, path);
    assert.ok(check(r), `${what}: ${r.status} from ${r.backend ?? 'no echo'}`);
  };
  // Each step first waits for what shows the change is live (a status that passes, or the
  // answering backend), so no check passes against the configuration before it.
  try {
    // 404 and 500 are intercepted (the built-in default backend answers), 503 passes.
    fx.apply(file, [main({ 'custom-http-errors': '404,500' })]);
    await until('/', passed(200), 'the host served');
    await expect('/__status/404', byBuiltIn, '404 intercepted');
    await expect('/__status/500', byBuiltIn, '500 intercepted');
    await expect('/__status/503', passed(503), '503 passed');

    // Only the value changes: now 503 is intercepted, 404 and 500 pass.
    fx.apply(file, [main({ 'custom-http-errors': '503' })]);
    await until('/__status/503', byBuiltIn, '503 intercepted after the change');
    await expect('/__status/404', passed(404), '404 passed after the change');
    await expect('/__status/500', passed(500), '500 passed after the change');

    // Another Ingress of the host lists 503 again (one error location per code and server in
    // ingress-nginx; the configuration stays valid), and 404 for its own path.
    fx.apply(file, [main({ 'custom-http-errors': '503' }), other]);
    // (Before the change, `/` answers /else and lets 404 pass.)
    await until('/else/__status/404', byBuiltIn, '/else: 404 intercepted');
    await expect('/else/__status/503', byBuiltIn, '/else: 503 intercepted');
    await expect('/__status/503', byBuiltIn, '/: 503 still intercepted');
    await expect('/__status/404', passed(404), '/: 404 still passed');

    // With a default-backend annotation, its Service answers the intercepted code, told X-Code.
    fx.apply(file, [main({ 'custom-http-errors': '503', 'default-backend': 'from-annotation' }), other]);
    const r = await until('/__status/503', (x) => x.backend === 'from-annotation', '503 answered by the annotation\'s backend');
    assert.is(upstreamHeaders(r)['x-code'], '503');
    assert.is(upstreamHeaders(r)['x-service-name'], 'echo');
  } finally {
    fx.ctl.remove(file);
  }
});

test.run();
