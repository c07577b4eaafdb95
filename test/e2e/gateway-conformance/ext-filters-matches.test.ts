// Gateway API conformance, GATEWAY-HTTP extended features that the first slice serves, ported to
// local mode with real NGINX (docs/gateway-api.md): redirects with port, scheme and path,
// URLRewrite of host and path, ResponseHeaderModifier, query parameter and method matching. One
// route and one host per conformance test; our own manifests, the scenarios' expectations. Each
// test is named `<conformance ShortName> › …` and runs over HTTP/1.1 and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../../support/echo-server.js';
import { GATEWAY_V1 as V1, prefixRoute, startGatewayLocal, stopGatewayLocal } from '../../support/gateway-local.js';
import type { LocalController, Reply } from '../../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};

const redirect = (requestRedirect: object) => [{ type: 'RequestRedirect', requestRedirect }];
const rewrite = (urlRewrite: object) => ({ type: 'URLRewrite', urlRewrite });
const prefix = (replacePrefixMatch: string) => ({ type: 'ReplacePrefixMatch', replacePrefixMatch });
const full = (replaceFullPath: string) => ({ type: 'ReplaceFullPath', replaceFullPath });
const HEADER_EDITS = { type: 'RequestHeaderModifier', requestHeaderModifier: {
  set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }],
  add: [{ name: 'X-Header-Add', value: 'header-val-1' }, { name: 'X-Header-Add-Append', value: 'header-val-2' }],
  remove: ['X-Header-Remove'],
} };
const eq = (name: string, value: string) => ({ name, value });

const ROUTES = [
  prefixRoute('redirect-port', 'redirect-port.test', [
    { path: '/port', filters: redirect({ port: 8083 }) },
    { path: '/port-and-host', filters: redirect({ hostname: 'example.org', port: 8083 }) },
    { path: '/port-and-status', filters: redirect({ port: 8083, statusCode: 301 }) },
    { path: '/port-and-host-and-status', filters: redirect({ port: 8083, hostname: 'example.org', statusCode: 302 }) },
  ]),
  prefixRoute('redirect-scheme', 'redirect-scheme.test', [
    { path: '/scheme', filters: redirect({ scheme: 'https' }) },
    { path: '/scheme-and-host', filters: redirect({ hostname: 'example.org', scheme: 'https' }) },
    { path: '/scheme-and-status', filters: redirect({ scheme: 'https', statusCode: 301 }) },
    { path: '/scheme-and-host-and-status', filters: redirect({ scheme: 'https', statusCode: 302, hostname: 'example.org' }) },
    { path: '/to-http', filters: redirect({ scheme: 'http' }) },
  ]),
  prefixRoute('redirect-path', 'redirect-path.test', [
    { path: '/original-prefix', filters: redirect({ path: prefix('/replacement-prefix') }) },
    { path: '/full', filters: redirect({ path: full('/full-path-replacement') }) },
    { path: '/path-and-host', filters: redirect({ hostname: 'example.org', path: prefix('/replacement-prefix') }) },
    { path: '/path-and-status', filters: redirect({ path: prefix('/replacement-prefix'), statusCode: 301 }) },
    { path: '/full-path-and-host', filters: redirect({ hostname: 'example.org', path: full('/replacement-full') }) },
    { path: '/full-path-and-status', filters: redirect({ path: full('/replacement-full'), statusCode: 301 }) },
  ]),
  prefixRoute('redirect-codes', 'redirect-codes.test', [
    { path: '/see-other', filters: redirect({ statusCode: 303 }) },
    { path: '/temporary', filters: redirect({ statusCode: 307 }) },
    { path: '/permanent', filters: redirect({ statusCode: 308 }) },
    { path: '/not-modified', filters: redirect({ statusCode: 304 }) },
    { to: 'v3' },
  ]),
  {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name: 'http-named-rules', namespace: 'team-a' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['named.test'],
      rules: [
        { name: 'named-rule', matches: [{ path: { type: 'PathPrefix', value: '/named' } }], backendRefs: [{ name: 'v1', port: 80 }] },
        { matches: [{ path: { type: 'PathPrefix', value: '/unnamed' } }], backendRefs: [{ name: 'v2', port: 80 }] },
      ],
    },
  },
  prefixRoute('rewrite-host', 'rewrite-host.test', [
    { path: '/one', filters: [rewrite({ hostname: 'one.example.org' })], to: 'v1' },
    { filters: [rewrite({ hostname: 'example.org' })], to: 'v2' },
    { path: '/rewrite-host-and-modify-headers', filters: [rewrite({ hostname: 'test.example.org' }), HEADER_EDITS], to: 'v2' },
  ]),
  prefixRoute('rewrite-path', 'rewrite-path.test', [
    { path: '/prefix/one', filters: [rewrite({ path: prefix('/one') })], to: 'v1' },
    { path: '/strip-prefix', filters: [rewrite({ path: prefix('/') })], to: 'v1' },
    { path: '/full/one', filters: [rewrite({ path: full('/one') })], to: 'v1' },
    { path: '/full/rewrite-path-and-modify-headers', filters: [rewrite({ path: full('/test') }), HEADER_EDITS], to: 'v1' },
    { path: '/prefix/rewrite-path-and-modify-headers', filters: [rewrite({ path: prefix('/prefix') }), HEADER_EDITS], to: 'v1' },
  ]),
  prefixRoute('response-header-modifier', 'response-headers.test', [
    { path: '/set', to: 'v1', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { set: [eq('X-Header-Set', 'set-overwrites-values')] } }] },
    { path: '/add', to: 'v1', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [eq('X-Header-Add', 'add-appends-values')] } }] },
    { path: '/remove', to: 'v1', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['X-Echo-Name'] } }] },
    { path: '/multiple', to: 'v1', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: {
      set: [eq('X-Header-Set-1', 'header-set-1'), eq('X-Header-Set-2', 'header-set-2')],
      add: [eq('X-Header-Add-1', 'header-add-1'), eq('X-Header-Add-2', 'header-add-2'), eq('X-Header-Add-3', 'header-add-3')],
      remove: ['X-Echo-Name', 'X-Header-Remove-2'],
    } }] },
    { path: '/case-insensitivity', to: 'v1', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: {
      set: [eq('x-header-set', 'header-set')], add: [eq('x-header-add', 'header-add'), eq('X-Echo-Name', 'appended')],
    } }] },
  ]),
  prefixRoute('query-param-matching', 'query.test', [
    { matches: [{ queryParams: [eq('animal', 'whale')] }], to: 'v1' },
    { matches: [{ queryParams: [eq('animal', 'dolphin')] }], to: 'v2' },
    { matches: [{ queryParams: [eq('animal', 'dolphin'), eq('color', 'blue')] }, { queryParams: [eq('ANIMAL', 'Whale')] }], to: 'v3' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path1' }, queryParams: [eq('animal', 'whale')] }], to: 'v1' },
    { matches: [{ headers: [eq('version', 'one')], queryParams: [eq('animal', 'whale')] }], to: 'v2' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path2' }, headers: [eq('version', 'two')], queryParams: [eq('animal', 'whale')] }], to: 'v3' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path3' }, queryParams: [eq('animal', 'shark')] }, { path: { type: 'PathPrefix', value: '/path4' }, headers: [eq('version', 'three')], queryParams: [eq('animal', 'kraken')] }], to: 'v1' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path5' }, queryParams: [eq('animal', 'hydra')] }], to: 'v1' },
    { matches: [{ headers: [eq('version', 'four')], queryParams: [eq('animal', 'hydra')] }], to: 'v3' },
  ]),
  prefixRoute('method-matching', 'method.test', [
    { matches: [{ method: 'POST' }], to: 'v1' },
    { matches: [{ method: 'GET' }], to: 'v2' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path1' }, method: 'GET' }], to: 'v1' },
    { matches: [{ headers: [eq('version', 'one')], method: 'PUT' }], to: 'v2' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path2' }, headers: [eq('version', 'two')], method: 'POST' }], to: 'v3' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path3' }, method: 'PATCH' }, { path: { type: 'PathPrefix', value: '/path4' }, headers: [eq('version', 'three')], method: 'DELETE' }], to: 'v1' },
    { matches: [{ path: { type: 'PathPrefix', value: '/path5' }, method: 'PATCH' }], to: 'v1' },
    { matches: [{ headers: [eq('version', 'four')], method: 'PATCH' }], to: 'v2' },
  ]),
];

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['v1', 'v2', 'v3'], { 'routes.json': ROUTES }));
  await ctl.until('method.test', '/', (r) => r.backend === 'v2', { what: 'the routes served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

/** The redirect's Location as scheme, host, port and path (the request's own where the route names none). */
function location(r: Reply): URL {
  assert.ok(r.headers.location, `a Location (status ${r.status})`);
  return new URL(String(r.headers.location));
}

async function expectRedirect(p: ProtocolClient, host: string, path: string, want: { status: number; scheme?: string; host?: string; port?: string; path?: string }) {
  const r = await p.request(host, path);
  assert.is(r.status, want.status, `${path}: status`);
  const url = location(r);
  assert.is(url.protocol, `${want.scheme ?? p.scheme}:`, `${path}: scheme`);
  assert.is(url.hostname, want.host ?? host, `${path}: host`);
  assert.is(url.port, want.port ?? '', `${path}: port`);
  assert.is(url.pathname, want.path ?? path, `${path}: path`);
}

over.both('HTTPRouteRedirectPort › the port is replaced (with host and status too); the scheme kept', async (p) => {
  await p.until('redirect-port.test', '/port', (r) => r.status === 302, { what: 'redirect-port.test over this protocol' });
  await expectRedirect(p, 'redirect-port.test', '/port', { status: 302, port: '8083' });
  await expectRedirect(p, 'redirect-port.test', '/port-and-host', { status: 302, host: 'example.org', port: '8083' });
  await expectRedirect(p, 'redirect-port.test', '/port-and-status', { status: 301, port: '8083' });
  await expectRedirect(p, 'redirect-port.test', '/port-and-host-and-status', { status: 302, host: 'example.org', port: '8083' });
});

over.both('HTTPRouteRedirectScheme › the scheme is replaced and the port becomes its default (omitted)', async (p) => {
  await expectRedirect(p, 'redirect-scheme.test', '/scheme', { status: 302, scheme: 'https' });
  await expectRedirect(p, 'redirect-scheme.test', '/scheme-and-host', { status: 302, scheme: 'https', host: 'example.org' });
  await expectRedirect(p, 'redirect-scheme.test', '/scheme-and-status', { status: 301, scheme: 'https' });
  await expectRedirect(p, 'redirect-scheme.test', '/scheme-and-host-and-status', { status: 302, scheme: 'https', host: 'example.org' });
  await expectRedirect(p, 'redirect-scheme.test', '/to-http', { status: 302, scheme: 'http' });
});

over.both('HTTPRouteRedirectPath › ReplacePrefixMatch keeps the rest of the path, ReplaceFullPath replaces all, with host and status', async (p) => {
  await expectRedirect(p, 'redirect-path.test', '/original-prefix/lemon', { status: 302, path: '/replacement-prefix/lemon' });
  await expectRedirect(p, 'redirect-path.test', '/full/path/original', { status: 302, path: '/full-path-replacement' });
  await expectRedirect(p, 'redirect-path.test', '/path-and-host', { status: 302, host: 'example.org', path: '/replacement-prefix' });
  await expectRedirect(p, 'redirect-path.test', '/path-and-status', { status: 301, path: '/replacement-prefix' });
  await expectRedirect(p, 'redirect-path.test', '/full-path-and-host', { status: 302, host: 'example.org', path: '/replacement-full' });
  await expectRedirect(p, 'redirect-path.test', '/full-path-and-status', { status: 301, path: '/replacement-full' });
});

over.both('HTTPRoute303Redirect › a POST is redirected with 303 See Other', async (p) => {
  const r = await p.request('redirect-codes.test', '/see-other', { method: 'POST', body: 'x' });
  assert.is(r.status, 303);
  assert.is(location(r).pathname, '/see-other');
});

over.both('HTTPRoute307Redirect › 307 Temporary Redirect, the path kept', async (p) => {
  await expectRedirect(p, 'redirect-codes.test', '/temporary', { status: 307 });
  const post = await p.request('redirect-codes.test', '/temporary/x?y=1', { method: 'POST', body: 'x' });
  assert.is(post.status, 307);
  assert.is(post.headers.location, `${p.scheme}://redirect-codes.test${location(post).port ? `:${location(post).port}` : ''}/temporary/x?y=1`);
});

over.both('HTTPRoute308Redirect › 308 Permanent Redirect; a code the spec does not allow (304) is named and its rule set aside', async (p) => {
  await expectRedirect(p, 'redirect-codes.test', '/permanent', { status: 308 });
  await ctl.logged(/HTTPRoute team-a\/redirect-codes.*spec\.rules\[3\]\.filters\[0\]\.requestRedirect\.statusCode: must be one of 301, 302, 303, 307, 308; rule set aside/, 'the 304 named');
  assert.is((await p.request('redirect-codes.test', '/not-modified')).backend, 'v3', 'served by the rule without conditions');
});

over.both('HTTPRouteNamedRule › a named rule and an unnamed one are both served', async (p) => {
  assert.is((await p.request('named.test', '/named')).backend, 'v1');
  assert.is((await p.request('named.test', '/unnamed')).backend, 'v2');
});

const got = (r: Reply) => r.json?.headers as Record<string, string>;
const CLIENT_HEADERS = { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1', 'X-Header-Set': 'set-val' };
function assertEdited(r: Reply) {
  const h = got(r);
  assert.is(h['x-header-add'], 'header-val-1');
  assert.is(h['x-header-add-append'], 'append-val-1,header-val-2');
  assert.is(h['x-header-set'], 'set-overwrites-values');
  assert.is(h['x-header-remove'], undefined);
}

over.both('HTTPRouteRewriteHost › the upstream gets the route\'s Host, the path kept; with header edits', async (p) => {
  const one = await p.request('rewrite-host.test', '/one');
  assert.is(one.backend, 'v1');
  assert.is(got(one).host, 'one.example.org');
  assert.is(one.json?.path, '/one');
  const two = await p.request('rewrite-host.test', '/two');
  assert.is(two.backend, 'v2');
  assert.is(got(two).host, 'example.org');
  assert.is(two.json?.path, '/two');
  const both = await p.request('rewrite-host.test', '/rewrite-host-and-modify-headers', { headers: CLIENT_HEADERS });
  assert.is(both.backend, 'v2');
  assert.is(got(both).host, 'test.example.org');
  assertEdited(both);
});

over.both('HTTPRouteRewritePath › prefix replaced, stripped to /, whole path replaced; with header edits', async (p) => {
  const cases: Array<[string, string]> = [
    ['/prefix/one/two', '/one/two'], ['/strip-prefix/three', '/three'], ['/strip-prefix', '/'], ['/full/one/two', '/one'],
  ];
  for (const [path, upstream] of cases) {
    const r = await p.request('rewrite-path.test', path);
    assert.is(r.backend, 'v1', path);
    assert.is(r.json?.path, upstream, path);
  }
  const a = await p.request('rewrite-path.test', '/full/rewrite-path-and-modify-headers/test', { headers: CLIENT_HEADERS });
  assert.is(a.json?.path, '/test');
  assertEdited(a);
  const b = await p.request('rewrite-path.test', '/prefix/rewrite-path-and-modify-headers/one', { headers: CLIENT_HEADERS });
  assert.is(b.json?.path, '/prefix/one');
  assertEdited(b);
});

over.both('HTTPRouteResponseHeaderModifier › set, add, remove, several at once, names caseless', async (p) => {
  const set = await p.request('response-headers.test', '/set');
  assert.is(set.headers['x-header-set'], 'set-overwrites-values');
  const add = await p.request('response-headers.test', '/add');
  assert.is(add.headers['x-header-add'], 'add-appends-values');
  const removed = await p.request('response-headers.test', '/remove');
  assert.is(removed.backend, 'v1');
  assert.is(removed.headers['x-echo-name'], undefined, 'the backend\'s X-Echo-Name was removed');
  const many = await p.request('response-headers.test', '/multiple');
  assert.is(many.headers['x-header-set-1'], 'header-set-1');
  assert.is(many.headers['x-header-set-2'], 'header-set-2');
  assert.is(many.headers['x-header-add-1'], 'header-add-1');
  assert.is(many.headers['x-header-add-2'], 'header-add-2');
  assert.is(many.headers['x-header-add-3'], 'header-add-3');
  assert.is(many.headers['x-echo-name'], undefined);
  const caseless = await p.request('response-headers.test', '/case-insensitivity');
  assert.is(caseless.headers['x-header-set'], 'header-set');
  assert.is(caseless.headers['x-header-add'], 'header-add');
  assert.is(caseless.headers['x-echo-name'], 'v1,appended', 'add appends to the backend\'s own header');
});

over.both('HTTPRouteQueryParamMatching › exact values, names and values case-sensitive, ANDed with paths and headers; no match is 404', async (p) => {
  const cases: Array<[string, Record<string, string>, string | 404]> = [
    ['/?animal=whale', {}, 'v1'], ['/?animal=dolphin', {}, 'v2'], ['/?animal=dolphin&color=blue', {}, 'v3'], ['/?ANIMAL=Whale', {}, 'v3'],
    ['/?animal=whale&otherparam=irrelevant', {}, 'v1'], ['/?animal=dolphin&color=yellow', {}, 'v2'],
    ['/?color=blue', {}, 404], ['/?animal=dog', {}, 404], ['/?animal=whaledolphin', {}, 404], ['/', {}, 404],
    ['/path1?animal=whale', {}, 'v1'], ['/?animal=whale', { version: 'one' }, 'v2'], ['/path2?animal=whale', { version: 'two' }, 'v3'],
    ['/path3?animal=shark', {}, 'v1'], ['/path4?animal=kraken', { version: 'three' }, 'v1'],
    ['/?animal=shark', {}, 404], ['/path4?animal=kraken', {}, 404],
    ['/path5?animal=hydra', {}, 'v1'], ['/?animal=hydra', { version: 'four' }, 'v3'],
  ];
  for (const [path, headers, want] of cases) {
    const r = await p.request('query.test', path, { headers });
    if (want === 404) assert.is(r.status, 404, `${path} ${JSON.stringify(headers)}`);
    else assert.is(r.backend, want, `${path} ${JSON.stringify(headers)}`);
  }
});

over.both('HTTPRouteMethodMatching › the method, ANDed with paths and headers; no match is 404', async (p) => {
  const cases: Array<[string, string, Record<string, string>, string | 404]> = [
    ['POST', '/', {}, 'v1'], ['GET', '/', {}, 'v2'], ['HEAD', '/', {}, 404],
    ['GET', '/path1', {}, 'v1'], ['PUT', '/', { version: 'one' }, 'v2'], ['POST', '/path2', { version: 'two' }, 'v3'],
    ['PATCH', '/path3', {}, 'v1'], ['DELETE', '/path4', { version: 'three' }, 'v1'],
    ['PUT', '/', {}, 404], ['DELETE', '/path4', {}, 404],
    ['PATCH', '/path5', {}, 'v1'], ['PATCH', '/', { version: 'four' }, 'v2'],
  ];
  for (const [method, path, headers, want] of cases) {
    const r = await p.request('method.test', path, { method, headers, ...(method === 'POST' || method === 'PUT' || method === 'PATCH' ? { body: 'x' } : {}) });
    if (want === 404) assert.is(r.status, 404, `${method} ${path} ${JSON.stringify(headers)}`);
    else assert.is(r.backend, want, `${method} ${path} ${JSON.stringify(headers)}`);
  }
});

test.run();
