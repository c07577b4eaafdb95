// The reviewer keeps the fragments of stored Ingresses between reviews (src/admission/review.ts,
// a bounded map), and the annotation sets, the default root and hosts' servers: whatever changes in between — the Ingresses, the Services and Secrets their
// annotations read, the ConfigMap — a long-lived reviewer answers every review exactly as a
// reviewer made for that one review does (verdict, findings with their severity, rule, field
// and message, the Ingresses tested), over collisions, canaries, TLS and bad annotations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import type { ConfigMap, Ingress, KubeObject, Secret } from '../../../src/store/kube-types.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';
import { createFragmentMemo, createReviewer, createServerMemo, type ReviewResult } from '../../../src/admission/review.js';
import type { FragmentEntry } from '../../../src/model/build.js';
import type { IngressFragment } from '../../../src/model/ingress/fragments.js';
import type { ServerEntry } from '../../../src/model/ingress/topology.js';
import { PREFIX, eventFeeder, ingress, service, slice, tlsSecret } from '../../support/model-objects.js';

const NOW = () => new Date('2026-06-01T00:00:00Z');
const certs = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const pem = (f: string) => readFileSync(join(certs, f), 'utf8');
const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
const summary = (r: ReviewResult) => ({
  served: r.served, allowed: r.allowed, tested: r.tested, configBytes: r.configBytes(),
  findings: r.findings.map((f) => `${f.severity} ${f.rule ?? ''} ${f.object} ${f.field}: ${f.message}`),
});

function caSecret(name: string, crt: string): Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'default' }, data: { 'ca.crt': Buffer.from(crt).toString('base64') } };
}
const configMap = (data: Record<string, string>): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' }, data });

test('after any changes between reviews, a long-lived reviewer answers as a reviewer made for that review', () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, configmap: 'default/settings' }, ANNOTATION_REFERENCES);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
  const { put, remove } = eventFeeder((e) => reviewer.apply(e));
  for (const name of ['web', 'api']) {
    put('Service', service(name));
    put('EndpointSlice', slice(`${name}-1`, name, ['10.0.0.1']));
  }
  put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  put('ConfigMap', configMap({}));
  reviewer.warm();

  let seed = 11;
  const rand = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
  const hosts = ['a.example.com', 'b.example.com', '*.example.com'];
  // Annotations that read the store (a Secret, a Service), a canary, values the model refuses.
  const annotationMixes: Array<Record<string, string>> = [
    {}, {}, { 'auth-tls-secret': 'default/ca' }, { 'default-backend': 'api' }, { canary: 'true', 'canary-weight': '30' },
    { 'proxy-read-timeout': 'soon' }, { 'server-alias': 'b.example.com' }, { 'rewrite-target': '/$1', 'use-regex': 'true' },
  ];
  const make = (name: string, ts: string): Ingress => {
    const host = hosts[rand(hosts.length)]!;
    const tls = rand(3) === 0 ? [{ hosts: [host], secretName: rand(2) === 0 ? 'tls' : 'missing' }] : undefined;
    return ingress(name, host, [[rand(2) === 0 ? '/' : '/cart', 'Prefix', rand(2) === 0 ? 'web' : 'api', 80]], {
      ts, annotations: annotationMixes[rand(annotationMixes.length)]!, ...(tls ? { tls } : {}),
    });
  };
  const live = new Map<string, Ingress>();
  const sizedLater: Array<{ kept: ReviewResult; bytes: number; what: string }> = [];
  let compared = 0;
  for (let step = 0; step < 120; step++) {
    const change = rand(10);
    if (change < 6) {
      const ing = make(`ing-${rand(10)}`, `2026-0${1 + rand(3)}-01T00:00:00Z`);
      put('Ingress', ing);
      live.set(keyOf(ing), ing);
    } else if (change === 6 && live.size > 0) {
      const gone = [...live.values()][rand(live.size)]!;
      remove('Ingress', gone);
      live.delete(keyOf(gone));
    } else if (change === 7) {
      if (rand(2) === 0) put('Secret', caSecret('ca', pem(rand(2) === 0 ? 'tls.crt' : 'other.crt')));
      else remove('Secret', caSecret('ca', ''));
    } else if (change === 8) {
      if (rand(2) === 0) put('Service', service('api'));
      else remove('Service', service('api'));
    } else {
      put('ConfigMap', configMap(rand(2) === 0 ? {} : { 'proxy-read-timeout': String(30 + rand(60)), 'allow-snippet-annotations': 'false' }));
    }
    const candidates = [make('candidate', '2026-05-01T00:00:00Z'), make('candidate', '2026-05-01T00:00:00Z'), ...[...live.values()].slice(0, 3)];
    for (const c of candidates) {
      const fresh = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
      const what = `step ${step}: ${keyOf(c)} on ${c.spec.rules![0]!.host}`;
      const kept = reviewer.review(c);
      const expected = summary(fresh.review(c));
      // The config size is measured when a scrape asks: here after every later change and review.
      sizedLater.push({ kept, bytes: expected.configBytes, what });
      assert.equal({ ...summary({ ...kept, configBytes: () => expected.configBytes }) }, expected, what);
      compared++;
    }
  }
  for (const { kept, bytes, what } of sizedLater) assert.is(kept.configBytes(), bytes, `${what}: its config size, measured at the end of the walk`);
  assert.ok(sizedLater.some((r) => r.bytes > 0), 'accepted reviews measured');
  assert.ok(compared > 400, `${compared} reviews compared`);
  assert.ok(live.size > 3, 'the walk kept Ingresses around');
});

test('annotation sets, the default root and the default server kept between reviews follow the ConfigMap and the stored Ingresses', () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, configmap: 'default/settings' }, ANNOTATION_REFERENCES);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
  const { put } = eventFeeder((e) => reviewer.apply(e));
  put('Service', service('web'));
  put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  put('ConfigMap', configMap({}));
  reviewer.warm();
  // No host: the candidate is part of the default server `_`, whose root is the built-in one,
  // and its annotation set reads nothing and warns of nothing (so it is shared between reviews).
  const candidate = () => ingress('candidate', '', [['/cart', 'Prefix', 'web', 80]], { annotations: { 'proxy-body-size': '2m' } });
  const answers: Array<ReturnType<typeof summary>> = [];
  const review = (what: string) => {
    const kept = summary(reviewer.review(candidate()));
    const fresh = summary(createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW }).review(candidate()));
    assert.equal(kept, fresh, what);
    assert.ok(kept.allowed && kept.configBytes > 0, `${what}: accepted, its servers measured`);
    answers.push(kept);
  };
  review('first');
  review('again, from what was kept');
  // Settings that the candidate's parsed annotations (annotation defaults) and the built-in root carry.
  put('ConfigMap', configMap({ 'limit-rate': '1024', 'relative-redirects': 'true', 'proxy-read-timeout': '97', 'enable-access-log-for-default-backend': 'true' }));
  review('after the ConfigMap changed');
  assert.not.equal(answers[2]!.configBytes, answers[1]!.configBytes, 'the new settings show in the reviewed servers');
  // A stored catch-all Ingress takes the default server's root.
  put('Service', service('fallback'));
  put('Ingress', ingress('catch-all', '', [['/', 'Prefix', 'fallback', 80]], { defaultBackend: ['fallback', 80] }));
  review('after a catch-all Ingress was stored');
  assert.not.equal(answers[3]!.configBytes, answers[2]!.configBytes, 'the stored Ingress shows in the default server');
  assert.is(answers[3]!.tested, 2, 'the catch-all Ingress was tested with the candidate');
});

test('the kept fragments are bounded, the least recently used go first, and the candidate\'s own is never kept', () => {
  let reviewing: Ingress | null = null;
  const memo = createFragmentMemo(2, () => reviewing);
  const entry = { settings: {}, deps: [], fragment: {} } as unknown as Parameters<typeof memo.set>[1];
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((n) => ingress(n, `${n}.example.com`, [['/', 'Prefix', 'web', 80]]));
  memo.set(a!, entry);
  memo.set(b!, entry);
  assert.ok(memo.get(a!), 'a used again');
  memo.set(c!, entry);
  assert.is(memo.get(b!), undefined, 'b, the least recently used, dropped');
  assert.ok(memo.get(a!) && memo.get(c!));
  reviewing = d!;
  memo.set(d!, entry);
  assert.is(memo.get(d!), undefined, 'the candidate under review is not kept');
  assert.ok(memo.get(a!) && memo.get(c!), 'nor did it push others out');
});

test('a server assembled from the candidate\'s fragment is not kept, nor does it push out the kept ones', () => {
  let reviewed: IngressFragment | null = null;
  const fragments = createFragmentMemo(10, () => candidate, (entry) => { reviewed = entry.fragment; });
  const servers = createServerMemo(2, () => reviewed);
  const [stored, candidate] = ['stored', 'candidate'].map((n) => ingress(n, 'shop.example.com', [['/', 'Prefix', 'web', 80]]));
  const fragmentOf = (key: string) => ({ key }) as unknown as IngressFragment;
  const server = (...frags: IngressFragment[]) => ({ inputs: [{}, null, '', ...frags], assembled: {} }) as unknown as ServerEntry;
  const storedFragment = fragmentOf('stored');
  const defaultServer = server(storedFragment);
  servers.set('_', defaultServer);
  fragments.set(stored!, { fragment: storedFragment } as unknown as FragmentEntry);
  assert.is(reviewed, null, 'a stored Ingress\'s fragment is not the candidate\'s');
  servers.set('shop.example.com', server(storedFragment));
  const candidateFragment = fragmentOf('candidate');
  fragments.set(candidate!, { fragment: candidateFragment } as unknown as FragmentEntry);
  assert.is(reviewed, candidateFragment);
  const shop = servers.get('shop.example.com');
  servers.set('shop.example.com', server(storedFragment, candidateFragment));
  servers.set('new.example.com', server(candidateFragment));
  assert.is(servers.get('shop.example.com'), shop, 'the stored Ingresses\' server kept, not replaced by the candidate\'s');
  assert.is(servers.get('new.example.com'), undefined);
  assert.is(servers.get('_'), defaultServer, 'nor pushed out by it');
});

/** A full collection, without starting node with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

test('no candidate outlives its review: updates, new hosts and refused thefts are all collectable after later reviews', async () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: NOW });
  const { put } = eventFeeder((e) => reviewer.apply(e));
  put('Service', service('web'));
  put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  const stored = Array.from({ length: 20 }, (_, i) => ingress(`ing-${i}`, `h${i}.example.com`, [['/', 'Prefix', 'web', 80]], {
    ts: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, ...(i % 4 === 0 ? { tls: [{ hosts: [`h${i}.example.com`], secretName: 'tls' }] } : {}),
  }));
  for (const ing of stored) put('Ingress', ing);
  reviewer.warm();

  const kept: Array<{ what: string; refs: Array<WeakRef<object>> }> = [];
  let allowed = 0;
  // In a function of its own, so that no variable of this test's frame holds the last candidate.
  const reviewAll = () => { for (let k = 0; k < 60; k++) {
    const i = k % stored.length;
    // As the webhook gets it: a new object from the request body each time.
    const candidate = JSON.parse(JSON.stringify(
      k % 3 === 0 ? ingress(`ing-${i}`, `h${i}.example.com`, [['/', 'Prefix', 'web', 80]], { annotations: { 'proxy-read-timeout': String(30 + k) } })
        : k % 3 === 1 ? ingress(`new-${k}`, `new-${k}.example.com`, [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: [`new-${k}.example.com`], secretName: 'tls' }] })
          : ingress(`thief-${k}`, `h${i}.example.com`, [['/', 'Prefix', 'web', 80]]),
    )) as Ingress;
    const result = reviewer.review(candidate);
    if (result.allowed) allowed++;
    result.configBytes();
    kept.push({ what: `review ${k} (${candidate.metadata.name})`, refs: [candidate, candidate.metadata, candidate.spec!, candidate.spec!.rules![0]!].map((o) => new WeakRef(o)) });
  } };
  reviewAll();
  assert.ok(allowed > 0 && allowed < 60, 'the mix has accepted and refused reviews');
  // A WeakRef keeps its target until the synchronous job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  const alive = kept.filter(({ refs }) => refs.some((r) => r.deref() !== undefined)).map(({ what }) => what);
  assert.equal(alive, [], 'these reviews\' candidates are still reachable');
});

test.run();
