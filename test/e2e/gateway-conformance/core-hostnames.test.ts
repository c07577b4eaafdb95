// Core scenarios of the Gateway API conformance suite's GATEWAY-HTTP profile about host names,
// ported to `ingress-rx local` with real NGINX (our manifests; docs/gateway-api.md, Conformance):
// a Gateway API `*.` wildcard covers one or more labels, an Ingress's exactly one, and an Ingress
// host or a more specific route host keeps its requests.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1 } from '../../support/gateway-local.js';

const INFRA = 'hn-infra';
const TENANT_A = 'hn-tenant-a';
const TENANT_B = 'hn-tenant-b';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};

type Obj = Record<string, unknown>;
const listener = (name: string, hostname?: string, from = 'Same') => ({ name, port: 80, protocol: 'HTTP', ...(hostname ? { hostname } : {}), allowedRoutes: { namespaces: { from } } });
function route(ns: string, name: string, hostnames: string[], parentRefs: Obj[], backend: string, path = '/'): Obj {
  return {
    apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
    spec: { parentRefs, ...(hostnames.length ? { hostnames } : {}), rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs: [{ name: backend, namespace: INFRA, port: 80 }] }] },
  };
}
const grant = (ns: string) => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: `from-${ns}`, namespace: INFRA },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: ns }], to: [{ group: '', kind: 'Service' }] },
});

const MANIFESTS: Record<string, Obj[]> = {
  'infra.json': [
    ...[INFRA, TENANT_A, TENANT_B].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'hn' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    {
      apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'intersection', namespace: INFRA },
      spec: { gatewayClassName: 'hn', listeners: [listener('listener-1', 'very.specific.hn'), listener('listener-2', '*.wildcard.hn'), listener('listener-3', '*.anotherwildcard.hn')] },
    },
    {
      apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'matching', namespace: INFRA },
      spec: { gatewayClassName: 'hn', listeners: [listener('bar', 'bar.lhm'), listener('foo-bar', 'foo.bar.lhm'), listener('wild-bar', '*.bar.lhm'), listener('wild-foo', '*.foo.lhm')] },
    },
    { apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'open', namespace: INFRA }, spec: { gatewayClassName: 'hn', listeners: [listener('http', undefined, 'All')] } },
    grant(TENANT_A), grant(TENANT_B),
  ],
  'intersection.json': [
    route(INFRA, 'specific-host-on-specific-listener', ['non.matching.hn', '*.nonmatchingwildcard.hn', 'very.specific.hn'], [{ name: 'intersection' }], 'v1', '/s1'),
    route(INFRA, 'specific-hosts-on-wildcard-listener', ['non.matching.hn', 'wildcard.hn', 'foo.wildcard.hn', 'bar.wildcard.hn', 'foo.bar.wildcard.hn'], [{ name: 'intersection' }], 'v2', '/s2'),
    route(INFRA, 'wildcard-host-on-specific-listener', ['non.matching.hn', '*.specific.hn'], [{ name: 'intersection' }], 'v3', '/s3'),
    route(INFRA, 'no-host-on-wildcard-listener', [], [{ name: 'intersection', sectionName: 'listener-3' }], 'v1', '/s4'),
    route(INFRA, 'narrower-wildcard-on-wildcard-listener', ['*.foo.wildcard.hn'], [{ name: 'intersection', sectionName: 'listener-2' }], 'v3', '/s5'),
  ],
  'matching.json': [
    route(INFRA, 'on-bar', [], [{ name: 'matching', sectionName: 'bar' }], 'v1'),
    route(INFRA, 'on-foo-bar', [], [{ name: 'matching', sectionName: 'foo-bar' }], 'v2'),
    route(INFRA, 'on-wildcards', [], [{ name: 'matching', sectionName: 'wild-bar' }, { name: 'matching', sectionName: 'wild-foo' }], 'v3'),
  ],
  // Precedence: tenant A's wildcard, tenant B's narrower one, and Ingresses inside them.
  'tenants.json': [
    route(TENANT_A, 'wide', ['*.shared.hn'], [{ name: 'open', namespace: INFRA }], 'v1'),
    route(TENANT_B, 'narrow', ['*.b.shared.hn'], [{ name: 'open', namespace: INFRA }], 'v2'),
    ingress(INFRA, 'exact', { host: 'owned.x.shared.hn', paths: [{ path: '/', service: 'ing' }] }),
    ingress(INFRA, 'wild', { host: '*.ing.shared.hn', paths: [{ path: '/', service: 'ing' }] }),
  ],
};

test.before(async () => {
  const names = ['v1', 'v2', 'v3', 'ing'];
  for (const [i, name] of names.entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  ctl = await startLocal({ files: { 'services.json': names.flatMap((n) => [service(INFRA, n), ...slices(INFRA, n, [echo[n]!])]), ...MANIFESTS } });
  await ctl.until('a.b.c.shared.hn', '/', (r) => r.backend === 'v1', { what: 'the scenarios served' });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

type Case = [host: string, path: string, want: string | 404];
async function check(p: { request(host: string, path: string): Promise<{ status: number; backend?: string }> }, cases: Case[]): Promise<void> {
  for (const [host, path, want] of cases) {
    const r = await p.request(host, path);
    if (want === 404) assert.is(r.status, 404, `${host}${path}`);
    else assert.is(r.backend, want, `${host}${path}`);
  }
}

over.both('HTTPRouteHostnameIntersection › route and listener host names intersect; a wildcard covers several labels', async (p) => {
  await check(p, [
    ['very.specific.hn', '/s1', 'v1'], ['non.matching.hn', '/s1', 404], ['foo.nonmatchingwildcard.hn', '/s1', 404],
    ['foo.wildcard.hn', '/s2', 'v2'], ['bar.wildcard.hn', '/s2', 'v2'], ['foo.bar.wildcard.hn', '/s2', 'v2'], ['wildcard.hn', '/s2', 404], ['baz.wildcard.hn', '/s2', 404],
    ['very.specific.hn', '/s3', 'v3'], ['other.specific.hn', '/s3', 404], ['non.matching.hn', '/s3', 404],
    ['a.anotherwildcard.hn', '/s4', 'v1'], ['a.b.anotherwildcard.hn', '/s4', 'v1'], ['anotherwildcard.hn', '/s4', 404],
    ['a.foo.wildcard.hn', '/s5', 'v3'], ['a.b.foo.wildcard.hn', '/s5', 'v3'], ['foo.wildcard.hn', '/s5', 404], ['a.wildcard.hn', '/s5', 404],
  ]);
});

over.both('HTTPRouteListenerHostnameMatching › each listener\'s routes take its host names, the exact name before the wildcard', async (p) => {
  await check(p, [
    ['bar.lhm', '/', 'v1'], ['foo.bar.lhm', '/', 'v2'], ['baz.bar.lhm', '/', 'v3'], ['boo.bar.lhm', '/', 'v3'],
    ['multiple.prefixes.bar.lhm', '/', 'v3'], ['multiple.prefixes.foo.lhm', '/', 'v3'], ['foo.lhm', '/', 404], ['no.matching.lhm', '/', 404],
  ]);
});

over.both('HTTPRouteHostnameIntersection › attacker: a tenant\'s wildcard route takes no host an Ingress or a narrower route serves', async (p) => {
  await check(p, [
    ['x.shared.hn', '/', 'v1'], ['a.x.shared.hn', '/', 'v1'], ['shared.hn', '/', 404],
    // an Ingress's exact host inside the wildcard
    ['owned.x.shared.hn', '/', 'ing'],
    // tenant B's narrower wildcard, on one label and on several
    ['a.b.shared.hn', '/', 'v2'], ['c.a.b.shared.hn', '/', 'v2'],
    // an Ingress's wildcard covers one label; below it, the route's wildcard serves
    ['x.ing.shared.hn', '/', 'ing'], ['y.x.ing.shared.hn', '/', 'v1'],
  ]);
});

test.run();
