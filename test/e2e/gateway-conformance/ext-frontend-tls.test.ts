// Gateway API conformance: client certificate validation of HTTPS listeners (Gateway
// spec.tls.frontend: GatewayFrontendClientCertificateValidation, its InsecureFallback mode, the
// invalid configurations) and misdirected requests (HTTPRouteHTTPSListenerDetectMisdirectedRequests),
// ported to `ingress-rx controller --enable-gateway-api` against the fake API server (status through
// the status subresource) with real NGINX, certificates made by the openssl CLI and real TLS
// clients over HTTP/1.1 and HTTP/2. The suite's per-port scenarios are served on its port 8443
// (--gateway-listener-ports maps it to a free port), beside a listener of the same Gateway on 443
// that the default validation holds for. The attacker cases: a tenant's Gateway reading another namespace's CA without a grant, a newer
// Gateway claiming a validated hostname without validation, an SNI of an unvalidated host with
// the Host of a validated one, and Ingress hosts on the same port, which no Gateway validation reaches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../../support/echo-server.js';
import { ingress, service, slices, tlsSecret, type CliProcess, type Reply } from '../../support/local-harness.js';
import { waitFor } from '../../support/wait.js';
import { freePorts } from '../../support/ports.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';
import { GATEWAY_V1, startGatewayController, stopGatewayController } from '../../support/gateway-local.js';

const GROUP = 'gateway.networking.k8s.io';
const NS = 'ftls';
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const dir = mkdtempSync(join(tmpdir(), 'irx-ftls-'));
/** NGINX's ports for listener ports 8443, 7443 and 6443. */
let p8443 = 0;
let p7443 = 0;
let p6443 = 0;

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string };

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const file = (name: string) => readFileSync(join(dir, name), 'utf8');

function makeCA(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`,
    '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
}
function makeLeaf(name: string, ca: string, sans: string[] = []): void {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
  writeFileSync(join(dir, `${name}.ext`), sans.length ? `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}\n` : 'basicConstraints=CA:FALSE\n');
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
}

const configMap = (ns: string, name: string, data: Record<string, string>): FakeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });
const caRef = (name: string, extra: Obj = {}) => ({ kind: 'ConfigMap', group: '', name, ...extra });
const listener = (name: string, hostname?: string, extra: Obj = {}) => ({
  name, port: 443, protocol: 'HTTPS', ...(hostname ? { hostname } : {}), allowedRoutes: { namespaces: { from: 'Same' } },
  tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'server' }] }, ...extra,
});
const gateway = (name: string, listeners: Obj[], tls?: Obj, ns = NS, created?: string): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: ns, ...(created ? { creationTimestamp: created } : {}) },
  spec: { gatewayClassName: 'ftls', listeners, ...(tls ? { tls: { frontend: tls } } : {}) },
});
const validation = (refs: Obj[], mode?: string) => ({ validation: { ...(mode ? { mode } : {}), caCertificateRefs: refs } });
const route = (name: string, gw: string, hosts: string[], backend: string, extra: Obj = {}, ns = NS): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: gw, namespace: ns, ...extra }], ...(hosts.length ? { hostnames: hosts } : {}), rules: [{ backendRefs: [{ name: backend, port: 80 }] }] },
});

const status = (name: string, ns = NS) => fake.get(GATEWAY_V1, 'Gateway', name, ns)?.status as { conditions?: Cond[]; listeners?: Array<{ name: string; conditions: Cond[] }> } | undefined;
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
const listenerConditions = (gw: string, l: string, ns = NS) => brief(status(gw, ns)?.listeners?.find((x) => x.name === l)?.conditions).filter((c) => !c.startsWith('Conflicted='));

/** One HTTPS request over `p`'s protocol with its own SNI, Host and client certificate (a name of this dir). */
function call(p: ProtocolClient, host: string, opts: { sni?: string | null; client?: string; path?: string; port?: number } = {}): Promise<Reply> {
  return p.request(host, opts.path ?? '/', {
    https: true, ...(opts.port ? { port: opts.port } : {}), ca: file('server.crt'), ...(opts.sni !== undefined ? { sni: opts.sni } : {}),
    ...(opts.client ? { cert: file(`${opts.client}.crt`), key: file(`${opts.client}.key`) } : {}),
  });
}
/** Whether the request fails: no answer (a refused handshake, a closed connection or a reset stream). */
async function refused(p: ProtocolClient, host: string, opts: { sni?: string | null; client?: string; port?: number } = {}): Promise<boolean> {
  try {
    const r = await call(p, host, opts);
    return r.status === 0;
  } catch {
    return true;
  }
}

const HOSTS = [
  'default.ftls.test', 'perport.ftls.test', 'perport-default.ftls.test', 'insecure.ftls.test', 'insecure-perport.ftls.test', 'insecure-default.ftls.test', 'invalid-default.ftls.test',
  'claimed.ftls.test', 'granted.ftls.test', 'grant.ftls.test', 'ingress.ftls.test',
  'example.org', 'second-example.org', 'third-example.wildcard.org', 'fourth-example.wildcard.org', 'fith-example.wildcard.org', 'unknown-example.org',
];

test.before(async () => {
  [p8443, p7443, p6443] = await freePorts(3);
  makeCA('ca-default');
  makeCA('ca-port');
  makeCA('ca-tenant');
  makeLeaf('client-default', 'ca-default');
  makeLeaf('client-port', 'ca-port');
  makeLeaf('client-tenant', 'ca-tenant');
  // One self-signed server certificate for every listener, as the suite's.
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'server.key', '-out', 'server.crt',
    '-days', '2', '-subj', '/CN=server', '-addext', `subjectAltName=${[...HOSTS, '*.wildcard.org'].map((h) => `DNS:${h}`).join(',')}`);
  for (const [i, name] of ['v1', 'v2', 'v3', 'ing'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const ca = (name: string) => ({ 'ca.crt': file(`${name}.crt`) });
  const objects: FakeObject[] = [
    { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'ftls' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
    ...['v1', 'v2', 'v3', 'ing'].flatMap((n) => [service(NS, n), ...slices(NS, n, [echo[n]!])]),
    tlsSecret(NS, 'server', file('server.crt'), file('server.key')),
    configMap(NS, 'ca-default', ca('ca-default')),
    configMap(NS, 'ca-port', ca('ca-port')),
    configMap(NS, 'no-ca-key', { 'ca.pem': file('ca-default.crt') }),
    configMap(NS, 'not-pem', { 'ca.crt': 'not a certificate\r\nInjected: yes\n' }),
    configMap('ftls-other', 'ca-tenant', ca('ca-tenant')),
    configMap('ftls-other', 'ca-granted', ca('ca-tenant')),
    // A grant for the ConfigMap ca-granted only, and one of the wrong kind.
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'ca', namespace: 'ftls-other' }, spec: { from: [{ group: GROUP, kind: 'Gateway', namespace: NS }], to: [{ group: '', kind: 'ConfigMap', name: 'ca-granted' }] } },
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'secrets', namespace: 'ftls-other' }, spec: { from: [{ group: GROUP, kind: 'Gateway', namespace: NS }], to: [{ group: '', kind: 'Secret' }] } },

    // GatewayFrontendClientCertificateValidation: the default, and a perPort entry for 8443 that overrides it there.
    gateway('default', [listener('https', 'default.ftls.test')], { default: validation([caRef('ca-default')]) }, NS, '2026-01-01T00:00:00Z'),
    gateway('perport', [listener('https', 'perport-default.ftls.test'), listener('https-with-hostname', 'perport.ftls.test', { port: 8443 })],
      { default: validation([caRef('ca-default')]), perPort: [{ port: 8443, tls: validation([caRef('ca-port')]) }] }),
    route('default', 'default', ['default.ftls.test'], 'v1'),
    route('perport', 'perport', [], 'v2'),
    // ...InsecureFallback: any client is served.
    gateway('insecure', [listener('https', 'insecure.ftls.test')], { default: validation([caRef('ca-default')], 'AllowInsecureFallback') }),
    gateway('insecure-perport', [listener('https', 'insecure-default.ftls.test'), listener('https-with-hostname', 'insecure-perport.ftls.test', { port: 8443 })],
      { default: validation([caRef('ca-default')]), perPort: [{ port: 8443, tls: validation([caRef('ca-port')], 'AllowInsecureFallback') }] }),
    route('insecure', 'insecure', ['insecure.ftls.test'], 'v1'),
    route('insecure-perport', 'insecure-perport', [], 'v2'),
    // GatewayFrontendInvalidDefaultClientCertificateValidation: the HTTP listener is not touched.
    gateway('invalid-default', [listener('https', 'invalid-default.ftls.test'), { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'Same' } } }],
      { default: validation([caRef('does-not-exist')]), perPort: [{ port: 80, tls: validation([caRef('ca-port')]) }] }),
    route('invalid-default', 'invalid-default', ['invalid-default.ftls.test'], 'v1'),
    // GatewayInvalidFrontendClientCertificateValidation: as the suite's, one listener per port and a perPort entry each, one broken reference per port.
    gateway('invalid', [
      listener('https', 'valid.ftls.test'), listener('https-unresolved', 'unresolved.ftls.test', { port: 7443 }),
      listener('https-invalid-kind', 'kind.ftls.test', { port: 8443 }), listener('https-grant-missing', 'grant.ftls.test', { port: 6443 }),
    ], {
      default: validation([caRef('ca-default')]),
      perPort: [
        { port: 7443, tls: validation([caRef('non-existing')]) },
        { port: 8443, tls: validation([{ kind: 'Service', group: '', name: 'v2' }]) },
        { port: 6443, tls: validation([caRef('ca-tenant', { namespace: 'ftls-other' })]) },
      ],
    }),
    route('grant-missing', 'invalid', ['grant.ftls.test'], 'v1', { sectionName: 'https-grant-missing' }),
    gateway('no-ca-key', [listener('https', 'no-ca-key.ftls.test')], { default: validation([caRef('no-ca-key')]) }),
    gateway('not-pem', [listener('https', 'not-pem.ftls.test')], { default: validation([caRef('not-pem')]) }),
    gateway('partly', [listener('https', 'partly.ftls.test')], { default: validation([caRef('non-existing'), caRef('ca-default')]) }),
    gateway('granted', [listener('https', 'granted.ftls.test')], { default: validation([caRef('ca-granted', { namespace: 'ftls-other' })]) }),
    route('granted', 'granted', ['granted.ftls.test'], 'v1'),
    // Attacker: a newer Gateway of another namespace with the validated listener's hostname and none.
    gateway('claim', [{ ...listener('https', 'default.ftls.test'), allowedRoutes: { namespaces: { from: 'Same' } }, tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'server', namespace: NS }] } }], undefined, 'ftls-attacker', '2026-06-01T00:00:00Z'),
    { apiVersion: `${GROUP}/v1beta1`, kind: 'ReferenceGrant', metadata: { name: 'server', namespace: NS }, spec: { from: [{ group: GROUP, kind: 'Gateway', namespace: 'ftls-attacker' }], to: [{ group: '', kind: 'Secret', name: 'server' }] } },
    // An Ingress host on the same HTTPS port: no client certificate is asked for it.
    ingress(NS, 'ingress', { host: 'ingress.ftls.test', tls: [{ hosts: ['ingress.ftls.test'], secretName: 'server' }], paths: [{ path: '/', service: 'ing' }] }),

    // HTTPRouteHTTPSListenerDetectMisdirectedRequests: four listeners on 443, one certificate.
    gateway('misdirected', [
      listener('https'), listener('https-with-hostname', 'second-example.org'),
      listener('https-with-wildcard-hostname', '*.wildcard.org'), listener('https-with-hostname-matching-wildcard', 'fourth-example.wildcard.org'),
    ]),
    route('misdirected-1', 'misdirected', ['example.org'], 'v1', { sectionName: 'https' }),
    route('misdirected-2', 'misdirected', [], 'v2', { sectionName: 'https-with-hostname' }),
    route('misdirected-3', 'misdirected', [], 'v3', { sectionName: 'https-with-wildcard-hostname' }),
    route('misdirected-4', 'misdirected', [], 'v1', { sectionName: 'https-with-hostname-matching-wildcard' }),
  ];
  ({ fake, ctl } = await startGatewayController(dir, objects, ['--watch-ingress-without-class', '--gateway-listener-ports', `8443=${p8443},7443=${p7443},6443=${p6443}`]));
  await waitFor(() => status('misdirected')?.listeners !== undefined && status('partly')?.listeners !== undefined && status('invalid')?.listeners !== undefined, { what: 'the status written', timeoutMs: 30_000 });
  await ctl.until('default.ftls.test', '/', (r) => r.backend === 'v1', { what: 'default.ftls.test with a client certificate', https: true, ca: file('server.crt'), cert: file('client-default.crt'), key: file('client-default.key') });
});

test.after(() => stopGatewayController(ctl, fake, echo, dir));

over.both('GatewayFrontendClientCertificateValidation › the default validation: a certificate of its CA is served, another CA\'s or none is refused', async (p) => {
  const ok = await call(p, 'default.ftls.test', { client: 'client-default' });
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'v1');
  assert.ok(await refused(p, 'default.ftls.test', { client: 'client-port' }), 'a certificate of another CA');
  assert.ok(await refused(p, 'default.ftls.test'), 'no certificate');
});

over.both('GatewayFrontendClientCertificateValidation › a perPort entry for the listener\'s port overrides the default', async (p) => {
  const ok = await call(p, 'perport.ftls.test', { client: 'client-port', port: p8443 });
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'v2');
  assert.ok(await refused(p, 'perport.ftls.test', { client: 'client-default', port: p8443 }), 'the default\'s CA does not hold for port 8443');
  assert.ok(await refused(p, 'perport.ftls.test', { port: p8443 }), 'no certificate on 8443');
  // The same Gateway's listener on 443 takes the default.
  assert.is((await call(p, 'perport-default.ftls.test', { client: 'client-default' })).backend, 'v2');
  assert.ok(await refused(p, 'perport-default.ftls.test', { client: 'client-port' }), 'the perPort CA does not hold for 443');
});

over.both('GatewayFrontendClientCertificateValidation › attacker: a host of 8443 is not served on 443, and on 8443 another listener\'s SNI does not open it (421)', async (p) => {
  // perport.ftls.test exists on 8443 only: asked for on 443 (where the listener without hostname takes its SNI), it is not served.
  const r = await call(p, 'perport.ftls.test', { client: 'client-port' });
  assert.is(r.status, 404, 'perport.ftls.test is not served on 443');
  // The SNI of 8443's listener in AllowInsecureFallback mode, without a certificate: the Host of the validated listener is misdirected.
  assert.is((await call(p, 'perport.ftls.test', { sni: 'insecure-perport.ftls.test', port: p8443 })).status, 421);
});

over.both('GatewayFrontendClientCertificateValidationInsecureFallback › any client certificate, or none, is served', async (p) => {
  for (const [host, backend, port] of [['insecure.ftls.test', 'v1', undefined], ['insecure-perport.ftls.test', 'v2', p8443]] as const) {
    for (const client of ['client-default', 'client-port', undefined]) {
      const r = await call(p, host, { ...(client ? { client } : {}), ...(port ? { port } : {}) });
      assert.is(r.status, 200, `${host} with ${client ?? 'no certificate'}`);
      assert.is(r.backend, backend);
    }
  }
});

test('GatewayFrontendClientCertificateValidationInsecureFallback › the Gateway says InsecureFrontendValidationMode=True/ConfigurationChanged; a strict one does not', async () => {
  for (const name of ['insecure', 'insecure-perport']) {
    assert.ok(brief(status(name)?.conditions).includes('InsecureFrontendValidationMode=True/ConfigurationChanged'), `${name}: ${brief(status(name)?.conditions).join(', ')}`);
  }
  assert.not.ok(brief(status('default')?.conditions).some((c) => c.startsWith('InsecureFrontendValidationMode')));
});

test('GatewayFrontendInvalidDefaultClientCertificateValidation › the HTTP listener is served and all True; the HTTPS one is refused, NoValidCACertificate', async () => {
  assert.equal(listenerConditions('invalid-default', 'http'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed']);
  assert.equal(listenerConditions('invalid-default', 'https'), ['Accepted=False/NoValidCACertificate', 'ResolvedRefs=False/InvalidCACertificateRef', 'Programmed=False/Invalid']);
  const plain = await ctl.request('invalid-default.ftls.test', '/');
  assert.is(plain.status, 200);
  assert.is(plain.backend, 'v1');
});

over.both('GatewayFrontendInvalidDefaultClientCertificateValidation › an HTTPS listener without a valid CA refuses every client', async (p) => {
  assert.ok(await refused(p, 'invalid-default.ftls.test'), 'no certificate');
  assert.ok(await refused(p, 'invalid-default.ftls.test', { client: 'client-default' }), 'any certificate');
  // The Gateways beside it are served.
  assert.is((await call(p, 'default.ftls.test', { client: 'client-default' })).status, 200);
});

test('GatewayInvalidFrontendClientCertificateValidation › each broken reference names its reason on the listener; a valid one is all True', async () => {
  assert.equal(listenerConditions('invalid', 'https'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed']);
  const broken = (reason: string) => ['Accepted=False/NoValidCACertificate', `ResolvedRefs=False/${reason}`, 'Programmed=False/Invalid'];
  assert.equal(listenerConditions('invalid', 'https-unresolved'), broken('InvalidCACertificateRef'));
  assert.equal(listenerConditions('invalid', 'https-invalid-kind'), broken('InvalidCACertificateKind'));
  assert.equal(listenerConditions('invalid', 'https-grant-missing'), broken('RefNotPermitted'));
  assert.equal(listenerConditions('no-ca-key', 'https'), broken('InvalidCACertificateRef'));
  assert.equal(listenerConditions('not-pem', 'https'), broken('InvalidCACertificateRef'));
  // One bad reference beside a good one: ResolvedRefs=False, still accepted and validating.
  assert.equal(listenerConditions('partly', 'https'), ['Accepted=True/Accepted', 'ResolvedRefs=False/InvalidCACertificateRef', 'Programmed=False/Invalid']);
  assert.equal(listenerConditions('granted', 'https'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs', 'Programmed=True/Programmed']);
});

over.both('GatewayInvalidFrontendClientCertificateValidation › attacker: another namespace\'s CA is read only with a ReferenceGrant for that ConfigMap', async (p) => {
  const ok = await call(p, 'granted.ftls.test', { client: 'client-tenant' });
  assert.is(ok.status, 200);
  assert.ok(await refused(p, 'granted.ftls.test', { client: 'client-default' }));
  // grant.ftls.test (port 6443) names ca-tenant, which no grant covers: its listener refuses every handshake.
  assert.ok(await refused(p, 'grant.ftls.test', { client: 'client-tenant', port: p6443 }));
  assert.ok(await refused(p, 'grant.ftls.test', { port: p6443 }));
});

over.both('GatewayFrontendClientCertificateValidation › attacker: a newer Gateway with the same hostname and no validation does not turn it off', async (p) => {
  assert.ok(await refused(p, 'default.ftls.test'), 'still refused without a certificate');
  assert.is((await call(p, 'default.ftls.test', { client: 'client-default' })).status, 200);
});

over.both('GatewayFrontendClientCertificateValidation › attacker: the SNI of an unvalidated host does not open a validated one (421)', async (p) => {
  for (const sni of ['insecure.ftls.test', 'ingress.ftls.test', 'unknown-example.org', 'perport-default.ftls.test']) {
    const r = await call(p, 'default.ftls.test', { sni, client: sni === 'perport-default.ftls.test' ? 'client-default' : undefined });
    assert.is(r.status, 421, `SNI ${sni}, Host default.ftls.test`);
  }
});

test('GatewayFrontendClientCertificateValidation › attacker: a validated host that no HTTP listener serves is not answered on plain HTTP', async () => {
  for (const host of ['default.ftls.test', 'perport-default.ftls.test']) {
    const r = await ctl.request(host, '/');
    assert.is(r.status, 404, host);
    assert.is(r.backend, undefined, host);
  }
  // A host of an HTTPS listener without validation keeps being answered on both ports, as before.
  assert.is((await ctl.request('example.org', '/detect-misdirected-requests')).backend, 'v1');
});

over.both('GatewayFrontendClientCertificateValidation › an Ingress host on the same port is served without a client certificate', async (p) => {
  const r = await call(p, 'ingress.ftls.test');
  assert.is(r.status, 200);
  assert.is(r.backend, 'ing');
});

const MISDIRECTED: Array<[sni: string, host: string, status: number, backend?: string]> = [
  ['example.org', 'example.org', 200, 'v1'],
  ['example.org', 'second-example.org', 421],
  ['example.org', 'unknown-example.org', 404],
  ['second-example.org', 'second-example.org', 200, 'v2'],
  ['second-example.org', 'example.org', 421],
  ['second-example.org', 'unknown-example.org', 421],
  ['third-example.wildcard.org', 'third-example.wildcard.org', 200, 'v3'],
  ['third-example.wildcard.org', 'fith-example.wildcard.org', 200, 'v3'],
  ['third-example.wildcard.org', 'fourth-example.wildcard.org', 421],
  ['third-example.wildcard.org', 'second-example.org', 421],
  ['third-example.wildcard.org', 'unknown-example.org', 421],
  ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 200, 'v1'],
  ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 421],
  ['unknown-example.org', 'example.org', 200, 'v1'],
  ['unknown-example.org', 'unknown-example.org', 404],
];

over.both('HTTPRouteHTTPSListenerDetectMisdirectedRequests › a Host of another listener than the SNI\'s gets 421; of the same listener, its route or 404', async (p) => {
  for (const [sni, host, want, backend] of MISDIRECTED) {
    const r = await call(p, host, { sni, path: '/detect-misdirected-requests' });
    assert.is(r.status, want, `SNI ${sni}, Host ${host}`);
    if (backend) assert.is(r.backend, backend, `SNI ${sni}, Host ${host}`);
  }
});

test.run();
