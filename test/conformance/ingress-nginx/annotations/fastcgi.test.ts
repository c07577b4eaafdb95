// ingress-nginx test/e2e/annotations/fastcgi.go, ported: each It a host of its own on one
// controller, in front of a FastCGI responder (test/support/protocol-servers.ts) that answers with
// the parameters NGINX sent. The e2e tests grep nginx.conf for fastcgi_pass, fastcgi_index and
// fastcgi_param; the port reads those parameters: the standard set of fastcgi_params, the script
// name with the index, the ConfigMap's parameters.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { service, slices } from '../../../support/local-harness.js';
import { startFastCgiServer, type ProtocolServer } from '../../../support/protocol-servers.js';
import { configMap, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let fcgi: ProtocolServer;
const its = ported(test, () => fx.ctl);
const NS = 'fastcgi';
const SVC = 'fastcgi-helloserver';
const HOSTS: Record<string, Record<string, string>> = {
  fastcgi: { 'backend-protocol': 'FCGI' },
  'fastcgi-index': { 'backend-protocol': 'FCGI', 'fastcgi-index': 'index.php' },
  'fastcgi-params-configmap': { 'backend-protocol': 'FCGI', 'fastcgi-params-configmap': 'fastcgi-configmap' },
  'fastcgi-helloserver': { 'backend-protocol': 'FCGI' },
};

test.before(async () => {
  fcgi = await startFastCgiServer({ address: '127.0.9.60', name: 'fastcgi-helloserver' });
  fx = await startFixture(NS);
  fx.apply('objects.json', [
    service(NS, SVC, { port: 9000 }), ...slices(NS, SVC, [fcgi]),
    configMap(NS, 'fastcgi-configmap', { SCRIPT_FILENAME: '$fastcgi_script_name', REDIRECT_STATUS: '200' }),
    ...Object.entries(HOSTS).map(([host, a]) => fx.single(host, host, a, { path: '/hello', svc: SVC, port: 9000 })),
  ]);
  await Promise.all(Object.keys(HOSTS).map((h) => fx.ctl.until(h, '/hello', (r) => r.json?.name === 'fastcgi-helloserver', { what: `${h} served` })));
});
test.after(async () => {
  await fx.stop();
  await fcgi.close();
});

/** The FastCGI parameters NGINX sent for `path` on `host`. */
async function params(p: ProtocolClient, host: string, path = '/hello'): Promise<Record<string, string>> {
  const r = await p.request(host, path);
  assert.is(r.status, 200);
  assert.is(r.json?.name, 'fastcgi-helloserver');
  return r.json?.params as Record<string, string>;
}

its.both('annotations/fastcgi.go:37', async (p) => {
  const got = await params(p, 'fastcgi', '/hello?x=1');
  // fastcgi_params is included: the request's parameters as a FastCGI application reads them.
  assert.is(got.REQUEST_METHOD, 'GET');
  assert.is(got.SCRIPT_NAME, '/hello');
  assert.is(got.REQUEST_URI, '/hello?x=1');
  assert.is(got.QUERY_STRING, 'x=1');
  assert.is(got.SERVER_PROTOCOL, p.protocol === 'HTTP/2' ? 'HTTP/2.0' : 'HTTP/1.1');
});

its.both('annotations/fastcgi.go:54', async (p) => {
  // fastcgi_index: a URI ending in `/` names the index script.
  assert.is((await params(p, 'fastcgi-index', '/hello/')).SCRIPT_NAME, '/hello/index.php');
  assert.is((await params(p, 'fastcgi', '/hello/')).SCRIPT_NAME, '/hello/');
});

its.both('annotations/fastcgi.go:71', async (p) => {
  const got = await params(p, 'fastcgi-params-configmap');
  assert.is(got.SCRIPT_FILENAME, '/hello');
  assert.is(got.REDIRECT_STATUS, '200');
  // Debian's fastcgi_params has REDIRECT_STATUS already, and no SCRIPT_FILENAME (fastcgi.conf's).
  assert.is((await params(p, 'fastcgi')).SCRIPT_FILENAME, undefined);
});

its.both('annotations/fastcgi.go:102', async (p) => {
  const r = await p.request('fastcgi-helloserver', '/hello');
  assert.is(r.status, 200);
  assert.is(r.json?.name, 'fastcgi-helloserver');
});

test.run();
