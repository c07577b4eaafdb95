// ingress-nginx test/e2e/annotations/affinitymode.go, ported: a Service per It over echo
// endpoints this file starts, scaled by rewriting its EndpointSlices as the e2e test scales its
// Deployment. Which replica answered is read from the echo's name, as the e2e test reads the pod's
// hostname.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { annotations, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { closeAll, startEchoServer, type EchoServer } from '../../../support/echo-server.js';
import { ingress, service, slices, type Reply } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import { waitFor, waitForSteady } from '../../../support/wait.js';

let fx: Fixture;
/** Endpoints for the Services of this file: 5 to start with, 10 more to scale up, 2 brand-new ones. */
let pool: EchoServer[];
const its = ported(test, () => fx.ctl);

const MODE_ANNOTATIONS = {
  affinity: 'cookie', 'session-cookie-name': 'hello-cookie', 'session-cookie-expires': '172800', 'session-cookie-max-age': '172800',
  'ssl-redirect': 'false', 'session-cookie-hash': 'sha1',
};

/** Service `svc` with `endpoints`, its Ingress on `host` with affinity-mode `mode`. */
function objects(svc: string, host: string, mode: string, endpoints: EchoServer[]): object[] {
  return [
    service(fx.ns, svc), ...slices(fx.ns, svc, endpoints),
    ingress(fx.ns, svc, { host, annotations: annotations({ ...MODE_ANNOTATIONS, 'affinity-mode': mode }), paths: [{ path: '/', service: svc }] }),
  ];
}

/** Waits until the balancer's backend for `svc` has exactly `endpoints`. */
async function untilEndpoints(svc: string, endpoints: EchoServer[]): Promise<void> {
  const want = endpoints.map((e) => `${e.address}:${e.port}`).sort().join(',');
  await waitFor(async () => {
    const backends = JSON.parse((await fx.ctl.control('/configuration/backends')).body) as Array<{ name: string; endpoints?: Array<{ address: string; port: string }> }>;
    const b = backends.find((x) => x.name === `${fx.ns}-${svc}-80`);
    return (b?.endpoints ?? []).map((e) => `${e.address}:${e.port}`).sort().join(',') === want;
  }, { what: `${svc} balanced over ${endpoints.length} endpoints` });
}

const setCookie = (r: Reply) => ([] as string[]).concat(r.headers['set-cookie'] ?? []).find((c) => c.startsWith('hello-cookie='));

test.before(async () => {
  fx = await startFixture('affinitymode');
  pool = await Promise.all(Array.from({ length: 17 }, (_, i) => startEchoServer({ address: `127.0.9.${30 + i}`, name: `pod-${i}` })));
  fx.apply('balanced.json', objects('balanced', 'affinity-mode-balance.com', 'balanced', pool.slice(0, 5)));
  await untilEndpoints('balanced', pool.slice(0, 5));
  // Every worker balances with the cookie's affinity (each takes up backends on its own timer).
  await waitForSteady(async () => setCookie(await fx.ctl.request('affinity-mode-balance.com', '/')) !== undefined, { what: 'balanced served with affinity by every worker' });
});
test.after(async () => {
  await fx.stop();
  await closeAll(pool);
});

its.both('annotations/affinitymode.go:36', async (p) => {
  const first = await p.request('affinity-mode-balance.com', '/');
  assert.is(first.status, 200);
  const cookie = setCookie(first);
  assert.ok(cookie, 'the answer sets hello-cookie');
  assert.match(cookie!, /; Max-Age=172800(;|$)/);
  const value = cookie!.split(';')[0]!;
  // With the cookie, the same replica; without it, new sessions are spread over the replicas.
  for (let i = 0; i < 10; i++) assert.is((await p.request('affinity-mode-balance.com', '/', { headers: { Cookie: value } })).backend, first.backend);
  const fresh = new Set<string | undefined>();
  for (let i = 0; i < 30 && fresh.size < 2; i++) fresh.add((await p.request('affinity-mode-balance.com', '/')).backend);
  assert.ok(fresh.size >= 2, `new sessions reach more than one of 5 replicas: ${[...fresh].join(', ')}`);
});

its.both('annotations/affinitymode.go:69', async (p) => {
  const svc = `persistent-${p.tag}`;
  const host = `affinity-mode-persistent-${p.tag}.com`;
  const file = `${svc}.json`;
  let replicas = 5;
  // The change is posted (the shared dict) and the workers balance over it (they sync every 0.1 s):
  // a new session reaches the newest endpoint, or, with none left, the answer is 503.
  const scale = async (endpoints: EchoServer[]) => {
    fx.apply(file, objects(svc, host, 'persistent', endpoints));
    await untilEndpoints(svc, endpoints);
    const newest = endpoints[endpoints.length - 1];
    await p.until(host, '/', (r) => (newest ? r.backend === newest.name : r.status === 503), { what: `${host} balanced over ${endpoints.length}` });
    // Every worker, not only the one that answered: from and to no endpoint at all, the status says which list it holds.
    await waitForSteady(async () => (await p.request(host, '/')).status === (newest ? 200 : 503), { what: `${host} from every worker` });
  };
  await scale(pool.slice(0, replicas));
  const first = await p.until(host, '/', (r) => r.backend !== undefined, { what: `${host} served` });
  const cookie = setCookie(first)?.split(';')[0];
  assert.ok(cookie, 'the answer sets hello-cookie');
  // Persistent: each new replica leaves the session where it is.
  for (let step = 0; step < 10; step++) {
    replicas += 1;
    await scale(pool.slice(0, replicas));
    const r = await p.request(host, '/', { headers: { Cookie: cookie! } });
    assert.is(r.backend, first.backend, `after scaling to ${replicas}`);
  }
  await scale([]);
  assert.is((await p.request(host, '/', { headers: { Cookie: cookie! } })).status, 503, 'no replica left');
  // Two brand-new replicas: the session lands on one of them.
  const fresh = pool.slice(15, 17);
  await scale(fresh);
  const r = await p.request(host, '/', { headers: { Cookie: cookie! } });
  assert.is(r.status, 200);
  assert.ok(fresh.some((e) => e.name === r.backend), `a new replica answered, not ${first.backend}: ${r.backend}`);
  fx.ctl.remove(file);
});

test.run();
