// ingress-nginx test/e2e/annotations/serviceupstream.go, ported: each It a Service of its own
// whose cluster IP and port are an echo server named "cluster-ip-<It>" (its endpoints the two echo
// servers). The e2e test reads the backend's address with `dbg backends`; here the server that
// answers says which address the balancer used. The ConfigMap-driven Its run after the
// annotation's, with one ConfigMap change.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { closeAll, startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { oneGeneration, service, slices } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import { waitForSteady } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const clusterIps: Record<string, EchoServer> = {};

const HOSTS: Record<string, Record<string, string>> = {
  41: { 'service-upstream': 'true' },
  69: {},
  97: { 'service-upstream': 'false' },
};
const host = (id: string) => `s${id}.serviceupstream.foo.com`;
const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: 'serviceupstream' }, data });

test.before(async () => {
  fx = await startFixture('serviceupstream', { args: ['--configmap', 'serviceupstream/nginx-config'], files: { 'configmap.json': [configMap({})] } });
  for (const [i, id] of Object.keys(HOSTS).entries()) {
    clusterIps[id] = await startEchoServer({ address: `127.0.9.${50 + i}`, name: `cluster-ip-${id}` });
  }
  fx.apply('ingresses.json', Object.entries(HOSTS).flatMap(([id, a]) => {
    const ip = clusterIps[id]!;
    const name = `svc-${id}`;
    const svc = service(fx.ns, name, { port: ip.port }) as { spec: Record<string, unknown> };
    return [{ ...svc, spec: { ...svc.spec, clusterIP: ip.address } }, ...slices(fx.ns, name, [...fx.echo]), fx.single(name, host(id), a, { svc: name, port: ip.port })];
  }));
  await Promise.all(Object.keys(HOSTS).map((id) => fx.ctl.until(host(id), '/', (r) => r.backend !== undefined, { what: `${host(id)} served` })));
});
test.after(async () => {
  await fx.stop();
  await closeAll(Object.values(clusterIps));
});

/** Who answered 6 requests to the It's host. */
async function answeredBy(p: ProtocolClient, id: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const r = await p.request(host(id), '/');
    assert.is(r.status, 200);
    names.add(r.backend!);
  }
  return names;
}

/**
 * The ConfigMap turns service-upstream on (for both Its after the annotation's); waits until it is
 * live in every worker (waitForSteady).
 */
async function serviceUpstreamInConfigMap(p: ProtocolClient): Promise<void> {
  fx.apply('configmap.json', [configMap({ 'service-upstream': 'true' })]);
  await waitForSteady(async () => oneGeneration(fx.ctl.workdir) && (await p.request(host('69'), '/')).backend === 'cluster-ip-69',
    { what: 'the ConfigMap\'s service-upstream live in every worker' });
}

its.both('annotations/serviceupstream.go:41', async (p) => {
  assert.equal([...await answeredBy(p, '41')], ['cluster-ip-41']);
  // Without the annotation (and the ConfigMap's default, false): the endpoints.
  assert.ok([...await answeredBy(p, '69')].every((n) => n.startsWith('echo-')));
});

its.both('annotations/serviceupstream.go:69', async (p) => {
  await serviceUpstreamInConfigMap(p);
  assert.equal([...await answeredBy(p, '69')], ['cluster-ip-69']);
});

its.both('annotations/serviceupstream.go:97', async (p) => {
  await serviceUpstreamInConfigMap(p);
  const names = await answeredBy(p, '97');
  assert.ok(names.size > 0 && [...names].every((n) => n.startsWith('echo-')), `the endpoints answered: ${[...names].join(', ')}`);
});

test.run();
