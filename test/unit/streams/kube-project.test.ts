// Projection of client-node objects into our plain types, the ignore rules, and which
// informers the kube source runs for given options.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { FakeApiServer } from '../../support/fake-apiserver.js';
import { informerSpecs } from '../../../src/streams/kube.js';
import { LAST_APPLIED_ANNOTATION, isIgnoredObject, projectObject } from '../../../src/streams/kube-project.js';

const test = suite('kube projection');

const wire = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: {
    name: 'web',
    namespace: 'shop',
    resourceVersion: '42',
    creationTimestamp: '2024-05-01T10:00:00Z',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubectl', operation: 'Update', time: '2024-05-01T10:00:00Z' }],
  },
  spec: { ingressClassName: 'nginx', rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] },
  status: { loadBalancer: {} },
};

test('a listed class instance (Date timestamps, undefined fields) and watch JSON project equal', async () => {
  const server = await FakeApiServer.start();
  try {
    server.create(structuredClone(wire));
    const list = await server.kubeConfig().makeApiClient(NetworkingV1Api).listIngressForAllNamespaces();
    const instance = list.items[0];
    assert.instance(instance.metadata?.creationTimestamp, Date);
    assert.is.not(Object.getPrototypeOf(instance), Object.prototype, 'a class instance');
    assert.is(instance.kind, undefined, 'list items carry no kind');
    const fromList = projectObject('Ingress', instance);
    const fromWatch = projectObject('Ingress', server.get('networking.k8s.io/v1', 'Ingress', 'web', 'shop'));
    assert.equal(fromList, fromWatch);
    assert.is(fromList.metadata.creationTimestamp, '2024-05-01T10:00:00Z');
    assert.is(fromList.kind, 'Ingress');
    assert.is(fromList.apiVersion, 'networking.k8s.io/v1');
    assert.not.ok('managedFields' in fromList.metadata);
    assert.not.ok(JSON.stringify(fromList).includes('null'));
    assert.equal(Object.keys(fromList.metadata).sort(), ['creationTimestamp', 'generation', 'labels', 'name', 'namespace', 'resourceVersion', 'uid']);
  } finally {
    await server.close();
  }
});

test('sub-second Dates keep their milliseconds; nulls are dropped', () => {
  const p = projectObject('ConfigMap', { metadata: { name: 'c', namespace: 'n', deletionTimestamp: new Date('2024-05-01T10:00:00.250Z'), annotations: null }, data: { a: '1' } });
  assert.is(p.metadata.deletionTimestamp, '2024-05-01T10:00:00.250Z');
  assert.not.ok('annotations' in p.metadata);
});

test("kubectl's last-applied copy is not kept; every other annotation is, and the object it came from is not changed", () => {
  const applied = JSON.stringify({ metadata: { annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/' } }, spec: wire.spec });
  const raw = structuredClone(wire) as typeof wire & { metadata: { annotations?: Record<string, string> } };
  raw.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: applied, 'nginx.ingress.kubernetes.io/rewrite-target': '/' };
  const p = projectObject('Ingress', raw);
  assert.equal(p.metadata.annotations, { 'nginx.ingress.kubernetes.io/rewrite-target': '/' });
  assert.not.ok('managedFields' in p.metadata);
  assert.is(p.metadata.labels?.app, 'web');
  assert.is(raw.metadata.annotations[LAST_APPLIED_ANNOTATION], applied, 'the source object keeps it');
  assert.ok(raw.metadata.managedFields.length === 1, 'and its managedFields');
  const only = projectObject('Secret', { metadata: { name: 's', namespace: 'n', annotations: { [LAST_APPLIED_ANNOTATION]: '{"data":{"tls.key":"c2VjcmV0"}}' } }, type: 'kubernetes.io/tls' });
  assert.equal(only.metadata.annotations, {});
  assert.not.ok(JSON.stringify(only).includes('c2VjcmV0'), "a Secret's data is not kept through kubectl's copy");
});

test('the object it came from is never changed, nor shared', () => {
  const raw = structuredClone(wire) as typeof wire & { metadata: { annotations?: Record<string, string> } };
  raw.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{}', keep: 'me' };
  const before = structuredClone(raw);
  const p = projectObject('Ingress', raw) as unknown as typeof wire;
  assert.equal(raw, before);
  // A copy: objects parsed beside the managedFields they held would keep those pages resident.
  assert.is.not(p.spec, raw.spec);
});

test('helm release secrets and TILLER configmaps are ignored, nothing else', () => {
  const meta = { name: 'x', namespace: 'n' };
  assert.ok(isIgnoredObject('Secret', { metadata: meta, type: 'helm.sh/release.v1' } as never));
  assert.not.ok(isIgnoredObject('Secret', { metadata: meta, type: 'kubernetes.io/tls' } as never));
  assert.ok(isIgnoredObject('ConfigMap', { metadata: { ...meta, labels: { OWNER: 'TILLER' } } }));
  assert.not.ok(isIgnoredObject('ConfigMap', { metadata: { ...meta, labels: { OWNER: 'someone' } } }));
  assert.not.ok(isIgnoredObject('Service', { metadata: { ...meta, labels: { OWNER: 'TILLER' } } }));
});

test('informers: per kind; per namespace with watchNamespaces; Namespace only with a selector; none for IngressClasses the controller may not list; server-side filters', () => {
  const all = informerSpecs({ watchNamespaces: [], namespaceSelector: '' });
  assert.equal(all.map((s) => s.kind), ['IngressClass', 'ConfigMap', 'Secret', 'Service', 'EndpointSlice', 'Ingress']);
  assert.ok(all.every((s) => s.namespace === undefined));
  assert.is(all.find((s) => s.kind === 'Secret')!.fieldSelector, 'type!=helm.sh/release.v1');
  assert.is(all.find((s) => s.kind === 'ConfigMap')!.labelSelector, 'OWNER!=TILLER');

  const scoped = informerSpecs({ watchNamespaces: ['a', 'b', 'a', ''], namespaceSelector: 'team=x' });
  assert.equal(scoped.filter((s) => s.kind === 'Ingress').map((s) => s.namespace), ['a', 'b']);
  assert.equal(scoped.filter((s) => s.kind === 'IngressClass').map((s) => s.namespace), [undefined]);
  assert.equal(scoped.filter((s) => s.kind === 'Namespace'), [{ kind: 'Namespace', labelSelector: 'team=x' }]);
  assert.is(scoped.length, 1 + 1 + 5 * 2);

  const refused = informerSpecs({ watchNamespaces: [], namespaceSelector: '', withoutIngressClasses: true });
  assert.equal(refused.map((s) => s.kind), ['ConfigMap', 'Secret', 'Service', 'EndpointSlice', 'Ingress'], 'no IngressClass informer without the right to list them');
});

test.run();
