// Gateway API conformance, GATEWAY-HTTP extended features about listener ports, ported to
// `ingress-rx controller --enable-gateway-api` against the in-process fake API server with real
// NGINX, in our own manifests (docs/gateway-api.md, "Listener ports"): listeners on 8080 and
// 8090 (mapped to free loopback ports with --gateway-listener-ports), routes attached by
// parentRef port and sectionName, redirects whose port defaults to the listener's, listener
// isolation by hostname, and listener ports that cannot be served. A request on one port is
// routed only among the routes of that port's listeners. Listeners other than 80 and 443 are
// plain HTTP, which NGINX speaks as HTTP/1.1: their legs are HTTP/1.1 only (NGINX 1.22's `listen
// … http2` on a plain port speaks prior-knowledge h2c only and would refuse HTTP/1.1 there); ports
// 80 and 443 run over both protocols.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { generateCertificate } from '../../support/lua-nginx.js';
import { service, slices, tlsSecret, type CliProcess, type Reply } from '../../support/local-harness.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { protocolMatrix, protocolClient, type ProtocolClient } from '../../support/protocols.js';
import { GATEWAY_V1, startGatewayController, stopGatewayController } from '../../support/gateway-local.js';

const NS = 'ports-infra';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-ports-'));
/** Listener port → the loopback port NGINX serves it on. */
const local: Record<number, number> = {};
let ca = '';

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; message?: string };
type ListenerStatus = { name: string; attachedRoutes: number; supportedKinds: Array<{ kind: string }>; conditions: Cond[] };

const ALL = { namespaces: { from: 'All' } };
const listener = (name: string, port: number, extra: Obj = {}) => ({ name, port, protocol: 'HTTP', allowedRoutes: ALL, ...extra });
const gateway = (name: string, listeners: Obj[]): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: NS }, spec: { gatewayClassName: 'ports', listeners },
});
const route = (name: string, parentRefs: Obj[], rules: Obj[], hostnames?: string[]): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: NS }, spec: { parentRefs, ...(hostnames ? { hostnames } : {}), rules },
});
const to = (backend: string, path?: string) => ({ ...(path ? { matches: [{ path: { type: 'PathPrefix', value: path } }] } : {}), backendRefs: [{ name: backend, port: 80 }] });
const redirect = (path: string, requestRedirect: Obj) => ({ matches: [{ path: { type: 'PathPrefix', value: path } }], filters: [{ type: 'RequestRedirect', requestRedirect }] });

const gwStatus = (name: string) => fake.get(GATEWAY_V1, 'Gateway', name, NS)?.status as { conditions?: Cond[]; listeners?: ListenerStatus[] } | undefined;
const listenerOf = (gateway: string, name: string) => gwStatus(gateway)?.listeners?.find((l) => l.name === name);
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const cond = (cs: Cond[] | undefined, type: string) => brief(cs).find((c) => c.startsWith(`${type}=`));
const parents = (name: string) => ((fake.get(GATEWAY_V1, 'HTTPRoute', name, NS)?.status as { parents?: Array<{ conditions: Cond[] }> } | undefined)?.parents ?? []);

// HTTPRouteRedirectPortAndScheme: one route per listener port; the port-80 and port-8080 routes
// share a host (each port its own), the 443 one has its own (80 and 443 share hosts).
const REDIRECTS_80 = [
  redirect('/scheme-nil-and-port-nil', { hostname: 'example.org' }),
  redirect('/scheme-nil-and-port-80', { hostname: 'example.org', port: 80 }),
  redirect('/scheme-nil-and-port-8080', { hostname: 'example.org', port: 8080 }),
  redirect('/scheme-https-and-port-nil', { hostname: 'example.org', scheme: 'https' }),
  redirect('/scheme-https-and-port-443', { hostname: 'example.org', scheme: 'https', port: 443 }),
  redirect('/scheme-https-and-port-8443', { hostname: 'example.org', scheme: 'https', port: 8443 }),
];
const REDIRECTS_8080 = [
  redirect('/scheme-nil-and-port-nil', { hostname: 'example.org' }),
  redirect('/scheme-nil-and-port-80', { hostname: 'example.org', port: 80 }),
  redirect('/scheme-https-and-port-nil', { hostname: 'example.org', scheme: 'https' }),
];
const REDIRECTS_443 = [
  redirect('/scheme-nil-and-port-nil', { hostname: 'example.org' }),
  redirect('/scheme-nil-and-port-443', { hostname: 'example.org', port: 443 }),
  redirect('/scheme-nil-and-port-8443', { hostname: 'example.org', port: 8443 }),
  redirect('/scheme-http-and-port-nil', { hostname: 'example.org', scheme: 'http' }),
  redirect('/scheme-http-and-port-80', { hostname: 'example.org', scheme: 'http', port: 80 }),
  redirect('/scheme-http-and-port-8080', { hostname: 'example.org', scheme: 'http', port: 8080 }),
];

/** GatewayHTTPListenerIsolation's listeners under `domain` (example.com, example.net). */
const isolationListeners = (tld: string) => [
  listener('empty-hostname', 80),
  listener('wildcard-example', 80, { hostname: `*.example.${tld}` }),
  listener('wildcard-foo-example', 80, { hostname: `*.foo.example.${tld}` }),
  listener('abc-foo-example', 80, { hostname: `abc.foo.example.${tld}` }),
];
const SECTIONS = ['empty-hostname', 'wildcard-example', 'wildcard-foo-example', 'abc-foo-example'];

test.before(async () => {
  for (const [i, name] of ['v1', 'v2', 'v3'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const [p8080, p8090] = await freePorts(2);
  local[8080] = p8080!;
  local[8090] = p8090!;
  const cert = await generateCertificate(join(tmp, 'certs'), 'redirect443.ports');
  ca = readFileSync(cert.certPath, 'utf8');
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'ports' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    ...['v1', 'v2', 'v3'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo[n]!])]),
    tlsSecret(NS, 'redirect443', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
    // GatewayWithAttachedRoutesWithPort8080
    gateway('two-listeners', [listener('http-unattached', 8080, { allowedRoutes: { ...ALL, kinds: [{ kind: 'HTTPRoute' }] } }), listener('http', 80, { allowedRoutes: { ...ALL, kinds: [{ kind: 'HTTPRoute' }] } })]),
    route('attached-to-80', [{ name: 'two-listeners', sectionName: 'http' }], [to('v1')]),
    // HTTPRouteInvalidParentRefSectionNameNotMatchingPort, HTTPRouteInvalidParentRefNotMatchingListenerPort
    gateway('section-port', [listener('http', 80, { allowedRoutes: { ...ALL, kinds: [{ kind: 'HTTPRoute' }] } })]),
    route('section-not-matching-port', [{ name: 'section-port', namespace: NS, sectionName: 'http', port: 81 }], [to('v1')], ['section-port.ports']),
    gateway('destination-port', [listener('http', 80)]),
    route('not-matching-listener-port', [{ name: 'destination-port', namespace: NS, port: 81 }], [to('v1')], ['destination-port.ports']),
    // HTTPRouteListenerPortMatching
    gateway('port-matching', [
      listener('listener-1', 80, { hostname: 'foo.ports' }),
      listener('listener-2', 8080, { hostname: 'foo.ports' }),
      listener('listener-3', 8080, { hostname: 'bar.ports' }),
      listener('listener-4', 8090, { hostname: 'foo.ports' }),
      listener('listener-5', 8090, { hostname: 'bar.ports' }),
    ]),
    route('backend-v1', [{ name: 'port-matching', port: 80 }], [to('v1')]),
    route('backend-v2', [{ name: 'port-matching', port: 8080 }], [to('v2')]),
    route('backend-v3', [{ name: 'port-matching', port: 8090, sectionName: 'listener-4' }], [to('v3')]),
    // HTTPRouteRedirectPortAndScheme
    gateway('redirect-80', [listener('http', 80)]),
    gateway('redirect-8080', [listener('http', 8080)]),
    gateway('redirect-443', [{ name: 'https', port: 443, protocol: 'HTTPS', allowedRoutes: ALL, tls: { certificateRefs: [{ name: 'redirect443' }] } }]),
    route('redirect-on-80', [{ name: 'redirect-80' }], REDIRECTS_80, ['redirect.ports']),
    route('redirect-on-8080', [{ name: 'redirect-8080' }], REDIRECTS_8080, ['redirect.ports']),
    route('redirect-on-443', [{ name: 'redirect-443' }], REDIRECTS_443, ['redirect443.ports']),
    // GatewayHTTPListenerIsolation: hostnames only in listeners (the empty-hostname listener's
    // route names bar.com: every host is not served yet), then in listeners and routes.
    gateway('isolation', isolationListeners('com')),
    ...SECTIONS.map((s) => route(`isolation-${s}`, [{ name: 'isolation', sectionName: s }], [to('v1', `/${s}`)], s === 'empty-hostname' ? ['bar.com'] : undefined)),
    gateway('isolation-intersection', isolationListeners('net')),
    ...SECTIONS.map((s) => route(`intersection-${s}`, [{ name: 'isolation-intersection', sectionName: s }], [to('v2', `/${s}`)],
      ['bar.net', '*.example.net', '*.foo.example.net', 'abc.foo.example.net'])),
    // Attacker: backends at the loopback ports NGINX serves listeners 8080 and 8090 on (loopback
    // endpoints are allowed here, as in local mode), by EndpointSlice and by ExternalName.
    gateway('sneak', [listener('http', 80)]),
    service(NS, 'sneak-endpoint'), ...slices(NS, 'sneak-endpoint', [{ address: '127.0.0.1', port: p8080! }]),
    service(NS, 'sneak-name', { type: 'ExternalName', externalName: 'localhost', port: p8090! }),
    route('sneak', [{ name: 'sneak' }], [to('sneak-endpoint', '/endpoint'), { matches: [{ path: { type: 'PathPrefix', value: '/name' } }], backendRefs: [{ name: 'sneak-name', port: p8090 }] }], ['sneak.ports']),
  ];
  ({ fake, ctl } = await startGatewayController(tmp, objects, [`--gateway-listener-ports=8080=${local[8080]},8090=${local[8090]}`]));
  // Listeners the controller cannot serve, made once its own ports are known.
  fake.create(gateway('unavailable', [
    listener('own-port', ctl.ports.healthz, { hostname: 'own.ports' }),
    listener('http-on-443', 443),
    { name: 'https-on-80', port: 80, protocol: 'HTTPS', allowedRoutes: ALL, tls: { certificateRefs: [{ name: 'redirect443' }] } },
    listener('fine', 8080, { hostname: 'fine.ports' }),
  ]));
  fake.create(route('on-own-port', [{ name: 'unavailable', sectionName: 'own-port' }], [to('v1')]));
  await waitFor(() => listenerOf('unavailable', 'fine') !== undefined && parents('intersection-abc-foo-example').length > 0,
    { what: 'the status written', timeoutMs: 30_000 });
});

test.after(() => stopGatewayController(ctl, fake, echo, tmp));

/** An HTTP/1.1 request to listener port `port`'s server. */
const onPort = (port: number, host: string, path: string) => ctl.request(host, path, { port: local[port]! });
const backendOf = (r: Reply) => (r.status === 200 ? r.backend : `status ${r.status}`);

test('GatewayWithAttachedRoutesWithPort8080 › the 8080 listener is accepted with no route, the 80 one counts the route naming it', async () => {
  await waitFor(() => listenerOf('two-listeners', 'http')?.attachedRoutes === 1, { what: 'the attached route counted', timeoutMs: 20_000 });
  for (const [name, routes] of [['http-unattached', 0], ['http', 1]] as const) {
    const l = listenerOf('two-listeners', name)!;
    assert.equal([l.attachedRoutes, l.supportedKinds.map((k) => k.kind), cond(l.conditions, 'Accepted'), cond(l.conditions, 'ResolvedRefs'), cond(l.conditions, 'Programmed')],
      [routes, ['HTTPRoute'], 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed'], name);
  }
});

/** A parentRef whose port no listener of the Gateway has: not accepted, nothing attached. */
async function refusedByPort(routeName: string, gateway: string): Promise<void> {
  await waitFor(() => parents(routeName).length > 0, { what: `the status of ${routeName}`, timeoutMs: 20_000 });
  const ps = parents(routeName);
  assert.equal(ps.map((p) => cond(p.conditions, 'Accepted')), ['Accepted=False/NoMatchingParent']);
  assert.equal(ps.map((p) => cond(p.conditions, 'ResolvedRefs')), ['ResolvedRefs=True/ResolvedRefs']);
  assert.match(ps[0]!.conditions.find((c) => c.type === 'Accepted')!.message ?? '', /on port 81/);
  assert.equal((gwStatus(gateway)?.listeners ?? []).map((l) => l.attachedRoutes), [0]);
}

/** The refused route's host answers 404 and its backend gets nothing. */
async function notServed(p: ProtocolClient, host: string): Promise<void> {
  const before = echo.v1!.hits();
  assert.is((await p.request(host, '/')).status, 404);
  assert.is(echo.v1!.hits(), before);
}

test('HTTPRouteInvalidParentRefSectionNameNotMatchingPort › sectionName http with port 81: Accepted=False/NoMatchingParent, no route attached', () => refusedByPort('section-not-matching-port', 'section-port'));
over.both('HTTPRouteInvalidParentRefSectionNameNotMatchingPort › the route\'s host is not served', (p) => notServed(p, 'section-port.ports'));
test('HTTPRouteInvalidParentRefNotMatchingListenerPort › a parentRef port no listener has: Accepted=False/NoMatchingParent, no route attached', () => refusedByPort('not-matching-listener-port', 'destination-port'));
over.both('HTTPRouteInvalidParentRefNotMatchingListenerPort › the route\'s host is not served', (p) => notServed(p, 'destination-port.ports'));

over.both('HTTPRouteListenerPortMatching › port 80: only the route attached by port 80 answers', async (p) => {
  assert.is(backendOf(await p.until('foo.ports', '/', (r) => r.status === 200, { what: 'foo.ports served' })), 'v1');
  // bar.ports has listeners on 8080 and 8090 only.
  assert.is((await p.request('bar.ports', '/')).status, 404);
});

over.http1Only('HTTPRouteListenerPortMatching › ports 8080 and 8090: each port routes among its own listeners\' routes', 'listeners other than 80 and 443 are plain HTTP', async () => {
  await waitFor(async () => backendOf(await onPort(8080, 'foo.ports', '/')) === 'v2', { what: 'port 8080 served' });
  assert.is(backendOf(await onPort(8080, 'bar.ports', '/')), 'v2', 'a route attached by port takes every listener of the port');
  assert.is(backendOf(await onPort(8090, 'foo.ports', '/')), 'v3');
  assert.is((await onPort(8090, 'bar.ports', '/')).status, 404, 'listener-5 has no route: sectionName listener-4 narrowed backend-v3');
});

over.http1Only('HTTPRouteListenerPortMatching › attacker: a Host naming another port reaches only the routes of the port the request came to', 'listeners other than 80 and 443 are plain HTTP', async () => {
  await waitFor(async () => backendOf(await onPort(8080, 'foo.ports', '/')) === 'v2', { what: 'port 8080 served' });
  assert.is(backendOf(await ctl.request('foo.ports:8080', '/')), 'v1', 'port 80 with Host foo.ports:8080');
  assert.is((await ctl.request('bar.ports:8080', '/')).status, 404, 'port 80 with Host bar.ports:8080');
  assert.is(backendOf(await onPort(8080, 'foo.ports:80', '/')), 'v2', 'port 8080 with Host foo.ports:80');
  assert.is((await onPort(8090, 'bar.ports:8080', '/')).status, 404, 'port 8090 with Host bar.ports:8080');
  // A host of no listener of the port, and no Host at all, meet the port's 404 rather than another server.
  assert.is((await onPort(8080, 'redirect443.ports', '/')).status, 404);
  assert.is((await onPort(8080, '127.0.0.1', '/')).status, 404);
});

/** The Location of a redirect as `scheme://host[:port]` (the path is the request's). */
function target(r: Reply): string {
  assert.is(r.status, 302, `a 302 (got ${r.status})`);
  const url = new URL(String(r.headers.location));
  return `${url.protocol}//${url.host}`;
}

over.both('HTTPRouteRedirectPortAndScheme › a listener on port 80: no scheme means the request\'s, a scheme\'s default port is not written', async (p) => {
  const own = p.scheme; // the HTTP/2 leg comes over --https-port, which serves port 80's hosts too
  await p.until('redirect.ports', '/scheme-nil-and-port-nil', (r) => r.status === 302, { what: 'redirect.ports served' });
  const expected: Record<string, string> = {
    '/scheme-nil-and-port-nil': `${own}://example.org`,
    '/scheme-nil-and-port-80': own === 'http' ? 'http://example.org' : 'https://example.org:80',
    '/scheme-nil-and-port-8080': `${own}://example.org:8080`,
    '/scheme-https-and-port-nil': 'https://example.org',
    '/scheme-https-and-port-443': 'https://example.org',
    '/scheme-https-and-port-8443': 'https://example.org:8443',
  };
  for (const [path, location] of Object.entries(expected)) assert.is(target(await p.request('redirect.ports', path)), location, path);
});

over.http1Only('HTTPRouteRedirectPortAndScheme › a listener on port 8080: no scheme and no port redirects to the listener\'s port 8080', 'listeners other than 80 and 443 are plain HTTP', async () => {
  await waitFor(async () => (await onPort(8080, 'redirect.ports', '/scheme-nil-and-port-nil')).status === 302, { what: 'port 8080 served' });
  const expected: Record<string, string> = {
    '/scheme-nil-and-port-nil': 'http://example.org:8080',
    '/scheme-nil-and-port-80': 'http://example.org',
    '/scheme-https-and-port-nil': 'https://example.org',
  };
  for (const [path, location] of Object.entries(expected)) assert.is(target(await onPort(8080, 'redirect.ports', path)), location, path);
  // Port 8080's route has no /scheme-https-and-port-8443 (port 80's has): 404 here.
  assert.is((await onPort(8080, 'redirect.ports', '/scheme-https-and-port-8443')).status, 404);
});

over.both('HTTPRouteRedirectPortAndScheme › a listener on port 443 (verified against the listener\'s certificate)', async (p) => {
  const tls = { https: true, ca };
  await p.until('redirect443.ports', '/scheme-nil-and-port-nil', (r) => r.status === 302, { ...tls, what: 'redirect443.ports served' });
  const expected: Record<string, string> = {
    '/scheme-nil-and-port-nil': 'https://example.org',
    '/scheme-nil-and-port-443': 'https://example.org',
    '/scheme-nil-and-port-8443': 'https://example.org:8443',
    '/scheme-http-and-port-nil': 'http://example.org',
    '/scheme-http-and-port-80': 'http://example.org',
    '/scheme-http-and-port-8080': 'http://example.org:8080',
  };
  for (const [path, location] of Object.entries(expected)) assert.is(target(await p.request('redirect443.ports', path, tls)), location, path);
});

/** GatewayHTTPListenerIsolation's table: host and path → the backend, or 404. */
function isolationCases(tld: string, backend: string): Array<[string, string, string]> {
  const hosts = [tld === 'com' ? 'bar.com' : 'bar.net', `bar.example.${tld}`, `bar.foo.example.${tld}`, `abc.foo.example.${tld}`];
  const out: Array<[string, string, string]> = [];
  for (const [i, host] of hosts.entries()) {
    for (const [j, section] of SECTIONS.entries()) out.push([host, `/${section}`, i === j ? backend : 'status 404']);
  }
  return out;
}

for (const [name, tld, backend] of [['hostnames only in listeners', 'com', 'v1'], ['hostnames in listeners and routes', 'net', 'v2']] as const) {
  over.both(`GatewayHTTPListenerIsolation › ${name}: a request goes to the most specific listener and only its routes`, async (p: ProtocolClient) => {
    await p.until(`abc.foo.example.${tld}`, '/abc-foo-example', (r) => r.status === 200, { what: 'the isolation routes served' });
    const got: string[] = [];
    const want: string[] = [];
    for (const [host, path, expected] of isolationCases(tld, backend)) {
      got.push(`${host}${path} → ${backendOf(await p.request(host, path))}`);
      want.push(`${host}${path} → ${expected}`);
    }
    assert.equal(got, want);
  });
}

test('GatewayWithAttachedRoutesWithPort8080 › careless: a listener on the controller\'s own port, HTTP on 443, HTTPS on 80: named and not served; the Gateway\'s other listener is', async () => {
  await waitFor(() => parents('on-own-port').length > 0, { what: 'the status of on-own-port', timeoutMs: 20_000 });
  const accepted = (n: string) => listenerOf('unavailable', n)!.conditions.find((c) => c.type === 'Accepted')!;
  for (const [n, message] of [['own-port', /which the controller uses itself \(--healthz-port\)/], ['http-on-443', /serves TLS/], ['https-on-80', /serves plain HTTP \(--http-port\): an HTTPS listener cannot use it/]] as const) {
    assert.is(`${accepted(n).status}/${accepted(n).reason}`, 'False/PortUnavailable', n);
    assert.match(accepted(n).message ?? '', message, n);
  }
  assert.is(`${accepted('fine').status}/${accepted('fine').reason}`, 'True/Accepted');
  assert.is(cond(gwStatus('unavailable')?.conditions, 'Accepted'), 'Accepted=True/ListenersNotValid');
  assert.equal(parents('on-own-port').map((p) => cond(p.conditions, 'Accepted')), ['Accepted=False/NoMatchingParent']);
  assert.match(ctl.output(), /listener ports-infra\/unavailable\/own-port: port \d+ would be served on \d+, which the controller uses itself/);
});

over.http1Only('GatewayWithAttachedRoutesWithPort8080 › attacker: the refused listener\'s route is not served: the controller keeps its own port', 'listeners other than 80 and 443 are plain HTTP', async () => {
  const r = await ctl.request('own.ports', '/healthz', { port: ctl.ports.healthz });
  assert.is(r.status, 200);
  assert.is(r.backend, undefined, 'the controller\'s health endpoint, not a backend');
});

over.both('GatewayWithAttachedRoutesWithPort8080 › attacker: a backend at the loopback port NGINX serves listener 8080 or 8090 on (EndpointSlice, ExternalName localhost) is refused', async (p) => {
  for (const [path, port] of [['/endpoint', local[8080]], ['/name', local[8090]]] as const) {
    // Dialled, the listener's server would answer (404: it has no route for sneak.ports).
    const r = await p.until('sneak.ports', path, (x) => x.status === 503, { what: `${path} (port ${port}) answered 503, not by the listener's server` });
    assert.is(r.backend, undefined);
  }
});

over.http1Only('HTTPRouteListenerPortMatching › a route added to port 8080 is served without a reload; it never answers on port 80', 'listeners other than 80 and 443 are plain HTTP', async () => {
  const reloads = () => ctl.metric('nginx_ingress_controller_success');
  await waitFor(async () => backendOf(await onPort(8080, 'foo.ports', '/')) === 'v2', { what: 'port 8080 served' });
  const before = await reloads();
  fake.create(route('late-8080', [{ name: 'port-matching', sectionName: 'listener-2' }], [to('v3', '/late')]));
  await waitFor(async () => backendOf(await onPort(8080, 'foo.ports', '/late')) === 'v3', { what: 'the new route on 8080' });
  assert.is(backendOf(await ctl.request('foo.ports', '/late')), 'v1', 'port 80 keeps its own route for /late');
  assert.is(await reloads(), before, 'no reload');
});

test.run();
