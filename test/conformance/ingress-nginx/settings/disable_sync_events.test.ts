// ingress-nginx test/e2e/settings/disable_sync_events.go, ported against the fake API server: a
// controller records a Normal Event, reason Sync, on each Ingress it serves as it takes it in,
// by default and with --disable-sync-events=false; with --disable-sync-events=true it records
// none. A controller per flag, each watching a namespace of its own; the Ingresses are there
// before the controllers start, so each one's first configuration holds its Ingress.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';
import { waitFor } from '../../../support/wait.js';

let cluster: ClusterFixture;
const ctl: CliProcess[] = [];
const NS = ['sync-events-default', 'sync-events-false', 'sync-events-true'] as const;
const HOST = { [NS[0]]: 'sync-events-default', [NS[1]]: 'disable-sync-events-false', [NS[2]]: 'disable-sync-events-true' };
const byDefault = ported(test, () => ctl[0]!);
const explicitlyOn = ported(test, () => ctl[1]!);
const off = ported(test, () => ctl[2]!);

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  for (const ns of NS) {
    cluster.echoService(ns);
    cluster.fake.create(ingress(ns, HOST[ns], { host: HOST[ns], className: 'nginx', paths: [{ path: '/', service: 'echo' }] }));
  }
  ctl.push(await cluster.controller([`--watch-namespace=${NS[0]}`]));
  ctl.push(await cluster.controller([`--watch-namespace=${NS[1]}`, '--disable-sync-events=false']));
  ctl.push(await cluster.controller([`--watch-namespace=${NS[2]}`, '--disable-sync-events=true']));
});
test.after(() => cluster.stop());

type Event = { reason: string; type: string; message: string; involvedObject: { kind: string; name: string } };
const syncEvents = (ns: string) => (cluster.fake.list('v1', 'Event', ns) as unknown as Event[])
  .filter((e) => e.reason === 'Sync' && e.involvedObject.kind === 'Ingress' && e.involvedObject.name === HOST[ns as keyof typeof HOST]);

async function recordsSync(ns: (typeof NS)[number], c: CliProcess): Promise<void> {
  const r = await c.request(HOST[ns], '/');
  assert.is(r.status, 200);
  const events = await waitFor(() => (syncEvents(ns).length > 0 ? syncEvents(ns) : null), { what: `a Sync Event on ${ns}/${HOST[ns]}` });
  assert.is(events[0]!.type, 'Normal');
  assert.is(events[0]!.message, 'Scheduled for sync');
}

byDefault.noClient('settings/disable_sync_events.go:35', 'an Event the controller records', () => recordsSync(NS[0], ctl[0]!));
explicitlyOn.noClient('settings/disable_sync_events.go:55', 'an Event the controller records', () => recordsSync(NS[1], ctl[1]!));

off.noClient('settings/disable_sync_events.go:83', 'an Event the controller does not record', async () => {
  assert.is((await ctl[2]!.request(HOST[NS[2]], '/')).status, 200);
  // Events leave one queue in order: the first reload's, recorded after the Ingress was taken
  // in, shows a Sync Event would have been sent by then.
  await waitFor(() => cluster.fake.list('v1', 'Event', 'ingress-rx').some((e) => JSON.stringify(e).includes('RELOAD') && JSON.stringify(e).includes('ingress-rx-2')), { what: 'the third controller\'s RELOAD Event' });
  assert.equal(syncEvents(NS[2]), []);
});

test.run();
