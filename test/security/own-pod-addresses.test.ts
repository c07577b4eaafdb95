// The controller pod's own addresses reach the controller's listeners as loopback does: with
// `--own-addresses=127.0.0.7` (a loopback alias standing for POD_IP, so nothing leaves this
// machine) and loopback upstreams allowed, a tenant's EndpointSlice, ExternalName and auth-url at
// 127.0.0.7 on the controller's metrics port are refused by the address policy, each named with
// its object, field and reason; NGINX is given none of them and its hosts never serve the metrics,
// over HTTP/1.1 and HTTP/2, while the other tenant is served. The same refusal of a non-loopback
// pod address is in test/unit/model/address-policy.test.ts and snippet-check.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startController, type CliProcess } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const POD_IP = '127.0.0.7';
const P = 'nginx.ingress.kubernetes.io';
let fake: FakeApiServer;
let ctl: CliProcess;
let echo: EchoServer;
const over = protocolMatrix(test, () => ctl);
const tmp = mkdtempSync(join(tmpdir(), 'irx-own-pod-'));

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  fake = await startFakeApiServer();
  fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } });
  fake.create(service('shop', 'web'));
  for (const s of slices('shop', 'web', [echo])) fake.create(s);
  fake.create(ingress('shop', 'web', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  writeFileSync(join(tmp, 'kubeconfig'), fake.kubeConfig().exportConfig());
  ctl = await startController({
    kubeconfig: join(tmp, 'kubeconfig'),
    // 127.0.0.1 too, as a pod whose interfaces list it would: the built-in default backend (NGINX's
    // own default server there) must stay served.
    args: ['--disable-leader-election', '--allow-upstream-addresses=loopback', `--own-addresses=${POD_IP},127.0.0.1`],
    env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
  });
  await ctl.until('shop.test', '/', (r) => r.status === 200, { what: 'the controller serving' });

  // The attacker's namespace, created once the metrics port is known: the controller's health and
  // metrics listener answers on every address of the pod (here on 127.0.0.7).
  const metricsPort = ctl.ports.healthz;
  fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'slice', namespace: 'evil' }, spec: { ports: [{ name: 'http', port: 80, targetPort: metricsPort }] } });
  fake.create({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'slice-0', namespace: 'evil', labels: { 'kubernetes.io/service-name': 'slice' } },
    addressType: 'IPv4', ports: [{ name: 'http', port: metricsPort }], endpoints: [{ addresses: [POD_IP], conditions: { ready: true } }],
  });
  fake.create(ingress('evil', 'slice', { host: 'slice.evil.test', className: 'nginx', paths: [{ path: '/', service: 'slice' }] }));
  fake.create(service('evil', 'external', { type: 'ExternalName', externalName: POD_IP, port: metricsPort }));
  fake.create(ingress('evil', 'external', { host: 'external.evil.test', className: 'nginx', paths: [{ path: '/', service: 'external', port: metricsPort }] }));
  fake.create(ingress('evil', 'auth', {
    host: 'auth.evil.test', className: 'nginx', paths: [{ path: '/', service: 'web' }],
    annotations: { [`${P}/auth-url`]: `http://${POD_IP}:${metricsPort}/metrics`, [`${P}/auth-response-headers`]: 'Content-Type' },
  }));
  fake.create(service('evil', 'web'));
  for (const s of slices('evil', 'web', [echo])) fake.create(s);
});

test.after(async () => {
  await ctl?.stop();
  await fake?.close();
  await echo?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('each path to the pod\'s own address and metrics port is refused by name; NGINX is given none', async () => {
  const port = ctl.ports.healthz;
  // The log is JSON: its quotes arrive escaped.
  const reason = `port ${port} of ${POD_IP.replace(/\./g, '\\.')}, an address of the controller's own pod, is one of the controller's own listeners`;
  await ctl.logged(new RegExp(`EndpointSlice evil/slice-0: address \\\\?"${POD_IP}\\\\?" port ${port} refused: ${reason}`), 'the EndpointSlice address refused');
  await ctl.logged(new RegExp(`Service evil/external: externalName \\\\?"${POD_IP}\\\\?" port ${port} refused: ${reason}`), 'the ExternalName refused');
  await ctl.logged(new RegExp(`evil/auth.*auth-url.*${reason}`), 'the auth-url refused');
  const backends = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<{ endpoints?: Array<{ address: string; port: string }> }>;
  const given = backends.flatMap((b) => (b.endpoints ?? []).map((e) => `${e.address}:${e.port}`));
  assert.ok(given.includes(`${echo.address}:${echo.port}`), 'the ordinary backend was given');
  assert.not.ok(given.some((e) => e.startsWith(`${POD_IP}:`)), `NGINX was given no endpoint at the pod's address: ${given.join(' ')}`);
});

over.both('the tenant\'s hosts never serve the controller\'s metrics; the other tenant is served', async (p) => {
  for (const host of ['slice.evil.test', 'external.evil.test', 'auth.evil.test']) {
    await ctl.until(host, '/metrics', (r) => r.status !== 404, { what: `${host} served` });
    const r = await p.request(host, '/metrics');
    assert.ok(r.status >= 500, `${host}: ${r.status} ${r.body.slice(0, 200)}`);
    assert.not.match(r.body, /nginx_ingress_controller_|process_cpu_seconds_total/, `${host} leaked the metrics`);
  }
  assert.is((await p.request('shop.test', '/')).status, 200, 'the other tenant is served');
  assert.is((await p.request('nowhere.test', '/')).status, 404, 'the built-in default backend answers an unknown host');
});

test.run();
