// ingress-nginx test/e2e/tcpudp/tcp.go, ported: `ingress-rx controller` against the fake API
// server (tcp-services is a controller flag, as the e2e chart sets it), real NGINX, and an HTTP
// client on the TCP port. The e2e test greps nginx.conf for the stream upstream's name; the port
// sends the request the stream server carries and reads which echo endpoint answers it.
// An ExternalName TCP service (tcp.go:80) is set aside in dispositions.ts: a TCP service takes
// an address, not a name (docs/differences.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ported } from '../port.js';
import type { FakeApiServer } from '../../../support/fake-apiserver.js';
import type { CliProcess } from '../../../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, type ClusterController } from '../../../support/cluster-controller.js';
import { waitFor } from '../../../support/wait.js';
import { freePort } from '../../../support/ports.js';

const NS = 'tcp';
const WHY = 'a TCP service carries the bytes to a plain-HTTP/1.1 backend; HTTP/2 needs TLS, which a TCP service does not terminate';
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let tcpPort: number;
const its = ported(test, () => ctl);

const tcpServices = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp-services', namespace: NS }, data });

test.before(async () => {
  tcpPort = await freePort();
  cluster = await startClusterController({
    echo: ['echo', 'first-service', 'second-service'].map((name, i) => ({ address: `127.0.33.${10 + i}`, name })),
    objects: ({ echo }) => [NGINX_CLASS, ...echo.flatMap((e) => echoService(NS, e.name, [e])), tcpServices({})],
    flags: ['--election-id=irx-conformance-tcp', '--allow-upstream-addresses=loopback', `--tcp-services-configmap=${NS}/tcp-services`, '--update-status=false'],
    env: { POD_NAMESPACE: NS },
  });
  ({ fake, ctl } = cluster);
});
test.after(() => cluster?.stop());

const overTcp = { get port() { return tcpPort; } };

its.http1Only('tcpudp/tcp.go:46', WHY, async (p) => {
  fake.set(tcpServices({ [tcpPort]: `${NS}/echo:80` }));
  const r = await waitFor(async () => {
    const x = await p.request('tcp.test', '/', { port: overTcp.port }).catch(() => null);
    return x?.backend === 'echo' ? x : null;
  }, { what: 'the TCP service answering' });
  assert.is(r.status, 200);
});

its.http1Only('tcpudp/tcp.go:168', WHY, async (p) => {
  fake.set(tcpServices({ [tcpPort]: `${NS}/first-service:80` }));
  await waitFor(async () => (await p.request('tcp.test', '/', { port: overTcp.port }).catch(() => null))?.backend === 'first-service', { what: 'first-service behind the TCP port' });
  const checksum = (await ctl.control('/configuration-checksum')).body;
  // The reload actor logs a reload once NGINX took it, which may be after the first answers.
  const reloaded = (sum: string) => waitFor(() => ctl.output().split('\n').some((l) => l.startsWith('{"level":30') && l.includes(`"checksum":"${sum}"`)), { what: `the reload to ${sum} logged` });
  await reloaded(checksum);
  fake.set(tcpServices({ [tcpPort]: `${NS}/second-service:80` }));
  const r = await waitFor(async () => {
    const x = await p.request('tcp.test', '/', { port: overTcp.port }).catch(() => null);
    return x?.backend === 'second-service' ? x : null;
  }, { what: 'second-service behind the TCP port' });
  assert.is(r.status, 200);
  // A stream upstream is static in nginx.conf: the change is a reload to a new configuration.
  const next = (await ctl.control('/configuration-checksum')).body;
  assert.is.not(next, checksum);
  await reloaded(next);
});

test.run();
