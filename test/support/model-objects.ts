// Small builders of Kubernetes objects and a store for model tests (kube-types shapes).
import type { SourceEvent, StoredKind } from '../../src/store/events.js';
import type { EndpointSlice, Ingress, KubeObject, PathType, Secret, Service } from '../../src/store/kube-types.js';
import { createStore, defaultStoreOptions } from '../../src/store/store.js';
import type { Store, StoreOptions } from '../../src/store/types.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';

export const PREFIX = 'nginx.ingress.kubernetes.io';

export interface IngressOpts {
  ns?: string;
  ts?: string;
  annotations?: Record<string, string>;
  tls?: Array<{ hosts?: string[]; secretName?: string }>;
  defaultBackend?: [string, number];
}

export function ingress(name: string, host: string, paths: Array<[string, PathType, string, number | string]>, o: IngressOpts = {}): Ingress {
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(o.annotations ?? {})) annotations[k.includes('/') ? k : `${PREFIX}/${k}`] = v;
  const port = (p: number | string) => (typeof p === 'number' ? { number: p } : { name: p });
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name, namespace: o.ns ?? 'default', uid: `uid-${name}`, resourceVersion: '1',
      creationTimestamp: o.ts ?? '2026-01-01T00:00:00Z', annotations,
    },
    spec: {
      ...(o.defaultBackend ? { defaultBackend: { service: { name: o.defaultBackend[0], port: { number: o.defaultBackend[1] } } } } : {}),
      ...(o.tls ? { tls: o.tls } : {}),
      rules: [{
        host,
        http: { paths: paths.map(([path, pathType, svc, p]) => ({ path, pathType, backend: { service: { name: svc, port: port(p) } } })) },
      }],
    },
  };
}

export function service(name: string, ns = 'default'): Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name, namespace: ns, uid: `uid-svc-${name}` },
    spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

export function slice(name: string, svc: string, addresses: string[], ns = 'default', port = 8080): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
    ports: [{ name: 'http', port, protocol: 'TCP' }],
  };
}

export function tlsSecret(name: string, crt: string, key: string, ns = 'default'): Secret {
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: { name, namespace: ns },
    data: { 'tls.crt': Buffer.from(crt).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
  };
}

/** A store for tests that serves Ingresses without class; `put` adds or updates, `remove` deletes. */
export function testStore(options: Partial<StoreOptions> = {}): Store & {
  put(kind: StoredKind, obj: KubeObject): void;
  remove(kind: StoredKind, obj: KubeObject): void;
} {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, ...options }, ANNOTATION_REFERENCES);
  const known = new Set<string>();
  const keyOf = (kind: string, o: KubeObject) => `${kind}:${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
  const objKey = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
  return Object.assign(store, {
    put(kind: StoredKind, obj: KubeObject) {
      const k = keyOf(kind, obj);
      store.apply({ kind, type: known.has(k) ? 'update' : 'add', key: objKey(obj), object: obj });
      known.add(k);
    },
    remove(kind: StoredKind, obj: KubeObject) {
      known.delete(keyOf(kind, obj));
      store.apply({ kind, type: 'delete', key: objKey(obj), object: obj });
    },
  });
}

/** `put` (add, or update of an object put before) and `remove` (of an object put before) as source events to `apply`, e.g. a reviewer's. */
export function eventFeeder(apply: (event: SourceEvent) => unknown): { put(kind: StoredKind, obj: KubeObject): void; remove(kind: StoredKind, obj: KubeObject): void } {
  const known = new Set<string>();
  const keyOf = (o: KubeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
  return {
    put(kind, obj) {
      const k = `${kind}:${keyOf(obj)}`;
      apply({ kind, type: known.has(k) ? 'update' : 'add', key: keyOf(obj), object: obj });
      known.add(k);
    },
    remove(kind, obj) {
      if (known.delete(`${kind}:${keyOf(obj)}`)) apply({ kind, type: 'delete', key: keyOf(obj), object: obj });
    },
  };
}
