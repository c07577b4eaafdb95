// The controller's own status writes come back through the watch as new Ingress objects that
// differ in status alone. They must leave the model as it was: a new Ingress after them takes the
// builder's incremental path (the topology patched for it), not a build over every Ingress, which
// is what each sync cost while the status of a large cluster was being written. The status writes
// are paced (--status-update-rate): a new Ingress is served while they are still under way.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer } from '../support/fake-apiserver.js';
import { ingress, type CliProcess } from '../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

/** More Ingresses than the topology patches at once (32), so their status echoes alone would force a full build. */
const N = 48;
/** Status writes per second: the initial ones take N / RATE = 24 s. */
const RATE = 2;

let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);

const names = Array.from({ length: N }, (_, i) => `app-${i}`);
const lbOf = (name: string) => (fake.get('networking.k8s.io/v1', 'Ingress', name, 'shop') as { status?: { loadBalancer?: { ingress?: unknown[] } } } | undefined)?.status?.loadBalancer?.ingress ?? [];

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'a' }],
    objects: ({ echo }) => [
      NGINX_CLASS, ...echoService('shop', 'web', echo),
      ...names.map((name) => ingress('shop', name, { host: `${name}.test`, className: 'nginx', paths: [{ path: '/', service: 'web' }] })),
    ],
    flags: ['--publish-status-address=192.0.2.10', '--disable-leader-election', '--allow-upstream-addresses=loopback', `--status-update-rate=${RATE}`],
  });
  ({ fake, ctl } = cluster);
});

test.after(() => cluster?.stop());

over.both('a new Ingress is served while the initial status writes are under way', async (p) => {
  const name = `early-${p.tag}`;
  fake.create(ingress('shop', name, { host: `${name}.test`, className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  await p.until(`${name}.test`, '/', (r) => r.backend === 'a', { what: `${name}.test served` });
  const written = names.filter((n) => lbOf(n).length > 0).length;
  assert.ok(written < N, `served before the ${N} initial status writes were done (${written} were)`);
});

over.both('a new Ingress after the status of every other was written takes the incremental build', async (p) => {
  await waitFor(() => names.every((n) => lbOf(n).length > 0), { what: `the status of all ${N} Ingresses written`, timeoutMs: 120_000 });
  // The Ingresses added during the first run's writes are written by the run after it.
  await waitFor(() => ['early-h1', 'early-h2'].every((n) => lbOf(n).length > 0), { what: 'the status of the Ingresses added during the writes', timeoutMs: 30_000 });
  assert.equal(lbOf('early-h2'), [{ ip: '192.0.2.10' }]);
  // The new Ingress comes later on the same watch as the status writes coming back: its sync
  // builds from a store that holds every one of them.
  const name = `late-${p.tag}`;
  fake.create(ingress('shop', name, { host: `${name}.test`, className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  await p.until(`${name}.test`, '/', (r) => r.backend === 'a', { what: `${name}.test served` });
  // The sync's log line may reach this process's pipe after NGINX serves what it posted.
  const syncs = () => ctl.output().split('\n').filter((l) => /"msg":"sync \d+: /.test(l));
  const line = await waitFor(() => syncs().find((l) => l.includes(`${name}.test`)), { what: `the log line of the sync that served ${name}.test` });
  const sync = JSON.parse(line) as { events: number; stages?: { buildPath?: string } };
  assert.is(sync.events, 1, line);
  assert.is(sync.stages?.buildPath, 'updated', `the topology patched for the new Ingress alone: ${line}`);
});

test.run();
