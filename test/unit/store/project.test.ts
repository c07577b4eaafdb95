// What the store keeps of Services, EndpointSlices, Secrets and ConfigMaps: the fields readers
// use, and not the rest a cluster's objects carry. The reader test builds every model fixture
// with each field read recorded, so dropping a field some reader uses fails it.
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { keeps, project, STORED_FIELDS, storedForm } from '../../../src/store/project.js';
import { objectKey, type ResourceKind, type StoredKind } from '../../../src/store/events.js';
import type { EndpointSlice, KubeObject, Service } from '../../../src/store/kube-types.js';
import type { StoreOptions, StoreReader } from '../../../src/store/types.js';
import { readManifests } from '../../../src/streams/manifests.js';
import { FIXTURE_NOW, MODEL_FIXTURES, fixtureCases } from '../../support/model-fixtures.js';
import { existsSync, readFileSync } from 'node:fs';

/** An EndpointSlice as the EndpointSlice controller writes it. */
function listedSlice(nodeName = 'node-a'): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      name: 'web-x7k2p', namespace: 'shop', uid: 'u-1', resourceVersion: '7', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'app.kubernetes.io/name': 'web' },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-01-01T00:00:00Z' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u-0', controller: true }],
      generateName: 'web-',
    } as EndpointSlice['metadata'],
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{
      addresses: ['10.1.0.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName,
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-5d8f-abcde' }, zone: 'eu-west-1a',
    } as NonNullable<EndpointSlice['endpoints']>[number]],
  };
}

function listedService(selector = 'web'): Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'web', namespace: 'shop', uid: 'u-0', resourceVersion: '3', creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: 'web' }, annotations: { 'meta.helm.sh/release-name': 'web' } },
    spec: {
      type: 'ClusterIP', clusterIP: '172.20.0.9', clusterIPs: ['172.20.0.9'], selector: { app: selector }, sessionAffinity: 'None',
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', appProtocol: 'http' }],
    },
    status: { loadBalancer: {} },
  };
}

const storeOf = () => createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
const add = (kind: ResourceKind, object: KubeObject) => ({ kind, type: 'add' as const, key: objectKey(object), object });

const projection = suite('store projection');

projection('an EndpointSlice keeps its addresses, conditions, ports and the Service label; Pods, nodes, zones, owners and annotations go', () => {
  const kept = storedForm('EndpointSlice', listedSlice()) as EndpointSlice;
  assert.equal(kept, {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: 'web-x7k2p', namespace: 'shop', uid: 'u-1', resourceVersion: '7', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4', ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true, serving: true, terminating: false } }],
  });
});

projection('a Service keeps type, addresses, ports (appProtocol too) and status; the selector, defaults, labels and annotations go', () => {
  const kept = storedForm('Service', listedService()) as Service;
  assert.equal(kept.spec, { type: 'ClusterIP', clusterIP: '172.20.0.9', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', appProtocol: 'http' }] });
  assert.equal(kept.status, { loadBalancer: {} });
  assert.equal(kept.metadata.annotations, undefined);
  assert.equal(kept.metadata.labels, undefined);
});

projection('the input is not changed, and kinds without a rule are kept as they are', () => {
  const slice = listedSlice();
  storedForm('EndpointSlice', slice);
  assert.is(slice.endpoints![0]!.nodeName, 'node-a');
  const ing = { metadata: { name: 'i', annotations: { a: 'b' } }, spec: {} } as KubeObject;
  assert.is(storedForm('Ingress', ing), ing);
  assert.equal(project({ a: 1, b: [{ c: 1, d: 2 }] }, { b: [{ d: true }] }), { b: [{ d: 2 }] });
});

projection('an object that holds only kept fields is kept as it is, not copied', () => {
  const slice = storedForm('EndpointSlice', listedSlice()) as EndpointSlice;
  assert.is(storedForm('EndpointSlice', slice), slice);
  const again = { ...slice, endpoints: [...slice.endpoints!, { addresses: ['10.1.0.6'], zone: 'b' }] } as EndpointSlice;
  const kept = storedForm('EndpointSlice', again) as EndpointSlice;
  assert.is(kept.endpoints![0], slice.endpoints![0], 'a kept endpoint is shared');
  assert.equal(kept.endpoints![1], { addresses: ['10.1.0.6'] });
  assert.is(kept.metadata, slice.metadata);
});

projection('the store holds the projected objects; an update of a dropped field alone changes nothing', () => {
  const store = storeOf();
  store.apply(add('Service', listedService()));
  assert.ok(store.apply(add('EndpointSlice', listedSlice())).relevant);
  const [held] = store.getEndpointSlices('shop/web');
  assert.equal(Object.keys(held!.endpoints![0]!), ['addresses', 'conditions']);
  assert.equal(Object.keys(held!.metadata.labels!), ['kubernetes.io/service-name']);
  const moved = store.apply({ ...add('EndpointSlice', listedSlice('node-b')), type: 'update' });
  assert.equal(moved, { relevant: false, reason: 'EndpointSlice unchanged' });
  assert.is(store.getEndpointSlices('shop/web')[0], held, 'the stored object is kept by identity');
  const reselected = store.apply({ ...add('Service', listedService('web-v2')), type: 'update' });
  assert.equal(reselected, { relevant: false, reason: 'Service unchanged' });
});

// ---- every field a reader uses is kept

const PROJECTED = Object.keys(STORED_FIELDS) as StoredKind[];

/** A reader whose Services, EndpointSlices, Secrets and ConfigMaps record each field path read (`[]` for array elements). */
function recordingReader(store: StoreReader, reads: Set<string>): StoreReader {
  const proxies = new WeakMap<object, object>();
  const wrap = <T>(kind: StoredKind, value: T, path: readonly string[]): T => {
    if (value === null || typeof value !== 'object') return value;
    const cached = proxies.get(value as object);
    if (cached) return cached as T;
    const proxy = new Proxy(value as object, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof prop === 'symbol' || (Array.isArray(target) && (prop === 'length' || typeof v === 'function'))) return v;
        const step = Array.isArray(target) ? '[]' : prop;
        reads.add(`${kind}\0${[...path, step].join('\0')}`);
        return wrap(kind, v, [...path, step]);
      },
      ownKeys(target) {
        if (!Array.isArray(target)) reads.add(`${kind}\0${[...path, '*'].join('\0')}`);
        return Reflect.ownKeys(target);
      },
    });
    proxies.set(value as object, proxy);
    return proxy as T;
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === 'getService') return (k: string) => wrap('Service', target.getService(k), []);
      if (prop === 'getEndpointSlices') return (k: string) => target.getEndpointSlices(k).map((s) => wrap('EndpointSlice', s, []));
      if (prop === 'getSecret') return (k: string) => wrap('Secret', target.getSecret(k), []);
      if (prop === 'getConfigMap') return (k: string) => wrap('ConfigMap', target.getConfigMap(k), []);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

const readers = suite('store projection: what readers use');

readers('building every model fixture reads only fields the store keeps', () => {
  const reads = new Set<string>();
  for (const name of fixtureCases()) {
    const file = join(MODEL_FIXTURES, name, 'options.json');
    const opts = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as { configmap?: string; storeOptions?: Partial<StoreOptions> } : {};
    const { events } = readManifests(join(MODEL_FIXTURES, name, 'manifests'), { now: () => FIXTURE_NOW.getTime() });
    const options: StoreOptions = { ...defaultStoreOptions(), watchIngressWithoutClass: true, ...opts.storeOptions, configmap: opts.configmap ?? opts.storeOptions?.configmap ?? '' };
    const store = createStore(options, ANNOTATION_REFERENCES);
    for (const e of events) store.apply(e);
    const builder = createModelBuilder({ annotationsPrefix: options.annotationsPrefix || 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, now: () => FIXTURE_NOW });
    builder.build(recordingReader(store, reads) as typeof store);
  }
  const paths = [...reads].map((r) => r.split('\0'));
  const dropped = paths.filter(([kind, ...path]) => !keeps(STORED_FIELDS[kind as StoredKind]!, path.filter((s) => s !== '*')) || (path.at(-1) === '*' && !keptWhole(kind as StoredKind, path.slice(0, -1))));
  assert.equal(dropped.map((p) => p.join('.')), [], 'read but not kept by the store');
  // The recording saw the readers at work (the test would pass vacuously otherwise).
  for (const expected of ['EndpointSlice\0endpoints\0[]\0conditions\0ready', 'EndpointSlice\0ports\0[]\0port', 'Service\0spec\0ports', 'Service\0spec\0type', 'Secret\0data']) {
    assert.ok(reads.has(expected), `no reader read ${expected.replaceAll('\0', '.')}`);
  }
  assert.equal(PROJECTED.sort(), ['ConfigMap', 'EndpointSlice', 'Secret', 'Service']);
});

/** Whether the store keeps every key under `path` (a reader that lists the keys sees all of them). */
function keptWhole(kind: StoredKind, path: readonly string[]): boolean {
  let k = STORED_FIELDS[kind]!;
  for (const step of path) {
    if (k === true) return true;
    k = Array.isArray(k) ? k[0] : (k as Record<string, typeof k>)[step]!;
    if (k === undefined) return false;
  }
  return k === true;
}

projection.run();
readers.run();
