// A Gateway's spec.addresses against the controller's published addresses
// (src/model/gateway/addresses.ts): supported types, usable values, empty values assigned, and
// the Gateway conditions they give (src/model/gateway/status.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bindAddresses, unsupportedAddress, withAddressConditions } from '../../../src/model/gateway/addresses.js';
import type { Gateway, GatewaySpecAddress } from '../../../src/store/kube-types.js';
import { gatewayAPIStatus } from '../../../src/model/gateway/status.js';
import type { GatewayTranslation } from '../../../src/model/gateway/translate.js';
import { assignListenerPorts } from '../../../src/model/gateway/listener-ports.js';

const gateway = (addresses?: GatewaySpecAddress[]): Gateway => ({
  apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' },
  spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], ...(addresses ? { addresses } : {}) },
});
const PUBLISHED = [{ ip: '192.0.2.10' }, { ip: '2001:db8::1' }, { hostname: 'lb.example.test' }];

test('types: IPAddress (the default) and Hostname are supported; NamedAddress, domain-prefixed types and more than 16 are not', () => {
  assert.is(unsupportedAddress(gateway()), null);
  assert.is(unsupportedAddress(gateway([{ value: '192.0.2.10' }, { type: 'Hostname', value: 'lb.example.test' }, { type: 'IPAddress' }])), null);
  assert.is(unsupportedAddress(gateway([{ value: '192.0.2.10' }, { type: 'test/fake-invalid-type', value: 'fake address teehee!' }])),
    'spec.addresses[1]: address type "test/fake-invalid-type" is not supported (IPAddress or Hostname)');
  assert.match(unsupportedAddress(gateway([{ type: 'NamedAddress', value: 'pool-a' }]))!, /spec\.addresses\[0\]: address type "NamedAddress"/);
  assert.match(unsupportedAddress(gateway(Array.from({ length: 17 }, (_, i) => ({ value: `192.0.2.${i}` }))))!, /17 addresses \(at most 16\)/);
});

test('no addresses requested: bound to every published address', () => {
  assert.equal(bindAddresses(gateway(), PUBLISHED), {
    addresses: [{ type: 'IPAddress', value: '192.0.2.10' }, { type: 'IPAddress', value: '2001:db8::1' }, { type: 'Hostname', value: 'lb.example.test' }], problem: null,
  });
  assert.equal(bindAddresses(gateway(), []), { addresses: [], problem: null });
});

test('a requested value is usable when published (IPs compared as addresses, hostnames caseless); the status lists only those', () => {
  assert.equal(bindAddresses(gateway([{ value: '2001:db8:0::1' }, { type: 'Hostname', value: 'LB.example.test' }]), PUBLISHED), {
    addresses: [{ type: 'IPAddress', value: '2001:db8::1' }, { type: 'Hostname', value: 'lb.example.test' }], problem: null,
  });
  const r = bindAddresses(gateway([{ value: '198.51.100.7' }, { value: '192.0.2.10' }]), PUBLISHED);
  assert.equal(r.addresses, [{ type: 'IPAddress', value: '192.0.2.10' }]);
  assert.is(r.problem?.reason, 'AddressNotUsable');
  assert.match(r.problem!.message, /spec\.addresses\[0\] IPAddress "198\.51\.100\.7" is not an address this controller is published on \(published: 192\.0\.2\.10, 2001:db8::1, lb\.example\.test/);
});

test('attacker: values of the wrong type, loopback, CR/LF, huge: not usable, never listed, the message quotes and shortens them', () => {
  const hostile = ['lb.example.test', '127.0.0.1', '192.0.2.10\r\nX-Injected: 1', 'x'.repeat(5000), '192.0.2.10/32', '::ffff:192.0.2.10'];
  for (const value of hostile) {
    const r = bindAddresses(gateway([{ value }]), PUBLISHED);
    assert.equal(r.addresses, [], value.slice(0, 20));
    assert.is(r.problem?.reason, 'AddressNotUsable', value.slice(0, 20));
    assert.not.ok(/[\r\n]/.test(r.problem!.message), 'no raw CR/LF in the message');
    assert.ok(r.problem!.message.length < 300, 'shortened');
  }
  assert.is(bindAddresses(gateway([{ type: 'Hostname', value: '192.0.2.10' }]), PUBLISHED).problem?.reason, 'AddressNotUsable', 'an IP asked for as a Hostname');
});

test('an empty value is assigned a published address of its type not bound yet; none left: AddressNotAssigned', () => {
  assert.equal(bindAddresses(gateway([{ type: 'IPAddress' }]), PUBLISHED), { addresses: [{ type: 'IPAddress', value: '192.0.2.10' }], problem: null });
  assert.equal(bindAddresses(gateway([{ value: '192.0.2.10' }, { type: 'IPAddress' }, { type: 'Hostname', value: '' }]), PUBLISHED).addresses,
    [{ type: 'IPAddress', value: '192.0.2.10' }, { type: 'IPAddress', value: '2001:db8::1' }, { type: 'Hostname', value: 'lb.example.test' }]);
  const none = bindAddresses(gateway([{ type: 'IPAddress' }]), []);
  assert.equal(none.addresses, []);
  assert.equal(none.problem, { reason: 'AddressNotAssigned', message: 'spec.addresses[0]: no IPAddress is left to assign (none is published yet)' });
  assert.is(bindAddresses(gateway([{ type: 'Hostname' }]), [{ ip: '192.0.2.10' }]).problem?.reason, 'AddressNotAssigned');
});

test('conditions: an unsupported type: Accepted=False/UnsupportedAddress; an unusable value turns Programmed False, and only a True one', () => {
  const status = (gw: Gateway) => gatewayAPIStatus({ classes: [], gateways: [gw], httpRoutes: [], referenceGrants: [], backendTLSPolicies: [], listenerSets: [] }, { routes: [], listenerSets: new Map(), ports: assignListenerPorts([gw], undefined) } as unknown as GatewayTranslation, 'ingress-rx.io/gateway', () => true).gateways.get('infra/gw')!.conditions;
  const brief = (cs: ReadonlyArray<{ type: string; status: string; reason: string }>) => cs.map((c) => `${c.type}=${c.status}/${c.reason}`);
  assert.equal(brief(status(gateway([{ type: 'test/fake-invalid-type', value: 'x' }]))), ['Accepted=False/UnsupportedAddress', 'Programmed=False/Invalid']);
  const ok = status(gateway([{ value: '198.51.100.7' }]));
  assert.equal(brief(ok), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  const bound = bindAddresses(gateway([{ value: '198.51.100.7' }]), PUBLISHED);
  assert.equal(brief(withAddressConditions(ok, bound)), ['Accepted=True/Accepted', 'Programmed=False/AddressNotUsable']);
  const invalid = status(gateway([{ type: 'test/fake-invalid-type', value: 'x' }]));
  assert.equal(withAddressConditions(invalid, bound), invalid, 'a Programmed=False/Invalid keeps its reason');
});

test.run();
