// The Gateway API conformance suite's ListenerSet scenarios (extended feature ListenerSet),
// ported to `ingress-rx controller --enable-gateway-api` against the in-process fake API server
// (real list/watch, status through the status subresource) with real NGINX, in our own manifests
// (docs/gateway-api.md, Conformance). One controller: each scenario has its own Gateway,
// ListenerSets, routes and host names; namespaces are made per scenario where the namespace is
// what is tested.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FakeApiServer, FakeObject } from '../../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { generateCertificate } from '../../support/lua-nginx.js';
import { service, slices, tlsSecret, type CliProcess } from '../../support/local-harness.js';
import { waitFor } from '../../support/wait.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1, startGatewayController, stopGatewayController } from '../../support/gateway-local.js';

const GROUP = 'gateway.networking.k8s.io';
const INFRA = 'ls-infra';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-lset-'));
let ca = '';

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; observedGeneration: number };
type ListenerStatus = { name: string; attachedRoutes: number; supportedKinds: Array<{ group?: string; kind: string }>; conditions: Cond[] };
type Parent = { parentRef: { group?: string; kind?: string; name: string; namespace?: string; sectionName?: string }; controllerName: string; conditions: Cond[] };

const all = { namespaces: { from: 'All' } };
const http = (name: string, hostname?: string, allowedRoutes: Obj = all) => ({ name, port: 80, protocol: 'HTTP', ...(hostname ? { hostname } : {}), allowedRoutes });
const gateway = (name: string, listeners: Obj[], allowedListeners?: Obj): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: INFRA },
  spec: { gatewayClassName: 'lset', listeners, ...(allowedListeners ? { allowedListeners: { namespaces: allowedListeners } } : {}) },
});
const listenerSet = (ns: string, name: string, gw: string, listeners: Obj[], created?: string): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'ListenerSet', metadata: { name, namespace: ns, ...(created ? { creationTimestamp: created } : {}) },
  spec: { parentRef: { group: GROUP, kind: 'Gateway', name: gw, namespace: INFRA }, listeners },
});
const toGateway = (name: string, sectionName?: string) => ({ name, namespace: INFRA, ...(sectionName ? { sectionName } : {}) });
const toSet = (name: string, ns = INFRA, sectionName?: string) => ({ group: GROUP, kind: 'ListenerSet', name, namespace: ns, ...(sectionName ? { sectionName } : {}) });
const route = (ns: string, name: string, parentRefs: Obj[], prefix: string, backend: string, hostnames?: string[]): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs, ...(hostnames ? { hostnames } : {}), rules: [{ matches: [{ path: { type: 'PathPrefix', value: prefix } }], backendRefs: [{ name: backend, namespace: INFRA, port: 80 }] }] },
});
const namespace = (name: string, labels: Record<string, string> = {}): FakeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const grant = (ns: string, name: string, from: Obj[], to: Obj): FakeObject => ({
  apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name, namespace: ns }, spec: { from: from.map((f) => ({ group: GROUP, ...f })), to: [{ group: '', ...to }] },
});
const https = (name: string, hostname: string) => ({
  name, port: 443, protocol: 'HTTPS', hostname, allowedRoutes: all, tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'certificate', namespace: 'ls-web' }] },
});

const gwStatus = (name: string) => fake.get(GATEWAY_V1, 'Gateway', name, INFRA)?.status as { conditions?: Cond[]; listeners?: ListenerStatus[]; attachedListenerSets?: number } | undefined;
const setStatus = (name: string, ns = INFRA) => fake.get(GATEWAY_V1, 'ListenerSet', name, ns)?.status as { conditions?: Cond[]; listeners?: ListenerStatus[] } | undefined;
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const cond = (cs: Cond[] | undefined, type: string) => brief(cs).find((c) => c.startsWith(`${type}=`));
const setConds = (name: string, ns = INFRA) => [cond(setStatus(name, ns)?.conditions, 'Accepted'), cond(setStatus(name, ns)?.conditions, 'Programmed')];
const setListener = (set: string, listener: string, ns = INFRA) => setStatus(set, ns)?.listeners?.find((l) => l.name === listener);
const gwListener = (gw: string, listener: string) => gwStatus(gw)?.listeners?.find((l) => l.name === listener);
const parents = (name: string, ns = INFRA) => ((fake.get(GATEWAY_V1, 'HTTPRoute', name, ns)?.status as { parents?: Parent[] } | undefined)?.parents ?? []);
const parentOf = (route: string, kind: 'Gateway' | 'ListenerSet', ns = INFRA) => parents(route, ns).find((p) => (p.parentRef.kind ?? 'Gateway') === kind);
const accepted = (route: string, kind: 'Gateway' | 'ListenerSet', ns = INFRA) => cond(parentOf(route, kind, ns)?.conditions, 'Accepted');
/** Accepted, ResolvedRefs and Programmed True (any reason), Conflicted False: what the suite asks of a served listener. */
const served = (l: ListenerStatus | undefined) => ['Accepted', 'ResolvedRefs', 'Programmed'].every((t) => cond(l?.conditions, t)?.startsWith(`${t}=True`)) && cond(l?.conditions, 'Conflicted')?.startsWith('Conflicted=False') === true;
const conflicted = (l: ListenerStatus | undefined) => [cond(l?.conditions, 'Accepted'), cond(l?.conditions, 'Programmed'), cond(l?.conditions, 'Conflicted')];
const CONFLICT = (reason: string) => [`Accepted=False/${reason}`, `Programmed=False/${reason}`, `Conflicted=True/${reason}`];

test.before(async () => {
  for (const [i, name] of ['infra-v1', 'infra-v2', 'infra-v3'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const cert = await generateCertificate(join(tmp, 'certs'), 'granted.lset', ['granted.lset', 'not-granted.lset', 'tls-gw.lset']);
  ca = readFileSync(cert.certPath, 'utf8');
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'lset' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    ...['infra-v1', 'infra-v2', 'infra-v3'].flatMap((n) => [service(INFRA, n), ...slices(INFRA, n, [echo[n]!])]),
    namespace(INFRA),
    // ListenerSetDefaultNotAllowed and ListenerSetAllowedNamespaceNone.
    gateway('default', [http('gw', 'default-gw.lset')]),
    listenerSet(INFRA, 'default-set', 'default', [http('ls', 'default-ls.lset')]),
    route(INFRA, 'default-route', [toSet('default-set')], '/', 'infra-v1'),
    gateway('none', [http('gw', 'none-gw.lset')], { from: 'None' }),
    listenerSet(INFRA, 'none-set', 'none', [http('ls', 'none-ls.lset')]),
    route(INFRA, 'none-route', [toSet('none-set')], '/', 'infra-v1'),
    // ListenerSetAllowedNamespaceSame.
    namespace('ls-elsewhere'),
    gateway('same', [http('gw', 'same-gw.lset')], { from: 'Same' }),
    listenerSet(INFRA, 'same-set', 'same', [http('ls', 'same-ls.lset')]),
    listenerSet('ls-elsewhere', 'other-set', 'same', [http('ls', 'same-other.lset')]),
    route('ls-elsewhere', 'other-route', [toSet('other-set', 'ls-elsewhere')], '/', 'infra-v2'),
    grant(INFRA, 'elsewhere-to-services', [{ kind: 'HTTPRoute', namespace: 'ls-elsewhere' }], { kind: 'Service' }),
    // ListenerSetAllowedNamespaceSelector.
    namespace('ls-selected', { 'lset-tenant': 'yes' }),
    namespace('ls-unselected', { 'lset-tenant': 'no' }),
    gateway('selector', [http('gw', 'selector-gw.lset')], { from: 'Selector', selector: { matchLabels: { 'lset-tenant': 'yes' } } }),
    listenerSet('ls-selected', 'selected-set', 'selector', [http('ls', 'selected.lset')]),
    listenerSet('ls-unselected', 'unselected-set', 'selector', [http('ls', 'unselected.lset')]),
    // ListenerSetAllowedRoutesNamespaces.
    namespace('ls-routes-allowed', { 'lset-routes': 'yes' }),
    namespace('ls-routes-denied'),
    namespace('ls-cross'),
    gateway('routes', [http('gw', 'routes-gw.lset')], { from: 'All' }),
    listenerSet(INFRA, 'routes-set', 'routes', [
      http('all', 'routes-all.lset'),
      http('same', 'routes-same.lset', { namespaces: { from: 'Same' } }),
      http('selector', 'routes-selector.lset', { namespaces: { from: 'Selector', selector: { matchLabels: { 'lset-routes': 'yes' } } } }),
    ]),
    route(INFRA, 'in-same', [toSet('routes-set')], '/in-same', 'infra-v1'),
    route('ls-routes-allowed', 'in-selected', [toSet('routes-set')], '/in-selected', 'infra-v2'),
    route('ls-routes-denied', 'in-unselected', [toSet('routes-set')], '/in-unselected', 'infra-v3'),
    listenerSet('ls-cross', 'cross-set', 'routes', [http('cross-same', 'routes-cross.lset', { namespaces: { from: 'Same' } })]),
    route('ls-cross', 'in-set-namespace', [toSet('cross-set', 'ls-cross')], '/in-set-namespace', 'infra-v1'),
    route(INFRA, 'in-gateway-namespace', [toSet('cross-set', 'ls-cross')], '/in-gateway-namespace', 'infra-v2'),
    grant(INFRA, 'routes-to-services', ['ls-routes-allowed', 'ls-routes-denied', 'ls-cross'].map((namespace) => ({ kind: 'HTTPRoute', namespace })), { kind: 'Service' }),
    // ListenerSetDualParentRefIndependence.
    gateway('dual', [http('gw-dual', 'dual-gw.lset', { namespaces: { from: 'Same' } })], { from: 'Same' }),
    listenerSet(INFRA, 'dual-set', 'dual', [http('ls-dual', 'dual-ls.lset', { namespaces: { from: 'Same' } })]),
    route(INFRA, 'dual-both', [toGateway('dual'), toSet('dual-set')], '/both', 'infra-v1'),
    route(INFRA, 'dual-one', [toGateway('dual', 'ls-dual'), toSet('dual-set', INFRA, 'ls-dual')], '/one', 'infra-v2'),
    // ListenerSetGatewayParentSectionNameNotFound.
    gateway('section', [http('gw-only', 'section-gw.lset', { namespaces: { from: 'Same' } })], { from: 'Same' }),
    listenerSet(INFRA, 'section-set', 'section', [http('ls-only', 'section-ls.lset', { namespaces: { from: 'Same' } })]),
    route(INFRA, 'section-via-set', [toSet('section-set', INFRA, 'ls-only')], '/good', 'infra-v1'),
    route(INFRA, 'section-via-gateway', [toGateway('section', 'ls-only')], '/bad', 'infra-v2'),
    // ListenerSetHTTPRouting.
    gateway('routing', [http('gw-1', 'routing-gw-1.lset'), http('gw-2', 'routing-gw-2.lset')], { from: 'All' }),
    listenerSet(INFRA, 'routing-1', 'routing', [http('l1', 'routing-1-l1.lset'), http('l2', 'routing-1-l2.lset')]),
    listenerSet(INFRA, 'routing-2', 'routing', [http('l1', 'routing-2-l1.lset'), http('l2', 'routing-2-l2.lset')]),
    route(INFRA, 'everywhere', [toGateway('routing'), toSet('routing-1'), toSet('routing-2')], '/route', 'infra-v1'),
    route(INFRA, 'gateway-only', [toGateway('routing')], '/gateway-route', 'infra-v2'),
    route(INFRA, 'gateway-section', [toGateway('routing', 'gw-1')], '/gateway-section-route', 'infra-v3'),
    route(INFRA, 'set-1-only', [toSet('routing-1')], '/set-1-route', 'infra-v2'),
    route(INFRA, 'set-1-section', [toSet('routing-1', INFRA, 'l1')], '/set-1-section-route', 'infra-v3'),
    route(INFRA, 'set-2-only', [toSet('routing-2')], '/set-2-route', 'infra-v2'),
    // ListenerSetHostnameConflict: same creation time, so namespace/name orders the sets.
    gateway('hostnames', [http('gw', 'hostnames-gw.lset'), http('taken-by-gw', 'taken-by-gw.lset')], { from: 'Same' }),
    listenerSet(INFRA, 'hostnames-a1', 'hostnames', [http('own-a1', 'own-a1.lset'), http('taken-by-gw', 'taken-by-gw.lset'), http('taken-by-set', 'taken-by-set.lset')], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'hostnames-a2', 'hostnames', [http('taken-by-gw', 'taken-by-gw.lset')], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'hostnames-b1', 'hostnames', [http('own-b1', 'own-b1.lset'), http('taken-by-set', 'taken-by-set.lset')], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'hostnames-b2', 'hostnames', [http('taken-by-set', 'taken-by-set.lset')], '2026-01-01T00:00:00Z'),
    route(INFRA, 'hostnames-owner', [toGateway('hostnames', 'taken-by-gw')], '/', 'infra-v1'),
    route(INFRA, 'hostnames-squatter', [toSet('hostnames-a2')], '/', 'infra-v3'),
    // A hostname-less and a wildcard listener of another namespace's ListenerSet: not a conflict, but never the Gateway's exact host.
    gateway('isolation', [http('gw', 'iso-gw.lset')], { from: 'All' }),
    listenerSet('ls-elsewhere', 'wide', 'isolation', [http('any'), http('wild', '*.iso.lset')]),
    route(INFRA, 'iso-exact', [toGateway('isolation')], '/mine', 'infra-v1'),
    route('ls-elsewhere', 'iso-wide', [toSet('wide', 'ls-elsewhere')], '/', 'infra-v3', ['iso-gw.lset', 'x.iso.lset']),
    // ListenerSetProtocolConflict.
    gateway('protocols', [http('gw', 'protocols-gw.lset'), http('taken-by-gw', 'protocols-taken.lset')], { from: 'Same' }),
    listenerSet(INFRA, 'protocols-a1', 'protocols', [http('own-a1', 'protocols-a1.lset'), { name: 'tcp-vs-gw', port: 80, protocol: 'TCP', allowedRoutes: all }, http('set-http', 'protocols-set.lset')], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'protocols-a2', 'protocols', [{ name: 'tcp-vs-gw', port: 80, protocol: 'TCP', allowedRoutes: all }], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'protocols-b1', 'protocols', [http('own-b1', 'protocols-b1.lset'), { name: 'tcp-vs-set', port: 80, protocol: 'TCP', allowedRoutes: all }], '2026-01-01T00:00:00Z'),
    listenerSet(INFRA, 'protocols-b2', 'protocols', [{ name: 'tcp-vs-set', port: 80, protocol: 'TCP', allowedRoutes: all }], '2026-01-01T00:00:00Z'),
    // ListenerSetReferenceGrant: the Gateway's grant is not the ListenerSets'.
    namespace('ls-web'),
    namespace('ls-no-grant'),
    tlsSecret('ls-web', 'certificate', ca, readFileSync(cert.keyPath, 'utf8')),
    gateway('grants', [https('gw', 'tls-gw.lset')], { from: 'All' }),
    grant('ls-web', 'for-the-gateway', [{ kind: 'Gateway', namespace: INFRA }, { kind: 'Gateway', namespace: 'ls-no-grant' }], { kind: 'Secret' }),
    grant('ls-web', 'for-infra-sets', [{ kind: 'ListenerSet', namespace: INFRA }], { kind: 'Secret' }),
    listenerSet(INFRA, 'granted-set', 'grants', [https('granted', 'granted.lset')]),
    listenerSet('ls-no-grant', 'not-granted-set', 'grants', [https('not-granted', 'not-granted.lset')]),
    route(INFRA, 'granted-route', [toSet('granted-set')], '/', 'infra-v1'),
    route('ls-no-grant', 'not-granted-route', [toSet('not-granted-set', 'ls-no-grant')], '/', 'infra-v2'),
    grant(INFRA, 'no-grant-to-services', [{ kind: 'HTTPRoute', namespace: 'ls-no-grant' }], { kind: 'Service' }),
    // ListenerSetRouteStatusScopedToParentRef.
    gateway('scoped', [http('gw', 'scoped-gw.lset', { namespaces: { from: 'Same' } })], { from: 'Same' }),
    listenerSet(INFRA, 'scoped-set', 'scoped', [http('ls', 'scoped-ls.lset', { namespaces: { from: 'Same' } })]),
    route(INFRA, 'scoped-gw-only', [toGateway('scoped')], '/gw-only', 'infra-v1'),
    route(INFRA, 'scoped-set-only', [toSet('scoped-set')], '/set-only', 'infra-v2'),
    // Careless and hostile values: a hostname with CR/LF, a repeated listener name.
    gateway('careless', [http('gw', 'careless-gw.lset')], { from: 'Same' }),
    listenerSet(INFRA, 'careless-set', 'careless', [http('crlf', 'evil.lset\r\nX-Injected: 1'), http('fine', 'careless-ls.lset'), http('fine', 'careless-dup.lset')]),
    route(INFRA, 'careless-route', [toSet('careless-set')], '/', 'infra-v1'),
  ];
  ({ fake, ctl } = await startGatewayController(tmp, objects));
  await waitFor(() => objects.filter((o) => o.kind === 'ListenerSet').every((o) => setStatus(o.metadata.name, o.metadata.namespace)?.conditions !== undefined)
    && objects.filter((o) => o.kind === 'HTTPRoute').every((o) => parents(o.metadata.name, o.metadata.namespace).length > 0),
  { what: 'the status of every ListenerSet and route written', timeoutMs: 30_000 });
});

test.after(() => stopGatewayController(ctl, fake, echo, tmp));

// ---- which ListenerSets a Gateway takes

test('ListenerSetDefaultNotAllowed › without allowedListeners a Gateway takes no ListenerSet: NotAllowed, 0 attached', () => {
  assert.is(cond(gwStatus('default')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.is(gwStatus('default')?.attachedListenerSets, 0);
  assert.equal(setConds('default-set'), ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed']);
  assert.is(accepted('default-route', 'ListenerSet'), 'Accepted=False/NoMatchingParent');
});
over.both('ListenerSetDefaultNotAllowed › attacker: the refused ListenerSet serves nothing', async (p) => {
  const before = echo['infra-v1']!.hits();
  assert.is((await p.request('default-ls.lset', '/')).status, 404);
  assert.is(echo['infra-v1']!.hits(), before);
});

test('ListenerSetAllowedNamespaceNone › allowedListeners from None: NotAllowed, 0 attached', () => {
  assert.is(cond(gwStatus('none')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.is(gwStatus('none')?.attachedListenerSets, 0);
  assert.equal(setConds('none-set'), ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed']);
});
over.both('ListenerSetAllowedNamespaceNone › attacker: the refused ListenerSet serves nothing', async (p) => {
  assert.is((await p.request('none-ls.lset', '/')).status, 404);
});

test('ListenerSetAllowedNamespaceSame › from Same: the Gateway\'s namespace is taken, another refused', () => {
  assert.is(cond(gwStatus('same')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.is(gwStatus('same')?.attachedListenerSets, 1);
  assert.equal(setConds('same-set'), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('same-set', 'ls')), JSON.stringify(setListener('same-set', 'ls')));
  assert.equal(setConds('other-set', 'ls-elsewhere'), ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed']);
  assert.equal(setStatus('other-set', 'ls-elsewhere')?.listeners, []);
});
over.both('ListenerSetAllowedNamespaceSame › attacker: a route on the refused ListenerSet of another namespace is not served', async (p) => {
  const before = echo['infra-v2']!.hits();
  assert.is((await p.request('same-other.lset', '/')).status, 404);
  assert.is(echo['infra-v2']!.hits(), before);
  assert.is(accepted('other-route', 'ListenerSet', 'ls-elsewhere'), 'Accepted=False/NoMatchingParent');
});

test('ListenerSetAllowedNamespaceSelector › from Selector: a namespace with the labels is taken, one without refused', () => {
  assert.is(gwStatus('selector')?.attachedListenerSets, 1);
  assert.equal(setConds('selected-set', 'ls-selected'), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('selected-set', 'ls', 'ls-selected')));
  assert.equal(setConds('unselected-set', 'ls-unselected'), ['Accepted=False/NotAllowed', 'Programmed=False/NotAllowed']);
});

test('ListenerSetAllowedNamespaceSelector › relabelling the namespace takes the ListenerSet in, and out again', async () => {
  const ns = fake.get('v1', 'Namespace', 'ls-unselected')!;
  fake.update({ ...ns, metadata: { ...ns.metadata, labels: { 'lset-tenant': 'yes' } } });
  await waitFor(() => setConds('unselected-set', 'ls-unselected')[0] === 'Accepted=True/Accepted' && gwStatus('selector')?.attachedListenerSets === 2, { what: 'the relabelled namespace taken', timeoutMs: 20_000 });
  const now = fake.get('v1', 'Namespace', 'ls-unselected')!;
  fake.update({ ...now, metadata: { ...now.metadata, labels: { 'lset-tenant': 'no' } } });
  await waitFor(() => setConds('unselected-set', 'ls-unselected')[0] === 'Accepted=False/NotAllowed' && gwStatus('selector')?.attachedListenerSets === 1, { what: 'refused again', timeoutMs: 20_000 });
});

// ---- routes on ListenerSets

test('ListenerSetAllowedRoutesNamespaces › each listener takes the routes its allowedRoutes admit; Same is the ListenerSet\'s namespace', () => {
  assert.is(gwStatus('routes')?.attachedListenerSets, 2);
  const counts = setStatus('routes-set')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`);
  assert.equal(counts, ['all:3', 'same:1', 'selector:1']);
  for (const l of setStatus('routes-set')!.listeners!) {
    assert.ok(served(l), l.name);
    assert.equal(l.supportedKinds, [{ group: GROUP, kind: 'HTTPRoute' }]);
  }
  for (const [name, ns] of [['in-same', INFRA], ['in-selected', 'ls-routes-allowed'], ['in-unselected', 'ls-routes-denied']] as const) {
    assert.is(accepted(name, 'ListenerSet', ns), 'Accepted=True/Accepted', name);
  }
  assert.equal(setStatus('cross-set', 'ls-cross')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`), ['cross-same:1']);
  assert.is(accepted('in-set-namespace', 'ListenerSet', 'ls-cross'), 'Accepted=True/Accepted');
  assert.is(accepted('in-gateway-namespace', 'ListenerSet'), 'Accepted=False/NotAllowedByListeners');
});
over.both('ListenerSetAllowedRoutesNamespaces › requests reach only the routes each listener admits', async (p) => {
  const cases: Array<[string, string, string | 404]> = [
    ['routes-all.lset', '/in-same', 'infra-v1'], ['routes-all.lset', '/in-selected', 'infra-v2'], ['routes-all.lset', '/in-unselected', 'infra-v3'],
    ['routes-same.lset', '/in-same', 'infra-v1'], ['routes-same.lset', '/in-selected', 404], ['routes-same.lset', '/in-unselected', 404],
    ['routes-selector.lset', '/in-same', 404], ['routes-selector.lset', '/in-selected', 'infra-v2'], ['routes-selector.lset', '/in-unselected', 404],
    ['routes-cross.lset', '/in-set-namespace', 'infra-v1'], ['routes-cross.lset', '/in-gateway-namespace', 404],
  ];
  for (const [host, path, want] of cases) {
    const r = await p.request(host, path);
    if (want === 404) assert.is(r.status, 404, `${host}${path}`);
    else assert.equal([r.status, r.backend], [200, want], `${host}${path}`);
  }
});

test('ListenerSetDualParentRefIndependence › each parentRef of a route is judged on its own', () => {
  assert.is(gwStatus('dual')?.attachedListenerSets, 1);
  assert.equal(setStatus('dual-set')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`), ['ls-dual:2']);
  assert.ok(served(setListener('dual-set', 'ls-dual')));
  assert.equal([accepted('dual-both', 'Gateway'), accepted('dual-both', 'ListenerSet')], ['Accepted=True/Accepted', 'Accepted=True/Accepted']);
  // The Gateway has no listener of the ListenerSet's listener's name.
  assert.equal([accepted('dual-one', 'Gateway'), accepted('dual-one', 'ListenerSet')], ['Accepted=False/NoMatchingParent', 'Accepted=True/Accepted']);
});
over.both('ListenerSetDualParentRefIndependence › the route with both parents is served on both hosts, the other on the ListenerSet\'s only', async (p) => {
  assert.is((await p.request('dual-gw.lset', '/both')).backend, 'infra-v1');
  assert.is((await p.request('dual-ls.lset', '/both')).backend, 'infra-v1');
  assert.is((await p.request('dual-ls.lset', '/one')).backend, 'infra-v2');
  assert.is((await p.request('dual-gw.lset', '/one')).status, 404);
});

test('ListenerSetGatewayParentSectionNameNotFound › a Gateway parentRef cannot name a ListenerSet\'s listener', () => {
  assert.is(gwStatus('section')?.attachedListenerSets, 1);
  assert.equal(brief(parentOf('section-via-set', 'ListenerSet')?.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  assert.is(accepted('section-via-gateway', 'Gateway'), 'Accepted=False/NoMatchingParent');
  assert.is(gwListener('section', 'gw-only')?.attachedRoutes, 0);
});
over.both('ListenerSetGatewayParentSectionNameNotFound › the ListenerSet\'s route is served, the Gateway-parented one is not', async (p) => {
  assert.is((await p.request('section-ls.lset', '/good')).backend, 'infra-v1');
  const before = echo['infra-v2']!.hits();
  assert.is((await p.request('section-gw.lset', '/bad')).status, 404);
  assert.is((await p.request('section-ls.lset', '/bad')).status, 404);
  assert.is(echo['infra-v2']!.hits(), before);
});

test('ListenerSetHTTPRouting › routes attach to the Gateway, the ListenerSets or one listener, and are counted there', () => {
  assert.is(gwStatus('routing')?.attachedListenerSets, 2);
  for (const route of ['everywhere', 'gateway-only', 'gateway-section']) assert.is(accepted(route, 'Gateway'), 'Accepted=True/Accepted', route);
  for (const route of ['everywhere', 'set-1-only', 'set-1-section', 'set-2-only']) assert.is(accepted(route, 'ListenerSet'), 'Accepted=True/Accepted', route);
  assert.equal(setStatus('routing-1')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`), ['l1:3', 'l2:2']);
  assert.equal(setStatus('routing-2')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`), ['l1:2', 'l2:2']);
  assert.equal(gwStatus('routing')?.listeners?.map((l) => `${l.name}:${l.attachedRoutes}`), ['gw-1:3', 'gw-2:2']);
  for (const set of ['routing-1', 'routing-2']) for (const l of setStatus(set)!.listeners!) assert.ok(served(l), `${set}/${l.name}`);
});
over.both('ListenerSetHTTPRouting › every host answers only the routes attached through its listener', async (p) => {
  const hosts = ['routing-gw-1.lset', 'routing-gw-2.lset', 'routing-1-l1.lset', 'routing-1-l2.lset', 'routing-2-l1.lset', 'routing-2-l2.lset'];
  // Path → the backend on each host above, in order (404: not served there).
  const table: Record<string, Array<string | 404>> = {
    '/route': ['infra-v1', 'infra-v1', 'infra-v1', 'infra-v1', 'infra-v1', 'infra-v1'],
    '/gateway-route': ['infra-v2', 'infra-v2', 404, 404, 404, 404],
    '/gateway-section-route': ['infra-v3', 404, 404, 404, 404, 404],
    '/set-1-route': [404, 404, 'infra-v2', 'infra-v2', 404, 404],
    '/set-1-section-route': [404, 404, 'infra-v3', 404, 404, 404],
    '/set-2-route': [404, 404, 404, 404, 'infra-v2', 'infra-v2'],
  };
  for (const [path, wants] of Object.entries(table)) {
    for (const [i, want] of wants.entries()) {
      const r = await p.request(hosts[i]!, path);
      if (want === 404) assert.is(r.status, 404, `${hosts[i]}${path}`);
      else assert.equal([r.status, r.backend], [200, want], `${hosts[i]}${path}`);
    }
  }
});

// ---- conflicts

test('ListenerSetHostnameConflict › the Gateway\'s listener, then the older or first ListenerSet, keeps a hostname; the others are conflicted', () => {
  assert.is(cond(gwStatus('hostnames')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.ok(served(gwListener('hostnames', 'gw')) && served(gwListener('hostnames', 'taken-by-gw')));
  assert.is(gwStatus('hostnames')?.attachedListenerSets, 2);
  assert.equal(setConds('hostnames-a1'), ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('hostnames-a1', 'own-a1')) && served(setListener('hostnames-a1', 'taken-by-set')));
  assert.equal(conflicted(setListener('hostnames-a1', 'taken-by-gw')), CONFLICT('HostnameConflict'));
  assert.equal(setListener('hostnames-a1', 'taken-by-gw')?.supportedKinds, []);
  assert.equal(setConds('hostnames-a2'), ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  assert.equal(conflicted(setListener('hostnames-a2', 'taken-by-gw')), CONFLICT('HostnameConflict'));
  assert.equal(setConds('hostnames-b1'), ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('hostnames-b1', 'own-b1')));
  assert.equal(conflicted(setListener('hostnames-b1', 'taken-by-set')), CONFLICT('HostnameConflict'));
  assert.equal(setConds('hostnames-b2'), ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  assert.equal(conflicted(setListener('hostnames-b2', 'taken-by-set')), CONFLICT('HostnameConflict'));
  // The message names no sibling: a tenant learns the hostname is taken, not by whom.
  const message = (setStatus('hostnames-b2')!.listeners![0]!.conditions.find((c) => c.type === 'Conflicted') as Cond & { message: string }).message;
  assert.not.match(message, /hostnames-a1|hostnames-gw|Gateway ls-infra/);
});
over.both('ListenerSetHostnameConflict › attacker: a ListenerSet claiming the Gateway\'s hostname takes none of its traffic', async (p) => {
  const before = echo['infra-v3']!.hits();
  for (let i = 0; i < 3; i++) assert.is((await p.request('taken-by-gw.lset', '/')).backend, 'infra-v1');
  assert.is(echo['infra-v3']!.hits(), before);
  assert.is(accepted('hostnames-squatter', 'ListenerSet'), 'Accepted=False/NoMatchingParent');
});
over.both('ListenerSetHostnameConflict › attacker: a wider listener of another namespace\'s ListenerSet never gets a host the Gateway\'s listener names', async (p) => {
  const before = echo['infra-v3']!.hits();
  assert.is((await p.request('iso-gw.lset', '/mine')).backend, 'infra-v1');
  // Paths the Gateway's routes do not claim on that host are not the ListenerSet's either.
  assert.is((await p.request('iso-gw.lset', '/other')).status, 404);
  assert.is(echo['infra-v3']!.hits(), before);
  // The wildcard still serves the names no more specific listener holds.
  assert.is((await p.request('x.iso.lset', '/')).backend, 'infra-v3');
  assert.is(accepted('iso-wide', 'ListenerSet', 'ls-elsewhere'), 'Accepted=True/Accepted');
});

test('ListenerSetProtocolConflict › a listener on a port the Gateway or an earlier ListenerSet uses with another protocol is conflicted', () => {
  assert.is(cond(gwStatus('protocols')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.ok(served(gwListener('protocols', 'gw')) && served(gwListener('protocols', 'taken-by-gw')));
  assert.is(gwStatus('protocols')?.attachedListenerSets, 2);
  assert.equal(setConds('protocols-a1'), ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('protocols-a1', 'own-a1')) && served(setListener('protocols-a1', 'set-http')));
  assert.equal(conflicted(setListener('protocols-a1', 'tcp-vs-gw')), CONFLICT('ProtocolConflict'));
  assert.equal(setConds('protocols-a2'), ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  assert.equal(conflicted(setListener('protocols-a2', 'tcp-vs-gw')), CONFLICT('ProtocolConflict'));
  assert.equal(setConds('protocols-b1'), ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  assert.ok(served(setListener('protocols-b1', 'own-b1')));
  assert.equal(conflicted(setListener('protocols-b1', 'tcp-vs-set')), CONFLICT('ProtocolConflict'));
  assert.equal(setConds('protocols-b2'), ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  assert.equal(conflicted(setListener('protocols-b2', 'tcp-vs-set')), CONFLICT('ProtocolConflict'));
});

// ---- certificates

test('ListenerSetReferenceGrant › a grant to ListenerSets of the namespace resolves the certificate; a grant to Gateways does not', () => {
  assert.is(cond(gwStatus('grants')?.conditions, 'Accepted'), 'Accepted=True/Accepted');
  assert.equal(setConds('granted-set'), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.is(cond(setListener('granted-set', 'granted')?.conditions, 'ResolvedRefs'), 'ResolvedRefs=True/ResolvedRefs');
  assert.equal(setConds('not-granted-set', 'ls-no-grant'), ['Accepted=False/ListenersNotValid', 'Programmed=False/ListenersNotValid']);
  assert.is(cond(setListener('not-granted-set', 'not-granted', 'ls-no-grant')?.conditions, 'ResolvedRefs'), 'ResolvedRefs=False/RefNotPermitted');
});
over.both('ListenerSetReferenceGrant › the granted ListenerSet\'s host presents the Secret\'s certificate', async (p) => {
  const r = await p.until('granted.lset', '/', (x) => x.status === 200, { https: true, ca, what: 'granted.lset over TLS with the granted certificate' });
  assert.is(r.backend, 'infra-v1');
});
over.both('ListenerSetReferenceGrant › attacker: the ungranted ListenerSet\'s host never gets the other namespace\'s certificate', async (p) => {
  // Its route is served, with the default certificate, which the Secret's CA does not verify.
  await p.until('not-granted.lset', '/', (x) => x.status === 200 && x.backend === 'infra-v2', { https: true, what: 'not-granted.lset served' });
  let refused: unknown = null;
  await p.request('not-granted.lset', '/', { https: true, ca }).catch((err: unknown) => { refused = err; });
  assert.ok(refused, 'a TLS handshake verified by the Secret\'s CA must fail');
});

test('ListenerSetRouteStatusScopedToParentRef › a route\'s status has one entry per parentRef it names, no more', () => {
  assert.is(gwStatus('scoped')?.attachedListenerSets, 1);
  assert.equal(setStatus('scoped-set')?.listeners?.map((l) => [l.name, l.attachedRoutes, l.supportedKinds, served(l)]), [['ls', 1, [{ group: GROUP, kind: 'HTTPRoute' }], true]]);
  assert.equal(gwListener('scoped', 'gw')?.attachedRoutes, 1);
  const gwOnly = parents('scoped-gw-only');
  assert.equal(gwOnly.map((p) => [p.parentRef.kind ?? 'Gateway', p.parentRef.name, p.controllerName, cond(p.conditions, 'Accepted')]), [['Gateway', 'scoped', 'ingress-rx.io/gateway', 'Accepted=True/Accepted']]);
  const setOnly = parents('scoped-set-only');
  assert.equal(setOnly.map((p) => [p.parentRef.kind, p.parentRef.group, p.parentRef.name, p.parentRef.namespace, cond(p.conditions, 'Accepted')]), [['ListenerSet', GROUP, 'scoped-set', INFRA, 'Accepted=True/Accepted']]);
});
over.both('ListenerSetRouteStatusScopedToParentRef › each route is served only through its own parent', async (p) => {
  assert.is((await p.request('scoped-gw.lset', '/gw-only')).backend, 'infra-v1');
  assert.is((await p.request('scoped-ls.lset', '/gw-only')).status, 404);
  assert.is((await p.request('scoped-ls.lset', '/set-only')).backend, 'infra-v2');
  assert.is((await p.request('scoped-gw.lset', '/set-only')).status, 404);
});

// ---- beyond the suite: careless and hostile values, changes while running

test('ListenerSetHostnameConflict › careless: a hostname with CR/LF is not accepted and the set\'s other listener still serves; a repeated name is set aside', () => {
  const crlf = setListener('careless-set', 'crlf');
  assert.is(cond(crlf?.conditions, 'Accepted'), 'Accepted=False/UnsupportedValue');
  assert.equal(setConds('careless-set'), ['Accepted=True/ListenersNotValid', 'Programmed=True/Programmed']);
  assert.equal(setStatus('careless-set')?.listeners?.map((l) => l.name), ['crlf', 'fine']);
  assert.ok(served(setListener('careless-set', 'fine')));
});
over.both('ListenerSetHostnameConflict › careless: the valid listener serves, the repeated one does not, nothing is injected', async (p) => {
  const r = await p.request('careless-ls.lset', '/');
  assert.equal([r.status, r.backend], [200, 'infra-v1']);
  assert.is(r.json?.headers && (r.json.headers as Record<string, string>)['x-injected'], undefined);
  assert.is((await p.request('careless-dup.lset', '/')).status, 404);
  assert.is((await p.request('evil.lset', '/')).status, 404);
});

test('ListenerSetHTTPRouting › a ListenerSet and its route added while running are served; deleting it stops both and uncounts it', async () => {
  fake.create(listenerSet(INFRA, 'late-set', 'same', [http('late', 'late.lset')]));
  fake.create(route(INFRA, 'late-route', [toSet('late-set')], '/', 'infra-v3'));
  await ctl.until('late.lset', '/', (r) => r.backend === 'infra-v3', { what: 'the new ListenerSet served' });
  await waitFor(() => gwStatus('same')?.attachedListenerSets === 2, { what: 'counted on its Gateway', timeoutMs: 20_000 });
  fake.delete(GATEWAY_V1, 'ListenerSet', 'late-set', INFRA);
  await ctl.until('late.lset', '/', (r) => r.status === 404, { what: 'the deleted ListenerSet no longer served' });
  // A parentRef to a ListenerSet that is on none of our Gateways (here: none at all) is not ours to answer: our entry goes.
  await waitFor(() => gwStatus('same')?.attachedListenerSets === 1 && parentOf('late-route', 'ListenerSet') === undefined, { what: 'uncounted, our parent entry of its route removed', timeoutMs: 20_000 });
});

test.run();
