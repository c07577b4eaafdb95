// The Gateway API status writer's statusChanged, against the fake API server: a change of an
// object's status alone costs no sync, so the writer compares it with the last sync's conditions —
// its own writes coming back write nothing, another writer's change to our entry is restored (and
// other controllers' entries kept).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BehaviorSubject } from 'rxjs';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { startFakeApiServer } from '../../support/fake-apiserver.js';
import { silentLogger } from '../../../src/log.js';
import { createGatewayStatusWriter } from '../../../src/actors/gateway-status.js';
import type { GatewayAPIStatus } from '../../../src/model/gateway/index.js';
import type { GatewayResources } from '../../../src/store/types.js';

const G = 'gateway.networking.k8s.io/v1';
const ROUTE_STATUS = /\/httproutes\/web\/status$/;

test('statusChanged: our own echo writes nothing; our entry removed by someone else is restored, theirs kept', async () => {
  const fake = await startFakeApiServer();
  fake.create({ apiVersion: G, kind: 'HTTPRoute', metadata: { name: 'web', namespace: 'team-a', generation: 1 }, spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }] } });
  const writer = createGatewayStatusWriter({ custom: fake.kubeConfig().makeApiClient(CustomObjectsApi), isLeader$: new BehaviorSubject(true), controllerName: 'ingress-rx.io/gateway', logger: silentLogger() });
  const cond = [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted', message: 'ok', observedGeneration: 1 }];
  const ours = { parentRef: { name: 'gw', namespace: 'infra' }, controllerName: 'ingress-rx.io/gateway', conditions: cond };
  const status: GatewayAPIStatus = { classes: new Map(), gateways: new Map(), listenerSets: new Map(), routes: new Map([['team-a/web', [ours]]]), backendTLSPolicies: new Map() };
  const resources = () => ({ classes: [], gateways: [], httpRoutes: fake.list(G, 'HTTPRoute'), referenceGrants: [], backendTLSPolicies: [], listenerSets: [] }) as unknown as GatewayResources;
  const writes = () => fake.count({ verb: 'update', path: ROUTE_STATUS });
  const parents = () => (fake.get(G, 'HTTPRoute', 'web', 'team-a') as { status?: { parents?: Array<{ controllerName: string }> } }).status?.parents ?? [];
  try {
    assert.is(writer.statusChanged(resources), undefined, 'before any sync there is nothing to compare with');
    assert.equal((await writer.sync(status, resources())).written, ['HTTPRoute team-a/web']);
    assert.is(writes(), 1);
    await writer.statusChanged(resources);
    assert.is(writes(), 1, 'our own write coming back: nothing written');

    const route = fake.get(G, 'HTTPRoute', 'web', 'team-a')!;
    const theirs = { parentRef: { name: 'other-gw' }, controllerName: 'example.com/other', conditions: cond };
    fake.update({ ...route, status: { parents: [theirs] } } as never);
    await writer.statusChanged(resources);
    assert.is(writes(), 2, 'restored');
    assert.equal(parents().map((p) => p.controllerName), ['example.com/other', 'ingress-rx.io/gateway']);
    // Two at once while a pass runs: coalesced into one more pass, which writes nothing.
    await Promise.all([writer.statusChanged(resources), writer.statusChanged(resources)]);
    assert.is(writes(), 2);
  } finally {
    writer.stop();
    await fake.close();
  }
});

test.run();
