// The reviewer's index of server names and backends, kept in step with the store one event at a
// time (reviewer.apply, as the webhook's thread feeds it): a review right after a change sees
// that change — an Ingress created in another namespace holds its host and path at once, one
// moved or deleted frees them at once — and after any sequence of changes the reviews answer
// exactly what a reviewer built afresh over the same store answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Ingress, IngressClass, KubeObject } from '../../../src/store/kube-types.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import type { StoreOptions } from '../../../src/store/types.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';
import { createReviewer, type ReviewResult, type StoreReviewer } from '../../../src/admission/review.js';
import { PREFIX, eventFeeder, ingress, service, slice } from '../../support/model-objects.js';

const NOW = () => new Date('2026-06-01T00:00:00Z');
const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-05-01T00:00:00Z';

const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

/** A store fed only through the reviewer, as in the webhook's thread. */
function fedCluster(options: Partial<StoreOptions> = {}) {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, ...options }, ANNOTATION_REFERENCES);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
  const { put, remove } = eventFeeder((e) => reviewer.apply(e));
  for (const ns of ['team-a', 'team-b']) {
    for (const name of ['web', 'api']) {
      put('Service', service(name, ns));
      put('EndpointSlice', slice(`${name}-1`, name, ['10.0.0.1'], ns));
    }
  }
  return { store, reviewer, put, remove };
}

const denials = (r: ReviewResult) => r.findings.filter((f) => f.severity === 'deny').map((f) => `${f.field}: ${f.message}`);
const summary = (r: ReviewResult) => ({ served: r.served, allowed: r.allowed, tested: r.tested, findings: r.findings.map((f) => `${f.severity} ${f.object} ${f.field}: ${f.message}`) });

/** team-a's Ingress on shop.example.com/cart: a new object, reviewed as the API server sends it. */
const thief = (host = 'shop.example.com') => ingress('thief', host, [['/cart', 'Prefix', 'web', 80]], { ns: 'team-a', ts: NEW });
const owner = (host = 'shop.example.com') => ingress('owner', host, [['/cart', 'Prefix', 'web', 80]], { ns: 'team-b', ts: OLD });

test('an Ingress created in another namespace holds its host and path from the next review on', () => {
  const { reviewer, put } = fedCluster();
  put('Ingress', ingress('unrelated', 'other.example.com', [['/', 'Prefix', 'api', 80]], { ns: 'team-b', ts: OLD }));
  reviewer.warm();
  assert.ok(reviewer.review(thief()).allowed, 'nobody holds shop.example.com yet');
  put('Ingress', owner());
  const r = reviewer.review(thief());
  assert.not.ok(r.allowed, 'the owner was created before this review');
  assert.equal(denials(r), ['spec.rules: host shop.example.com path /cart (Prefix) is already defined by the older Ingress team-b/owner; ignored']);
  assert.is(r.tested, 2);
});

test('a moved or deleted Ingress frees its host at once, and holds its new host at once', () => {
  const { reviewer, put, remove } = fedCluster();
  put('Ingress', owner());
  reviewer.warm();
  assert.not.ok(reviewer.review(thief()).allowed);
  put('Ingress', owner('moved.example.com'));
  assert.ok(reviewer.review(thief()).allowed, 'shop.example.com is free after the move');
  assert.is(reviewer.review(thief()).tested, 1);
  assert.equal(denials(reviewer.review(thief('moved.example.com'))), ['spec.rules: host moved.example.com path /cart (Prefix) is already defined by the older Ingress team-b/owner; ignored']);
  remove('Ingress', owner('moved.example.com'));
  assert.ok(reviewer.review(thief('moved.example.com')).allowed, 'moved.example.com is free after the delete');
  put('Ingress', owner());
  assert.not.ok(reviewer.review(thief()).allowed, 'created again: held again');
});

test('an IngressClass that makes an Ingress ours counts from the next review on, and one that stops counting frees it', () => {
  const { reviewer, put, remove } = fedCluster({ watchIngressWithoutClass: false });
  const classed = (ing: Ingress): Ingress => ({ ...ing, spec: { ...ing.spec, ingressClassName: 'ours' } });
  const ours: IngressClass = { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'ours' }, spec: { controller: 'k8s.io/ingress-nginx' } };
  put('Ingress', classed(owner()));
  reviewer.warm();
  assert.ok(reviewer.review(classed(thief())).served === false, 'no IngressClass "ours" yet: not our Ingress');
  put('IngressClass', ours);
  assert.not.ok(reviewer.review(classed(thief())).allowed, 'the owner is served now, and so holds its path');
  remove('IngressClass', ours);
  put('IngressClass', { ...ours, metadata: { name: 'ours', uid: 'again' } });
  const theirs: IngressClass = { ...ours, spec: { controller: 'example.com/another' } };
  put('IngressClass', theirs);
  assert.is(reviewer.review(classed(thief())).served, false);
});

test('after adds, changes and deletes, the fed reviewer answers what a reviewer built afresh over the same store answers', () => {
  const { store, reviewer, put, remove } = fedCluster();
  reviewer.warm();
  // A small deterministic pseudo-random walk over 12 names, 4 hosts, 2 paths and both namespaces.
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
  const hosts = ['a.example.com', 'b.example.com', 'c.example.com', '*.example.com'];
  const live = new Map<string, Ingress>();
  for (let step = 0; step < 80; step++) {
    const name = `ing-${rand(12)}`;
    const ns = rand(2) === 0 ? 'team-a' : 'team-b';
    const key = `${ns}/${name}`;
    if (live.has(key) && rand(4) === 0) {
      remove('Ingress', live.get(key)!);
      live.delete(key);
    } else {
      const ing = ingress(name, hosts[rand(hosts.length)]!, [[rand(2) === 0 ? '/' : '/cart', 'Prefix', rand(2) === 0 ? 'web' : 'api', 80]], {
        ns, ts: `2026-0${1 + rand(3)}-01T00:00:00Z`, annotations: rand(3) === 0 ? { 'server-alias': hosts[rand(3)]! } : {},
      });
      put('Ingress', ing);
      live.set(key, ing);
    }
    const fresh = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
    for (const host of hosts.slice(0, 3)) {
      const candidate = ingress('candidate', host, [['/cart', 'Prefix', 'web', 80]], { ns: 'team-a', ts: NEW });
      assert.equal(summary(reviewer.review(candidate)), summary(fresh.review(candidate)), `step ${step}, ${host}`);
    }
    for (const stored of [...live.values()].slice(0, 2)) {
      assert.equal(summary(reviewer.review(stored)), summary(fresh.review(stored)), `step ${step}, update of ${keyOf(stored)}`);
    }
  }
  assert.ok(live.size > 3, 'the walk kept Ingresses around');
});

test('a reviewer whose store is changed directly (lint, tests) follows the store\'s list instead', () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
  store.apply({ kind: 'Service', type: 'add', key: 'team-b/web', object: service('web', 'team-b') });
  const reviewer: StoreReviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
  reviewer.warm();
  assert.ok(reviewer.review(thief()).allowed);
  store.apply({ kind: 'Ingress', type: 'add', key: 'team-b/owner', object: owner() });
  assert.not.ok(reviewer.review(thief()).allowed);
  store.apply({ kind: 'Ingress', type: 'delete', key: 'team-b/owner', object: owner() });
  assert.ok(reviewer.review(thief()).allowed);
});

test.run();
