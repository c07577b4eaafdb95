// `ingress-rx controller --enable-gateway-api` against the in-process fake API server (real
// list/watch) with real NGINX: serves an HTTPRoute of the cluster over HTTP/1.1 and HTTP/2 and
// writes the Gateway API status: Accepted on the GatewayClass, Accepted/Programmed on the Gateway
// and its listeners with attachedRoutes, and per route parent Accepted and ResolvedRefs with
// their reasons and the route's observedGeneration, following a change of the route.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { FakeApiServer, FakeObject } from '../support/fake-apiserver.js';
import type { CliProcess } from '../support/local-harness.js';
import { echoService, startClusterController, type ClusterController } from '../support/cluster-controller.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const V1 = 'gateway.networking.k8s.io/v1';
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
const over = protocolMatrix(test, () => ctl);

const route = (ns: string, name: string, host: string, backend: { name: string; namespace?: string }, sectionName = 'http'): FakeObject => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
  spec: { parentRefs: [{ name: 'gw', namespace: 'infra', sectionName }], hostnames: [host], rules: [{ backendRefs: [{ ...backend, port: 80 }] }] },
});

type Cond = { type: string; status: string; reason: string; observedGeneration: number; lastTransitionTime: string };
const conds = (o: FakeObject | undefined, pick: (s: Record<string, unknown>) => unknown) => {
  const s = o?.status as Record<string, unknown> | undefined;
  return ((s ? pick(s) : undefined) ?? []) as Cond[];
};
const brief = (cs: Cond[]) => cs.map((c) => `${c.type}=${c.status}/${c.reason}@${c.observedGeneration}`);
const parentConditions = (name: string, ns = 'team-a') => conds(fake.get(V1, 'HTTPRoute', name, ns), (s) => (s.parents as Array<{ conditions: Cond[] }> | undefined)?.[0]?.conditions);

test.before(async () => {
  cluster = await startClusterController({
    echo: [{ address: '127.0.0.2', name: 'a' }],
    objects: ({ echo }) => [
      { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
      { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'theirs' }, spec: { controllerName: 'example.com/other' } },
      {
        apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' },
        spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }, { name: 'same', port: 80, protocol: 'HTTP', hostname: 'same.test' }] },
      },
      ...echoService('team-a', 'web', echo),
      ...echoService('team-b', 'secret', echo),
      route('team-a', 'web', 'gw.test', { name: 'web' }),
      route('team-a', 'steal', 'steal.test', { name: 'secret', namespace: 'team-b' }),
      route('team-a', 'outside', 'same.test', { name: 'web' }, 'same'),
    ],
    flags: ['--enable-gateway-api', '--disable-leader-election', '--publish-status-address=192.0.2.10', '--allow-upstream-addresses=loopback'],
  });
  ({ fake, ctl } = cluster);
});

test.after(() => cluster?.stop());

over.both('serves an HTTPRoute of the cluster; a route to another namespace without a grant answers 500', async (p) => {
  await p.until('gw.test', '/', (r) => r.backend === 'a', { what: 'gw.test served' });
  assert.is((await p.request('steal.test', '/')).status, 500);
  assert.is((await p.request('same.test', '/')).status, 404, 'a route the listener does not admit is not served');
});

test('writes the status of the GatewayClass, the Gateway and its listeners, and each route parent', async () => {
  await waitFor(() => parentConditions('outside').length > 0 && conds(fake.get(V1, 'Gateway', 'gw', 'infra'), (s) => s.conditions).length > 0, { what: 'the status written', timeoutMs: 20_000 });
  assert.equal(brief(conds(fake.get(V1, 'GatewayClass', 'rx'), (s) => s.conditions)), ['Accepted=True/Accepted@1']);
  assert.is(fake.get(V1, 'GatewayClass', 'theirs')?.status, undefined, 'another controller\'s class is left alone');
  const gw = fake.get(V1, 'Gateway', 'gw', 'infra')!;
  assert.equal(brief(conds(gw, (s) => s.conditions)), ['Accepted=True/Accepted@1', 'Programmed=True/Programmed@1']);
  const listeners = (gw.status as { listeners: Array<{ name: string; attachedRoutes: number; conditions: Cond[] }> }).listeners;
  assert.equal(listeners.map((l) => [l.name, l.attachedRoutes]), [['http', 2], ['same', 0]]);
  assert.equal(brief(listeners[0]!.conditions), ['Accepted=True/Accepted@1', 'ResolvedRefs=True/ResolvedRefs@1', 'Programmed=True/Programmed@1', 'Conflicted=False/NoConflicts@1']);
  assert.equal(brief(parentConditions('web')), ['Accepted=True/Accepted@1', 'ResolvedRefs=True/ResolvedRefs@1']);
  assert.equal(brief(parentConditions('steal')), ['Accepted=True/Accepted@1', 'ResolvedRefs=False/RefNotPermitted@1']);
  assert.equal(brief(parentConditions('outside')), ['Accepted=False/NotAllowedByListeners@1', 'ResolvedRefs=True/ResolvedRefs@1']);
  assert.is((fake.get(V1, 'HTTPRoute', 'web', 'team-a')!.status as { parents: Array<{ controllerName: string }> }).parents[0]!.controllerName, 'ingress-rx.io/gateway');
});

test('a changed route gets its new generation and conditions; a grant resolves the refused reference', async () => {
  const before = parentConditions('web');
  const web = fake.get(V1, 'HTTPRoute', 'web', 'team-a')!;
  fake.update({ ...web, spec: { ...(web.spec as object), hostnames: ['gw2.test'] } });
  await waitFor(() => parentConditions('web')[0]?.observedGeneration === 2, { what: 'observedGeneration 2', timeoutMs: 20_000 });
  assert.equal(brief(parentConditions('web')), ['Accepted=True/Accepted@2', 'ResolvedRefs=True/ResolvedRefs@2']);
  assert.is(parentConditions('web')[0]!.lastTransitionTime, before[0]!.lastTransitionTime, 'no transition: the time stays');
  await ctl.until('gw2.test', '/', (r) => r.backend === 'a', { what: 'gw2.test served' });
  fake.create({
    apiVersion: 'gateway.networking.k8s.io/v1beta1', kind: 'ReferenceGrant', metadata: { name: 'to-secret', namespace: 'team-b' },
    spec: { from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }], to: [{ group: '', kind: 'Service', name: 'secret' }] },
  });
  await waitFor(() => parentConditions('steal')[1]?.status === 'True', { what: 'ResolvedRefs True after the grant', timeoutMs: 20_000 });
  await ctl.until('steal.test', '/', (r) => r.backend === 'a', { what: 'steal.test served once granted' });
});

test.run();
