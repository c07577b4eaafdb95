// TCP/UDP services ConfigMaps tried as an attacker would: the ConfigMap is the operator's, but the
// Service an entry names is its namespace's, and what that Service says (an ExternalName, its
// EndpointSlices' addresses and ports) reaches nginx.conf's stream block, where no Lua judges it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ConfigMap, EndpointSlice, Service } from '../../../src/store/kube-types.js';
import { MAX_L4_SERVICES, parseL4Services } from '../../../src/model/core/l4.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { testStore } from '../../support/model-objects.js';

const cm = (data: Record<string, string>, ns = 'ingress'): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp-services', namespace: ns }, data });
const svc = (ns: string, name: string, spec: Partial<Service['spec']> = {}): Service => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { ports: [{ name: 'db', port: 5432, targetPort: 5432 }], ...spec },
});
const slice = (ns: string, name: string, address: string, port: number): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
  addressType: 'IPv4', endpoints: [{ addresses: [address], conditions: { ready: true } }], ports: [{ name: 'db', port, protocol: 'TCP' }],
});

function lookup(services: Service[], slices: EndpointSlice[]) {
  return {
    getService: (key: string) => services.find((s) => `${s.metadata.namespace}/${s.metadata.name}` === key),
    getEndpointSlices: (key: string) => slices.filter((s) => `${s.metadata.namespace}/${s.metadata.labels?.['kubernetes.io/service-name']}` === key),
  };
}

const RESERVED = new Set([80, 443, 442, 8181, 10246, 10247, 10254]);

test('an ExternalName Service whose name NGINX would resolve itself is refused; an address is judged and taken', () => {
  const { services, warnings } = parseL4Services('ingress/tcp-services', cm({ '5432': 'mallory/sneak:5432', '5433': 'mallory/byip:5432', '5434': 'mallory/meta:5432' }), 'TCP', RESERVED,
    lookup([
      svc('mallory', 'sneak', { type: 'ExternalName', externalName: 'vm' }),
      svc('mallory', 'byip', { type: 'ExternalName', externalName: '10.1.2.3' }),
      svc('mallory', 'meta', { type: 'ExternalName', externalName: '169.254.169.254' }),
    ], []));
  assert.equal(services.map((s) => [s.port, s.endpoints]), [[5432, []], [5433, [{ address: '10.1.2.3', port: '5432' }]], [5434, []]]);
  assert.ok(warnings.some((w) => w.field === 'data["5432"]' && /Service mallory\/sneak: externalName "vm" is a name; a TCP\/UDP service takes an address/.test(w.message)));
  assert.ok(warnings.some((w) => w.field === 'data["5434"]' && /169\.254\.169\.254/.test(w.message)), 'the metadata address is refused by the policy');
});

test('endpoints the policy refuses (the node, the controller\'s own ports) and ports NGINX refuses are left out by name', () => {
  const { services, warnings } = parseL4Services('ingress/tcp-services', cm({ '5432': 'mallory/db:5432', '6000': 'mallory/odd:5432' }), 'TCP', RESERVED,
    lookup([svc('mallory', 'db'), svc('mallory', 'odd')], [slice('mallory', 'db', '127.0.0.1', 10254), slice('mallory', 'odd', '10.0.0.9', 70000)]));
  assert.equal(services.map((s) => s.endpoints), [[], []]);
  assert.ok(warnings.some((w) => /address "127\.0\.0\.1" port 10254 refused/.test(w.message)));
  assert.ok(warnings.some((w) => /endpoint 10\.0\.0\.9 port "70000" is not a port \(1-65535\)/.test(w.message)));
});

test('keys and values NGINX would refuse, the controller\'s own ports and PROXY fields: each entry on its own', () => {
  const huge = 'x'.repeat(1 << 20);
  const data: Record<string, string> = {
    '0': 'shop/db:5432', '65536': 'shop/db:5432', '80a': 'shop/db:5432', [huge]: 'shop/db:5432',
    '80': 'shop/db:5432', '442': 'shop/db:5432', '10254': 'shop/db:5432',
    '7001': `shop/${huge}:5432`, '7002': 'shop/db:99999', '7003': 'shop/db:a-port-name-longer-than-15',
    '7004': 'shop/db:5432:proxy', '7005': 'shop/db:5432: PROXY', '7006': 'shop/db:5432:PROXY:PROXY:PROXY',
    '7007': 'shop/db:5432:PROXY:PROXY', '7008': 'shop/db:5432::PROXY', '7009': 'Shop/DB:5432',
  };
  const { services, warnings } = parseL4Services('ingress/tcp-services', cm(data), 'TCP', RESERVED, lookup([svc('shop', 'db')], [slice('shop', 'db', '10.0.0.5', 5432)]));
  assert.equal(services.map((s) => [s.port, s.proxyProtocol.decode, s.proxyProtocol.encode]), [[7007, true, true], [7008, false, true]]);
  for (const w of warnings) assert.ok(w.message.length < 400 && w.field.length < 120, `bounded message: ${w.field.slice(0, 40)}`);
  for (const port of ['80', '442', '10254']) assert.ok(warnings.some((w) => w.field === `data["${port}"]` && /reserved by the controller/.test(w.message)), port);
});

test('a huge map: past the first entries (by port) the rest is named and left out', () => {
  const data: Record<string, string> = {};
  for (let i = 0; i < MAX_L4_SERVICES + 5; i++) data[String(20000 + i)] = 'shop/db:5432';
  const { services, warnings } = parseL4Services('ingress/tcp-services', cm(data), 'TCP', RESERVED, lookup([svc('shop', 'db')], []));
  assert.is(services.length, MAX_L4_SERVICES);
  assert.is(services.at(-1)!.port, 20000 + MAX_L4_SERVICES - 1);
  assert.ok(warnings.some((w) => w.field === `data["${20000 + MAX_L4_SERVICES}"]` && /more than 1000 TCP services/.test(w.message)));
});

test('only the ConfigMap the flag names is read: a tenant\'s ConfigMap of the same name is not', () => {
  const store = testStore({ tcpServicesConfigmap: 'ingress/tcp-services' });
  store.put('Service', svc('mallory', 'db'));
  store.put('ConfigMap', cm({ '5432': 'mallory/db:5432' }, 'mallory'));
  const build = () => createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }).build(store);
  assert.equal(build().config.tcpEndpoints, []);
  store.put('ConfigMap', cm({ '5432': 'mallory/db:5432' }));
  assert.equal(build().config.tcpEndpoints.map((s) => s.port), [5432]);
});

test.run();
