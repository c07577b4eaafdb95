// Gateway spec.tls.frontend in the model (src/model/gateway/frontend-tls.ts): which validation each
// HTTPS listener takes (its port's perPort entry, else the default), the CA references' problems
// and their reasons, ReferenceGrant for another namespace's ConfigMap, values the CRD refuses, the
// listener table Lua reads (hostnames, the oldest Gateway's validation for a shared one, Ingress
// hosts apart) and the status conditions written from it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gatewayFrontends } from '../../../src/model/gateway/frontend-tls.js';
import { gatewayAPIStatus } from '../../../src/model/gateway/status.js';
import { assignListenerPorts } from '../../../src/model/gateway/listener-ports.js';
import type { GatewayTranslation } from '../../../src/model/gateway/translate.js';
import type { ModelWarning } from '../../../src/model/core/types.js';
import type { ConfigMap, Gateway, GatewayListener, ReferenceGrant } from '../../../src/store/kube-types.js';
import type { GatewayResources } from '../../../src/store/types.js';
import { MODEL_FIXTURES } from '../../support/model-fixtures.js';

const V1 = 'gateway.networking.k8s.io/v1';
const CA = readFileSync(join(MODEL_FIXTURES, '_certs', 'default.crt'), 'utf8');
const OTHER_CA = readFileSync(join(MODEL_FIXTURES, '_certs', 'other.crt'), 'utf8');

const listener = (name: string, hostname?: string, extra: Partial<GatewayListener> = {}): GatewayListener => ({
  name, port: 443, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), tls: { certificateRefs: [{ name: 'server' }] }, ...extra,
});
type Validation = { mode?: string; caCertificateRefs?: Array<{ group?: string; kind?: string; name: string; namespace?: string }> };
function gateway(ns: string, name: string, listeners: GatewayListener[], frontend?: { default?: { validation?: Validation }; perPort?: Array<{ port: number; tls?: { validation?: Validation } }> }, created = '2026-01-01T00:00:00Z'): Gateway {
  return { apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: ns, creationTimestamp: created, generation: 1 }, spec: { gatewayClassName: 'rx', listeners, ...(frontend ? { tls: { frontend } } : {}) } };
}
const cm = (name: string): Validation => ({ caCertificateRefs: [{ kind: 'ConfigMap', group: '', name }] });
const configMaps: Record<string, ConfigMap> = {
  'infra/ca': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'infra' }, data: { 'ca.crt': CA } },
  'infra/other-ca': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other-ca', namespace: 'infra' }, data: { 'ca.crt': OTHER_CA } },
  'infra/empty': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'empty', namespace: 'infra' }, data: { 'ca.pem': CA } },
  'infra/injected': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'injected', namespace: 'infra' }, data: { 'ca.crt': 'x\r\nssl_verify_client off;\n' } },
  'infra/huge': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge', namespace: 'infra' }, data: { 'ca.crt': CA.repeat(Math.ceil((1024 * 1024 + 1) / CA.length)) } },
  'tenant/ca': { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ca', namespace: 'tenant' }, data: { 'ca.crt': OTHER_CA } },
};
const grant = (ns: string, fromNs: string, to: { kind: string; name?: string }): ReferenceGrant => ({
  apiVersion: `${V1}beta1`, kind: 'ReferenceGrant', metadata: { name: `g-${to.kind}`, namespace: ns },
  spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: fromNs }], to: [{ group: '', ...to }] },
});

function run(gateways: Gateway[], grants: ReferenceGrant[] = [], ingressHosts: string[] = []) {
  const resources: GatewayResources = { classes: [], gateways, httpRoutes: [], referenceGrants: grants, backendTLSPolicies: [], listenerSets: [] };
  const warnings: ModelWarning[] = [];
  const out = gatewayFrontends(resources, (k) => configMaps[k], ingressHosts, warnings);
  return { ...out, warnings, resources };
}
const conditions = (resources: GatewayResources, frontends: ReturnType<typeof gatewayFrontends>, gw: string, l: string) => {
  const translation: GatewayTranslation = { servers: [], routes: [], plans: [], warnings: [], tlsListeners: new Map(), plainHosts: new Set(), ports: assignListenerPorts([], undefined), listenerSets: new Map() };
  const s = gatewayAPIStatus(resources, translation, 'ingress-rx.io/gateway', () => true, new Map(), undefined, frontends);
  return s.gateways.get(gw)!.listeners.find((x) => x.name === l)!.conditions.filter((c) => c.type !== 'Conflicted').map((c) => `${c.type}=${c.status}/${c.reason}`);
};

test('no served HTTPS listener: no table (Lua does nothing per request)', () => {
  assert.is(run([gateway('infra', 'gw', [{ name: 'http', port: 80, protocol: 'HTTP' }], { default: { validation: cm('ca') } })]).table, null);
  assert.is(run([]).table, null);
});

test('the default applies to a listener whose port has no perPort entry; a perPort entry overrides it', () => {
  const r = run([
    gateway('infra', 'a', [listener('https', 'a.test')], { default: { validation: cm('ca') } }),
    gateway('infra', 'b', [listener('https', 'b.test')], { default: { validation: cm('ca') }, perPort: [{ port: 443, tls: { validation: cm('other-ca') } }] }),
    gateway('infra', 'c', [listener('https', 'c.test')], { default: { validation: cm('ca') }, perPort: [{ port: 8443, tls: { validation: cm('other-ca') } }] }),
    gateway('infra', 'd', [listener('https', 'd.test')]),
  ]);
  const policy = (host: string) => r.table!.policies[r.table!.names[host]!];
  assert.is(policy('a.test')!.ca, new X509Certificate(CA).toString());
  assert.is(policy('b.test')!.ca!.trim(), new X509Certificate(OTHER_CA).toString().trim());
  assert.is(policy('c.test')!.ca, policy('a.test')!.ca);
  assert.is(policy('d.test'), null);
  assert.equal(r.warnings, []);
});

test('AllowInsecureFallback marks the policy and the Gateway (InsecureFrontendValidationMode); AllowValidOnly is the default', () => {
  const r = run([
    gateway('infra', 'strict', [listener('https', 's.test')], { default: { validation: cm('ca') } }),
    gateway('infra', 'loose', [listener('https', 'l.test')], { default: { validation: { ...cm('ca'), mode: 'AllowInsecureFallback' } } }),
  ]);
  assert.is(r.table!.policies[r.table!.names['s.test']!]!.insecure, false);
  assert.is(r.table!.policies[r.table!.names['l.test']!]!.insecure, true);
  assert.equal([...r.insecure], ['infra/loose']);
  const translation: GatewayTranslation = { servers: [], routes: [], plans: [], warnings: [], tlsListeners: new Map(), plainHosts: new Set(), ports: assignListenerPorts([], undefined), listenerSets: new Map() };
  const s = gatewayAPIStatus(r.resources, translation, 'x', () => true, new Map(), undefined, r);
  assert.ok(s.gateways.get('infra/loose')!.conditions.some((c) => c.type === 'InsecureFrontendValidationMode' && c.status === 'True' && c.reason === 'ConfigurationChanged'));
  assert.not.ok(s.gateways.get('infra/strict')!.conditions.some((c) => c.type === 'InsecureFrontendValidationMode'));
});

test('each broken reference: its reason on ResolvedRefs, Accepted=False/NoValidCACertificate, and the listener fails closed (ca null)', () => {
  const cases: Array<[string, Validation, string]> = [
    ['missing', cm('nope'), 'InvalidCACertificateRef'],
    ['kind', { caCertificateRefs: [{ kind: 'Secret', group: '', name: 'ca' }] }, 'InvalidCACertificateKind'],
    ['group', { caCertificateRefs: [{ kind: 'ConfigMap', group: 'example.com', name: 'ca' }] }, 'InvalidCACertificateKind'],
    ['no-key', cm('empty'), 'InvalidCACertificateRef'],
    ['injected', cm('injected'), 'InvalidCACertificateRef'],
    ['huge', cm('huge'), 'InvalidCACertificateRef'],
    ['ungranted', { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'ca', namespace: 'tenant' }] }, 'RefNotPermitted'],
    ['none', { caCertificateRefs: [] }, 'InvalidCACertificateRef'],
  ];
  // A grant of another kind (Secrets) in the tenant's namespace allows nothing here.
  const r = run(cases.map(([name, v]) => gateway('infra', name, [listener('https', `${name}.test`)], { default: { validation: v } })), [grant('tenant', 'infra', { kind: 'Secret' })]);
  for (const [name, , reason] of cases) {
    assert.equal(conditions(r.resources, r, `infra/${name}`, 'https'), ['Accepted=False/NoValidCACertificate', `ResolvedRefs=False/${reason}`, 'Programmed=False/Invalid'], name);
    assert.is(r.table!.policies[r.table!.names[`${name}.test`]!]!.ca, null, name);
    assert.ok(r.warnings.some((w) => w.object === `Gateway infra/${name}` && w.field === 'spec.listeners[0]' && w.message.includes('handshakes are refused')), name);
  }
  assert.ok(r.warnings.some((w) => w.message.includes('larger than 1048576 bytes')));
  assert.not.ok(r.warnings.some((w) => w.message.includes('\r') || w.message.includes('ssl_verify_client off')), 'the ConfigMap\'s text is not echoed');
});

test('another namespace\'s CA with the owner\'s grant (to ConfigMaps, or that one by name) is read', () => {
  for (const to of [{ kind: 'ConfigMap' }, { kind: 'ConfigMap', name: 'ca' }]) {
    const r = run([gateway('infra', 'gw', [listener('https', 'g.test')], { default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'ca', namespace: 'tenant' }] } } })], [grant('tenant', 'infra', to)]);
    assert.ok(r.table!.policies[0]!.ca!.includes('BEGIN CERTIFICATE'));
    assert.equal(conditions(r.resources, r, 'infra/gw', 'https'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed']);
  }
  // A grant to another name, or from another namespace, allows nothing.
  for (const g of [grant('tenant', 'infra', { kind: 'ConfigMap', name: 'other' }), grant('tenant', 'elsewhere', { kind: 'ConfigMap' }), grant('infra', 'infra', { kind: 'ConfigMap' })]) {
    const r = run([gateway('infra', 'gw', [listener('https', 'g.test')], { default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'ca', namespace: 'tenant' }] } } })], [g]);
    assert.is(r.table!.policies[0]!.ca, null);
  }
});

test('one bad reference beside a good one: ResolvedRefs=False, still Accepted and validating with the good CA', () => {
  const r = run([gateway('infra', 'gw', [listener('https', 'p.test')], { default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: 'nope' }, { kind: 'ConfigMap', group: '', name: 'ca' }] } } })]);
  assert.ok(r.table!.policies[0]!.ca!.includes('BEGIN CERTIFICATE'));
  assert.equal(conditions(r.resources, r, 'infra/gw', 'https'), ['Accepted=True/Accepted', 'ResolvedRefs=False/InvalidCACertificateRef', 'Programmed=False/Invalid']);
});

test('a mode the CRD refuses is named and validated as AllowValidOnly', () => {
  const r = run([gateway('infra', 'gw', [listener('https', 'm.test')], { default: { validation: { ...cm('ca'), mode: 'AllowAll\r\n' } } })]);
  assert.is(r.table!.policies[0]!.insecure, false);
  assert.ok(r.table!.policies[0]!.ca);
  assert.ok(r.warnings.some((w) => w.message.includes('is not AllowValidOnly or AllowInsecureFallback')));
});

test('attacker: a newer Gateway with a validated listener\'s hostname neither turns validation off nor on; the older one holds', () => {
  const victim = gateway('team-a', 'gw', [listener('https', 'shop.test')], { default: { validation: cm('ca') } }, '2026-01-01T00:00:00Z');
  const off = gateway('attacker', 'gw', [listener('https', 'shop.test')], undefined, '2026-02-01T00:00:00Z');
  const r = run([off, victim]);
  assert.equal(Object.keys(r.table!.names), ['shop.test']);
  // The victim's ConfigMap is in team-a: resolved against team-a, not found there (no fixture) → fail closed, not open.
  assert.is.not(r.table!.policies[r.table!.names['shop.test']!], null);
  assert.ok(r.warnings.some((w) => w.object === 'Gateway attacker/gw' && w.message.includes('an older Gateway\'s listener')));
  // Reversed roles: the older Gateway has no validation; a newer one cannot impose its own.
  const on = run([gateway('infra', 'late', [listener('https', 'open.test')], { default: { validation: cm('ca') } }, '2026-03-01T00:00:00Z'), gateway('x', 'early', [listener('https', 'open.test')], undefined, '2026-01-01T00:00:00Z')]);
  assert.is(on.table!.policies[on.table!.names['open.test']!], null);
});

test('the table: listener hostnames ("" without one, wildcards), Ingress hosts apart (-1), listeners on other ports as `name:port`', () => {
  const r = run([gateway('infra', 'gw', [
    listener('all'), listener('one', 'second.test'), listener('wild', '*.wild.test'), listener('other-port', 'x.test', { port: 8443 }), listener('other-all', undefined, { port: 8443 }),
  ])], [], ['shop.test', '*.ing.test', '_']);
  // Ingress hosts are served on 443 only: no entry of port 8443 names them.
  assert.equal(r.table!.names, { '': 0, 'second.test': 1, '*.wild.test': 2, 'x.test:8443': 3, ':8443': 4, 'shop.test': -1, '*.ing.test': -1 });
  assert.equal(r.table!.policies, [null, null, null, null, null]);
});

test('perPort: a listener on 8443 takes the entry of its port, one on 443 the default; each port\'s names are its own', () => {
  const r = run([gateway('infra', 'gw', [listener('https', 'a.test'), listener('alt', 'a.test', { port: 8443 })],
    { default: { validation: cm('ca') }, perPort: [{ port: 8443, tls: { validation: { ...cm('other-ca'), mode: 'AllowInsecureFallback' } } }] })]);
  assert.equal(r.table!.names, { 'a.test': 0, 'a.test:8443': 1 });
  assert.equal(r.table!.policies, [{ ca: CA, insecure: false }, { ca: OTHER_CA, insecure: true }]);
});

test.run();
