// Gateway API conformance: BackendTLSPolicy (BackendTLSPolicy, BackendTLSPolicyConflictResolution,
// BackendTLSPolicyInvalidCACertificateRef, BackendTLSPolicyInvalidKind,
// BackendTLSPolicyObservedGenerationBump) and a Gateway's backend client certificate
// (GatewayTLSBackendClientCertificate, GatewayInvalidTLSBackendConfiguration), ported to
// `ingress-rx controller --enable-gateway-api` against the in-process fake API server (status
// written through the status subresource) with real NGINX and Node HTTPS echo backends with
// openssl-made certificates, which report the SNI they got and the client certificate shown.
// Also as an attacker or a careless user would: another namespace's policy naming our Service,
// a hostname with CR/LF, subjectAltNames (not served: never an unverified connection instead), a
// client certificate of another namespace without a ReferenceGrant. A covered host stays the Lua
// router's (one TLS location per policy combination): its route changes reload nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { generateCertificate } from '../../support/lua-nginx.js';
import { tlsSecret, type CliProcess } from '../../support/local-harness.js';
import { waitFor } from '../../support/wait.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1, startGatewayController, stopGatewayController } from '../../support/gateway-local.js';

const GROUP = 'gateway.networking.k8s.io';
const NS = 'btls-infra';
const TENANT = 'btls-tenant';
const OTHER = 'btls-other';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-btls-'));

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; observedGeneration: number };
type Ancestor = { ancestorRef: { name: string; namespace: string }; controllerName: string; conditions: Cond[] };

const pem = (p: string) => readFileSync(p, 'utf8');
const svc = (ns: string, name: string, ports = [{ name: 'https', port: 443 }]): FakeObject => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { ports: ports.map((p) => ({ ...p, targetPort: p.name })) },
});
const slice = (ns: string, name: string, e: EchoServer, names = ['https']): FakeObject => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-0`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
  addressType: 'IPv4', ports: names.map((n) => ({ name: n, port: e.port })), endpoints: [{ addresses: [e.address], conditions: { ready: true } }],
});
const backend = (ns: string, name: string, e: EchoServer, ports?: Array<{ name: string; port: number }>) => [svc(ns, name, ports), slice(ns, name, e, ports?.map((p) => p.name))];
const caMap = (ns: string, name: string, text: string): FakeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { 'ca.crt': text } });
const policy = (ns: string, name: string, target: Obj, validation: Obj, created?: string): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'BackendTLSPolicy', metadata: { name, namespace: ns, ...(created ? { creationTimestamp: created } : {}) },
  spec: { targetRefs: [{ group: '', kind: 'Service', ...target }], validation },
});
const ca = (name: string, hostname = 'abc.example.com') => ({ caCertificateRefs: [{ group: '', kind: 'ConfigMap', name }], hostname });
const route = (ns: string, name: string, host: string, service: string, port = 443, gateway = 'same'): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: gateway, namespace: NS }], hostnames: [host], rules: [{ backendRefs: [{ name: service, port }] }] },
});
const gateway = (name: string, hostname: string, spec: Obj = {}, ns = NS): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: ns },
  spec: { gatewayClassName: 'btls', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname, allowedRoutes: { namespaces: { from: 'All' } } }], ...spec },
});
const clientRef = (ref: Obj) => ({ tls: { backend: { clientCertificateRef: { group: '', kind: 'Secret', ...ref } } } });

const ancestors = (name: string, ns = NS) => ((fake.get(GATEWAY_V1, 'BackendTLSPolicy', name, ns)?.status as { ancestors?: Ancestor[] } | undefined)?.ancestors ?? []);
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
/** The policy's conditions for Gateway `same` (its only ancestor in these tests). */
const policyStatus = (name: string, ns = NS) => brief(ancestors(name, ns).find((a) => a.ancestorRef.name === 'same' && a.ancestorRef.namespace === NS)?.conditions);
const gatewayStatus = (name: string, ns = NS) => brief((fake.get(GATEWAY_V1, 'Gateway', name, ns)?.status as { conditions?: Cond[] } | undefined)?.conditions);
const OK = ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'];
const generationOf = (name: string) => fake.get(GATEWAY_V1, 'BackendTLSPolicy', name, NS)!.metadata.generation as number;
const reloads = () => ctl.metric('nginx_ingress_controller_success');
let caA = '';

test.before(async () => {
  const certs = join(tmp, 'certs');
  const server = await generateCertificate(certs, 'abc.example.com');
  const stranger = await generateCertificate(certs, 'abc.example.com');
  const client = await generateCertificate(certs, 'btls-client');
  caA = pem(server.certPath);
  const serving = { cert: caA, key: pem(server.keyPath) };
  echo.tls = await startEchoServer({ address: '127.0.0.2', name: 'tls', tls: serving });
  echo.mtls = await startEchoServer({ address: '127.0.0.3', name: 'mtls', tls: { ...serving, clientCA: pem(client.certPath) } });
  echo.plain = await startEchoServer({ address: '127.0.0.4', name: 'plain' });
  echo.tls2 = await startEchoServer({ address: '127.0.0.5', name: 'tls2', tls: serving });
  const junk = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from('not a certificate\n').toString('base64'), 'tls.key': Buffer.from('not a key\n').toString('base64') } };
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'btls' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    gateway('same', '*.btls'),
    caMap(NS, 'ca-a', caA),
    caMap(NS, 'ca-stranger', pem(stranger.certPath)),
    caMap(NS, 'malformed', 'not a certificate'),
    // BackendTLSPolicy
    ...backend(NS, 'valid', echo.tls), policy(NS, 'normative', { name: 'valid' }, ca('ca-a')), route(NS, 'valid', 'valid.btls', 'valid'),
    ...backend(NS, 'host-mismatch', echo.tls), policy(NS, 'host-mismatch', { name: 'host-mismatch' }, ca('ca-a', 'abc.example.org')), route(NS, 'host-mismatch', 'host-mismatch.btls', 'host-mismatch'),
    ...backend(NS, 'cert-mismatch', echo.tls), policy(NS, 'cert-mismatch', { name: 'cert-mismatch' }, ca('ca-stranger')), route(NS, 'cert-mismatch', 'cert-mismatch.btls', 'cert-mismatch'),
    ...backend(NS, 'reconcile', echo.tls), policy(NS, 'reconcile', { name: 'reconcile' }, ca('ca-reconcile')), route(NS, 'reconcile', 'reconcile.btls', 'reconcile'),
    // Another Service whose policy asks for the same hostname and CA: the same TLS location.
    ...backend(NS, 'same-combo', echo.tls2), policy(NS, 'same-combo', { name: 'same-combo' }, ca('ca-a')), route(NS, 'same-combo', 'same-combo.btls', 'same-combo'),
    ...backend(NS, 'bump', echo.tls), policy(NS, 'bump', { name: 'bump' }, ca('ca-a')), route(NS, 'bump', 'bump.btls', 'bump'),
    // ConflictResolution: the older policy, then the first by name, wins; a sectionName's beats the whole Service's.
    ...backend(NS, 'conflict', echo.tls),
    policy(NS, 'conflicted-without-section-name-2', { name: 'conflict' }, ca('ca-a', 'wrong.example.com'), '2026-01-02T00:00:00Z'),
    policy(NS, 'conflicted-without-section-name-1', { name: 'conflict' }, ca('ca-a'), '2026-01-01T00:00:00Z'),
    route(NS, 'conflict', 'conflict.btls', 'conflict'),
    ...backend(NS, 'conflict-section', echo.tls),
    policy(NS, 'conflicted-with-section-name-2', { name: 'conflict-section', sectionName: 'https' }, ca('ca-a', 'wrong.example.com'), '2026-01-01T00:00:00Z'),
    policy(NS, 'conflicted-with-section-name-1', { name: 'conflict-section', sectionName: 'https' }, ca('ca-a'), '2026-01-01T00:00:00Z'),
    route(NS, 'conflict-section', 'conflict-section.btls', 'conflict-section'),
    ...backend(NS, 'sections', echo.tls, [{ name: 'https', port: 443 }, { name: 'other', port: 8443 }]),
    policy(NS, 'not-conflicted-with-section-name', { name: 'sections', sectionName: 'https' }, ca('ca-a')),
    policy(NS, 'not-conflicted-without-section-name', { name: 'sections' }, ca('ca-a', 'wrong.example.com')),
    route(NS, 'sections-https', 'sections-https.btls', 'sections', 443), route(NS, 'sections-other', 'sections-other.btls', 'sections', 8443),
    // InvalidCACertificateRef, InvalidKind
    ...backend(NS, 'nonexistent-ca', echo.tls), policy(NS, 'nonexistent-ca-certificate-ref', { name: 'nonexistent-ca' }, ca('does-not-exist')), route(NS, 'nonexistent-ca', 'nonexistent-ca.btls', 'nonexistent-ca'),
    ...backend(NS, 'malformed-ca', echo.tls), policy(NS, 'malformed-ca-certificate-ref', { name: 'malformed-ca' }, ca('malformed')), route(NS, 'malformed-ca', 'malformed-ca.btls', 'malformed-ca'),
    ...backend(NS, 'invalid-kind', echo.tls),
    policy(NS, 'invalid-kind', { name: 'invalid-kind' }, { caCertificateRefs: [{ group: '', kind: 'Secret', name: 'ca-a' }], hostname: 'abc.example.com' }),
    route(NS, 'invalid-kind', 'invalid-kind.btls', 'invalid-kind'),
    // Careless and hostile
    ...backend(NS, 'crlf', echo.tls), policy(NS, 'crlf', { name: 'crlf' }, ca('ca-a', 'abc.example.com\r\nproxy_ssl_verify off')), route(NS, 'crlf', 'crlf.btls', 'crlf'),
    ...backend(NS, 'san', echo.tls), policy(NS, 'san', { name: 'san' }, { ...ca('ca-a'), subjectAltNames: [{ type: 'URI', uri: 'spiffe://btls/ns/infra' }] }), route(NS, 'san', 'san.btls', 'san'),
    ...backend(TENANT, 'valid', echo.plain), policy(TENANT, 'hijack', { name: 'valid' }, { ...ca('ca-a'), hostname: 'evil.example.com' }, '2020-01-01T00:00:00Z'),
    caMap(TENANT, 'ca-a', caA),
    route(TENANT, 'tenant', 'tenant.btls', 'valid'),
    // GatewayTLSBackendClientCertificate
    tlsSecret(NS, 'client', pem(client.certPath), pem(client.keyPath)),
    gateway('client-cert', 'client.btls', clientRef({ name: 'client' })),
    ...backend(NS, 'mtls', echo.mtls), policy(NS, 'mtls', { name: 'mtls' }, ca('ca-a')),
    route(NS, 'mtls', 'client.btls', 'mtls', 443, 'client-cert'), route(NS, 'mtls-without', 'no-client.btls', 'mtls'),
    // GatewayInvalidTLSBackendConfiguration
    { ...junk, metadata: { name: 'malformed', namespace: NS } },
    tlsSecret(OTHER, 'client', pem(client.certPath), pem(client.keyPath)),
    gateway('cc-nonexistent', 'cc-nonexistent.btls', clientRef({ name: 'does-not-exist' })),
    gateway('cc-group', 'cc-group.btls', clientRef({ name: 'client', group: 'wrong.group.example' })),
    gateway('cc-kind', 'cc-kind.btls', clientRef({ name: 'client', kind: 'WrongKind' })),
    gateway('cc-malformed', 'cc-malformed.btls', clientRef({ name: 'malformed' })),
    gateway('cc-no-grant', 'cc-no-grant.btls', clientRef({ name: 'client', namespace: OTHER })),
    gateway('cc-wrong-grant', 'cc-wrong-grant.btls', clientRef({ name: 'client', namespace: OTHER }), 'btls-gw-wrong'),
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'routes-only', namespace: OTHER }, spec: { from: [{ group: GROUP, kind: 'HTTPRoute', namespace: 'btls-gw-wrong' }], to: [{ group: '', kind: 'Secret' }] } },
    gateway('cc-granted', 'cc-granted.btls', clientRef({ name: 'client', namespace: OTHER }), 'btls-gw-granted'),
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'gateways', namespace: OTHER }, spec: { from: [{ group: GROUP, kind: 'Gateway', namespace: 'btls-gw-granted' }], to: [{ group: '', kind: 'Secret', name: 'client' }] } },
  ];
  ({ fake, ctl } = await startGatewayController(tmp, objects));
  await waitFor(() => policyStatus('normative').length > 0 && policyStatus('invalid-kind').length > 0 && gatewayStatus('cc-granted', 'btls-gw-granted').length > 0,
    { what: 'the status written', timeoutMs: 30_000 });
});

test.after(() => stopGatewayController(ctl, fake, echo, tmp));

over.both('BackendTLSPolicy › a Service with a valid policy is reached over TLS, with the policy\'s hostname as SNI', async (p) => {
  assert.equal(policyStatus('normative'), OK);
  const r = await p.until('valid.btls', '/backendtlspolicy', (x) => x.status === 200, { what: 'the TLS backend' });
  assert.is(r.backend, 'tls');
  assert.equal((r.json as { tls?: unknown }).tls, { sni: 'abc.example.com', clientCN: '' });
});

over.both('BackendTLSPolicy › a certificate that does not carry the policy\'s hostname gets an error answer', async (p) => {
  assert.equal(policyStatus('host-mismatch'), OK);
  const before = echo.tls!.hits();
  await p.until('host-mismatch.btls', '/backendtlspolicy-host-mismatch', (x) => x.status === 502, { what: 'the name check failing' });
  assert.is(echo.tls!.hits(), before, 'no request reached the backend');
});

over.both('BackendTLSPolicy › a certificate another CA signed gets an error answer', async (p) => {
  assert.equal(policyStatus('cert-mismatch'), OK);
  const before = echo.tls!.hits();
  await p.until('cert-mismatch.btls', '/backendtlspolicy-cert-mismatch', (x) => x.status === 502, { what: 'the CA check failing' });
  assert.is(echo.tls!.hits(), before);
});

over.both('BackendTLSPolicy › the policy\'s ConfigMap created, emptied and restored is followed', async (p) => {
  const NO_CA = ['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidCACertificateRef'];
  const map = `ca-reconcile-${p.tag}`;
  const current = fake.get(GATEWAY_V1, 'BackendTLSPolicy', 'reconcile', NS)!;
  fake.update({ ...current, spec: { ...(current.spec as Obj), validation: ca(map) } });
  await waitFor(() => ancestors('reconcile').some((a) => a.conditions[0]?.observedGeneration === generationOf('reconcile')), { what: 'the new generation', timeoutMs: 20_000 });
  assert.equal(policyStatus('reconcile'), NO_CA);
  await p.until('reconcile.btls', '/', (x) => x.status === 500, { what: 'no CA: 500' });
  fake.create(caMap(NS, map, caA));
  await waitFor(() => policyStatus('reconcile').join() === OK.join(), { what: 'resolved', timeoutMs: 20_000 });
  await p.until('reconcile.btls', '/', (x) => x.status === 200 && x.backend === 'tls', { what: 'served over TLS' });
  fake.update({ ...fake.get('v1', 'ConfigMap', map, NS)!, data: { 'ca.crt': '' } });
  await waitFor(() => policyStatus('reconcile').join() === NO_CA.join(), { what: 'the emptied ConfigMap', timeoutMs: 20_000 });
  await p.until('reconcile.btls', '/', (x) => x.status === 500, { what: 'no CA again: 500' });
  fake.update({ ...fake.get('v1', 'ConfigMap', map, NS)!, data: { 'ca.crt': caA } });
  await waitFor(() => policyStatus('reconcile').join() === OK.join(), { what: 'restored', timeoutMs: 20_000 });
  await p.until('reconcile.btls', '/', (x) => x.status === 200, { what: 'served again' });
});

test('BackendTLSPolicyObservedGenerationBump › a changed policy has its conditions at its new generation', async () => {
  const before = fake.get(GATEWAY_V1, 'BackendTLSPolicy', 'bump', NS)!;
  const generation = () => generationOf('bump');
  await waitFor(() => ancestors('bump')[0]?.conditions.every((c) => c.observedGeneration === generation()) === true, { what: 'the first generation', timeoutMs: 20_000 });
  fake.update({ ...before, spec: { ...(before.spec as Obj), validation: ca('ca-a', 'abc.example.com'), options: { 'example.com/unused': 'x' } } });
  assert.is(generation(), 2);
  await waitFor(() => ancestors('bump')[0]?.conditions.every((c) => c.observedGeneration === 2) === true, { what: 'generation 2 on every condition', timeoutMs: 20_000 });
  assert.equal(policyStatus('bump'), OK);
});

over.both('BackendTLSPolicyConflictResolution › of two policies for a whole Service the older applies; the newer is Conflicted', async (p) => {
  assert.equal(policyStatus('conflicted-without-section-name-1'), OK);
  assert.equal(policyStatus('conflicted-without-section-name-2')[0], 'Accepted=False/Conflicted');
  const r = await p.until('conflict.btls', '/backendtlspolicy-conflicted-without-section-name', (x) => x.status === 200, { what: 'the older policy' });
  assert.is((r.json as { tls: { sni: string } }).tls.sni, 'abc.example.com');
});

over.both('BackendTLSPolicyConflictResolution › of two equally old policies for one port the first by name applies', async (p) => {
  assert.equal(policyStatus('conflicted-with-section-name-1'), OK);
  assert.equal(policyStatus('conflicted-with-section-name-2')[0], 'Accepted=False/Conflicted');
  const r = await p.until('conflict-section.btls', '/backendtlspolicy-conflicted-with-section-name', (x) => x.status === 200, { what: 'the first by name' });
  assert.is((r.json as { tls: { sni: string } }).tls.sni, 'abc.example.com');
});

over.both('BackendTLSPolicyConflictResolution › a port\'s policy and the whole Service\'s both apply, the port\'s on its port', async (p) => {
  assert.equal(policyStatus('not-conflicted-with-section-name'), OK);
  assert.equal(policyStatus('not-conflicted-without-section-name'), OK);
  await p.until('sections-https.btls', '/backendtlspolicy-not-conflicted-with-section-name', (x) => x.status === 200, { what: 'the port\'s policy' });
  // The whole Service's policy names a hostname the backend's certificate does not carry.
  await p.until('sections-other.btls', '/backendtlspolicy-not-conflicted-without-section-name', (x) => x.status === 502, { what: 'the Service\'s policy on the other port' });
});

for (const name of ['nonexistent-ca-certificate-ref', 'malformed-ca-certificate-ref']) {
  over.both(`BackendTLSPolicyInvalidCACertificateRef › ${name}: not accepted, and its Service answers 500`, async (p) => {
    assert.equal(policyStatus(name), ['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidCACertificateRef']);
    const host = `${name.replace('-certificate-ref', '')}.btls`;
    const before = echo.tls!.hits();
    await p.until(host, `/backendtlspolicy-${name}`, (x) => x.status === 500, { what: '500' });
    assert.is(echo.tls!.hits(), before);
  });
}

over.both('BackendTLSPolicyInvalidKind › a CA certificate ref to a Secret: not accepted, InvalidKind, and 500', async (p) => {
  assert.equal(policyStatus('invalid-kind'), ['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidKind']);
  await p.until('invalid-kind.btls', '/backendtlspolicy-invalid-kind', (x) => x.status === 500, { what: '500' });
});

over.both('BackendTLSPolicy › attacker: a hostname with CR/LF is refused (Invalid) and its Service answers 500; others are served', async (p) => {
  assert.equal(policyStatus('crlf')[0], 'Accepted=False/Invalid');
  await p.until('crlf.btls', '/', (x) => x.status === 500, { what: '500' });
  assert.is((await p.request('valid.btls', '/')).status, 200);
  assert.not.match(readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8'), 'proxy_ssl_verify off');
});

over.both('BackendTLSPolicy › subjectAltNames, which NGINX cannot check, are refused (Invalid): 500, never an unverified connection', async (p) => {
  assert.equal(policyStatus('san')[0], 'Accepted=False/Invalid');
  const before = echo.tls!.hits();
  await p.until('san.btls', '/', (x) => x.status === 500, { what: '500' });
  assert.is(echo.tls!.hits(), before);
});

over.both('BackendTLSPolicy › attacker: an older policy in another namespace naming a Service of ours changes only its own namespace\'s', async (p) => {
  // Ours still verifies abc.example.com, not the tenant policy's hostname.
  const r = await p.request('valid.btls', '/');
  assert.is(r.status, 200);
  assert.is((r.json as { tls: { sni: string } }).tls.sni, 'abc.example.com');
  // The tenant's own Service (plain HTTP) is now reached over TLS, as its owner asked: the handshake fails, 502.
  assert.equal(brief(ancestors('hijack', TENANT)[0]?.conditions), OK);
  const before = echo.plain!.hits();
  await p.until('tenant.btls', '/', (x) => x.status === 502, { what: 'the tenant policy on the tenant Service' });
  assert.is(echo.plain!.hits(), before);
});

over.both('GatewayTLSBackendClientCertificate › the Gateway\'s client certificate is shown to the TLS backend', async (p) => {
  assert.equal(gatewayStatus('client-cert'), ['Accepted=True/Accepted', 'Programmed=True/Programmed', 'ResolvedRefs=True/ResolvedRefs']);
  const r = await p.until('client.btls', '/', (x) => x.status === 200, { what: 'the mTLS backend' });
  assert.equal((r.json as { tls: unknown }).tls, { sni: 'abc.example.com', clientCN: 'btls-client' });
  // Through a Gateway without one, the backend refuses the handshake.
  await p.until('no-client.btls', '/', (x) => x.status === 502, { what: 'no client certificate: 502' });
});

test('GatewayInvalidTLSBackendConfiguration › an unusable clientCertificateRef: ResolvedRefs False, the Gateway still Accepted', async () => {
  const cases: Array<[string, string, string]> = [
    ['cc-nonexistent', NS, 'InvalidClientCertificateRef'], ['cc-group', NS, 'InvalidClientCertificateRef'], ['cc-kind', NS, 'InvalidClientCertificateRef'],
    ['cc-malformed', NS, 'InvalidClientCertificateRef'], ['cc-no-grant', NS, 'RefNotPermitted'], ['cc-wrong-grant', 'btls-gw-wrong', 'RefNotPermitted'],
  ];
  await waitFor(() => cases.every(([name, ns]) => gatewayStatus(name, ns).length === 3), { what: 'every Gateway\'s status', timeoutMs: 20_000 });
  for (const [name, ns, reason] of cases) {
    assert.equal(gatewayStatus(name, ns), ['Accepted=True/Accepted', 'Programmed=True/Programmed', `ResolvedRefs=False/${reason}`], name);
  }
  assert.equal(gatewayStatus('cc-granted', 'btls-gw-granted'), ['Accepted=True/Accepted', 'Programmed=True/Programmed', 'ResolvedRefs=True/ResolvedRefs']);
});

test('BackendTLSPolicy › a covered host has no server block: the router moves it to one TLS location per combination', async () => {
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  assert.not.match(conf, /server_name valid\.btls/);
  const tls = conf.match(/location = \/\.ingress-rx\/dynamic-route-tls-([0-9a-f]{16}) \{[\s\S]*?\n        \}/g) ?? [];
  // In the default server: abc.example.com with ca-a (and with the client certificate), abc.example.org, ca-stranger,
  // the tenant's evil.example.com, the conflicting and sectionName policies' wrong.example.com.
  const ids = new Set(tls.map((t) => /tls-([0-9a-f]{16})/.exec(t)![1]));
  assert.is(ids.size, 6, [...ids].join('\n'));
  const valid = tls.find((t) => t.includes('proxy_ssl_name "abc.example.com"') && !t.includes('proxy_ssl_certificate '))!;
  assert.match(valid, /proxy_ssl_trusted_certificate "[^"]+";\n\s+proxy_ssl_verify on;[\s\S]*proxy_ssl_server_name on;[\s\S]*proxy_pass https:\/\/upstream_balancer_tls\$dynamic_upstream_uri;/);
});

over.both('BackendTLSPolicy › route changes on a covered host reload nothing: a route added, a path added, moved to a Service of the same combination, removed', async (p) => {
  const before = await reloads();
  const name = `added-${p.tag}`;
  const host = `${name}.btls`;
  fake.create(route(NS, name, host, 'valid'));
  const r = await p.until(host, '/', (x) => x.status === 200, { what: 'the new route over TLS' });
  assert.equal([r.backend, (r.json as { tls?: unknown }).tls], ['tls', { sni: 'abc.example.com', clientCN: '' }]);
  const current = fake.get(GATEWAY_V1, 'HTTPRoute', name, NS)!;
  const spec = current.spec as Obj;
  fake.update({ ...current, spec: { ...spec, rules: [{ backendRefs: [{ name: 'valid', port: 443 }] }, { matches: [{ path: { type: 'PathPrefix', value: '/moved' } }], backendRefs: [{ name: 'same-combo', port: 443 }] }] } });
  const moved = await p.until(host, '/moved/x', (x) => x.status === 200 && x.backend === 'tls2', { what: 'a path to another Service of the same combination' });
  assert.equal((moved.json as { tls?: unknown }).tls, { sni: 'abc.example.com', clientCN: '' });
  assert.is((await p.request(host, '/')).backend, 'tls', 'the first rule is still served');
  fake.delete(GATEWAY_V1, 'HTTPRoute', name, NS);
  await p.until(host, '/', (x) => x.status === 404, { what: 'the route removed' });
  assert.is(await reloads(), before, 'no reload');
});

test('BackendTLSPolicy › a new combination (a policy\'s hostname changed) reloads once, and is followed', async () => {
  await ctl.until('same-combo.btls', '/', (x) => x.status === 200 && x.backend === 'tls2', { what: 'served' });
  const before = await reloads();
  const current = fake.get(GATEWAY_V1, 'BackendTLSPolicy', 'same-combo', NS)!;
  fake.update({ ...current, spec: { ...(current.spec as Obj), validation: ca('ca-a', 'abc.example.net') } });
  // The backend's certificate does not carry the new name: 502 from the new location, never unverified.
  await ctl.until('same-combo.btls', '/', (x) => x.status === 502, { what: 'the new hostname verified' });
  const hits = echo.tls2!.hits();
  assert.is((await ctl.request('same-combo.btls', '/')).status, 502);
  assert.is(echo.tls2!.hits(), hits, 'no request reached the backend');
  assert.ok((await reloads()) > before, 'a reload');
  assert.match(readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8'), /proxy_ssl_name "abc\.example\.net";/);
  assert.is((await ctl.request('valid.btls', '/')).status, 200, 'others still served');
  fake.update({ ...fake.get(GATEWAY_V1, 'BackendTLSPolicy', 'same-combo', NS)!, spec: current.spec });
  await ctl.until('same-combo.btls', '/', (x) => x.status === 200 && x.backend === 'tls2', { what: 'restored' });
});

test('BackendTLSPolicy › a route to a Service without a policy reloads nothing', async () => {
  const before = await reloads();
  fake.create(route(NS, 'plain-added', 'plain-added.btls', 'valid-plain', 80));
  fake.create(svc(NS, 'valid-plain', [{ name: 'http', port: 80 }]));
  fake.create(slice(NS, 'valid-plain', echo.plain!, ['http']));
  await ctl.until('plain-added.btls', '/', (x) => x.status === 200 && x.backend === 'plain', { what: 'the new route' });
  assert.is(await reloads(), before, 'a route to a Service without a policy reloads nothing');
});

test.run();
