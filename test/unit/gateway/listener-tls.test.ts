// HTTPS listeners in the model: a listener's certificateRefs give the hosts served through it
// their certificate (the same certificates payload as Ingress TLS); a tenant's Gateway naming
// another namespace's Secret gets it only with the owner's ReferenceGrant; a bad reference is
// named, leaves that listener's hosts on the default certificate and the other listeners served.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createModelBuilder } from '../../../src/model/build.js';
import { serversPayload } from '../../../src/model/core/payload.js';
import { lintManifests } from '../../../src/admission/lint.js';
import { defaultStoreOptions } from '../../../src/store/store.js';
import type { Condition, GatewayAPIStatus } from '../../../src/model/gateway/index.js';
import type { Configuration, ModelWarning } from '../../../src/model/core/types.js';
import type { Gateway, GatewayClass, GatewayListener, HTTPRoute, KubeObject, ReferenceGrant } from '../../../src/store/kube-types.js';
import { MODEL_FIXTURES } from '../../support/model-fixtures.js';
import { PREFIX, ingress, service, slice, testStore, tlsSecret } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const NOW = new Date('2026-06-01T00:00:00Z');
const pem = (f: string) => readFileSync(join(MODEL_FIXTURES, '_certs', f), 'utf8');
const secret = (ns: string, name: string, cert: string) => tlsSecret(name, pem(`${cert}.crt`), pem(`${cert}.key`), ns);

const ourClass: GatewayClass = { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } };

type Ref = { name: string; namespace?: string; kind?: string; group?: string };
const https = (name: string, refs: Ref[], extra: Partial<GatewayListener> = {}): GatewayListener => ({
  name, port: 443, protocol: 'HTTPS', tls: { mode: 'Terminate', certificateRefs: refs }, allowedRoutes: { namespaces: { from: 'All' } }, ...extra,
});

function gateway(ns: string, listeners: GatewayListener[]): Gateway {
  return { apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: ns, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { gatewayClassName: 'rx', listeners } };
}

function route(gwNs: string, name: string, host: string, sectionName?: string): HTTPRoute {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a', creationTimestamp: '2026-01-02T00:00:00Z' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: gwNs, ...(sectionName ? { sectionName } : {}) }], hostnames: [host],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], backendRefs: [{ name: 'web', port: 80 }] }],
    },
  };
}

function grant(ns: string, from: { kind: string; namespace: string }, to: { kind: string; name?: string }): ReferenceGrant {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: `g-${from.kind}-${to.kind}-${to.name ?? 'any'}`, namespace: ns },
    spec: { from: [{ group: 'gateway.networking.k8s.io', ...from }], to: [{ group: '', kind: to.kind, ...(to.name ? { name: to.name } : {}) }] },
  };
}

function world(objects: Array<[Parameters<ReturnType<typeof testStore>['put']>[0], KubeObject]>) {
  const store = testStore();
  store.put('GatewayClass', ourClass);
  store.put('Service', service('web', 'team-a'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.1.1'], 'team-a'));
  store.put('Secret', secret('infra', 'tls', 'tls'));
  store.put('Secret', secret('team-b', 'other', 'other'));
  for (const [kind, obj] of objects) store.put(kind, obj);
  return store;
}

const builder = () => createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true });
type Built = { config: Configuration; warnings: ModelWarning[]; gatewayStatus?: GatewayAPIStatus };
const build = (store: ReturnType<typeof testStore>): Built => builder().build(store);

const serverOf = (c: Configuration, host: string) => c.servers.find((s) => s.hostname === host);
const brief = (cs: readonly Condition[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const listener = (b: Built, gw: string, name: string) => b.gatewayStatus!.gateways.get(gw)!.listeners.find((l) => l.name === name)!;
/** Whether any certificate the configuration carries holds this fixture's private key. */
const carriesKeyOf = (c: Configuration, cert: string) => Object.values(c.certificates).some((x) => x.pem.includes(pem(`${cert}.key`).trim()));

const test = suite('gateway api: HTTPS listeners');

test('an HTTPS listener\'s Secret is the certificate of the hosts served through it, in the certificates payload, with the route served by the Lua router', () => {
  const b = build(world([['Gateway', gateway('infra', [https('tls', [{ name: 'tls' }])])], ['HTTPRoute', route('infra', 'web', 'tls.example.com')]]));
  const s = serverOf(b.config, 'tls.example.com')!;
  assert.is(s.tlsSecret, 'infra/tls');
  assert.is(b.config.certificates[s.certificate!]!.secret, 'infra/tls');
  assert.ok(carriesKeyOf(b.config, 'tls'));
  assert.is(s.staticBecause, null, 'no server block: a route change needs no reload');
  assert.equal(brief(listener(b, 'infra/gw', 'tls').conditions), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed', 'Conflicted=False/NoConflicts']);
  assert.is(listener(b, 'infra/gw', 'tls').attachedRoutes, 1);
  assert.equal(b.warnings, []);
});

test('an HTTPS listener on 8443: its host is `host:8443` with the Secret\'s certificate in the servers payload, never the host of 443; the port is TLS', () => {
  const b = build(world([['Gateway', gateway('infra', [https('alt', [{ name: 'tls' }], { port: 8443 })])], ['HTTPRoute', route('infra', 'web', 'tls.example.com')]]));
  const s = serverOf(b.config, 'tls.example.com:8443')!;
  assert.is(s.tlsSecret, 'infra/tls');
  assert.is(serverOf(b.config, 'tls.example.com'), undefined);
  const payload = serversPayload(b.config);
  assert.is(payload.servers['tls.example.com:8443'], s.certificate);
  assert.is(payload.servers['tls.example.com'], undefined, 'nothing for the name on 443');
  assert.equal(b.config.listenerPorts, [{ port: 8443, local: 8443, tls: true }]);
  // The listener has no hostname: it is port 8443's catch-all, its certificate `_gateway:8443`.
  assert.equal(b.config.frontends!.names, { ':8443': 0 });
  assert.is(payload.servers['_gateway:8443'], s.certificate);
  assert.is(payload.servers._gateway, undefined, 'nothing for 443');
});

test('HTTP and HTTPS listeners of one Gateway: a host through both takes the certificate and is served over plain HTTP without a redirect', () => {
  const b = build(world([['Gateway', gateway('infra', [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }, https('tls', [{ name: 'tls' }])])],
    ['HTTPRoute', route('infra', 'web', 'tls.example.com')], ['HTTPRoute', route('infra', 'plain', 'plain.example.com', 'http')]]));
  assert.is(serverOf(b.config, 'tls.example.com')!.tlsSecret, 'infra/tls');
  assert.is(serverOf(b.config, 'tls.example.com')!.locations[0]!.settings.rewrite.sslRedirect, false);
  assert.is(serverOf(b.config, 'plain.example.com')!.certificate, null, 'a host only on the HTTP listener has no certificate of the HTTPS one');
});

test('attacker: a tenant\'s Gateway naming another namespace\'s Secret never serves its key without the owner\'s grant', () => {
  const wrong: Array<[string, ReferenceGrant]> = [
    ['no grant', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Service' })],
    ['a grant for HTTPRoutes', grant('team-b', { kind: 'HTTPRoute', namespace: 'team-a' }, { kind: 'Secret' })],
    ['a grant to another kind', grant('team-b', { kind: 'Gateway', namespace: 'team-a' }, { kind: 'ConfigMap' })],
    ['a grant to another name', grant('team-b', { kind: 'Gateway', namespace: 'team-a' }, { kind: 'Secret', name: 'public' })],
    ['a grant from another namespace', grant('team-b', { kind: 'Gateway', namespace: 'team-c' }, { kind: 'Secret' })],
    ['a grant placed in the tenant\'s own namespace', grant('team-a', { kind: 'Gateway', namespace: 'team-a' }, { kind: 'Secret' })],
  ];
  for (const [what, g] of wrong) {
    const b = build(world([['Gateway', gateway('team-a', [https('tls', [{ name: 'other', namespace: 'team-b' }])])], ['HTTPRoute', route('team-a', 'web', 'other.example.com')], ['ReferenceGrant', g]]));
    const s = serverOf(b.config, 'other.example.com')!;
    assert.is(s.tlsSecret, null, what);
    assert.is(s.certificate, 'fallback', `${what}: the host keeps the default certificate`);
    assert.not.ok(carriesKeyOf(b.config, 'other'), `${what}: team-b's key is nowhere in the configuration`);
    assert.equal(brief(listener(b, 'team-a/gw', 'tls').conditions).slice(1, 3), ['ResolvedRefs=False/RefNotPermitted', 'Programmed=False/Invalid'], what);
    const w = b.warnings.find((x) => x.object === 'Gateway team-a/gw');
    assert.match(`${w?.field}: ${w?.message}`, /^spec\.listeners\[0\]\.tls\.certificateRefs\[0\]: listener tls tls\.certificateRefs\[0\]: Secret team-b\/other is in another namespace and no ReferenceGrant in "team-b" allows Gateways of "team-a"/, what);
  }
  const owner = grant('team-b', { kind: 'Gateway', namespace: 'team-a' }, { kind: 'Secret', name: 'other' });
  const b = build(world([['Gateway', gateway('team-a', [https('tls', [{ name: 'other', namespace: 'team-b' }])])], ['HTTPRoute', route('team-a', 'web', 'other.example.com')], ['ReferenceGrant', owner]]));
  assert.is(serverOf(b.config, 'other.example.com')!.tlsSecret, 'team-b/other', 'the owner\'s grant allows it');
  assert.equal(brief(listener(b, 'team-a/gw', 'tls').conditions).slice(1, 3), ['ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed']);
});

test('a missing, broken, expired or non-Secret reference: InvalidCertificateRef, named; the host keeps the default certificate; other listeners are served', () => {
  const cases: Array<[string, Ref, RegExp]> = [
    ['missing', { name: 'nope' }, /Secret infra\/nope not found/],
    ['expired', { name: 'expired' }, /Secret infra\/expired: certificate expired/],
    ['not a Secret', { name: 'tls', kind: 'ConfigMap' }, /\/ConfigMap is not a Secret/],
    ['broken', { name: 'broken' }, /Secret infra\/broken: data\["tls.key"\]/],
  ];
  for (const [what, ref, message] of cases) {
    const store = world([
      ['Gateway', gateway('infra', [https('bad', [ref], { hostname: 'bad.example.com' }), https('good', [{ name: 'tls' }], { hostname: 'tls.example.com' })])],
      ['HTTPRoute', route('infra', 'bad', 'bad.example.com')], ['HTTPRoute', route('infra', 'good', 'tls.example.com')],
      ['Secret', secret('infra', 'expired', 'expired')],
      ['Secret', tlsSecret('broken', pem('tls.crt'), pem('other.key'), 'infra')],
    ]);
    const b = build(store);
    assert.equal(brief(listener(b, 'infra/gw', 'bad').conditions).slice(0, 3), ['Accepted=True/Accepted', 'ResolvedRefs=False/InvalidCertificateRef', 'Programmed=False/Invalid'], what);
    assert.match(b.warnings.filter((w) => w.object === 'Gateway infra/gw').map((w) => w.message).join('\n'), message, what);
    assert.is(serverOf(b.config, 'bad.example.com')!.certificate, 'fallback', what);
    assert.is(serverOf(b.config, 'tls.example.com')!.tlsSecret, 'infra/tls', `${what}: the other listener is served`);
    assert.equal(brief(listener(b, 'infra/gw', 'good').conditions).slice(1, 3), ['ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed'], what);
  }
});

test('listeners not served: port 80 (plain HTTP), Passthrough, no certificateRefs', () => {
  const b = build(world([['Gateway', gateway('infra', [
    https('port', [{ name: 'tls' }], { port: 80 }),
    https('pass', [{ name: 'tls' }], { tls: { mode: 'Passthrough' } }),
    { name: 'none', port: 443, protocol: 'HTTPS' },
  ])], ['HTTPRoute', route('infra', 'web', 'tls.example.com')]]));
  assert.equal(['port', 'pass', 'none'].map((n) => brief(listener(b, 'infra/gw', n).conditions)[0]), ['Accepted=False/PortUnavailable', 'Accepted=False/UnsupportedValue', 'Accepted=False/UnsupportedValue']);
  assert.is(serverOf(b.config, 'tls.example.com'), undefined);
  assert.match(b.warnings.map((w) => w.message).join('\n'), /tls\.mode Passthrough is not served \(Terminate only\)/);
  assert.match(b.warnings.map((w) => w.message).join('\n'), /port 80 serves plain HTTP \(--http-port\): an HTTPS listener cannot use it/);
});

test('precedence: an Ingress with TLS on the same host keeps it and its certificate; the HTTPRoute is named', () => {
  const store = world([['Gateway', gateway('infra', [https('tls', [{ name: 'other', namespace: 'team-b' }])])], ['HTTPRoute', route('infra', 'web', 'tls.example.com')],
    ['ReferenceGrant', grant('team-b', { kind: 'Gateway', namespace: 'infra' }, { kind: 'Secret' })],
    ['Secret', secret('default', 'ing-tls', 'tls')],
    ['Ingress', ingress('ing', 'tls.example.com', [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: ['tls.example.com'], secretName: 'ing-tls' }] })],
  ]);
  store.put('Service', service('web'));
  const b = build(store);
  assert.equal(b.config.servers.filter((s) => s.hostname === 'tls.example.com').map((s) => s.tlsSecret), ['default/ing-tls']);
  assert.match(b.warnings.filter((w) => w.object === 'HTTPRoute team-a/web').map((w) => w.message).join('\n'), /host tls\.example\.com is served by an Ingress/);
});

test('a changed Secret reaches the host at the next build, no route changed; an unchanged one keeps the same server object', () => {
  const store = world([['Gateway', gateway('infra', [https('tls', [{ name: 'tls' }])])], ['HTTPRoute', route('infra', 'web', 'tls.example.com')]]);
  const b = builder();
  const first = b.build(store).config;
  const again = b.build(store).config;
  assert.ok(serverOf(again, 'tls.example.com') === serverOf(first, 'tls.example.com'));
  store.put('Secret', tlsSecret('tls', pem('other.crt'), pem('other.key'), 'infra'));
  const changed = b.build(store);
  assert.is(serverOf(changed.config, 'tls.example.com')!.certificate, 'fallback', 'the new certificate does not cover the host');
  assert.match(changed.warnings.map((w) => w.message).join('\n'), /no usable certificate of listener infra\/gw\/tls covers host tls\.example\.com/);
});

/** A GatewayClass of ours and the head of Gateway team-a/gw, up to its `listeners:` (lines 1-11). */
const GATEWAY_YAML_HEAD = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: rx}
spec: {controllerName: ingress-rx.io/gateway}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: team-a}
spec:
  gatewayClassName: rx
  listeners:
`;

test('lint denies a Gateway\'s refused certificateRef at its line, naming the Gateway, the field and the reason', () => {
  const text = `${GATEWAY_YAML_HEAD}  - name: https
    port: 443
    protocol: HTTPS
    tls:
      mode: Terminate
      certificateRefs:
      - {name: other, namespace: team-b}
`;
  const r = lintManifests([{ file: 'gw.yaml', text }], { store: defaultStoreOptions(), annotationsPrefix: PREFIX, now: () => NOW });
  const f = r.findings.filter((x) => x.object === 'Gateway team-a/gw');
  assert.equal(f.map((x) => [x.severity, x.file, x.field]), [['deny', 'gw.yaml', 'spec.listeners[0].tls.certificateRefs[0]']]);
  assert.ok(f[0]!.line >= 17 && f[0]!.line <= 18, `line ${f[0]!.line}`);
  assert.match(f[0]!.message, /Secret team-b\/other is in another namespace and no ReferenceGrant in "team-b"/);
});

test('lint denies a Gateway\'s spec.tls.frontend CA ConfigMap of another namespace without a grant (default and perPort), with the status\'s message', () => {
  for (const [where, field] of [['default: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca, namespace: team-b}]}}', 'default'],
    ['perPort: [{port: 443, tls: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca, namespace: team-b}]}}}]', 'perPort[0].tls']] as const) {
    const text = `${GATEWAY_YAML_HEAD}  - {name: https, port: 443, protocol: HTTPS, tls: {mode: Terminate, certificateRefs: [{name: cert}]}}
  tls:
    frontend:
      ${where}
`;
    const r = lintManifests([{ file: 'gw.yaml', text }], { store: defaultStoreOptions(), annotationsPrefix: PREFIX, now: () => NOW });
    const denied = r.findings.filter((x) => x.object === 'Gateway team-a/gw' && x.severity === 'deny');
    assert.equal(denied.map((x) => x.field), ['spec.listeners[0]'], field);
    assert.match(denied[0]!.message, new RegExp(`spec\\.tls\\.frontend\\.${field.replace(/[.[\]]/g, '\\$&')}\\.validation\\.caCertificateRefs\\[0\\]: ConfigMap team-b/ca is in another namespace and no ReferenceGrant`));
  }
});

test.run();
