// `--enable-gateway-api` on a cluster whose CRD bundle lacks ListenerSet and BackendTLSPolicy
// (older standard-channel bundles): the in-process fake API server does not serve those two kinds
// (a list answers 404, as for a missing CRD). The controller says once which kinds it does not
// watch, completes its initial list, writes Gateway status and serves the HTTPRoute over HTTP/1.1
// and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_RESOURCES, type FakeApiServer } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { service, slices, type CliProcess } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';
import { GATEWAY_MANIFESTS, GATEWAY_V1, prefixRoute, startGatewayController, stopGatewayController } from '../support/gateway-local.js';

let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const tmp = mkdtempSync(join(tmpdir(), 'irx-gw-std-crds-'));
const NOT_SERVED = new Set(['listenersets', 'backendtlspolicies']);

test.before(async () => {
  echo.v1 = await startEchoServer({ address: '127.0.0.2', name: 'v1' });
  ({ fake, ctl } = await startGatewayController(tmp, [
    ...GATEWAY_MANIFESTS, service('team-a', 'v1'), ...slices('team-a', 'v1', [echo.v1]), prefixRoute('web', 'std.crds', [{ to: 'v1' }]),
  ], [], { resources: DEFAULT_RESOURCES.filter((r) => !NOT_SERVED.has(r.resource)) }));
});
test.after(() => stopGatewayController(ctl, fake, echo, tmp));

test('the kinds not served are named once, and the initial list completes without them', async () => {
  await waitFor(() => ctl.output().includes('initial list complete'), { what: 'the initial list', timeoutMs: 30_000 });
  const named = ctl.output().split('\n').filter((l) => l.includes('the API server does not serve'));
  assert.is(named.length, 1, 'said once');
  assert.match(named[0]!, /does not serve ListenerSets and BackendTLSPolicies \(CRD not installed\): not watched/);
});

test('the Gateway gets its status', async () => {
  type Cond = { type: string; status: string };
  const accepted = () => ((fake.get(GATEWAY_V1, 'Gateway', 'gw', 'infra')?.status as { conditions?: Cond[] } | undefined)?.conditions ?? [])
    .some((c) => c.type === 'Accepted' && c.status === 'True');
  await waitFor(accepted, { what: 'Gateway infra/gw Accepted', timeoutMs: 20_000 });
});

over.both('the HTTPRoute is served', async (p) => {
  const r = await p.until('std.crds', '/', (x) => x.backend === 'v1', { what: 'std.crds served' });
  assert.is(r.status, 200);
});

test.run();
