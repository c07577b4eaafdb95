// The Gateway API kinds come in: the kube source lists and watches them from the fake API server
// (with --enable-gateway-api only), manifests are read as a cluster would hold them, and the
// store keeps them normalised, with the GatewayClass's controllerName deciding what is ours.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import { silentLogger } from '../../../src/log.js';
import type { SourceEvent } from '../../../src/store/events.js';
import type { Gateway, HTTPRoute } from '../../../src/store/kube-types.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { informerSpecs, kubeSource } from '../../../src/streams/kube.js';
import { readManifests } from '../../../src/streams/manifests.js';
import { renderModel } from '../../../src/cli/render.js';
import { lintManifests } from '../../../src/admission/lint.js';
import { FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';

const V1 = 'gateway.networking.k8s.io/v1';

const gatewayClass = (name: string, controllerName: string): FakeObject => ({ apiVersion: V1, kind: 'GatewayClass', metadata: { name }, spec: { controllerName } });
const gateway = (ns: string, name: string, className: string): FakeObject => ({
  apiVersion: V1, kind: 'Gateway', metadata: { namespace: ns, name },
  spec: { gatewayClassName: className, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
});
const route = (ns: string, name: string, extra: Record<string, unknown> = {}): FakeObject => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { namespace: ns, name },
  spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['a.example.com'], rules: [{ backendRefs: [{ name: 'svc', port: 80 }] }], ...extra },
});
const grant = (ns: string, name: string): FakeObject => ({
  apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { namespace: ns, name },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }], to: [{ group: '', kind: 'Service' }] },
});

const kube = suite('gateway api: kube source');

kube('without --enable-gateway-api no Gateway API informer runs; with it, one per kind and Namespaces unfiltered', () => {
  const off = informerSpecs({ watchNamespaces: [], namespaceSelector: '' }).map((s) => s.kind);
  assert.not.ok(off.some((k) => ['GatewayClass', 'Gateway', 'HTTPRoute', 'ReferenceGrant', 'Namespace'].includes(k)), off.join());
  const on = informerSpecs({ watchNamespaces: ['team-a'], namespaceSelector: '', gatewayAPI: true });
  assert.equal(on.filter((s) => s.kind === 'GatewayClass'), [{ kind: 'GatewayClass' }], 'cluster-scoped: one informer');
  assert.equal(on.filter((s) => s.kind === 'HTTPRoute'), [{ kind: 'HTTPRoute', namespace: 'team-a' }]);
  assert.equal(on.filter((s) => s.kind === 'Namespace'), [{ kind: 'Namespace' }]);
});

kube('lists and watches GatewayClass, Gateway, HTTPRoute and ReferenceGrant from the API server, routes last', async () => {
  const server = await FakeApiServer.start();
  let sub: Subscription | undefined;
  try {
    server.create(gatewayClass('ours', 'ingress-rx.io/gateway'));
    server.create(gateway('infra', 'gw', 'ours'));
    server.create(route('team-a', 'r1'));
    server.create(grant('team-b', 'g1'));
    const events: SourceEvent[] = [];
    sub = kubeSource({
      kubeConfig: server.kubeConfig(), watchNamespaces: [], namespaceSelector: '', logger: silentLogger(), gatewayAPI: true,
      restartBackoffMs: { initial: 50, max: 400 }, minWatchGapMs: 20,
    }).subscribe((e) => events.push(e));
    await waitFor(() => events.length >= 4, { what: 'initial burst' });
    assert.equal(events.map((e) => `${e.type} ${e.kind} ${e.key}`), [
      'add GatewayClass ours', 'add Gateway infra/gw', 'add ReferenceGrant team-b/g1', 'add HTTPRoute team-a/r1',
    ]);
    assert.is(events[3]!.object.apiVersion, V1);
    assert.equal((events[3]!.object as HTTPRoute).spec.hostnames, ['a.example.com']);
    assert.is(events[2]!.object.apiVersion, 'gateway.networking.k8s.io/v1beta1');

    const r1 = server.get(V1, 'HTTPRoute', 'r1', 'team-a')!;
    server.update({ ...r1, spec: { ...(r1.spec as object), hostnames: ['b.example.com'] } });
    const upd = await waitFor(() => events.find((e) => e.type === 'update' && e.kind === 'HTTPRoute'), { what: 'HTTPRoute update' });
    assert.equal((upd.object as HTTPRoute).spec.hostnames, ['b.example.com']);
    assert.equal((upd.old as HTTPRoute).spec.hostnames, ['a.example.com']);
    server.delete(V1, 'HTTPRoute', 'r1', 'team-a');
    await waitFor(() => events.find((e) => e.type === 'delete' && e.kind === 'HTTPRoute' && e.key === 'team-a/r1'), { what: 'HTTPRoute delete' });
  } finally {
    sub?.unsubscribe();
    await server.close();
  }
});

const files = suite('gateway api: manifests');

/** Our GatewayClass and a Gateway `gw` with one HTTP listener, as YAML (11 lines). */
const classAndGateway = (meta: string, listener = '') => `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ours}
spec: {controllerName: ingress-rx.io/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw${meta}}
spec:
  gatewayClassName: ours
  listeners: [{name: http, port: 80, protocol: HTTP${listener}}]
`;

files('local mode reads the Gateway API kinds; a bad one is named with its line and the others stay', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-manifests-'));
  writeFileSync(join(dir, 'gw.yaml'), `${classAndGateway('')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken, namespace: team-a}
spec: "not a mapping"
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: team-a}
spec:
  parentRefs: [{name: gw, namespace: default}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`);
  const { events, errors } = readManifests(dir, { now: () => Date.UTC(2026, 0, 1) });
  assert.equal(events.map((e) => `${e.kind} ${e.key}`), ['GatewayClass ours', 'Gateway default/gw', 'HTTPRoute team-a/web']);
  assert.is(errors.length, 1);
  assert.match(errors[0]!.reason, /HTTPRoute broken: spec must be a mapping/);
  assert.is(errors[0]!.line, 13);
  assert.type(events[2]!.object.metadata.creationTimestamp, 'string');
});

files('render reads them too: the route\'s host in the model, its refused backendRef named', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-render-'));
  writeFileSync(join(dir, 'gw.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
    gatewayClass('ours', 'ingress-rx.io/gateway'),
    { ...gateway('infra', 'gw', 'ours'), spec: { gatewayClassName: 'ours', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] } },
    route('team-a', 'r1', { rules: [{ backendRefs: [{ name: 'svc', namespace: 'team-b', port: 80 }] }] }),
  ] }));
  const r = renderModel(dir, { dynamicRoutes: true });
  assert.equal(r.manifestErrors, []);
  const server = r.config.servers.find((s) => s.hostname === 'a.example.com');
  assert.ok(server, 'the HTTPRoute\'s host is a server');
  assert.is(server!.locations.find((l) => l.path === '/')!.denied !== null, true);
  assert.ok(r.warnings.some((w) => w.object === 'HTTPRoute team-a/r1' && w.field === 'spec.rules[0].backendRefs[0]'), JSON.stringify(r.warnings));
});

files('lint denies an HTTPRoute\'s refused reference, at the line of its rules', () => {
  const text = `${classAndGateway(', namespace: infra', ', allowedRoutes: {namespaces: {from: All}}')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: steal, namespace: team-a}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  hostnames: [a.example.com]
  rules: [{backendRefs: [{name: db, namespace: team-b, port: 80}]}]
`;
  const r = lintManifests([{ file: 'gw.yaml', text }], { store: defaultStoreOptions(), annotationsPrefix: 'nginx.ingress.kubernetes.io', now: () => new Date('2026-06-01T00:00:00Z') });
  const f = r.findings.filter((x) => x.object === 'HTTPRoute team-a/steal');
  assert.equal(f.map((x) => [x.severity, x.file, x.line, x.field]), [['deny', 'gw.yaml', 19, 'spec.rules[0].backendRefs[0]']]);
  assert.match(f[0]!.message, /no ReferenceGrant in "team-b"/);
});

files('local mode and render read ListenerSets: one without a parentRef is named with its line, a route through an allowed one is served on its listener\'s host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-lset-'));
  writeFileSync(join(dir, 'gw.yaml'), `${classAndGateway(', namespace: infra', ', hostname: gw.example.com')}  allowedListeners: {namespaces: {from: All}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: orphan, namespace: team-a}
spec:
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: orphan.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team-a}
spec:
  parentRef: {name: gw, namespace: infra}
  listeners: [{name: http, port: 80, protocol: HTTP, hostname: team-a.example.com}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: team-a}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: ListenerSet, name: extra}]
  rules: [{backendRefs: [{name: web, port: 80}]}]
`);
  const { events, errors } = readManifests(dir, { now: () => Date.UTC(2026, 0, 1) });
  assert.equal(events.map((e) => `${e.kind} ${e.key}`), ['GatewayClass ours', 'Gateway infra/gw', 'ListenerSet team-a/extra', 'HTTPRoute team-a/web']);
  assert.equal(errors.map((e) => [e.line, e.reason.includes('ListenerSet orphan: spec.parentRef is required')]), [[14, true]]);
  const r = renderModel(dir, { dynamicRoutes: true });
  assert.equal(r.config.servers.filter((s) => s.hostname.endsWith('example.com')).map((s) => s.hostname), ['team-a.example.com']);
});

const store = suite('gateway api: store');

function ev(kind: SourceEvent['kind'], object: FakeObject, type: SourceEvent['type'] = 'add'): SourceEvent {
  const ns = object.metadata.namespace;
  return { kind, type, key: ns ? `${ns}/${object.metadata.name}` : object.metadata.name, object: object as SourceEvent['object'] };
}

store('a GatewayClass is ours by controllerName (flag); only our classes\' Gateways are listed', () => {
  const s = createStore({ ...defaultStoreOptions(), gatewayControllerName: 'example.com/gw' }, { secretAnnotations: [] });
  assert.is(s.apply(ev('GatewayClass', gatewayClass('theirs', 'ingress-rx.io/gateway'))).relevant, false);
  assert.is(s.apply(ev('Gateway', gateway('infra', 'other', 'theirs'))).relevant, false);
  assert.ok(s.apply(ev('GatewayClass', gatewayClass('ours', 'example.com/gw'))).relevant);
  assert.ok(s.apply(ev('Gateway', gateway('infra', 'gw', 'ours'))).relevant);
  const view = s.gatewayResources!();
  assert.equal(view.classes.map((c) => c.metadata.name), ['ours']);
  assert.equal(view.gateways.map((g) => g.metadata.name), ['gw']);
  assert.is(s.gatewayResources!(), view, 'the same object until something changes');
  s.apply(ev('GatewayClass', gatewayClass('ours', 'example.com/gw'), 'delete'));
  assert.equal(s.gatewayResources!().gateways, [], 'the Gateway of a deleted class is no longer ours');
});

store('a change of a Gateway\'s or HTTPRoute\'s status alone is kept and marked statusOnly, no sync; a spec change syncs', () => {
  const s = createStore({ ...defaultStoreOptions(), gatewayControllerName: 'example.com/gw' }, { secretAnnotations: [] });
  s.apply(ev('GatewayClass', gatewayClass('ours', 'example.com/gw')));
  const gw = gateway('infra', 'gw', 'ours');
  s.apply(ev('Gateway', gw));
  const r = route('infra', 'r1');
  s.apply(ev('HTTPRoute', r));
  const parents = [{ parentRef: { name: 'gw' }, controllerName: 'example.com/gw', conditions: [{ type: 'Accepted', status: 'True' }] }];
  const routeStatus = s.apply(ev('HTTPRoute', { ...r, status: { parents } } as FakeObject, 'update'));
  assert.equal([routeStatus.relevant, routeStatus.statusOnly], [false, true], routeStatus.reason);
  assert.equal((s.gatewayResources!().httpRoutes[0] as { status?: unknown }).status, { parents }, 'the status writer reads the new status');
  const gwStatus = s.apply(ev('Gateway', { ...gw, status: { conditions: [{ type: 'Programmed', status: 'True' }] } } as FakeObject, 'update'));
  assert.equal([gwStatus.relevant, gwStatus.statusOnly], [false, true], gwStatus.reason);
  const spec = s.apply(ev('HTTPRoute', { ...route('infra', 'r1', { hostnames: ['b.example'] }), status: { parents } } as FakeObject, 'update'));
  assert.equal([spec.relevant, spec.statusOnly], [true, undefined], 'the spec changed with the status');
});

store('HTTPRoutes and Gateways are held with the CRDs\' defaults; unwatched namespaces are not held', () => {
  const s = createStore({ ...defaultStoreOptions(), watchNamespaces: ['team-a', 'infra'] }, { secretAnnotations: [] });
  s.apply(ev('GatewayClass', gatewayClass('ours', 'ingress-rx.io/gateway')));
  s.apply(ev('Gateway', gateway('infra', 'gw', 'ours')));
  s.apply(ev('HTTPRoute', route('team-a', 'r1', { rules: [{ matches: [{ method: 'GET' }], backendRefs: [{ name: 'svc', port: 80 }] }] })));
  s.apply(ev('HTTPRoute', route('team-a', 'r2', { rules: undefined })));
  assert.is(s.apply(ev('HTTPRoute', route('elsewhere', 'r3'))).relevant, false);
  const view = s.gatewayResources!();
  assert.equal(view.httpRoutes.map((r) => r.metadata.name), ['r1', 'r2']);
  assert.equal(view.httpRoutes[0]!.spec.rules, [{ matches: [{ method: 'GET', path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'svc', port: 80, weight: 1 }] }]);
  assert.equal(view.httpRoutes[1]!.spec.rules, [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }]);
  assert.equal((view.gateways[0] as Gateway).spec.listeners![0]!.allowedRoutes, { namespaces: { from: 'Same' } });
});

kube.run();
files.run();
store.run();
