// ingress-nginx test/e2e/settings/disable_service_external_name.go, ported against the fake API
// server: with --disable-svc-external-name an Ingress to an ExternalName Service answers 5xx (the
// Service gives no endpoint, and a warning names it) while an ordinary Service's Ingress is
// served. The ExternalName names an echo server's address, so without the flag it would answer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';

const NS = 'disable-svc-external-name';
let cluster: ClusterFixture;
let ctl: CliProcess;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  cluster.echoService(NS);
  cluster.fake.create({
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'external', namespace: NS },
    spec: { type: 'ExternalName', externalName: cluster.echo[0]!.address, ports: [{ name: 'http', port: 80, targetPort: cluster.echo[0]!.port }] },
  });
  cluster.fake.create(ingress(NS, 'external', { host: 'echo-external-svc.com', className: 'nginx', paths: [{ path: '/', service: 'external' }] }));
  cluster.fake.create(ingress(NS, 'echo', { host: 'echo-svc.com', className: 'nginx', paths: [{ path: '/', service: 'echo' }] }));
  ctl = await cluster.controller([`--watch-namespace=${NS}`, '--disable-svc-external-name=true']);
});
test.after(() => cluster.stop());

its.both('settings/disable_service_external_name.go:55', async (p) => {
  await p.until('echo-svc.com', '/', (r) => r.status === 200 && r.backend !== undefined, { what: 'echo-svc.com' });
  const external = await p.request('echo-external-svc.com', '/');
  assert.ok(external.status >= 500 && external.status < 600, `5xx, not ${external.status}`);
  assert.is(external.backend, undefined);
  // NGINX serves a sync's configuration before the controller logs the sync's warnings.
  const warning = `Service ${NS}/external: ExternalName Services are disabled (--disable-svc-external-name)`;
  await ctl.logged(warning);
});

test.run();
