// HTTPRoute header, query parameter and method matches in the model: each becomes a location
// with conditions (`when`), in the route table in the Gateway API's precedence order for the Lua
// router (lua/route_match.lua); a hostile or broken value is named and only its match set aside.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { routesPayload } from '../../../src/model/core/routes-payload.js';
import type { HTTPRouteMatch, HTTPRouteRule } from '../../../src/store/kube-types.js';
import { PREFIX, service, slice, testStore } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const test = suite('gateway api: header, query and method matches');

function build(routes: Array<{ name: string; ts?: string; rules: HTTPRouteRule[] }>, dynamicRoutes = true) {
  const store = testStore();
  store.put('GatewayClass', { apiVersion: V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } } as never);
  store.put('Gateway', {
    apiVersion: V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'team-a' },
    spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  } as never);
  for (const svc of ['a', 'b', 'c', 'd']) {
    store.put('Service', service(svc, 'team-a'));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, ['10.0.1.1'], 'team-a'));
  }
  for (const r of routes) {
    store.put('HTTPRoute', {
      apiVersion: V1, kind: 'HTTPRoute', metadata: { name: r.name, namespace: 'team-a', creationTimestamp: r.ts ?? '2026-01-02T00:00:00Z' },
      spec: { parentRefs: [{ name: 'gw' }], hostnames: ['m.test'], rules: r.rules },
    } as never);
  }
  const out = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, dynamicRoutes }).build(store);
  const entries = routesPayload(out.config).hosts['m.test'] ?? [];
  return {
    warnings: out.warnings.filter((w) => w.object.startsWith('HTTPRoute')).map((w) => `${w.object} ${w.field}: ${w.message}`),
    // The route table as the router reads it: match, pattern, the rule's Service, its conditions.
    table: entries.map((e) => `${e.match === 'exact' ? '= ' : ''}${e.pattern} → ${e.service || e.backend}${e.when ? ` ${JSON.stringify(e.when)}` : ''}`),
    static: out.config.servers.find((s) => s.hostname === 'm.test')?.staticBecause ?? null,
  };
}

const rule = (to: string, ...matches: HTTPRouteMatch[]): HTTPRouteRule => ({ ...(matches.length ? { matches } : {}), backendRefs: [{ name: to, port: 80 }] });
const prefix = (value: string) => ({ type: 'PathPrefix' as const, value });

test('each kind becomes a condition: header names lower case, the first of equal names kept; ORed matches are locations of their own', () => {
  const { table, warnings } = build([{ name: 'r', rules: [
    rule('a', { path: prefix('/p'), headers: [{ name: 'X-Env', value: 'canary' }, { name: 'x-env', value: 'ignored' }, { type: 'RegularExpression', name: 'X-V', value: '^v[0-9]+$' }] }),
    rule('b', { queryParams: [{ name: 'Debug', value: '1' }], method: 'POST' }, { method: 'GET' }),
  ] }]);
  assert.equal(warnings, []);
  const h = '{"method":"","headers":[{"name":"x-env","type":"Exact","value":"canary"},{"name":"x-v","type":"RegularExpression","value":"^v[0-9]+$"}],"query":[]}';
  assert.equal(table, [
    `/p/ → a ${h}`,
    `= /p → a ${h}`,
    '/ → b {"method":"POST","headers":[],"query":[{"name":"Debug","type":"Exact","value":"1"}]}',
    '/ → b {"method":"GET","headers":[],"query":[]}',
    '/ → upstream-default-backend',
  ]);
});

test('precedence within one path: a method first, then more headers, then more query parameters, then the older route; the match without conditions last', () => {
  const { table } = build([
    { name: 'young', ts: '2026-03-01T00:00:00Z', rules: [rule('d', { path: prefix('/p'), headers: [{ name: 'z', value: '1' }] })] },
    { name: 'old', ts: '2026-01-01T00:00:00Z', rules: [
      rule('a', { path: prefix('/p') }),
      rule('b', { path: prefix('/p'), queryParams: [{ name: 'q', value: '1' }] }),
      rule('c', { path: prefix('/p'), headers: [{ name: 'a', value: '1' }, { name: 'b', value: '2' }] }),
      rule('c', { path: prefix('/p'), headers: [{ name: 'a', value: '1' }] }),
      rule('b', { path: prefix('/p'), method: 'PUT' }),
    ] },
  ]);
  const services = (match: string) => table.filter((t) => t.startsWith(match)).map((t) => t.split(' ')[t.startsWith('=') ? 3 : 2]);
  // (b PUT) (c two headers) (c one header, older route) (d one header, younger) (b query) (a none)
  assert.equal(services('/p/ '), ['b', 'c', 'c', 'd', 'b', 'a']);
  assert.equal(services('= /p '), ['b', 'c', 'c', 'd', 'b', 'a']);
});

test('an Exact path keeps precedence over a PathPrefix of the same value, with or without conditions', () => {
  const { table } = build([{ name: 'r', rules: [
    rule('a', { path: prefix('/p'), method: 'GET' }),
    rule('b', { path: { type: 'Exact' as const, value: '/p' }, headers: [{ name: 'x', value: '1' }] }),
  ] }]);
  assert.equal(table.filter((t) => t.startsWith('= /p ')).map((t) => t.split(' ')[3]), ['b', 'a'], 'the Exact rule, then the PathPrefix rule\'s exact twin');
  const plain = build([{ name: 'r', rules: [rule('a', { path: prefix('/p'), method: 'GET' }), rule('b', { path: { type: 'Exact' as const, value: '/p' } })] }]).table;
  assert.equal(plain.filter((t) => t.startsWith('= /p ')).map((t) => t.split(' ')[3]), ['b'], 'an Exact /p without conditions takes every /p');
});

test('the same path and conditions twice: the older route keeps them, the other is named', () => {
  const m = { path: prefix('/p'), method: 'GET' };
  const { table, warnings } = build([{ name: 'old', ts: '2026-01-01T00:00:00Z', rules: [rule('a', m)] }, { name: 'new', rules: [rule('b', m)] }]);
  assert.equal(table.filter((t) => t.startsWith('/p/ ')).map((t) => t.split(' ')[2]), ['a']);
  assert.match(warnings.join('\n'), /HTTPRoute team-a\/new spec.rules\[0\].matches: Prefix path "\/p" with the same header, query parameter and method conditions on host m.test is already routed by HTTPRoute team-a\/old/);
});

test('attacker and typo: bad values are named (route, field, reason) and only their match set aside', () => {
  const bad: Array<[HTTPRouteMatch, string, RegExp]> = [
    [{ headers: [{ name: 'X-A', value: 'v\r\nSet-Cookie: a=b' }] }, 'headers[0]', /control character/],
    [{ headers: [{ name: 'X-A', value: 'v\u0000' }] }, 'headers[0]', /control character/],
    [{ headers: [{ name: 'X A:b', value: 'v' }] }, 'headers[0]', /not a valid header name/],
    [{ headers: [{ name: 'x'.repeat(257), value: 'v' }] }, 'headers[0]', /not a valid header name/],
    [{ headers: [{ name: 'X-A', value: 'v'.repeat(4097) }] }, 'headers[0]', /1 to 4096 characters/],
    [{ headers: [{ type: 'Fuzzy', name: 'X-A', value: 'v' }] }, 'headers[0]', /unknown match type/],
    [{ headers: [{ type: 'RegularExpression', name: 'X-A', value: '(a' }] }, 'headers[0]', /does not compile/],
    [{ queryParams: [{ name: 'a=b', value: 'v' }] }, 'queryParams[0]', /not a valid query parameter name/],
    [{ queryParams: [{ name: 'q', value: 'a\nb' }] }, 'queryParams[0]', /control character/],
    [{ queryParams: [{ type: 'RegularExpression', name: 'q', value: '[z-a]' }] }, 'queryParams[0]', /does not compile/],
    [{ method: 'get' }, 'method', /not one of GET/],
    [{ headers: Array.from({ length: 17 }, (_, i) => ({ name: `h${i}`, value: 'v' })) }, 'headers', /at most 16/],
  ];
  for (const [m, field, reason] of bad) {
    const { table, warnings } = build([{ name: 'r', rules: [rule('a', { path: prefix('/bad'), ...m }), rule('b', { path: prefix('/ok'), method: 'GET' })] }]);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.ok(warnings[0]!.startsWith(`HTTPRoute team-a/r spec.rules[0].matches[0].${field}: `), warnings[0]);
    assert.match(warnings[0]!, reason);
    assert.match(warnings[0]!, /match set aside$/);
    assert.not.ok(table.some((t) => t.includes('/bad')), 'the bad match is not served');
    assert.ok(table.some((t) => t.startsWith('/ok/ → b')), 'the other rule is');
  }
});

test('on a host whose routes are static (dynamic routes off) conditions cannot be served: named, set aside', () => {
  const { table, warnings, static: why } = build([{ name: 'r', rules: [rule('a', { path: prefix('/p'), method: 'GET' }), rule('b', { path: prefix('/q') })] }], false);
  assert.ok(why !== null);
  assert.equal(table, []);
  assert.match(warnings.join('\n'), /spec.rules\[0\].matches\[0\]: header, query parameter and method matches are served by the Lua router only, and dynamic routes are off/);
});

test.run();
