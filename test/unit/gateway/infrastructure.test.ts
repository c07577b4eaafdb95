// The Service generated per Gateway (src/model/gateway/infrastructure.ts): its name, target and
// owner, and which of the Gateway's infrastructure labels and annotations it carries.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gatewayServices } from '../../../src/model/gateway/infrastructure.js';
import type { Gateway } from '../../../src/store/kube-types.js';

const TARGET = 'ingress-rx.ingress.svc.cluster.local';
const gateway = (name: string, infrastructure?: Gateway['spec']['infrastructure'], uid: string | null = 'u-1'): Gateway => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name, namespace: 'team-a', ...(uid ? { uid } : {}) },
  spec: { gatewayClassName: 'rx', listeners: [], ...(infrastructure ? { infrastructure } : {}) },
});

test('one ExternalName Service per Gateway, in its namespace, owned by it, with its infrastructure labels and annotations', () => {
  const plan = gatewayServices([gateway('gw', { labels: { key2: 'value2' }, annotations: { key1: 'value1' } }), gateway('bare')], TARGET);
  assert.equal(plan.warnings, []);
  assert.equal(plan.services[0], {
    apiVersion: 'v1', kind: 'Service',
    metadata: {
      name: 'gw-ingress-rx', namespace: 'team-a',
      labels: { key2: 'value2', 'gateway.networking.k8s.io/gateway-name': 'gw', 'app.kubernetes.io/managed-by': 'ingress-rx-gateway' },
      annotations: { key1: 'value1' },
      ownerReferences: [{ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: 'gw', uid: 'u-1', controller: true }],
    },
    spec: { type: 'ExternalName', externalName: TARGET },
  });
  assert.equal(plan.services[1]!.metadata.labels, { 'gateway.networking.k8s.io/gateway-name': 'bare', 'app.kubernetes.io/managed-by': 'ingress-rx-gateway' });
});

test('attacker: the labels we select by, Kubernetes\' and its controllers\' domains, and ours are never copied; named', () => {
  const plan = gatewayServices([gateway('gw', {
    labels: { 'gateway.networking.k8s.io/gateway-name': 'other-tenant', 'app.kubernetes.io/managed-by': 'me', 'team': 'a' },
    annotations: {
      'service.beta.kubernetes.io/aws-load-balancer-internal': 'false', 'external-dns.alpha.kubernetes.io/hostname': 'bank.example',
      'ingress-rx.io/anything': 'x', 'metallb.universe.tf/address-pool': 'shared', 'note': 'kept',
    },
  })], TARGET);
  const s = plan.services[0]!;
  assert.equal(s.metadata.labels, { team: 'a', 'gateway.networking.k8s.io/gateway-name': 'gw', 'app.kubernetes.io/managed-by': 'ingress-rx-gateway' });
  assert.equal(s.metadata.annotations, { 'metallb.universe.tf/address-pool': 'shared', note: 'kept' }, 'an ExternalName Service has no load balancer for other domains to act on');
  assert.is(plan.warnings.length, 5);
  assert.match(plan.warnings.join('\n'), /Gateway team-a\/gw spec\.infrastructure\.labels\["gateway\.networking\.k8s\.io\/gateway-name"\]: keys under k8s\.io are reserved/);
  assert.match(plan.warnings.join('\n'), /spec\.infrastructure\.annotations\["external-dns\.alpha\.kubernetes\.io\/hostname"\]: keys under kubernetes\.io are reserved/);
});

test('careless input: bad keys and values, CR/LF, too many, huge values; names that make no Service; one bad Gateway never stops the others', () => {
  const labels: Record<string, string> = { 'bad key': 'v', 'ok': 'bad value!', 'crlf': 'a\r\nb', '-x': 'v' };
  for (let i = 0; i < 10; i++) labels[`l${i}`] = 'v';
  const plan = gatewayServices([
    gateway('gw', { labels, annotations: { 'a': 'x'.repeat(5000), 'b': 'line\r\nX-Injected: 1' } }),
    gateway('x'.repeat(60)), gateway('dotted.name'), gateway('no-uid', undefined, null), gateway('fine'),
  ], TARGET);
  const s = plan.services[0]!;
  assert.equal(Object.keys(s.metadata.labels).filter((k) => k.startsWith('l')).length, 4, 'the first 8 keys are read, 4 of them good');
  assert.equal(s.metadata.annotations, { b: 'line\r\nX-Injected: 1' }, 'an annotation value is data the API server stores as such');
  assert.equal(plan.services.map((x) => x.metadata.name), ['gw-ingress-rx', 'fine-ingress-rx']);
  const text = plan.warnings.join('\n');
  for (const p of [/labels\["bad key"\]: not a valid key/, /labels\["ok"\]: not a valid value/, /labels\["crlf"\]: not a valid value/, /more than 8 keys/, /annotations\["a"\]: not a valid value/,
    /Gateway team-a\/x{60}: no Service is generated/, /Gateway team-a\/dotted\.name: no Service is generated/, /Gateway team-a\/no-uid: no Service is generated \(the Gateway has no uid yet\)/]) assert.match(text, p);
});

test.run();
