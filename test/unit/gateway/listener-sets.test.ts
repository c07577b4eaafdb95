// ListenerSets in the model (src/model/gateway/listener-sets.ts): which Gateway takes which set,
// the listeners' precedence and conflicts, and the edges the end-to-end ports do not reach
// (creation time before names, wildcards, sizes, another controller's Gateway, a refused parent).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { listenerSetsOf, MAX_SET_LISTENERS, shadowedHosts } from '../../../src/model/gateway/listener-sets.js';
import type { Gateway, GatewayListener, ListenerSet, Namespace } from '../../../src/store/kube-types.js';
import type { GatewayResources } from '../../../src/store/types.js';

const V1 = 'gateway.networking.k8s.io/v1';
const http = (name: string, hostname?: string, extra: Partial<GatewayListener> = {}): GatewayListener => ({ name, port: 80, protocol: 'HTTP', ...(hostname ? { hostname } : {}), ...extra });

function gateway(name: string, listeners: GatewayListener[], from?: string, extra: Partial<Gateway['spec']> = {}): Gateway {
  return {
    apiVersion: V1, kind: 'Gateway', metadata: { name, namespace: 'infra' },
    spec: { gatewayClassName: 'rx', listeners, ...(from ? { allowedListeners: { namespaces: { from, selector: { matchLabels: { tenant: 'yes' } } } } } : {}), ...extra },
  };
}
const set = (ns: string, name: string, listeners: GatewayListener[], gw = 'gw', parent: Partial<ListenerSet['spec']['parentRef']> = {}): ListenerSet => ({
  apiVersion: V1, kind: 'ListenerSet', metadata: { name, namespace: ns }, spec: { parentRef: { name: gw, namespace: 'infra', ...parent }, listeners },
});
const resources = (gateways: Gateway[], listenerSets: ListenerSet[]): GatewayResources => ({ classes: [], gateways, httpRoutes: [], referenceGrants: [], backendTLSPolicies: [], listenerSets });
const namespaces: Record<string, Namespace> = { tenant: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant', labels: { tenant: 'yes' } } } };

function outcomes(gateways: Gateway[], sets: ListenerSet[]) {
  const warnings: string[] = [];
  const out = listenerSetsOf(resources(gateways, sets), (n) => namespaces[n], (object, field, message) => warnings.push(`${object} ${field}: ${message}`));
  const summary = Object.fromEntries([...out].map(([k, o]) => [k, o.refused?.reason ?? o.listeners.map((l) => `${l.listener.name}:${l.conflict?.reason ?? 'ok'}`).join(',')]));
  return { out, summary, warnings };
}

test('allowedListeners: None by default and explicit refuse; Same, Selector and All take what they say', () => {
  const sets = (gw: string) => [set('infra', `${gw}-same`, [http('a', 'a.test')], gw), set('tenant', `${gw}-tenant`, [http('a', 'b.test')], gw), set('other', `${gw}-other`, [http('a', 'c.test')], gw)];
  const { summary } = outcomes(
    [gateway('none', [http('gw', 'gw.test')]), gateway('none2', [http('gw', 'gw.test')], 'None'), gateway('same', [http('gw', 'gw.test')], 'Same'), gateway('sel', [http('gw', 'gw.test')], 'Selector'), gateway('all', [http('gw', 'gw.test')], 'All'), gateway('odd', [http('gw', 'gw.test')], 'Sometimes')],
    ['none', 'none2', 'same', 'sel', 'all', 'odd'].flatMap(sets),
  );
  assert.equal(summary, {
    'infra/none-same': 'NotAllowed', 'tenant/none-tenant': 'NotAllowed', 'other/none-other': 'NotAllowed',
    'infra/none2-same': 'NotAllowed', 'tenant/none2-tenant': 'NotAllowed', 'other/none2-other': 'NotAllowed',
    'infra/same-same': 'a:ok', 'tenant/same-tenant': 'NotAllowed', 'other/same-other': 'NotAllowed',
    'infra/sel-same': 'NotAllowed', 'tenant/sel-tenant': 'a:ok', 'other/sel-other': 'NotAllowed',
    'infra/all-same': 'a:ok', 'tenant/all-tenant': 'a:ok', 'other/all-other': 'a:ok',
    // A value the CRD refuses admits nothing.
    'infra/odd-same': 'NotAllowed', 'tenant/odd-tenant': 'NotAllowed', 'other/odd-other': 'NotAllowed',
  });
});

test('a set whose parent is not one of our Gateways, or not a Gateway, is not ours; a Gateway with parameters is ParentNotAccepted', () => {
  const { summary } = outcomes(
    [gateway('gw', [http('gw', 'gw.test')], 'All'), gateway('params', [http('gw', 'gw.test')], 'All', { infrastructure: { parametersRef: { group: 'x', kind: 'Y', name: 'z' } } })],
    [set('infra', 'elsewhere', [http('a', 'a.test')], 'not-ours'), set('infra', 'wrong-kind', [http('a', 'a.test')], 'gw', { kind: 'Service' }), set('infra', 'params-set', [http('a', 'a.test')], 'params')],
  );
  assert.equal(summary, { 'infra/params-set': 'ParentNotAccepted' });
});

test('precedence: the Gateway\'s listeners, then older sets, then namespace/name; hostnames compare caseless, a wildcard is its own hostname', () => {
  const older = { ...set('z-ns', 'older', [http('x', 'Shared.Test'), http('w', '*.wild.test')]), metadata: { name: 'older', namespace: 'z-ns', creationTimestamp: '2026-01-01T00:00:00Z' } };
  const newer = { ...set('a-ns', 'newer', [http('x', 'shared.test'), http('w', 'a.wild.test'), http('none')]), metadata: { name: 'newer', namespace: 'a-ns', creationTimestamp: '2026-01-02T00:00:00Z' } };
  // The store hands sets oldest first (sortedObjects); the model keeps that order.
  const { summary } = outcomes([gateway('gw', [http('gw', 'gw.test'), http('any')], 'All')], [older, newer]);
  assert.equal(summary, { 'z-ns/older': 'x:ok,w:ok', 'a-ns/newer': 'x:HostnameConflict,w:ok,none:HostnameConflict' });
});

test('protocols: another protocol on a taken port conflicts, another port does not', () => {
  const { summary } = outcomes([gateway('gw', [http('gw', 'gw.test')], 'All')], [
    set('infra', 's', [{ name: 'tcp', port: 80, protocol: 'TCP' }, { name: 'tls', port: 443, protocol: 'HTTPS', hostname: 'gw.test' }, { name: 'tls-2', port: 443, protocol: 'TLS' }]),
  ]);
  assert.equal(summary, { 'infra/s': 'tcp:ProtocolConflict,tls:ok,tls-2:ProtocolConflict' });
});

test('sizes: listeners past the CRD\'s 64 are TooManyListeners; a repeated name is set aside with a warning', () => {
  const many = Array.from({ length: MAX_SET_LISTENERS + 2 }, (_, i) => http(`l${i}`, `h${i}.test`));
  const { out, warnings } = outcomes([gateway('gw', [http('gw', 'gw.test')], 'All')], [set('infra', 'many', many), set('infra', 'dup', [http('a', 'dup-1.test'), http('a', 'dup-2.test')])]);
  const reasons = out.get('infra/many')!.listeners.map((l) => l.conflict?.reason ?? 'ok');
  assert.equal([reasons.filter((r) => r === 'ok').length, reasons.slice(MAX_SET_LISTENERS)], [MAX_SET_LISTENERS, ['TooManyListeners', 'TooManyListeners']]);
  assert.equal(out.get('infra/dup')!.listeners.map((l) => l.listener.hostname), ['dup-1.test']);
  assert.equal(warnings, ['ListenerSet infra/dup spec.listeners[1].name: listener name "a" repeats an earlier one; set aside']);
});

test('attacker: a refused set claims nothing, so it never pushes a later allowed set\'s listener into conflict', () => {
  const { summary } = outcomes([gateway('gw', [http('gw', 'gw.test')], 'Same')], [set('evil', 'first', [http('x', 'shared.test')]), set('infra', 'second', [http('x', 'shared.test')])]);
  assert.equal(summary, { 'evil/first': 'NotAllowed', 'infra/second': 'x:ok' });
});

test('shadowedHosts: the most specific listener of another owner on the port keeps a host; the Gateway\'s own listeners are not compared', () => {
  const gw = gateway('gw', [http('exact', 'a.test'), http('wild', '*.b.test'), http('any')], 'All');
  const { out } = outcomes([gw], [set('t', 's', [http('wild', '*.test'), http('none'), http('narrow', '*.c.b.test'), http('tls', 'z.test', { port: 443, protocol: 'HTTPS' })])]);
  const shadowed = shadowedHosts([gw], out);
  const check = (key: string, host: string) => shadowed(key, host);
  assert.equal([
    check('ListenerSet t/s/wild', 'a.test'), check('ListenerSet t/s/wild', 'x.test'), check('ListenerSet t/s/wild', 'x.b.test'),
    check('ListenerSet t/s/narrow', 'x.c.b.test'), check('infra/gw/wild', 'x.c.b.test'), check('infra/gw/any', 'a.test'), check('infra/gw/any', 'q.test'),
    check('ListenerSet t/s/tls', 'z.test'),
  // The Gateway's hostname-less listener loses even a.test to the wider wildcard of the set (the spec: the more specific listener wins).
  ], [true, false, true, false, true, true, true, false]);
});

test.run();
