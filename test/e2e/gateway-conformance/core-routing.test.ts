// Core scenarios of the Gateway API conformance suite's GATEWAY-HTTP profile that send requests,
// ported to `ingress-rx local` with real NGINX (our manifests; docs/gateway-api.md, Conformance).
// One controller serves them all: each scenario has its own host names. Upstream, most routes
// name no hostname and take every host of the Gateway; here each names the scenario's host
// (a route with no hostname on a listener without one is not served yet).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { generateCertificate } from '../../support/lua-nginx.js';
import { service, slices, startLocal, tlsSecret, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1 } from '../../support/gateway-local.js';
import { expectRequestHeaderModifier } from '../../support/gateway-scenarios.js';

const INFRA = 'conf-infra';
const WEB = 'conf-web';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-conf-routing-'));
let ca = '';

type Obj = Record<string, unknown>;
const backend = (name: string, extra: Obj = {}) => ({ name, port: 80, ...extra });
const prefix = (value: string) => ({ path: { type: 'PathPrefix', value } });
const exact = (value: string) => ({ path: { type: 'Exact', value } });
const header = (...pairs: Array<[string, string]>) => ({ headers: pairs.map(([name, value]) => ({ name, value })) });
function route(ns: string, name: string, hostnames: string[], rules: Obj[], parent: Obj | Obj[] = { name: 'same' }): Obj {
  const parentRefs = Array.isArray(parent) ? parent : [parent];
  return { apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns }, spec: { parentRefs, ...(hostnames.length ? { hostnames } : {}), rules } };
}
const rule = (matches: Obj[], backends: Obj[], extra: Obj = {}) => ({ ...(matches.length ? { matches } : {}), backendRefs: backends, ...extra });

const GRANT = {
  apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'infra-routes', namespace: WEB },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: INFRA }], to: [{ group: '', kind: 'Service', name: 'web-backend' }] },
};

const MANIFESTS: Record<string, Obj[]> = {
  'infra.json': [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: INFRA } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WEB, labels: { 'conf-backend': 'yes' } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'conf-other' } },
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'conf' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    { apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'same', namespace: INFRA }, spec: { gatewayClassName: 'conf', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }] } },
    {
      apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'backend-namespaces', namespace: INFRA },
      spec: { gatewayClassName: 'conf', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: '*.backends.conf', allowedRoutes: { namespaces: { from: 'Selector', selector: { matchLabels: { 'conf-backend': 'yes' } } } } }] },
    },
    { apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'multi-a', namespace: INFRA }, spec: { gatewayClassName: 'conf', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: 'multi-a.conf' }] } },
    { apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'multi-b', namespace: INFRA }, spec: { gatewayClassName: 'conf', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: 'multi-b.conf', allowedRoutes: { namespaces: { from: 'All' } } }] } },
  ],
  // Routes without hostnames take their listeners' (multi-a.conf, multi-b.conf).
  'multi.json': [
    route(INFRA, 'multi-shared', [], [rule([prefix('/shared')], [backend('infra-v1')])], [{ name: 'multi-a' }, { name: 'multi-b' }]),
    route(INFRA, 'multi-a-only', [], [rule([prefix('/')], [backend('infra-v2')])], { name: 'multi-a' }),
    route(INFRA, 'multi-b-only', [], [rule([prefix('/')], [backend('infra-v3')])], { name: 'multi-b' }),
  ],
  'simple.json': [route(INFRA, 'simple', ['simple.conf'], [rule([], [backend('infra-v1')])])],
  'exact.json': [route(INFRA, 'exact', ['exact.conf'], [rule([exact('/one')], [backend('infra-v1')]), rule([exact('/two')], [backend('infra-v2')])])],
  'matching.json': [route(INFRA, 'matching', ['matching.conf'], [
    rule([prefix('/'), header(['version', 'one'])], [backend('infra-v1')]),
    rule([prefix('/v2'), header(['version', 'two'])], [backend('infra-v2')]),
  ])],
  'across.json': [
    route(INFRA, 'across-1', ['across.conf', 'across.net'], [rule([prefix('/'), header(['version', 'one'])], [backend('infra-v1')])]),
    route(INFRA, 'across-2', ['across.conf'], [rule([prefix('/v2'), header(['version', 'two'])], [backend('infra-v2')])]),
  ],
  'order.json': [route(INFRA, 'order', ['order.conf'], [
    rule([exact('/match')], [backend('infra-v1')]),
    rule([exact('/match/exact')], [backend('infra-v2')]),
    rule([exact('/match/exact/one')], [backend('infra-v3')]),
    rule([prefix('/match/')], [backend('infra-v3')]),
    rule([prefix('/match/prefix/')], [backend('infra-v1')]),
    rule([prefix('/match/prefix/one')], [backend('infra-v2')]),
  ])],
  'headers.json': [route(INFRA, 'headers', ['headers.conf'], [
    rule([header(['version', 'one'])], [backend('infra-v1')]),
    rule([header(['version', 'two'])], [backend('infra-v2')]),
    rule([header(['version', 'two'], ['color', 'orange'])], [backend('infra-v1')]),
    rule([header(['color', 'blue']), header(['color', 'green'])], [backend('infra-v1')]),
    rule([header(['color', 'red']), header(['color', 'yellow'])], [backend('infra-v2')]),
  ])],
  'cross.json': [
    route(WEB, 'cross', ['web.backends.conf'], [rule([], [backend('web-backend')])], { name: 'backend-namespaces', namespace: INFRA }),
    // The listener's selector does not pick conf-other: this route is not attached.
    route('conf-other', 'cross-other', ['other.backends.conf'], [rule([], [backend('other-backend')])], { name: 'backend-namespaces', namespace: INFRA }),
  ],
  'grant.json': [route(INFRA, 'grant', ['grant.conf'], [rule([], [backend('web-backend', { namespace: WEB })])])],
  'grant-object.json': [GRANT],
  'omitted.json': [route(INFRA, 'omitted', ['omitted.conf'], [
    { matches: [exact('/omitted-no-forward')] },
    { matches: [exact('/empty-no-forward')], backendRefs: [] },
    rule([prefix('/')], [backend('infra-v1')]),
  ])],
  'reqhdr.json': [route(INFRA, 'reqhdr', ['reqhdr.conf'], [
    rule([prefix('/set')], [backend('infra-v1')], { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }] } }] }),
    rule([prefix('/add')], [backend('infra-v1')], { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'X-Header-Add', value: 'add-appends-values' }] } }] }),
    rule([prefix('/remove')], [backend('infra-v1')], { filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['X-Header-Remove'] } }] }),
    rule([prefix('/multiple')], [backend('infra-v1')], {
      filters: [{
        type: 'RequestHeaderModifier', requestHeaderModifier: {
          set: [{ name: 'X-Header-Set-1', value: 'header-set-1' }, { name: 'X-Header-Set-2', value: 'header-set-2' }],
          add: [{ name: 'X-Header-Add-1', value: 'header-add-1' }, { name: 'X-Header-Add-2', value: 'header-add-2' }, { name: 'X-Header-Add-3', value: 'header-add-3' }],
          remove: ['X-Header-Remove-1', 'X-Header-Remove-2'],
        },
      }],
    }),
  ])],
  'redirect.json': [route(INFRA, 'redirect', ['redirect.conf'], [
    { matches: [prefix('/hostname-redirect')], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'example.org' } }] },
    { matches: [prefix('/host-and-status')], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'example.org', statusCode: 301 } }] },
  ])],
  'https.json': [
    {
      apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'with-https', namespace: INFRA },
      spec: {
        gatewayClassName: 'conf', listeners: [
          { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'https-cert' }] } },
          { name: 'https-with-hostname', port: 443, protocol: 'HTTPS', hostname: 'second-https.conf', tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'https-cert' }] } },
        ],
      },
    },
    route(INFRA, 'https-test', ['https.conf'], [rule([], [backend('infra-v1')])], { name: 'with-https' }),
    route(INFRA, 'https-no-hostname', [], [rule([], [backend('infra-v2')])], { name: 'with-https', sectionName: 'https-with-hostname' }),
  ],
  'service-types.json': [route(INFRA, 'service-types', ['service-types.conf'], ['manual-endpointslices', 'headless', 'headless-manual-endpointslices'].map((n) => rule([exact(`/${n}`)], [backend(n)])))],
  'weight.json': [route(INFRA, 'weight', ['weight.conf'], [rule([], [backend('infra-v1', { weight: 70 }), backend('infra-v2', { weight: 30 }), backend('infra-v3', { weight: 0 })])])],
  // The grant above names web-backend only: conf-web's other Service is not granted.
  'no-grant.json': [route(INFRA, 'no-grant', ['no-grant.conf'], [rule([], [backend('web-private', { namespace: WEB })])])],
};

test.before(async () => {
  const backends: Array<[string, string]> = [[INFRA, 'infra-v1'], [INFRA, 'infra-v2'], [INFRA, 'infra-v3'], [WEB, 'web-backend'], ['conf-other', 'other-backend'], [WEB, 'web-private']];
  for (const [i, [, name]] of backends.entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const cert = await generateCertificate(tmp, 'https.conf', ['https.conf', 'second-https.conf']);
  ca = readFileSync(cert.certPath, 'utf8');
  // HTTPRouteServiceTypes: a Service without selector and its own EndpointSlices, and two headless
  // ones, all on infra-v1's endpoint; each with the empty IPv6 slice of a single-stack cluster.
  const serviceTypes = ['manual-endpointslices', 'headless', 'headless-manual-endpointslices'].flatMap((n) => {
    const svc = service(INFRA, n);
    return [
      n.startsWith('headless') ? { ...svc, spec: { ...svc.spec, clusterIP: 'None' } } : svc,
      ...slices(INFRA, n, [echo['infra-v1']!]),
      { ...slices(INFRA, n, [echo['infra-v1']!])[0]!, metadata: { name: `${n}-ip6`, namespace: INFRA, labels: { 'kubernetes.io/service-name': n } }, addressType: 'IPv6', endpoints: [] },
    ];
  });
  ctl = await startLocal({
    files: {
      'services.json': [...backends.flatMap(([ns, n]) => [service(ns, n), ...slices(ns, n, [echo[n]!])]), ...serviceTypes],
      'https-cert.json': [tlsSecret(INFRA, 'https-cert', ca, readFileSync(cert.keyPath, 'utf8'))],
      ...MANIFESTS,
    },
  });
  await ctl.until('simple.conf', '/', (r) => r.backend === 'infra-v1', { what: 'the scenarios served' });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
  rmSync(tmp, { recursive: true, force: true });
});

over.both('HTTPRouteSimpleSameNamespace › a route beside its Gateway reaches its Service', async (p) => {
  const r = await p.until('simple.conf', '/', (x) => x.backend === 'infra-v1', { what: 'simple.conf' });
  assert.is(r.status, 200);
});

over.both('HTTPRouteExactPathMatching › an Exact path takes only itself', async (p) => {
  assert.is((await p.request('exact.conf', '/one')).backend, 'infra-v1');
  assert.is((await p.request('exact.conf', '/two')).backend, 'infra-v2');
  for (const path of ['/', '/one/example', '/two/', '/Two']) assert.is((await p.request('exact.conf', path)).status, 404, path);
});

over.both('HTTPRouteMatching › the matches of a rule are alternatives: a path or a header', async (p) => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['/', {}, 'infra-v1'], ['/example', {}, 'infra-v1'], ['/', { Version: 'one' }, 'infra-v1'],
    ['/v2', {}, 'infra-v2'], ['/v2/example', {}, 'infra-v2'], ['/', { Version: 'two' }, 'infra-v2'], ['/v2/', {}, 'infra-v2'],
    ['/v2example', {}, 'infra-v1'], ['/foo/v2/example', {}, 'infra-v1'],
  ];
  for (const [path, headers, want] of cases) assert.is((await p.request('matching.conf', path, { headers })).backend, want, `${path} ${JSON.stringify(headers)}`);
});

over.both('HTTPRouteMatchingAcrossRoutes › the rules of two routes on one host are merged by precedence', async (p) => {
  const cases: Array<[string, string, Record<string, string>, string]> = [
    ['across.conf', '/', {}, 'infra-v1'], ['across.conf', '/example', {}, 'infra-v1'], ['across.net', '/example', {}, 'infra-v1'],
    ['across.conf', '/example', { Version: 'one' }, 'infra-v1'], ['across.conf', '/v2', {}, 'infra-v2'], ['across.net', '/v2', {}, 'infra-v1'],
    ['across.conf', '/v2/example', {}, 'infra-v2'], ['across.conf', '/', { Version: 'two' }, 'infra-v2'],
  ];
  for (const [host, path, headers, want] of cases) assert.is((await p.request(host, path, { headers })).backend, want, `${host}${path} ${JSON.stringify(headers)}`);
});

over.both('HTTPRoutePathMatchOrder › Exact before PathPrefix, the longest prefix first', async (p) => {
  const cases: Array<[string, string]> = [
    ['/match/exact/one', 'infra-v3'], ['/match/exact', 'infra-v2'], ['/match', 'infra-v1'],
    ['/match/prefix/one/any', 'infra-v2'], ['/match/prefix/any', 'infra-v1'], ['/match/any', 'infra-v3'],
  ];
  for (const [path, want] of cases) assert.is((await p.request('order.conf', path)).backend, want, path);
});

over.both('HTTPRouteHeaderMatching › all headers of a match must hold; the most specific match wins', async (p) => {
  const cases: Array<[Record<string, string>, string | 404]> = [
    [{ Version: 'one' }, 'infra-v1'], [{ Version: 'two' }, 'infra-v2'], [{ Version: 'two', Color: 'orange' }, 'infra-v1'],
    [{ Version: 'two', Color: 'blue' }, 'infra-v2'], [{ Color: 'orange' }, 404], [{ 'Some-Other-Header': 'one' }, 404],
    [{ Color: 'blue' }, 'infra-v1'], [{ Color: 'green' }, 'infra-v1'], [{ Color: 'red' }, 'infra-v2'], [{ Color: 'yellow' }, 'infra-v2'], [{ Color: 'purple' }, 404],
  ];
  for (const [headers, want] of cases) {
    const r = await p.request('headers.conf', '/', { headers });
    if (want === 404) assert.is(r.status, 404, JSON.stringify(headers));
    else assert.is(r.backend, want, JSON.stringify(headers));
  }
});

over.both('HTTPRouteCrossNamespace › a route in a namespace the listener selects reaches its own Service', async (p) => {
  assert.is((await p.request('web.backends.conf', '/')).backend, 'web-backend');
});

over.both('HTTPRouteCrossNamespace › attacker: a route of a namespace the selector does not pick is not served', async (p) => {
  const before = echo['other-backend']!.hits();
  assert.is((await p.request('other.backends.conf', '/')).status, 404);
  assert.is(echo['other-backend']!.hits(), before);
});

over.both('HTTPRouteReferenceGrant › a grant lets a route reach another namespace\'s Service; without it the rule answers 500', async (p) => {
  await p.until('grant.conf', '/', (r) => r.backend === 'web-backend', { what: 'granted' });
  ctl.remove('grant-object.json');
  try {
    await p.until('grant.conf', '/', (r) => r.status === 500, { what: 'the grant deleted: 500' });
    const before = echo['web-backend']!.hits();
    for (let i = 0; i < 5; i++) assert.is((await p.request('grant.conf', `/${i}`)).status, 500);
    assert.is(echo['web-backend']!.hits(), before, 'no request reaches conf-web once the grant is gone');
  } finally {
    ctl.write('grant-object.json', [GRANT]);
  }
  await p.until('grant.conf', '/', (r) => r.backend === 'web-backend', { what: 'granted again' });
});

over.both('HTTPRouteInvalidCrossNamespaceBackendRef › attacker: no grant, the rule answers 500 and the Service gets nothing', async (p) => {
  const before = echo['web-private']!.hits();
  assert.is((await p.request('no-grant.conf', '/')).status, 500);
  assert.is(echo['web-private']!.hits(), before);
});

over.both('HTTPRouteNoBackendRefs › a rule without backendRefs answers 500', async (p) => {
  assert.is((await p.request('omitted.conf', '/forward')).backend, 'infra-v1');
  assert.is((await p.request('omitted.conf', '/omitted-no-forward')).status, 500);
  assert.is((await p.request('omitted.conf', '/empty-no-forward')).status, 500);
});

over.both('HTTPRouteRequestHeaderModifier › set, add and remove the headers the backend gets', async (p) => {
  await expectRequestHeaderModifier(p, 'reqhdr.conf', 'infra-v1');
});

over.both('HTTPRouteRedirectHostAndStatus › a redirect to another host, 302 unless a status is given', async (p) => {
  let r = await p.request('redirect.conf', '/hostname-redirect');
  assert.is(r.status, 302);
  assert.is(new URL(String(r.headers.location)).hostname, 'example.org');
  r = await p.request('redirect.conf', '/host-and-status');
  assert.is(r.status, 301);
  assert.is(new URL(String(r.headers.location)).hostname, 'example.org');
});

over.both('HTTPRouteMultipleGateways › a route attached to two Gateways is served on both, beside each one\'s own', async (p) => {
  for (const [host, own] of [['multi-a.conf', 'infra-v2'], ['multi-b.conf', 'infra-v3']] as const) {
    assert.is((await p.request(host, '/shared')).backend, 'infra-v1', host);
    assert.is((await p.request(host, '/')).backend, own, host);
  }
});

over.both('HTTPRouteHTTPSListener › routes through HTTPS listeners, with and without a listener hostname, verified against the certificate', async (p) => {
  assert.is((await p.until('https.conf', '/', (r) => r.backend === 'infra-v1', { what: 'https.conf over TLS', https: true, ca })).status, 200);
  assert.is((await p.request('second-https.conf', '/', { https: true, ca })).backend, 'infra-v2');
  // No route names it: NGINX answers with the default certificate, so this one is not verified.
  assert.is((await p.request('unknown-https.conf', '/', { https: true })).status, 404);
});

over.both('HTTPRouteServiceTypes › a Service with its own EndpointSlices and headless Services are reached', async (p) => {
  for (const n of ['manual-endpointslices', 'headless', 'headless-manual-endpointslices']) {
    const r = await p.request('service-types.conf', `/${n}`);
    assert.equal([r.status, r.backend], [200, 'infra-v1'], n);
  }
});

over.both('HTTPRouteWeight › 70/30/0 weights: the shares follow, a weight of 0 gets nothing', async (p) => {
  const seen: Record<string, number> = {};
  const n = 200;
  for (let i = 0; i < n; i++) {
    const r = await p.request('weight.conf', `/${i}`);
    seen[r.backend ?? String(r.status)] = (seen[r.backend ?? String(r.status)] ?? 0) + 1;
  }
  assert.equal(Object.keys(seen).sort(), ['infra-v1', 'infra-v2'], JSON.stringify(seen));
  // 200 draws at p = 0.7: 140 expected, sd 6.5; 110..170 fails once in about 10^5 runs.
  assert.ok(seen['infra-v1']! >= 110 && seen['infra-v1']! <= 170, JSON.stringify(seen));
});

test.run();
