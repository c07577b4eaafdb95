// An Ingress object that differs from the previous one in status alone (the controller's own
// status write coming back) keeps its fragment: the next build patches the topology for what
// really changed, and gives what a fresh builder gives. A change beside the status is seen.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { stableJSON } from '../../../src/model/core/json.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';
import { FIXTURE_NOW as NOW } from '../../support/model-fixtures.js';

const echo = suite('status echoes');

/** More than the topology patches at once (32). */
const N = 48;

function cluster() {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-x', 'web', ['10.0.0.1']));
  const objects = Array.from({ length: N }, (_, i) => ingress(`app-${i}`, `app-${i}.example.com`, [['/', 'Prefix', 'web', 80]]));
  for (const o of objects) store.put('Ingress', o);
  return { store, objects };
}

const withStatus = (ing: Ingress, rv: string): Ingress => ({
  ...ing, metadata: { ...ing.metadata, resourceVersion: rv }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } },
} as Ingress);

const options = { annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true };

echo('after every Ingress got a new status, one new Ingress takes the incremental path', () => {
  const { store, objects } = cluster();
  const builder = createModelBuilder(options);
  assert.is(builder.build(store).path, 'full');
  for (const o of objects) store.put('Ingress', withStatus(o, '2'));
  const late = ingress('late', 'late.example.com', [['/', 'Prefix', 'web', 80]]);
  store.put('Ingress', late);
  const built = builder.build(store, [{ kind: 'Ingress', key: 'default/late' }]);
  assert.is(built.path, 'updated');
  assert.fixture(stableJSON(built.config), stableJSON(createModelBuilder(options).build(store).config));
  // Nothing changed since: the topology is kept; again after a second round of status writes.
  assert.is(builder.build(store).path, 'kept');
  for (const o of objects) store.put('Ingress', withStatus(o, '3'));
  assert.is(builder.build(store, objects.map((o) => ({ kind: 'Ingress' as const, key: `default/${o.metadata.name}` }))).path, 'kept');
});

echo('a change beside the status is built', () => {
  const { store, objects } = cluster();
  const builder = createModelBuilder(options);
  builder.build(store);
  const moved = ingress('app-3', 'app-3.example.com', [['/moved', 'Prefix', 'web', 80]]);
  store.put('Ingress', withStatus(moved, '2'));
  const relabelled = { ...objects[4]!, metadata: { ...objects[4]!.metadata, annotations: { [`${PREFIX}/proxy-body-size`]: '5m' } } } as Ingress;
  store.put('Ingress', withStatus(relabelled, '2'));
  const built = builder.build(store, [{ kind: 'Ingress', key: 'default/app-3' }, { kind: 'Ingress', key: 'default/app-4' }]);
  assert.is(built.path, 'updated');
  assert.fixture(stableJSON(built.config), stableJSON(createModelBuilder(options).build(store).config));
  assert.ok(built.config.servers.find((s) => s.hostname === 'app-3.example.com')!.locations.some((l) => l.path === '/moved'));
});

echo.run();
