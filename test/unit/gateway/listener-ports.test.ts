// Where each Gateway listener is served (src/model/gateway/listener-ports.ts) and which listener
// a route's hostname goes through (listener isolation, src/model/gateway/attachment.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { assignListenerPorts, attachParent, parseListenerPortMap, MAX_EXTRA_PORTS, type GatewayPortOptions } from '../../../src/model/gateway/index.js';
import type { Gateway, GatewayListener, HTTPRoute, ListenerSet } from '../../../src/store/kube-types.js';

const V1 = 'gateway.networking.k8s.io/v1';
function gateway(listeners: Array<Partial<GatewayListener>>, name = 'gw'): Gateway {
  return {
    apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: 'infra' },
    spec: { gatewayClassName: 'rx', listeners: listeners.map((l, i) => ({ name: `l${i}`, port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } }, ...l })) },
  };
}
const options = (o: Partial<GatewayPortOptions> = {}): GatewayPortOptions => ({ map: new Map(), reserved: new Map([[8080, '--http-port'], [10254, '--healthz-port']]), unprivileged: false, ...o });
const of = (gws: Gateway[], o?: GatewayPortOptions) => {
  const ports = assignListenerPorts(gws, o);
  return gws.flatMap((g) => (g.spec.listeners ?? []).map((l) => {
    const a = ports.of(`infra/${g.metadata.name}`, l);
    return `${g.metadata.name}/${l.name}: ${'local' in a ? a.local : a.problem}`;
  }));
};

test('a listener port is served on itself, or where --gateway-listener-ports maps it; 80 and 443 are the controller\'s ports', () => {
  const gw = gateway([{}, { port: 8090 }, { port: 9000 }, { port: 443, protocol: 'HTTPS' }]);
  assert.equal(of([gw], options({ map: new Map([[9000, 19000]]) })), ['gw/l0: 80', 'gw/l1: 8090', 'gw/l2: 19000', 'gw/l3: 443']);
  assert.equal(assignListenerPorts([gw], options({ map: new Map([[9000, 19000]]) })).extra, [{ port: 8090, local: 8090 }, { port: 9000, local: 19000 }]);
});

test('careless: the controller\'s own ports (HTTP or HTTPS), HTTP on 443, HTTPS on 80, a port mapped twice are PortUnavailable, named', () => {
  const lines = of([gateway([{ port: 8080 }, { port: 10254, protocol: 'HTTPS' }, { port: 443 }, { port: 80, protocol: 'HTTPS' }, { port: 8443, protocol: 'HTTPS' }, { port: 7000 }, { port: 7001 }])],
    options({ map: new Map([[7000, 17000], [7001, 17000]]) }));
  assert.equal(lines, [
    'gw/l0: port 8080 would be served on 8080, which the controller uses itself (--http-port)',
    'gw/l1: port 10254 would be served on 10254, which the controller uses itself (--healthz-port)',
    'gw/l2: port 443 serves TLS (--https-port): an HTTP listener cannot use it',
    'gw/l3: port 80 serves plain HTTP (--http-port): an HTTPS listener cannot use it',
    'gw/l4: 8443',
    'gw/l5: 17000',
    'gw/l6: port 7001 would be served on 17000, where listener port 7000 is served',
  ]);
  assert.equal(assignListenerPorts([gateway([{ port: 8443, protocol: 'HTTPS' }, { port: 9090 }])], options()).extra, [{ port: 8443, local: 8443, tls: true }, { port: 9090, local: 9090 }]);
});

test('attacker: a younger Gateway or ListenerSet asking for a port with the other protocol is refused; the oldest keeps it', () => {
  const old = { ...gateway([{ port: 9090 }, { port: 8443, protocol: 'HTTPS', hostname: 'a.test' }], 'old'), metadata: { name: 'old', namespace: 'infra', creationTimestamp: '2026-01-02T00:00:00Z' } };
  const young = { ...gateway([{ port: 9090, protocol: 'HTTPS' }, { port: 8443 }, { port: 8443, protocol: 'HTTPS', hostname: 'b.test' }], 'young'), metadata: { name: 'young', namespace: 'infra', creationTimestamp: '2026-03-01T00:00:00Z' } };
  assert.equal(of([old, young], options()), [
    'old/l0: 9090', 'old/l1: 8443',
    'young/l0: port 9090 is already served as plain HTTP for an older listener: an HTTPS listener cannot use it',
    'young/l1: port 8443 is already served over TLS (HTTPS) for an older listener: an HTTP listener cannot use it',
    'young/l2: 8443',
  ]);
  // A ListenerSet older than a Gateway claims first; its listeners go by `ListenerSet ns/name`.
  const set = {
    apiVersion: V1, kind: 'ListenerSet', metadata: { name: 'team', namespace: 'tenant', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { parentRef: { name: 'old', namespace: 'infra' }, listeners: [] },
  } as unknown as ListenerSet;
  const ports = assignListenerPorts([old, young], options(), [{ set, listeners: [{ name: 'ls', port: 9090, protocol: 'HTTPS' } as GatewayListener] }]);
  assert.equal(ports.of('ListenerSet tenant/team', { name: 'ls', port: 9090, protocol: 'HTTPS' } as GatewayListener), { local: 9090 });
  assert.match(JSON.stringify(ports.of('infra/old', old.spec.listeners![0]!)), /port 9090 is already served over TLS \(HTTPS\) for an older listener: an HTTP listener cannot use it/);
  assert.equal(ports.extra, [{ port: 8443, local: 8443, tls: true }, { port: 9090, local: 9090, tls: true }]);
});

test('local mode: a port below 1024 needs a mapping; listeners of one port share its server, over Gateways', () => {
  const o = options({ unprivileged: true, map: new Map([[81, 18081]]) });
  assert.equal(of([gateway([{ port: 82 }, { port: 81 }]), gateway([{ port: 81, hostname: 'b.test' }], 'other')], o), [
    'gw/l0: port 82 is below 1024, which local mode cannot bind: map it with --gateway-listener-ports 82=<port>',
    'gw/l1: 18081',
    'other/l0: 18081',
  ]);
});

test('attacker: listener ports past the bound (HTTP or HTTPS) are refused; the first Gateways keep theirs', () => {
  const many = gateway(Array.from({ length: MAX_EXTRA_PORTS + 2 }, (_, i) => ({ port: 20000 + i, protocol: i % 2 ? 'HTTPS' : 'HTTP' })));
  const lines = of([many], options());
  assert.is(lines.filter((l) => /at most 32 listener ports/.test(l)).length, 2);
  assert.is(assignListenerPorts([many], options()).extra.length, MAX_EXTRA_PORTS);
});

test('--gateway-listener-ports: bad items are named', () => {
  assert.equal(parseListenerPortMap(['8080=18080', '']), new Map([[8080, 18080]]));
  for (const bad of ['8080', '8080=0', '70000=1', 'a=b', '8080=1\r\n', '80=8081', '443=8443']) assert.ok('error' in parseListenerPortMap([bad]), bad);
  assert.ok('error' in parseListenerPortMap(['8080=1', '8080=2']));
});

test('listener isolation: a route\'s hostname goes through the most specific listener of the port that takes it whole', () => {
  const gw = gateway([{ name: 'empty' }, { name: 'wild', hostname: '*.example.com' }, { name: 'foo', hostname: '*.foo.example.com' }, { name: 'abc', hostname: 'abc.foo.example.com' }, { name: 'other-port', port: 8080 }]);
  const gateways = new Map([['infra/gw', gw]]);
  const hosts = (section: string) => {
    const route: HTTPRoute = { apiVersion: V1, kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'infra' }, spec: { hostnames: ['bar.com', '*.example.com', '*.foo.example.com', 'abc.foo.example.com', 'x.example.com'], rules: [] } };
    const r = attachParent(route, { name: 'gw', sectionName: section }, gateways, () => undefined);
    return 'attached' in r ? r.attached.flatMap((a) => a.hostnames) : r.refused;
  };
  assert.equal(hosts('empty'), ['bar.com'], 'x.example.com goes to *.example.com');
  assert.equal(hosts('wild'), ['*.example.com', 'x.example.com']);
  assert.equal(hosts('foo'), ['*.foo.example.com']);
  assert.equal(hosts('abc'), ['abc.foo.example.com']);
  // Another port's listeners isolate nothing here.
  assert.equal(hosts('other-port'), ['bar.com', '*.example.com', '*.foo.example.com', 'abc.foo.example.com', 'x.example.com']);
});

test.run();
