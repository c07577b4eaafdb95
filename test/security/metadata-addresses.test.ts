// Every path by which a tenant makes NGINX dial an address refuses cloud metadata services and the
// IPv4 addresses NAT64, 6to4 and Teredo forms carry: EndpointSlice addresses (IPv4 and IPv6), an
// ExternalName, service-upstream's ClusterIP, an auth-url and a mirror-target; and the OpenTelemetry
// collector is judged too. Nothing is dialled: each hostile address is first shown to be refused
// (named in a warning, absent from the backends NGINX was given) before any request is sent, so a
// policy that let one through fails before NGINX could connect to it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

const P = 'nginx.ingress.kubernetes.io';
const NS = 'team-m';
let ctl: LocalController;
let web: EchoServer;

/** One EndpointSlice of the given family with one address. */
function slice(svc: string, address: string, family: 'IPv4' | 'IPv6') {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${svc}-0`, namespace: NS, labels: { 'kubernetes.io/service-name': svc } },
    addressType: family, ports: [{ name: 'http', port: 80 }], endpoints: [{ addresses: [address], conditions: { ready: true } }],
  };
}

// [Service, address, family]: each Service's only endpoint is one hostile address.
const ENDPOINTS: Array<[string, string, 'IPv4' | 'IPv6']> = [
  ['aws-v6', 'fd00:ec2::254', 'IPv6'],
  ['alibaba', '100.100.100.200', 'IPv4'],
  ['azure', '168.63.129.16', 'IPv4'],
  ['nat64-metadata', '64:ff9b::a9fe:a9fe', 'IPv6'],
  ['nat64-alibaba', '64:ff9b::6464:64c8', 'IPv6'],
  ['nat64-local', '64:ff9b:1::a9fe:a9fe', 'IPv6'],
  ['sixtofour', '2002:6464:64c8:1::1', 'IPv6'],
  ['teredo', '2001:0:4136:e378:8000:63bf:5601:5601', 'IPv6'],
  ['compatible', '::169.254.169.254', 'IPv6'],
];
// Loopback inside NAT64, 6to4 or Teredo is the class loopback, which local mode allows (its
// backends run on this machine): test/e2e/lua-address-policy.test.ts and the model's unit test
// judge those under the strict policy; here only classes local mode refuses are handed over.
const HOSTILE = [...ENDPOINTS.map(([, a]) => a), '100.100.100.200', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', 'fd00:ec2::254'];

/** Fails unless NGINX was given none of the hostile addresses: checked before any request is sent. */
async function assertNoneGiven(): Promise<void> {
  const backends = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<{ endpoints?: Array<{ address: string }> }>;
  const given = new Set(backends.flatMap((b) => (b.endpoints ?? []).map((e) => e.address)));
  assert.ok(given.has(web.address), 'the ordinary backend was given');
  for (const address of HOSTILE) assert.not.ok(given.has(address), `NGINX was not given ${address} as an endpoint`);
}

test.before(async () => {
  web = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  const objects: object[] = [service(NS, 'web'), ...slices(NS, 'web', [web])];
  for (const [svc, address, family] of ENDPOINTS) {
    objects.push(service(NS, svc), slice(svc, address, family), ingress(NS, svc, { host: `${svc}.test`, paths: [{ path: '/', service: svc }] }));
  }
  objects.push(
    service(NS, 'external', { type: 'ExternalName', externalName: '100.100.100.200' }),
    ingress(NS, 'external', { host: 'external.test', paths: [{ path: '/', service: 'external' }] }),
    service(NS, 'external-v6', { type: 'ExternalName', externalName: '64:ff9b::a9fe:a9fe' }),
    ingress(NS, 'external-v6', { host: 'external-v6.test', paths: [{ path: '/', service: 'external-v6' }] }),
    { ...service(NS, 'cluster-ip'), spec: { clusterIP: '2002:a9fe:a9fe::1', ports: [{ name: 'http', port: 80, targetPort: 'http' }] } },
    ...slices(NS, 'cluster-ip', [web]),
    ingress(NS, 'cluster-ip', { host: 'cluster-ip.test', paths: [{ path: '/', service: 'cluster-ip' }], annotations: { [`${P}/service-upstream`]: 'true' } }),
    ingress(NS, 'auth', { host: 'auth.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/auth-url`]: 'http://100.100.100.200/latest/meta-data/' } }),
    ingress(NS, 'mirror', { host: 'mirror.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/mirror-target`]: 'http://[fd00:ec2::254]/latest/meta-data/' } }),
  );
  ctl = await startLocal({ files: { 'tenant.json': objects } });
  await ctl.until('mirror.test', '/', (r) => r.backend === 'web', { what: 'the mirror host' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
});

test('each path names the refused address in a warning, and NGINX is given none of them', async () => {
  // NGINX may serve the new configuration before the sync's result (and its warnings) is logged.
  await waitFor(() => /mirror-target[^\n]*fd00:ec2::254/.test(ctl.output()) && /sync \d+: /.test(ctl.output()), { what: 'the first sync\'s warnings logged' });
  const out = ctl.output();
  for (const [svc, address] of ENDPOINTS) {
    assert.ok(out.includes(`EndpointSlice ${NS}/${svc}-0: address \\"${address}\\" port 80 refused: a metadata address`), `${svc}: ${address} refused`);
  }
  assert.match(out, /Service team-m\/external: externalName \\"100\.100\.100\.200\\" port 80 refused: a metadata address/);
  assert.match(out, /Service team-m\/external-v6: externalName \\"64:ff9b::a9fe:a9fe\\" port 80 refused: a metadata address/);
  assert.match(out, /ClusterIP \\"2002:a9fe:a9fe::1\\" refused: a metadata address/);
  assert.match(out, /auth-url[^\n]*100\.100\.100\.200[^\n]*metadata/);
  assert.match(out, /mirror-target[^\n]*fd00:ec2::254[^\n]*metadata/);
  await assertNoneGiven();
});

test('their hosts answer 503 at once, nothing is dialled, the others are served', async () => {
  await assertNoneGiven();
  for (const host of [...ENDPOINTS.map(([svc]) => `${svc}.test`), 'external.test', 'external-v6.test', 'auth.test']) {
    const started = Date.now();
    const r = await ctl.request(host, '/latest/meta-data/');
    assert.is(r.status, 503, `${host}: ${r.status} ${r.body.slice(0, 100)}`);
    assert.ok(Date.now() - started < 2000, `${host}: no connection attempt`);
  }
  // service-upstream with a refused ClusterIP falls back to the Service's endpoints.
  assert.is((await ctl.request('cluster-ip.test', '/')).backend, 'web');
  const mirrored = await ctl.request('mirror.test', '/');
  assert.is(mirrored.backend, 'web', 'the mirror host is served, without its copy');
  const log = readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8');
  assert.not.match(log, /connect\(\) (to|failed)|upstream timed out/, 'no connection was attempted');
});

test("the OpenTelemetry collector is judged like any upstream: NGINX's own port is refused", async () => {
  await ctl.stop();
  // The collector is the operator's (a ConfigMap key); here it points at NGINX's own HTTP port.
  const settings = (data: Record<string, string>) => [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ingress' }, data }];
  const otel = await startLocal({
    args: ['--configmap', 'ingress/settings'],
    files: {
      'settings.json': settings({}),
      'tenant.json': [service(NS, 'web'), ...slices(NS, 'web', [web]), ingress(NS, 'traced', { host: 'traced.test', paths: [{ path: '/', service: 'web' }] })],
    },
  });
  try {
    const own = otel.ports.http;
    otel.write('settings.json', settings({ 'enable-opentelemetry': 'true', 'otlp-collector-host': '127.0.0.1', 'otlp-collector-port': String(own), 'otel-schedule-delay-millis': '100' }));
    const errorLog = () => readFileSync(join(otel.workdir, 'logs', 'error.log'), 'utf8');
    await waitFor(async () => {
      await otel.request('traced.test', '/');
      return errorLog().includes(`collector 127.0.0.1:${own}: 127.0.0.1 is one of the controller's own ports`);
    }, { what: 'the refused collector in the error log' });
  } finally {
    await otel.stop();
  }
});

test.run();
