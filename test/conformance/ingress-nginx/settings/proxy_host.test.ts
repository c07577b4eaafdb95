// ingress-nginx test/e2e/settings/proxy_host.go, ported: in a location, $proxy_host names the
// location's upstream (`<namespace>-<service>-<port>`), upstream-vhost or not, not the balancer
// NGINX passes to. Beyond the two Its (a configuration-snippet reads it, so the host is static):
// a dynamic host's request reads it through the http-snippet, where the Lua router serves it in
// the default server's `/` and behind a static wildcard server's hook; and the external-auth
// subrequest, which shares the protected location's variables, still sends its own URL's host
// (an IPv6 literal is sent as written) while the location keeps its $proxy_host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { protocolMatrix, type ProtocolClient } from '../../../support/protocols.js';
import type { Reply } from '../../../support/local-harness.js';

let fx: Fixture;
let auth: Server;
const its = ported(test, () => fx.ctl);
const both = protocolMatrix(test, () => fx.ctl).both;
const SNIPPET = { 'configuration-snippet': 'more_set_headers "Custom-Header: $proxy_host";' };
const upstreamName = () => `${fx.ns}-echo-80`;
const CONFIGMAP = {
  'allow-snippet-annotations': 'true',
  'annotations-risk-level': 'Critical',
  // Read at the http level: every response, dynamic hosts' included, says $proxy_host.
  'http-snippet': 'more_set_headers "X-Http-Proxy-Host: $proxy_host";',
};
const authPort = () => (auth.address() as AddressInfo).port;

/** An auth service that allows every request and says which Host it was asked with. */
async function startAuthServer(address: string): Promise<Server> {
  const server = createServer((req, res) => {
    res.setHeader('X-Auth-Host', req.headers.host ?? '');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return server;
}

test.before(async () => {
  auth = await startAuthServer('::1');
  fx = await startFixture('proxy-host', { configmap: CONFIGMAP });
  const authUrl = { 'auth-url': `http://[::1]:${authPort()}/check`, 'auth-response-headers': 'X-Auth-Host' };
  fx.apply('ingresses.json', [
    fx.single('snippet', 'proxy-host.test', SNIPPET),
    fx.single('vhost', 'proxy-host-vhost.test', { ...SNIPPET, 'upstream-vhost': 'different.host' }),
    fx.single('dynamic', 'dynamic.proxy-host.test'),
    fx.single('dynamic-vhost', 'dynamic-vhost.proxy-host.test', { 'upstream-vhost': 'different.host' }),
    // A static wildcard server (its snippet) asks the router about a.wild.proxy-host.test first.
    fx.single('wildcard', '*.wild.proxy-host.test', SNIPPET),
    fx.single('wild-dynamic', 'a.wild.proxy-host.test'),
    fx.single('auth', 'auth.proxy-host.test', { ...SNIPPET, ...authUrl }),
  ]);
  for (const host of ['proxy-host.test', 'proxy-host-vhost.test', 'dynamic.proxy-host.test', 'dynamic-vhost.proxy-host.test', 'a.wild.proxy-host.test', 'auth.proxy-host.test']) {
    await fx.ctl.until(host, '/', (r) => r.backend !== undefined, { what: `${host} served` });
  }
});
test.after(async () => {
  await fx.stop();
  await new Promise((resolve) => auth.close(resolve));
});

its.both('settings/proxy_host.go:36', async (p) => {
  const r = await p.request('proxy-host.test', '/');
  assert.is(r.status, 200);
  assert.is(r.headers['custom-header'], upstreamName());
});

its.both('settings/proxy_host.go:60', async (p) => {
  const r = await p.request('proxy-host-vhost.test', '/');
  assert.is(r.status, 200);
  assert.is(r.headers['custom-header'], upstreamName(), 'upstream-vhost changes the Host sent, not $proxy_host');
  assert.is(upstreamHeaders(r).host, 'different.host');
});

/** The http-snippet's header on a dynamic host's answer (the http level's more_set_headers reach the router's location). */
async function dynamicProxyHost(p: ProtocolClient, host: string): Promise<void> {
  const r = await p.request(host, '/');
  assert.is(r.status, 200);
  assert.is(r.backend !== undefined, true, 'served by the echo Service');
  assert.is(r.headers['x-http-proxy-host'], upstreamName(), `${host}: $proxy_host as a static location's`);
}

both('a dynamic host served in the default server\'s `/` reads $proxy_host as its upstream\'s name', async (p) => {
  await dynamicProxyHost(p, 'dynamic.proxy-host.test');
  await dynamicProxyHost(p, 'dynamic-vhost.proxy-host.test');
  const vhost = await p.request('dynamic-vhost.proxy-host.test', '/');
  assert.is(upstreamHeaders(vhost).host, 'different.host');
});

both('a dynamic host a static wildcard server hands to the router reads $proxy_host as its upstream\'s name', async (p) => {
  await dynamicProxyHost(p, 'a.wild.proxy-host.test');
  const other = await p.request('b.wild.proxy-host.test', '/');
  assert.is(other.headers['custom-header'], upstreamName(), 'the wildcard\'s own static location');
});

/** An answer through the auth service at [::1]: the Host it was asked with, and the location's $proxy_host after the subrequest. */
function throughAuth(r: Reply): void {
  assert.is(r.status, 200);
  assert.is(upstreamHeaders(r)['x-auth-host'], `[::1]:${authPort()}`, 'the Host the auth service was asked with');
  assert.is(r.headers['custom-header'], upstreamName(), 'the location\'s $proxy_host after the subrequest');
}

both('auth-url: the subrequest sends its URL\'s host, not the location\'s $proxy_host, and leaves that to the location', async (p) => {
  throughAuth(await p.request('auth.proxy-host.test', '/'));
});

// Last: the ConfigMap's global auth then guards every location of the file.
both('global-auth-url: the subrequest sends its URL\'s host, not the location\'s $proxy_host, and leaves that to the location', async (p) => {
  await fx.configure({ ...CONFIGMAP, 'global-auth-url': `http://[::1]:${authPort()}/global`, 'global-auth-response-headers': 'X-Auth-Host' });
  throughAuth(await p.until('proxy-host.test', '/', (r) => upstreamHeaders(r)['x-auth-host'] !== undefined, { what: 'the global auth applied' }));
});

test.run();
