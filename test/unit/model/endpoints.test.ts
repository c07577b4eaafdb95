// EndpointSlice conditions as a rolling update sets them: ready endpoints serve; a terminating
// endpoint (ready false) leaves at once while any other is ready; when none is ready, the
// terminating ones that still serve are used (kube-proxy's rule, KEP-1669), never the ones that
// stopped serving; unset conditions read as the API says.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { endpointsFromSlices, resolveServiceEndpoints } from '../../../src/model/core/endpoints.js';
import { STRICT_ADDRESS_POLICY } from '../../../src/model/checks/address-policy.js';
import type { EndpointSlice, Service } from '../../../src/store/kube-types.js';

type Conditions = { ready?: boolean; serving?: boolean; terminating?: boolean } | undefined;

function slice(name: string, endpoints: Array<[string, Conditions]>): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: endpoints.map(([a, conditions]) => ({ addresses: [a], ...(conditions ? { conditions } : {}) })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

const port = { name: 'http', port: 80, targetPort: 'http' };
const addresses = (slices: EndpointSlice[], refused: string[] = []) =>
  endpointsFromSlices(port, slices, 'TCP', undefined, refused).map((e) => e.address);

const terminatingServing = { ready: false, serving: true, terminating: true };
const terminatingGone = { ready: false, serving: false, terminating: true };

test('a rolling update: the terminating endpoint leaves as soon as it is marked, the new ready one serves', () => {
  assert.equal(addresses([slice('a', [['10.0.0.1', { ready: true }], ['10.0.0.2', terminatingServing], ['10.0.0.3', { ready: true, serving: true, terminating: false }]])]),
    ['10.0.0.1', '10.0.0.3']);
});

test('no endpoint ready: the terminating ones that still serve are used, across slices, never one that stopped serving', () => {
  const slices = [slice('a', [['10.0.0.2', terminatingServing], ['10.0.0.4', terminatingGone]]), slice('b', [['10.0.0.1', terminatingServing], ['10.0.0.3', { ready: false }]])];
  assert.equal(addresses(slices), ['10.0.0.1', '10.0.0.2']);
  assert.equal(addresses([slice('a', [['10.0.0.4', terminatingGone], ['10.0.0.3', { ready: false, serving: false }]])]), [], 'nothing serves: none (503)');
});

test('unset conditions: ready unset is ready; serving unset defers to ready; terminating unset is not terminating', () => {
  assert.equal(addresses([slice('a', [['10.0.0.1', undefined], ['10.0.0.2', {}]])]), ['10.0.0.1', '10.0.0.2']);
  assert.equal(addresses([slice('a', [['10.0.0.1', { ready: false, terminating: true }]])]), [], 'serving unset, ready false: not serving');
  assert.equal(addresses([slice('a', [['10.0.0.1', { ready: false, serving: true }]])]), [], 'serving but not terminating: a pod not yet ready');
});

test('publishNotReadyAddresses (ready true while terminating): used as ready', () => {
  assert.equal(addresses([slice('a', [['10.0.0.1', { ready: true, serving: true, terminating: true }], ['10.0.0.2', terminatingServing]])]), ['10.0.0.1']);
});

test('the address policy still judges the fallback: refused terminating addresses are named once', () => {
  const refused: string[] = [];
  const got = endpointsFromSlices(port, [slice('a', [['127.0.0.1', terminatingServing], ['10.0.0.1', terminatingServing]])], 'TCP', undefined, refused);
  assert.equal(got.map((e) => e.address), ['10.0.0.1']);
  assert.is(refused.length, 1);
  assert.match(refused[0]!, /EndpointSlice default\/a: address "127\.0\.0\.1"/);
});

test('--disable-svc-external-name: an ExternalName Service gives no endpoint, and says why', () => {
  const svc = { metadata: { namespace: 'shop', name: 'external' }, spec: { type: 'ExternalName', externalName: '192.0.2.7', ports: [{ port: 80 }] } } as unknown as Service;
  const served = resolveServiceEndpoints(svc, [], '80', false, STRICT_ADDRESS_POLICY);
  assert.equal(served.endpoints, [{ address: '192.0.2.7', port: '80' }]);
  const disabled = resolveServiceEndpoints(svc, [], '80', false, { ...STRICT_ADDRESS_POLICY, refuseExternalNameServices: true });
  assert.equal(disabled.endpoints, []);
  assert.equal(disabled.refused, ['Service shop/external: ExternalName Services are disabled (--disable-svc-external-name)']);
});

test.run();
