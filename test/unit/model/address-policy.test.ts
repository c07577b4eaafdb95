// The upstream address policy: every spelling of a node-local address is recognised before it
// is judged, ordinary addresses pass in their canonical spelling, and the opt-in classes and the
// controller's own ports behave as documented.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  STRICT_ADDRESS_POLICY, allowedEndpointAddress, isOwnAddress, judgeEndpointAddress, judgeExternalName, ownAddressSet, parseAddress, parseAllowedClasses,
  type AddressPolicy,
} from '../../../src/model/checks/address-policy.js';
import { METADATA_AND_EMBEDDED, NODE_LOCAL_SPELLINGS as HOSTILE_SPELLINGS } from '../../support/hostile.js';

test('every spelling of a node-local address is read as the address it is', () => {
  for (const [spelling, canonical, cls] of HOSTILE_SPELLINGS) {
    const p = parseAddress(spelling);
    assert.ok(p, `${spelling} is an address`);
    assert.is(p!.canonical, canonical, spelling);
    assert.is(p!.class, cls, spelling);
    const v = judgeEndpointAddress(STRICT_ADDRESS_POLICY, spelling, '80');
    assert.is(v.ok, false, `${spelling} refused`);
    assert.match((v as { reason: string }).reason, cls);
    assert.is(judgeExternalName(STRICT_ADDRESS_POLICY, spelling, '80').ok, false, `ExternalName ${spelling} refused`);
  }
});

test('cloud metadata services and IPv4 addresses inside NAT64, 6to4, Teredo and compatible forms are judged as what they reach', () => {
  for (const [spelling, canonical, cls] of METADATA_AND_EMBEDDED) {
    const p = parseAddress(spelling);
    assert.ok(p, `${spelling} is an address`);
    assert.is(p!.canonical, canonical, spelling);
    assert.is(p!.class, cls, `${spelling}: class`);
    const v = judgeEndpointAddress(STRICT_ADDRESS_POLICY, spelling, '80');
    assert.is(v.ok, cls === null, `${spelling}: ${JSON.stringify(v)}`);
    assert.is(judgeExternalName(STRICT_ADDRESS_POLICY, spelling, '80').ok, cls === null, `ExternalName ${spelling}`);
  }
});

test('the endpoints\' fast judgement answers as judgeEndpointAddress for every spelling, class, policy and own port', () => {
  const policies: AddressPolicy[] = [
    STRICT_ADDRESS_POLICY,
    { allow: new Set(['loopback', 'unspecified']), ownPorts: new Set([80, 10246]) },
    { allow: new Set(['link-local']), ownPorts: new Set() },
    { allow: new Set(['loopback', 'unspecified', 'link-local', 'metadata']), ownPorts: new Set([8181]) },
    { allow: new Set(), ownPorts: new Set([80, 8181]), ownAddresses: ownAddressSet(['10.0.0.1', '2001:db8::1']) as Set<string> },
  ];
  const spellings = [
    ...HOSTILE_SPELLINGS.map(([s]) => s), ...METADATA_AND_EMBEDDED.map(([s]) => s),
    '10.0.0.1', '192.168.1.20', '255.255.255.255', '0.0.0.0', '127.0.0.1', '127.255.255.254', '169.254.0.1', '169.253.0.1',
    '169.254.169.254', '100.100.100.200', '1.2.3', '1.2.3.4.5', '01.2.3.4', '1.2.3.256', '1..3.4', '.1.2.3', '1.2.3.', '', 'a.b.c.d', '2001:db8::1',
  ];
  for (const policy of policies) {
    for (const spelling of spellings) {
      for (const port of ['80', '8181', '10246', '443']) {
        const v = judgeEndpointAddress(policy, spelling, port);
        assert.is(allowedEndpointAddress(policy, spelling, port), v.ok ? v.address : null, `${spelling}:${port} under ${[...policy.allow].join(',') || 'strict'}`);
      }
    }
  }
});

test('metadata services stay refused where link-local is allowed; allowing metadata opens them', () => {
  const linkLocal: AddressPolicy = { allow: new Set(['link-local']), ownPorts: new Set() };
  assert.equal(judgeEndpointAddress(linkLocal, '169.254.20.10', '53'), { ok: true, address: '169.254.20.10' }, 'a node-local DNS cache');
  for (const a of ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '64:ff9b::a9fe:a9fe']) {
    const v = judgeEndpointAddress(linkLocal, a, '80');
    assert.is(v.ok, false, a);
    assert.match((v as { reason: string }).reason, /a metadata address \(allowed only with --allow-upstream-addresses=metadata\)/);
  }
  const metadata: AddressPolicy = { allow: new Set(['metadata']), ownPorts: new Set() };
  assert.equal(judgeEndpointAddress(metadata, '100.100.100.200', '80'), { ok: true, address: '100.100.100.200' });
});

test('ordinary addresses pass in their canonical spelling', () => {
  const cases: Array<[string, string]> = [
    ['10.0.0.1', '10.0.0.1'], ['192.168.1.20', '192.168.1.20'], ['010.0.0.1', '8.0.0.1'], ['1.2.3.4.', '1.2.3.4'],
    ['2001:db8::1', '2001:db8::1'], ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'], ['[2001:db8::10]', '2001:db8::10'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], ['fec0::1', 'fec0::1'], ['1::', '1::'], ['::2:3:4:5:6:7:8', '0:2:3:4:5:6:7:8'],
    ['64:ff9b::1.2.3.4', '64:ff9b::102:304'], ['2002:102:304::1', '2002:102:304::1'],
  ];
  for (const [spelling, canonical] of cases) {
    const p = parseAddress(spelling);
    assert.ok(p, spelling);
    assert.is(p!.canonical, canonical, spelling);
    assert.is(p!.class, null, spelling);
    assert.equal(judgeEndpointAddress(STRICT_ADDRESS_POLICY, spelling, '80'), { ok: true, address: canonical });
  }
});

test('strict dotted decimal (the fast path) reads as every other spelling is read', () => {
  // `a.b.c.d.` takes the general path (a resolver's trailing dot); `a.b.c.d` the fast one when it is strict.
  const parts = ['0', '00', '07', '1', '01', '9', '10', '99', '100', '199', '255', '256', '300', '0x1f', '1a', ''];
  let checked = 0;
  for (const a of parts) for (const b of parts) for (const c of parts) {
    for (const tail of [[], ['4'], parts]) {
      for (const d of tail.length === 0 ? [null] : tail) {
        const s = [a, b, c, ...(d === null ? [] : [d])].join('.');
        if (s.endsWith('.')) continue; // its own trailing dot
        assert.equal(parseAddress(s), parseAddress(`${s}.`), s);
        checked++;
      }
    }
  }
  assert.ok(checked > parts.length ** 4);
  assert.equal(parseAddress('10.1.2.3'), { family: 4, canonical: '10.1.2.3', class: null });
  assert.equal(parseAddress('169.254.169.254'), { family: 4, canonical: '169.254.169.254', class: 'metadata' });
});

test('what is not an address: refused as an endpoint, left to DNS as an ExternalName', () => {
  for (const s of ['256.0.0.1', '1.2.3.4.5', '08.0.0.1', '0x', '1..2', '4294967296', '0x100000000', '1.2.3.256', '1::2::3', ':::1',
    '12345::', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8', '::ffff:127.0.0.01', '::1%', '::1%a b', 'example.com', '', ' ', '127.0.0.1 x']) {
    assert.is(parseAddress(s), null, JSON.stringify(s));
    assert.equal(judgeEndpointAddress(STRICT_ADDRESS_POLICY, s, '80'), { ok: false, reason: 'not an IP address' }, s);
  }
  assert.equal(judgeExternalName(STRICT_ADDRESS_POLICY, 'api.example.com', '443'), { ok: true, address: 'api.example.com' });
});

test('localhost names are loopback; with loopback allowed they become 127.0.0.1', () => {
  for (const n of ['localhost', 'localhost.', 'LOCALHOST', 'db.localhost', 'x.LocalHost.']) {
    const v = judgeExternalName(STRICT_ADDRESS_POLICY, n, '80');
    assert.is(v.ok, false, n);
    assert.match((v as { reason: string }).reason, /loopback/);
  }
  const local: AddressPolicy = { allow: new Set(['loopback']), ownPorts: new Set([8080]) };
  assert.equal(judgeExternalName(local, 'localhost.', '9000'), { ok: true, address: '127.0.0.1' });
  assert.is(judgeExternalName(STRICT_ADDRESS_POLICY, 'notlocalhost', '80').ok, true);
});

test('allowed classes pass, except on the controller\'s own ports', () => {
  const local: AddressPolicy = { allow: new Set(['loopback']), ownPorts: new Set([8080, 10254]) };
  assert.equal(judgeEndpointAddress(local, '127.0.0.1', '9000'), { ok: true, address: '127.0.0.1' });
  assert.equal(judgeEndpointAddress(local, '0177.0.0.1', '9000'), { ok: true, address: '127.0.0.1' });
  for (const [a, port] of [['127.0.0.1', '8080'], ['2130706433', '10254'], ['::ffff:7f00:1', '8080'], ['[::1]', '8080']]) {
    const v = judgeEndpointAddress(local, a!, port!);
    assert.is(v.ok, false, `${a}:${port}`);
    assert.match((v as { reason: string }).reason, /controller's own listeners/);
  }
  // Unspecified is its own class: allowing loopback does not allow it, and link-local stays refused.
  assert.is(judgeEndpointAddress(local, '0.0.0.0', '9000').ok, false);
  assert.is(judgeEndpointAddress(local, '169.254.169.254', '80').ok, false);
  const linkLocal: AddressPolicy = { allow: new Set(['link-local']), ownPorts: new Set([80]) };
  assert.equal(judgeEndpointAddress(linkLocal, '169.254.20.10', '80'), { ok: true, address: '169.254.20.10' }, 'own ports guard only this node');
});

test('the controller pod\'s own addresses: its own ports refused there in every spelling, its other ports and other pods allowed', () => {
  const own = ownAddressSet(['10.1.2.3', ' 2001:DB8:0:0::7 ', 'fe80::1%eth0']) as Set<string>;
  assert.equal([...own].sort(), ['10.1.2.3', '2001:db8::7', 'fe80::1']);
  const pod: AddressPolicy = { allow: new Set(), ownPorts: new Set([80, 10246, 10254, 8443]), ownAddresses: own };
  for (const [spelling, port] of [
    ['10.1.2.3', '10254'], ['012.1.2.3', '10246'], ['10.1.515', '8443'], ['167838211', '10254'], ['::ffff:10.1.2.3', '10254'],
    ['::ffff:a01:203', '80'], ['64:ff9b::a01:203', '10254'], ['2002:a01:203::', '10254'], ['[2001:db8::7]', '10254'], ['2001:db8:0:0:0:0:0:7', '8443'],
  ] as const) {
    for (const verdict of [judgeEndpointAddress(pod, spelling, port), judgeExternalName(pod, spelling, port)]) {
      assert.is(verdict.ok, false, `${spelling}:${port} reaches the controller`);
      assert.match((verdict as { reason: string }).reason, new RegExp(`port ${port} of .*an address of the controller's own pod`));
    }
    assert.is(allowedEndpointAddress(pod, spelling, port), null, `${spelling}:${port} (fast path)`);
    assert.ok(isOwnAddress(pod, spelling), spelling);
  }
  assert.equal(judgeEndpointAddress(pod, '10.1.2.3', '9000'), { ok: true, address: '10.1.2.3' }, 'a port the controller does not hold');
  assert.equal(judgeEndpointAddress(pod, '10.1.2.4', '10254'), { ok: true, address: '10.1.2.4' }, 'another pod');
  assert.is(allowedEndpointAddress(pod, '10.1.2.4', '10254'), '10.1.2.4');
  assert.is(isOwnAddress(pod, 'own.example'), false, 'a name is judged by what Lua resolves it to');
  assert.is(judgeEndpointAddress({ ...pod, ownAddresses: undefined }, '10.1.2.3', '10254').ok, true, 'without own addresses the policy cannot tell');
  assert.match((ownAddressSet(['10.0.0.1', 'pod.local']) as { error: string }).error, /"pod\.local" is not an IP address/);
});

test('--allow-upstream-addresses is parsed strictly', () => {
  assert.equal([...(parseAllowedClasses('loopback, link-local') as Set<string>)], ['loopback', 'link-local']);
  assert.equal([...(parseAllowedClasses('metadata') as Set<string>)], ['metadata']);
  assert.equal([...(parseAllowedClasses('') as Set<string>)], []);
  assert.match((parseAllowedClasses('loopback,private') as { error: string }).error, /"private" is not an address class/);
});

test.run();
