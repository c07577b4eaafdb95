// Core scenarios of the Gateway API conformance suite's GATEWAY-HTTP profile that check status
// conditions, ported to `ingress-rx controller --enable-gateway-api` against the in-process fake
// API server (real list/watch, status through the status subresource) with real NGINX, in our
// own manifests (docs/gateway-api.md, Conformance). One controller: each scenario has its own
// Gateway, route, host names and, where grants are involved, its own namespace.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { generateCertificate } from '../../support/lua-nginx.js';
import { service, slices, tlsSecret, type CliProcess } from '../../support/local-harness.js';
import { waitFor } from '../../support/wait.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1, startGatewayController, stopGatewayController } from '../../support/gateway-local.js';

const GROUP = 'gateway.networking.k8s.io';
const INFRA = 'conf-infra';
const WEB = 'conf-web';
const APP = 'conf-app';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-conf-'));

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; observedGeneration: number };
type ListenerStatus = { name: string; attachedRoutes: number; supportedKinds: Array<{ kind: string }>; conditions: Cond[] };

const http = (name = 'http', extra: Obj = {}) => ({ name, port: 80, protocol: 'HTTP', ...extra });
const https = (refs: Obj[], extra: Obj = {}) => ({ name: 'https', port: 443, protocol: 'HTTPS', allowedRoutes: { namespaces: { from: 'All' } }, tls: { certificateRefs: refs }, ...extra });
const gateway = (ns: string, name: string, listeners: Obj[], spec: Obj = {}): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: ns }, spec: { gatewayClassName: 'conf', listeners, ...spec },
});
const route = (ns: string, name: string, host: string, rules: Obj[], parent: Obj = { name: 'same', namespace: INFRA }): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns }, spec: { parentRefs: [parent], hostnames: [host], rules },
});
const hostless = (name: string, gateway: string, rules: Obj[]): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: INFRA }, spec: { parentRefs: [{ name: gateway, namespace: INFRA }], rules },
});
const grant = (ns: string, name: string, from: Obj, to: Obj): FakeObject => ({
  apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name, namespace: ns }, spec: { from: [{ group: GROUP, ...from }], to: [{ group: '', ...to }] },
});
const toService = (name: string, extra: Obj = {}) => ({ backendRefs: [{ name, port: 80, ...extra }] });
const secretRef = (name: string, extra: Obj = {}) => ({ group: '', kind: 'Secret', name, ...extra });

const gw = (name: string, ns = INFRA) => fake.get(GATEWAY_V1, 'Gateway', name, ns)?.status as { conditions?: Cond[]; listeners?: ListenerStatus[] } | undefined;
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const cond = (cs: Cond[] | undefined, type: string) => brief(cs).find((c) => c.startsWith(`${type}=`));
const listener = (gateway: string, name: string, ns = INFRA) => gw(gateway, ns)?.listeners?.find((l) => l.name === name);
const parents = (name: string, ns = INFRA) => ((fake.get(GATEWAY_V1, 'HTTPRoute', name, ns)?.status as { parents?: Array<{ conditions: Cond[] }> } | undefined)?.parents ?? []);
const generation = (o: FakeObject | undefined) => (o?.metadata as { generation?: number } | undefined)?.generation;
/** Every condition of the object (and of its listeners) carries its current generation. */
const latest = (o: FakeObject | undefined, conditions: Cond[]) => conditions.length > 0 && conditions.every((c) => c.observedGeneration === generation(o));

test.before(async () => {
  for (const [i, name] of ['infra-v1', 'infra-v2', 'web-backend', 'app-v1', 'app-v2'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const cert = await generateCertificate(join(tmp, 'certs'), 'secure.conf');
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'conf' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'conf-bump' }, spec: { controllerName: 'ingress-rx.io/gateway', description: 'old' } },
    ...([[INFRA, 'infra-v1'], [INFRA, 'infra-v2'], [WEB, 'web-backend'], [APP, 'app-v1'], [APP, 'app-v2']] as const).flatMap(([ns, n]) => [service(ns, n), ...slices(ns, n, [echo[n]!])]),
    tlsSecret(WEB, 'certificate', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
    { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'malformed', namespace: INFRA }, data: { 'tls.crt': Buffer.from('not a certificate\n').toString('base64'), 'tls.key': Buffer.from('not a key\n').toString('base64') } },
    gateway(INFRA, 'same', [http()]),
    gateway(INFRA, 'bump', [http('http', { hostname: 'bar.conf', allowedRoutes: { namespaces: { from: 'All' } } })]),
    gateway(INFRA, 'only-invalid', [{ name: 'invalid', port: 1111, protocol: 'INVALID' }]),
    gateway(INFRA, 'mixed-protocols', [http(), { name: 'invalid', port: 1111, protocol: 'INVALID' }]),
    gateway(INFRA, 'only-invalid-kind', [http('http', { allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'InvalidRoute' }] } })]),
    gateway(INFRA, 'mixed-kinds', [http('http', { allowedRoutes: { namespaces: { from: 'All' }, kinds: [{ kind: 'InvalidRoute' }, { kind: 'HTTPRoute' }] } })]),
    gateway(INFRA, 'cert-missing', [https([secretRef('nonexistent')])]),
    gateway(INFRA, 'cert-group', [https([secretRef('malformed', { group: 'wrong.group.example' })])]),
    gateway(INFRA, 'cert-kind', [https([secretRef('malformed', { kind: 'WrongKind' })])]),
    gateway(INFRA, 'cert-malformed', [https([secretRef('malformed')])]),
    gateway(INFRA, 'params', [http()], { infrastructure: { parametersRef: { group: 'invalid.example', kind: 'InvalidParameters', name: 'invalid' } } }),
    gateway(INFRA, 'section', [http()]),
    gateway(INFRA, 'same-only', [http('http', { allowedRoutes: { namespaces: { from: 'Same' } } })]),
    // One namespace per Secret grant scenario: a grant names the Gateways' namespace.
    gateway('conf-gw-missing', 'gw', [https([secretRef('certificate', { namespace: WEB })])]),
    gateway('conf-gw-wrong', 'gw', [https([secretRef('certificate', { namespace: WEB })])]),
    gateway('conf-gw-all', 'gw', [https([secretRef('certificate', { namespace: WEB })])]),
    gateway('conf-gw-specific', 'gw', [https([secretRef('certificate', { namespace: WEB })])]),
    grant(WEB, 'all-secrets', { kind: 'Gateway', namespace: 'conf-gw-all' }, { kind: 'Secret' }),
    grant(WEB, 'specific-secret', { kind: 'Gateway', namespace: 'conf-gw-specific' }, { kind: 'Secret', name: 'certificate' }),
    grant(APP, 'wrong-place', { kind: 'Gateway', namespace: 'conf-gw-wrong' }, { kind: 'Secret', name: 'certificate' }),
    grant(WEB, 'wrong-from-group', { group: 'not.the.group', kind: 'Gateway', namespace: 'conf-gw-wrong' }, { kind: 'Secret', name: 'certificate' }),
    grant(WEB, 'wrong-from-kind', { kind: 'HTTPRoute', namespace: 'conf-gw-wrong' }, { kind: 'Secret', name: 'certificate' }),
    grant(WEB, 'wrong-from-ns', { kind: 'Gateway', namespace: 'not-the-namespace' }, { kind: 'Secret', name: 'certificate' }),
    grant(WEB, 'wrong-to-group', { kind: 'Gateway', namespace: 'conf-gw-wrong' }, { group: 'not.the.group', kind: 'Secret', name: 'certificate' }),
    grant(WEB, 'wrong-to-kind', { kind: 'Gateway', namespace: 'conf-gw-wrong' }, { kind: 'Service', name: 'certificate' }),
    grant(WEB, 'wrong-to-name', { kind: 'Gateway', namespace: 'conf-gw-wrong' }, { kind: 'Secret', name: 'not-the-certificate' }),
    // Grants that do not let conf-infra's routes reach web-backend (HTTPRouteInvalidReferenceGrant).
    grant(INFRA, 'route-wrong-place', { kind: 'HTTPRoute', namespace: INFRA }, { kind: 'Service', name: 'web-backend' }),
    grant(WEB, 'route-wrong-from-group', { group: 'not.the.group', kind: 'HTTPRoute', namespace: INFRA }, { kind: 'Service', name: 'web-backend' }),
    grant(WEB, 'route-wrong-from-kind', { kind: 'Gateway', namespace: INFRA }, { kind: 'Service', name: 'web-backend' }),
    grant(WEB, 'route-wrong-from-ns', { kind: 'HTTPRoute', namespace: 'not-the-namespace' }, { kind: 'Service', name: 'web-backend' }),
    grant(WEB, 'route-wrong-to-group', { kind: 'HTTPRoute', namespace: INFRA }, { group: 'not.the.group', kind: 'Service', name: 'web-backend' }),
    grant(WEB, 'route-wrong-to-kind', { kind: 'HTTPRoute', namespace: INFRA }, { kind: 'Secret', name: 'web-backend' }),
    grant(WEB, 'route-wrong-to-name', { kind: 'HTTPRoute', namespace: INFRA }, { kind: 'Service', name: 'not-the-service' }),
    grant(APP, 'app-v1-only', { kind: 'HTTPRoute', namespace: INFRA }, { kind: 'Service', name: 'app-v1' }),
    route(INFRA, 'bump-route', 'bump.conf', [toService('infra-v1')]),
    route(INFRA, 'unknown-kind', 'unknown-kind.conf', [toService('infra-v1', { group: 'unknownkind.example.com', kind: 'NonExistent' })]),
    route(INFRA, 'nonexistent', 'nonexistent.conf', [toService('nonexistent')]),
    route(INFRA, 'no-grant', 'no-grant.conf', [toService('web-backend', { namespace: WEB })]),
    route(INFRA, 'invalid-grant', 'invalid-grant.conf', [toService('web-backend', { namespace: WEB })]),
    route(INFRA, 'partial', 'partial.conf', [
      { matches: [{ path: { type: 'PathPrefix', value: '/v2' } }], ...toService('app-v2', { namespace: APP }) },
      toService('app-v1', { namespace: APP }),
    ]),
    route(INFRA, 'section-mismatch', 'section.conf', [toService('infra-v1')], { name: 'section', namespace: INFRA, sectionName: 'http1', port: 80 }),
    route(WEB, 'cross-parent', 'cross-parent.conf', [toService('web-backend')], { name: 'same-only', namespace: INFRA }),
    // GatewayWithAttachedRoutes: routes without hostnames on listeners without one.
    gateway(INFRA, 'one-attached', [http()]),
    gateway(INFRA, 'two-attached', [http()]),
    gateway(INFRA, 'unresolved-attached', [{ ...https([secretRef('does-not-exist')]), name: 'tls', allowedRoutes: { namespaces: { from: 'Same' } } }]),
    hostless('attached-1', 'one-attached', [toService('infra-v1')]),
    hostless('attached-2', 'two-attached', [toService('infra-v1')]),
    hostless('attached-3', 'two-attached', [toService('infra-v2')]),
    hostless('attached-unresolved', 'unresolved-attached', [toService('does-not-exist')]),
    // GatewayModifyListeners: a listener with a hostname added, then one removed.
    gateway(INFRA, 'modify-add', [http()]),
    gateway(INFRA, 'modify-remove', [http(), http('removed', { hostname: 'removed.conf' })]),
    hostless('modify-add-route', 'modify-add', [toService('infra-v1')]),
    hostless('modify-remove-route', 'modify-remove', [toService('infra-v2')]),
  ];
  ({ fake, ctl } = await startGatewayController(tmp, objects));
  await waitFor(() => parents('cross-parent', WEB).length > 0 && parents('partial').length > 0 && gw('gw', 'conf-gw-specific')?.listeners !== undefined && gw('cert-malformed')?.listeners !== undefined,
    { what: 'the status written', timeoutMs: 30_000 });
});

test.after(() => stopGatewayController(ctl, fake, echo, tmp));

test('GatewayClassObservedGenerationBump › a changed class gets Accepted at its new generation', async () => {
  const before = fake.get(GATEWAY_V1, 'GatewayClass', 'conf-bump')!;
  await waitFor(() => latest(before, (fake.get(GATEWAY_V1, 'GatewayClass', 'conf-bump')?.status as { conditions?: Cond[] } | undefined)?.conditions ?? []), { what: 'the class status', timeoutMs: 20_000 });
  fake.update({ ...before, spec: { ...(before.spec as Obj), description: 'new' } });
  const now = () => fake.get(GATEWAY_V1, 'GatewayClass', 'conf-bump')!;
  assert.is(generation(now()), generation(before)! + 1);
  await waitFor(() => latest(now(), (now().status as { conditions?: Cond[] }).conditions ?? []), { what: 'Accepted at the new generation', timeoutMs: 20_000 });
  assert.is(cond((now().status as { conditions: Cond[] }).conditions, 'Accepted'), 'Accepted=True/Accepted');
});

test('GatewayObservedGenerationBump › a Gateway given a listener has every condition at its new generation', async () => {
  const all = () => { const s = gw('bump'); return [...(s?.conditions ?? []), ...(s?.listeners ?? []).flatMap((l) => l.conditions)]; };
  const before = fake.get(GATEWAY_V1, 'Gateway', 'bump', INFRA)!;
  assert.ok(latest(before, all()), 'before the change');
  const spec = before.spec as { listeners: Obj[] };
  fake.update({ ...before, spec: { ...spec, listeners: [...spec.listeners, http('alternate', { hostname: 'foo.conf', allowedRoutes: { namespaces: { from: 'All' } } })] } });
  const now = () => fake.get(GATEWAY_V1, 'Gateway', 'bump', INFRA);
  await waitFor(() => gw('bump')?.listeners?.length === 2 && latest(now(), all()), { what: 'the new generation on every condition', timeoutMs: 20_000 });
  assert.equal(brief(gw('bump')!.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
});

test('HTTPRouteObservedGenerationBump › a changed route has its conditions at its new generation', async () => {
  const before = fake.get(GATEWAY_V1, 'HTTPRoute', 'bump-route', INFRA)!;
  assert.ok(latest(before, parents('bump-route')[0]!.conditions));
  fake.update({ ...before, spec: { ...(before.spec as Obj), rules: [toService('infra-v2')] } });
  const now = () => fake.get(GATEWAY_V1, 'HTTPRoute', 'bump-route', INFRA);
  await waitFor(() => latest(now(), parents('bump-route')[0]?.conditions ?? []), { what: 'the new generation', timeoutMs: 20_000 });
  assert.equal(brief(parents('bump-route')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  await ctl.until('bump.conf', '/', (r) => r.backend === 'infra-v2', { what: 'the changed backend served' });
});

test('GatewayWithAttachedRoutes › routes without hostnames on a listener without one count in attachedRoutes', async () => {
  await waitFor(() => listener('two-attached', 'http')?.attachedRoutes === 2 && listener('unresolved-attached', 'tls') !== undefined, { what: 'the attached routes counted', timeoutMs: 20_000 });
  let l = listener('one-attached', 'http')!;
  assert.equal([l.attachedRoutes, cond(l.conditions, 'Accepted'), cond(l.conditions, 'ResolvedRefs')], [1, 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  l = listener('two-attached', 'http')!;
  assert.equal([l.attachedRoutes, cond(l.conditions, 'Accepted'), cond(l.conditions, 'ResolvedRefs')], [2, 'Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
  // Its certificate unresolved, the listener still counts the route; the route's backend is unresolved.
  l = listener('unresolved-attached', 'tls')!;
  assert.equal([l.attachedRoutes, cond(l.conditions, 'Programmed')?.startsWith('Programmed=False'), cond(l.conditions, 'ResolvedRefs')?.startsWith('ResolvedRefs=False')], [1, true, true]);
  assert.is(cond(parents('attached-unresolved')[0]?.conditions, 'ResolvedRefs'), 'ResolvedRefs=False/BackendNotFound');
});

over.both('GatewayWithAttachedRoutes › every host is not served yet: a route without hostnames takes no host', async (p) => {
  const before = echo['infra-v1']!.hits() + echo['infra-v2']!.hits();
  for (const host of ['any.conf', 'simple-unknown.conf']) assert.is((await p.request(host, '/')).status, 404, host);
  assert.is(echo['infra-v1']!.hits() + echo['infra-v2']!.hits(), before);
});

over.both('GatewayModifyListeners › before the change: the listener to be removed serves its hostname, the one to be added does not yet', async (p) => {
  await p.until('removed.conf', '/', (r) => r.backend === 'infra-v2', { what: 'removed.conf served before its listener goes' });
  assert.is((await p.request('added.conf', '/')).status, 404, 'added.conf is not served before its listener comes');
});

test('GatewayModifyListeners › an added listener counts the route; a removed one leaves the status', async () => {
  const counts = (name: string) => (gw(name)?.listeners ?? []).map((l) => `${l.name}:${l.attachedRoutes}`).sort();
  await waitFor(() => counts('modify-remove').length === 2, { what: 'the status of modify-remove', timeoutMs: 20_000 });
  assert.equal(counts('modify-add'), ['http:1']);
  assert.equal(counts('modify-remove'), ['http:1', 'removed:1']);

  const add = fake.get(GATEWAY_V1, 'Gateway', 'modify-add', INFRA)!;
  fake.update({ ...add, spec: { ...(add.spec as Obj), listeners: [http(), http('added', { hostname: 'added.conf' })] } });
  await waitFor(() => counts('modify-add').join() === 'added:1,http:1', { what: 'the added listener counted', timeoutMs: 20_000 });
  assert.equal(brief(gw('modify-add')!.listeners!.find((l) => l.name === 'added')!.conditions).filter((c) => c.startsWith('Accepted') || c.startsWith('Programmed')), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);

  const remove = fake.get(GATEWAY_V1, 'Gateway', 'modify-remove', INFRA)!;
  fake.update({ ...remove, spec: { ...(remove.spec as Obj), listeners: [http()] } });
  await waitFor(() => counts('modify-remove').join() === 'http:1', { what: 'the removed listener gone from the status', timeoutMs: 20_000 });
});

over.both('GatewayModifyListeners › after the change: the added listener serves its hostname, the removed one\'s no longer answers', async (p) => {
  await p.until('added.conf', '/', (r) => r.backend === 'infra-v1', { what: 'added.conf served through the new listener' });
  await p.until('removed.conf', '/', (r) => r.status === 404, { what: 'removed.conf no longer served' });
});

test('GatewayListenerUnsupportedProtocol › an unknown protocol: the listener is not accepted, nor the Gateway unless another listener is', () => {
  assert.equal(cond(gw('only-invalid')!.conditions, 'Accepted'), 'Accepted=False/ListenersNotValid');
  let l = listener('only-invalid', 'invalid')!;
  assert.equal([cond(l.conditions, 'Accepted'), l.supportedKinds, l.attachedRoutes], ['Accepted=False/UnsupportedProtocol', [], 0]);
  assert.equal(cond(gw('mixed-protocols')!.conditions, 'Accepted'), 'Accepted=True/ListenersNotValid');
  l = listener('mixed-protocols', 'http')!;
  assert.equal([cond(l.conditions, 'Accepted'), l.supportedKinds.map((k) => k.kind)], ['Accepted=True/Accepted', ['HTTPRoute']]);
  assert.equal(cond(listener('mixed-protocols', 'invalid')!.conditions, 'Accepted'), 'Accepted=False/UnsupportedProtocol');
});

test('GatewayInvalidRouteKind › a listener listing a kind it cannot serve: ResolvedRefs False/InvalidRouteKinds, HTTPRoute still supported beside it', () => {
  let l = listener('only-invalid-kind', 'http')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), l.supportedKinds, l.attachedRoutes], ['ResolvedRefs=False/InvalidRouteKinds', [], 0]);
  l = listener('mixed-kinds', 'http')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), l.supportedKinds.map((k) => k.kind), l.attachedRoutes], ['ResolvedRefs=False/InvalidRouteKinds', ['HTTPRoute'], 0]);
});

test('GatewayInvalidTLSConfiguration › a missing, wrong-group, wrong-kind or malformed certificate: ResolvedRefs False/InvalidCertificateRef', () => {
  for (const name of ['cert-missing', 'cert-group', 'cert-kind', 'cert-malformed']) {
    const l = listener(name, 'https')!;
    assert.equal([cond(l.conditions, 'ResolvedRefs'), l.supportedKinds.map((k) => k.kind), l.attachedRoutes], ['ResolvedRefs=False/InvalidCertificateRef', ['HTTPRoute'], 0], name);
  }
});

test('GatewayInvalidParametersRef › a Gateway naming parameters we do not read is not accepted', () => {
  assert.equal(cond(gw('params')!.conditions, 'Accepted'), 'Accepted=False/InvalidParameters');
});

test('GatewaySecretMissingReferenceGrant › attacker: another namespace\'s Secret without a grant is RefNotPermitted', () => {
  const l = listener('gw', 'https', 'conf-gw-missing')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), l.attachedRoutes], ['ResolvedRefs=False/RefNotPermitted', 0]);
});

test('GatewaySecretInvalidReferenceGrant › attacker: grants of the wrong place, group, kind, namespace or name allow nothing', () => {
  const l = listener('gw', 'https', 'conf-gw-wrong')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), l.attachedRoutes], ['ResolvedRefs=False/RefNotPermitted', 0]);
});

test('GatewaySecretReferenceGrantAllInNamespace › a grant to every Secret of the namespace resolves the reference', () => {
  const l = listener('gw', 'https', 'conf-gw-all')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), cond(l.conditions, 'Programmed'), l.attachedRoutes], ['ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed', 0]);
});

test('GatewaySecretReferenceGrantSpecific › a grant naming the Secret resolves the reference', () => {
  const l = listener('gw', 'https', 'conf-gw-specific')!;
  assert.equal([cond(l.conditions, 'ResolvedRefs'), cond(l.conditions, 'Programmed'), l.attachedRoutes], ['ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed', 0]);
});

test('HTTPRouteInvalidBackendRefUnknownKind › a backendRef of an unknown kind: Accepted, ResolvedRefs False/InvalidKind', () => {
  assert.equal(brief(parents('unknown-kind')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=False/InvalidKind']);
});
over.both('HTTPRouteInvalidBackendRefUnknownKind › its requests get 500', async (p) => {
  assert.is((await p.request('unknown-kind.conf', '/v2')).status, 500);
});

test('HTTPRouteInvalidNonExistentBackendRef › a backendRef to a Service that does not exist: Accepted, ResolvedRefs False/BackendNotFound', () => {
  assert.equal(brief(parents('nonexistent')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
});
over.both('HTTPRouteInvalidNonExistentBackendRef › its requests get 500', async (p) => {
  assert.is((await p.request('nonexistent.conf', '/')).status, 500);
});

test('HTTPRouteInvalidCrossNamespaceBackendRef › attacker: a backendRef to another namespace without a grant is RefNotPermitted', () => {
  assert.equal(brief(parents('no-grant')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted']);
});

test('HTTPRouteInvalidReferenceGrant › attacker: grants of the wrong place, group, kind, namespace or name leave it RefNotPermitted', () => {
  assert.equal(brief(parents('invalid-grant')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted']);
});
over.both('HTTPRouteInvalidReferenceGrant › attacker: its requests get 500 and never reach the Service', async (p) => {
  const before = echo['web-backend']!.hits();
  assert.is((await p.request('invalid-grant.conf', '/')).status, 500);
  assert.is(echo['web-backend']!.hits(), before);
});

test('HTTPRoutePartiallyInvalidViaInvalidReferenceGrant › one refused backendRef: ResolvedRefs False/RefNotPermitted', () => {
  assert.equal(brief(parents('partial')[0]!.conditions), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted']);
});
over.both('HTTPRoutePartiallyInvalidViaInvalidReferenceGrant › the refused rule answers 500, its granted sibling is served', async (p) => {
  const before = echo['app-v2']!.hits();
  assert.is((await p.request('partial.conf', '/v2')).status, 500);
  assert.is(echo['app-v2']!.hits(), before);
  assert.is((await p.request('partial.conf', '/')).backend, 'app-v1');
});

test('HTTPRouteInvalidParentRefNotMatchingSectionName › no listener of that name: Accepted False/NoMatchingParent, nothing attached', () => {
  assert.equal(brief(parents('section-mismatch')[0]!.conditions)[0], 'Accepted=False/NoMatchingParent');
  assert.is(listener('section', 'http')!.attachedRoutes, 0);
});
over.both('HTTPRouteInvalidParentRefNotMatchingSectionName › its host is not served', async (p) => {
  assert.is((await p.request('section.conf', '/')).status, 404);
});

test('HTTPRouteInvalidCrossNamespaceParentRef › attacker: a route of another namespace on a Same listener is NotAllowedByListeners', () => {
  assert.equal(brief(parents('cross-parent', WEB)[0]!.conditions), ['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=True/ResolvedRefs']);
  assert.is(listener('same-only', 'http')!.attachedRoutes, 0);
});
over.both('HTTPRouteInvalidCrossNamespaceParentRef › attacker: its host is not served', async (p) => {
  const before = echo['web-backend']!.hits();
  assert.is((await p.request('cross-parent.conf', '/')).status, 404);
  assert.is(echo['web-backend']!.hits(), before);
});

test.run();
