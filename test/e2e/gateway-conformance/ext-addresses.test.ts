// Gateway API conformance: a Gateway's spec.addresses and status.addresses (GatewayStaticAddresses,
// GatewayOptionalAddressValue), ported to `ingress-rx controller --enable-gateway-api` against the
// in-process fake API server with real NGINX. The controller is published through
// --publish-service, a LoadBalancer Service whose status the test changes: a Gateway is bound to
// those addresses only (docs/gateway-api.md, Addresses). Also GatewayInfrastructure: the Service
// generated per Gateway carries its infrastructure labels and annotations (docs/gateway-api.md,
// Infrastructure). The suite's Gateways listen on 8080; ours on 80, the port is not what these
// tests are about.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer, FakeObject } from '../../support/fake-apiserver.js';
import type { CliProcess } from '../../support/local-harness.js';
import { echoService, startClusterController, type ClusterController } from '../../support/cluster-controller.js';
import { waitFor } from '../../support/wait.js';
import { protocolMatrix } from '../../support/protocols.js';
import { GATEWAY_V1 } from '../../support/gateway-local.js';

const INFRA = 'addr-infra';
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);

type Obj = Record<string, unknown>;
type Cond = { type: string; status: string; reason: string; message: string; observedGeneration: number };
type GatewayStatus = { addresses?: Array<{ type: string; value: string }>; conditions?: Cond[]; listeners?: Array<{ name: string; conditions: Cond[] }> };

const gateway = (ns: string, name: string, addresses?: Obj[], infrastructure?: Obj): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name, namespace: ns },
  spec: { gatewayClassName: 'addr', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], ...(addresses ? { addresses } : {}), ...(infrastructure ? { infrastructure } : {}) },
});
type Meta = { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
/** The Services of a namespace labelled with the Gateway's name. */
const generated = (ns: string, gw: string) => fake.list('v1', 'Service', ns).filter((o) => (o.metadata as Meta).labels?.['gateway.networking.k8s.io/gateway-name'] === gw);
const route = (ns: string, name: string, gw: string, host: string): FakeObject => ({
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: gw }], hostnames: [host], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
});
/** The controller's Service (--publish-service), a load balancer with these ingress points. */
const publishService = (ingress: Obj[]): FakeObject => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: 'ingress-rx', namespace: 'ingress' },
  spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80 }] }, status: { loadBalancer: { ingress } },
});

const status = (name: string, ns = INFRA) => (fake.get(GATEWAY_V1, 'Gateway', name, ns)?.status ?? {}) as GatewayStatus;
const generation = (name: string, ns = INFRA) => (fake.get(GATEWAY_V1, 'Gateway', name, ns)?.metadata as { generation?: number }).generation;
const brief = (s: GatewayStatus) => (s.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);
/** Waits until the Gateway's conditions carry its current generation and read `want`. */
async function conditions(name: string, want: string[], ns = INFRA): Promise<GatewayStatus> {
  await waitFor(() => {
    const s = status(name, ns);
    return (s.conditions ?? []).every((c) => c.observedGeneration === generation(name, ns)) && brief(s).join() === want.join();
  }, { what: `Gateway ${ns}/${name}: ${want.join(', ')} (now ${brief(status(name, ns)).join(', ')})`, timeoutMs: 20_000 });
  return status(name, ns);
}
function patchAddresses(name: string, addresses: Obj[]): void {
  const gw = fake.get(GATEWAY_V1, 'Gateway', name, INFRA)!;
  fake.update({ ...gw, spec: { ...(gw.spec as Obj), addresses } });
}

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'web' }],
    objects: ({ echo }) => [
      { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'addr' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
      publishService([{ ip: '192.0.2.10' }]),
      ...[INFRA, 'team-b'].flatMap((ns) => echoService(ns, 'web', echo)),
      gateway(INFRA, 'static', [{ type: 'test/fake-invalid-type', value: 'fake address teehee!' }, { type: 'IPAddress', value: '198.51.100.7' }, { type: 'IPAddress', value: '192.0.2.10' }]),
      gateway(INFRA, 'optional', [{ type: 'IPAddress' }]),
      gateway(INFRA, 'hostname-later', [{ type: 'Hostname' }]),
      gateway(INFRA, 'plain'),
      route(INFRA, 'plain', 'plain', 'plain.addr'),
      gateway(INFRA, 'named', [{ type: 'NamedAddress', value: 'pool-a' }]),
      route(INFRA, 'named', 'named', 'named.addr'),
      // A tenant asking for the node's loopback, another tenant's address, a header injection.
      gateway('team-b', 'hostile', [{ value: '127.0.0.1' }, { type: 'Hostname', value: 'lb.example.test\r\nX-Injected: 1' }], {
        labels: { 'gateway.networking.k8s.io/gateway-name': 'plain', 'app.kubernetes.io/managed-by': 'team-b', team: 'b' },
        annotations: { 'service.beta.kubernetes.io/aws-load-balancer-internal': 'false', 'external-dns.alpha.kubernetes.io/hostname': 'plain.addr', note: 'kept' },
      }),
      gateway(INFRA, 'with-infrastructure', undefined, { annotations: { key1: 'value1' }, labels: { key2: 'value2' } }),
      // A tenant's own Service already has the name the Gateway's would get.
      gateway('team-b', 'taken'),
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'taken-ingress-rx', namespace: 'team-b', labels: { app: 'mine' } }, spec: { ports: [{ name: 'http', port: 80 }] } },
      route('team-b', 'hostile', 'hostile', 'hostile.addr'),
    ],
    flags: ['--enable-gateway-api', '--disable-leader-election', '--publish-service=ingress/ingress-rx', '--allow-upstream-addresses=loopback'],
  });
  ({ fake, ctl } = cluster);
});

test.after(() => cluster?.stop());

test('GatewayStaticAddresses › an unsupported type: not accepted; an address not published: accepted, not programmed; then bound to the usable one', async () => {
  let s = await conditions('static', ['Accepted=False/UnsupportedAddress', 'Programmed=False/Invalid']);
  assert.match(s.conditions![0]!.message, /spec\.addresses\[0\]: address type "test\/fake-invalid-type" is not supported/);
  assert.is(s.addresses, undefined, 'a Gateway not accepted has no address');
  patchAddresses('static', [{ type: 'IPAddress', value: '198.51.100.7' }, { type: 'IPAddress', value: '192.0.2.10' }]);
  s = await conditions('static', ['Accepted=True/Accepted', 'Programmed=False/AddressNotUsable']);
  assert.match(s.conditions![1]!.message, /IPAddress "198\.51\.100\.7" is not an address this controller is published on \(published: 192\.0\.2\.10/);
  assert.equal(s.addresses, [{ type: 'IPAddress', value: '192.0.2.10' }], 'the usable one is bound, the other is not listed');
  patchAddresses('static', [{ type: 'IPAddress', value: '192.0.2.10' }]);
  s = await conditions('static', ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.equal(s.addresses, [{ type: 'IPAddress', value: '192.0.2.10' }]);
  const http = s.listeners!.find((l) => l.name === 'http')!;
  assert.equal(http.conditions.filter((c) => c.type === 'Accepted' || c.type === 'ResolvedRefs').map((c) => c.status), ['True', 'True']);
});

test('GatewayOptionalAddressValue › an IPAddress without a value is assigned the published IP', async () => {
  const s = await conditions('optional', ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.equal(s.addresses, [{ type: 'IPAddress', value: '192.0.2.10' }]);
});

test('GatewayOptionalAddressValue › a Hostname without a value: AddressNotAssigned until the load balancer gets a name, then assigned (the change of the Service brings a write)', async () => {
  let s = await conditions('hostname-later', ['Accepted=True/Accepted', 'Programmed=False/AddressNotAssigned']);
  assert.match(s.conditions![1]!.message, /spec\.addresses\[0\]: no Hostname is left to assign/);
  assert.is(s.addresses, undefined);
  const svc = fake.get('v1', 'Service', 'ingress-rx', 'ingress')!;
  fake.update({ ...svc, status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }] } } });
  s = await conditions('hostname-later', ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  assert.equal(s.addresses, [{ type: 'Hostname', value: 'lb.example.test' }]);
  await waitFor(() => (status('plain').addresses ?? []).length === 2, { what: 'the Gateway without addresses lists both', timeoutMs: 20_000 });
  assert.equal(status('plain').addresses, [{ type: 'IPAddress', value: '192.0.2.10' }, { type: 'Hostname', value: 'lb.example.test' }]);
});

test('GatewayStaticAddresses › attacker: loopback and a CR/LF value are not usable, never listed, the message escapes them', async () => {
  const s = await conditions('hostile', ['Accepted=True/Accepted', 'Programmed=False/AddressNotUsable'], 'team-b');
  assert.is(s.addresses, undefined);
  const message = s.conditions![1]!.message;
  assert.match(message, /spec\.addresses\[0\] IPAddress "127\.0\.0\.1" is not an address/);
  assert.match(message, /spec\.addresses\[1\] Hostname "lb\.example\.test\\r\\nX-Injected: 1" is not an address/);
  assert.not.ok(/[\r\n]/.test(message));
});

test('GatewayInfrastructure › the Gateway\'s Service carries its infrastructure labels and annotations, points at the controller\'s, is deleted with it', async () => {
  await conditions('with-infrastructure', ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  await waitFor(() => generated(INFRA, 'with-infrastructure').length === 1, { what: 'the Service generated', timeoutMs: 20_000 });
  const svc = generated(INFRA, 'with-infrastructure')[0]!;
  const meta = svc.metadata as Meta & { ownerReferences: Array<{ kind: string; name: string; controller: boolean }> };
  assert.is(meta.name, 'with-infrastructure-ingress-rx');
  assert.equal([meta.labels!.key2, meta.annotations!.key1], ['value2', 'value1']);
  assert.equal(meta.ownerReferences.map((o) => [o.kind, o.name, o.controller]), [['Gateway', 'with-infrastructure', true]]);
  assert.equal(svc.spec, { type: 'ExternalName', externalName: 'ingress-rx.ingress.svc.cluster.local' });
  fake.delete(GATEWAY_V1, 'Gateway', 'with-infrastructure', INFRA);
  await waitFor(() => generated(INFRA, 'with-infrastructure').length === 0, { what: 'the Service deleted with its Gateway', timeoutMs: 20_000 });
});

test('GatewayInfrastructure › attacker: a tenant\'s labels cannot take another Gateway\'s name or our mark, nor its annotations steer load balancers or DNS; a tenant\'s own Service of that name is left alone', async () => {
  await waitFor(() => generated('team-b', 'hostile').length === 1, { what: 'the hostile Gateway\'s Service', timeoutMs: 20_000 });
  const meta = generated('team-b', 'hostile')[0]!.metadata as Meta;
  assert.equal(meta.labels, { team: 'b', 'gateway.networking.k8s.io/gateway-name': 'hostile', 'app.kubernetes.io/managed-by': 'ingress-rx-gateway' });
  assert.equal(meta.annotations, { note: 'kept' });
  assert.equal(generated(INFRA, 'plain').map((o) => (o.metadata as Meta).name), ['plain-ingress-rx'], 'the label names no Service of another namespace\'s Gateway');
  await ctl.logged(/Gateway team-b\/hostile spec\.infrastructure\.annotations\[.{1,2}external-dns\.alpha\.kubernetes\.io\/hostname.{1,2}\]: keys under kubernetes\.io are reserved/, 'the dropped key named');
  await ctl.logged(/Service team-b\/taken-ingress-rx exists and was not made by ingress-rx/, 'the name taken');
  const mine = fake.get('v1', 'Service', 'taken-ingress-rx', 'team-b')!;
  assert.equal([(mine.metadata as Meta).labels, mine.spec], [{ app: 'mine' }, { ports: [{ name: 'http', port: 80 }] }]);
});

over.both('GatewayStaticAddresses › a Gateway not accepted for its address type serves no route; the other Gateways\' routes are served', async (p) => {
  await p.until('plain.addr', '/', (r) => r.backend === 'web', { what: 'plain.addr served' });
  assert.is((await p.request('hostile.addr', '/')).backend, 'web', 'an unusable address does not stop the routes (served on the published addresses)');
  await conditions('named', ['Accepted=False/UnsupportedAddress', 'Programmed=False/Invalid']);
  assert.is((await p.request('named.addr', '/')).status, 404);
});

test.run();
