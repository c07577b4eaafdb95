// HTTPRoute header, query parameter and method matches and rule filters in the model: a match
// becomes a location with conditions (`when`), in the route table in the Gateway API's precedence
// order for the Lua router (lua/route_match.lua); filters ride on the rule's locations
// (lua/route_filters.lua); a hostile or broken value is named and only its match or rule set aside.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { routesPayload } from '../../../src/model/core/routes-payload.js';
import type { HTTPRouteMatch, HTTPRouteRule } from '../../../src/store/kube-types.js';
import { PREFIX, service, slice, testStore } from '../../support/model-objects.js';

const V1 = 'gateway.networking.k8s.io/v1';
const test = suite('gateway api: matches and filters');

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
    filters: entries.map((e) => e.filters ?? null),
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
    [{ headers: [{ type: 'RegularExpression', name: 'X-A', value: '^(a+)+$' }] }, 'headers[0]', /backtrack catastrophically.*attack/],
    [{ queryParams: [{ type: 'RegularExpression', name: 'q', value: '^(a|a)*$' }] }, 'queryParams[0]', /backtrack catastrophically/],
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

test('RegularExpression paths: a regex entry of the route table (searched as NGINX\'s location ~, case-sensitive), with its conditions; never merged with a prefix of the same text', () => {
  const regex = (value: string) => ({ type: 'RegularExpression' as const, value });
  const { table, warnings } = build([{ name: 'r', rules: [
    rule('a', { path: regex('^/items/[0-9]+$'), headers: [{ name: 'X-Env', value: 'canary' }] }),
    rule('b', { path: regex('^/items/[0-9]+$') }, { path: regex('/v[0-9]/') }),
    rule('c', { path: prefix('/items') }, { path: prefix('/v1/') }),
  ] }]);
  assert.equal(warnings, []);
  // By length, longest first (the router tries the regexes in this order, after exact matches and
  // before the longest prefix); each regex with its conditions; prefixes split as always.
  assert.equal(table, [
    '^/items/[0-9]+$ → a {"method":"","headers":[{"name":"x-env","type":"Exact","value":"canary"}],"query":[]}',
    '^/items/[0-9]+$ → b',
    '/v[0-9]/ → b',
    '/items/ → c',
    '= /items → c',
    '/v1/ → c',
    '= /v1 → c',
    '/ → upstream-default-backend',
  ]);
});

test('RegularExpression paths as an attacker or a typo writes them: named, only that match set aside', () => {
  const bad: Array<[string, RegExp]> = [
    ['/x(', /is not a regular expression NGINX accepts/],
    ['^/(?<id>[0-9]+)$', /named groups/],
    ['^/(a+)+$', /attack/],
    ['^/a$\r\nreturn 200;', /control character/],
    ['/a\u0000', /control character/],
    ['x'.repeat(1025), /1 to 1024 characters/],
  ];
  for (const [value, reason] of bad) {
    const { table, warnings } = build([{ name: 'r', rules: [rule('a', { path: { type: 'RegularExpression', value } }), rule('b', { path: prefix('/ok') })] }]);
    assert.equal(warnings.length, 1, `${JSON.stringify(value.slice(0, 40))}: ${JSON.stringify(warnings)}`);
    assert.ok(warnings[0]!.startsWith('HTTPRoute team-a/r spec.rules[0].matches[0].path.value: '), warnings[0]);
    assert.match(warnings[0]!, reason);
    assert.match(warnings[0]!, /match set aside$/);
    assert.ok(table.some((t) => t.startsWith('/ok/ → b')), 'the other rule is served');
    assert.equal(table.filter((t) => t.endsWith('→ a')), [], 'the bad match is not');
  }
  // Escapes are text, not bytes: a valid pattern (nginx.conf gets it only through the escaping filters).
  const { table, warnings } = build([{ name: 'r', rules: [rule('a', { path: { type: 'RegularExpression', value: '^/a\\n"; return 200;$' } })] }]);
  assert.equal(warnings, []);
  assert.ok(table.includes('^/a\\n"; return 200;$ → a'), JSON.stringify(table));
});

test('on a host whose routes are static (dynamic routes off) conditions cannot be served: named, set aside', () => {
  const { table, warnings, static: why } = build([{ name: 'r', rules: [rule('a', { path: prefix('/p'), method: 'GET' }), rule('b', { path: prefix('/q') })] }], false);
  assert.ok(why !== null);
  assert.equal(table, []);
  assert.match(warnings.join('\n'), /spec.rules\[0\].matches\[0\]: header, query parameter and method matches are served by the Lua router only, and dynamic routes are off/);
});

test('filters become the route entries\' `filters`: header edits, a redirect (no backend needed), a rewrite', () => {
  const { table, filters, warnings } = build([{ name: 'r', rules: [
    { matches: [{ path: prefix('/h') }], backendRefs: [{ name: 'a', port: 80 }], filters: [
      { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: '1' }], add: [{ name: 'X-B', value: '2' }], remove: ['X-C'] } },
      { type: 'ResponseHeaderModifier', responseHeaderModifier: { remove: ['Server-Timing'] } },
    ] },
    { matches: [{ path: prefix('/r') }], filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', hostname: 'Other.Test', port: 8443, statusCode: 301, path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/n' } } }] },
    { matches: [{ path: prefix('/w') }], backendRefs: [{ name: 'b', port: 80 }], filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'in.test', path: { type: 'ReplaceFullPath', replaceFullPath: '/x' } } }] },
  ] }]);
  assert.equal(warnings, []);
  const at = (p: string) => filters[table.findIndex((t) => t.startsWith(`${p} `))];
  assert.equal(at('/h/'), {
    requestHeaders: { set: [{ name: 'X-A', value: '1' }], add: [{ name: 'X-B', value: '2' }], remove: ['X-C'] },
    responseHeaders: { set: [], add: [], remove: ['Server-Timing'] },
  });
  assert.equal(at('= /h'), at('/h/'), 'both pieces of the PathPrefix');
  assert.equal(at('/r/'), { redirect: { scheme: 'https', hostname: 'other.test', port: 8443, path: { type: 'ReplacePrefixMatch', value: '/n' }, code: 301 } });
  assert.ok(table.some((t) => t.startsWith('/r/ → upstream-default-backend')), 'a redirect rule needs no backendRefs');
  assert.equal(at('/w/'), { rewrite: { hostname: 'in.test', path: { type: 'ReplaceFullPath', value: '/x' } } });
});

test('attacker and typo: bad filter values are named (route, field, reason) and only their rule set aside', () => {
  const rhm = (o: unknown) => ({ type: 'RequestHeaderModifier', requestHeaderModifier: o });
  const bad: Array<[unknown[], string, RegExp]> = [
    [[rhm({ set: [{ name: 'X-A', value: 'v\r\nSet-Cookie: a=b' }] })], 'filters[0].requestHeaderModifier.set[0]', /control character/],
    [[rhm({ add: [{ name: 'X-A', value: '\u0000' }] })], 'filters[0].requestHeaderModifier.add[0]', /control character/],
    [[rhm({ set: [{ name: 'X A', value: 'v' }] })], 'filters[0].requestHeaderModifier.set[0]', /not a valid header name/],
    [[rhm({ remove: ['Host'] })], 'filters[0].requestHeaderModifier.remove[0]', /not edited by filters/],
    [[rhm({ set: [{ name: 'Content-Length', value: '0' }] })], 'filters[0].requestHeaderModifier.set[0]', /not edited by filters/],
    [[rhm({ set: [{ name: 'X-A', value: 'v'.repeat(4097) }] })], 'filters[0].requestHeaderModifier.set[0]', /at most 4096/],
    [[rhm({ set: [{ name: 'X-A', value: '1' }, { name: 'x-a', value: '2' }] })], 'filters[0].requestHeaderModifier.set[1]', /listed twice/],
    [[rhm({ remove: Array.from({ length: 17 }, (_, i) => `h${i}`) })], 'filters[0].requestHeaderModifier.remove', /at most 16/],
    [[{ type: 'RequestHeaderModifier' }], 'filters[0].requestHeaderModifier', /needs its requestHeaderModifier/],
    [[rhm({}), rhm({})], 'filters[1]', /a second RequestHeaderModifier/],
    [[{ type: 'RequestRedirect', requestRedirect: { hostname: 'evil.test\r\nX: 1' } }], 'filters[0].requestRedirect.hostname', /./],
    [[{ type: 'RequestRedirect', requestRedirect: { hostname: '*.evil.test' } }], 'filters[0].requestRedirect.hostname', /no wildcard/],
    [[{ type: 'RequestRedirect', requestRedirect: { scheme: 'javascript' } }], 'filters[0].requestRedirect.scheme', /not http or https/],
    [[{ type: 'RequestRedirect', requestRedirect: { port: 70000 } }], 'filters[0].requestRedirect.port', /1 to 65535/],
    [[{ type: 'RequestRedirect', requestRedirect: { statusCode: 304 } }], 'filters[0].requestRedirect.statusCode', /must be one of 301, 302, 303, 307, 308/],
    [[{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/x\r\nY: 1' } } }], 'filters[0].requestRedirect.path', /control characters/],
    [[{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/a b' } } }], 'filters[0].urlRewrite.path', /./],
    [[{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefix', replacePrefixMatch: '/a' } } }], 'filters[0].urlRewrite.path.type', /unknown path modifier/],
    [[{ type: 'URLRewrite', urlRewrite: {} }, { type: 'RequestRedirect', requestRedirect: {} }], 'filters', /cannot be used together/],
    [[{ type: 'RequestMirror', requestMirror: {} }], 'filters[0].requestMirror.backendRef', /needs a backendRef with a name/],
    [[{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 80 }, percent: 101 } }], 'filters[0].requestMirror.percent', /integer from 0 to 100/],
    [[{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 80 }, fraction: { numerator: 3, denominator: 2 } } }], 'filters[0].requestMirror.fraction.numerator', /from 0 to the denominator/],
    [[{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 80 }, fraction: { numerator: 1, denominator: 2_000_000 } } }], 'filters[0].requestMirror.fraction.denominator', /from 1 to 1000000/],
    [Array.from({ length: 9 }, () => ({ type: 'RequestMirror', requestMirror: { backendRef: { name: 'm', port: 80 } } })), 'filters[8]', /more than 8 RequestMirror filters/],
    [[{ type: 'ExtensionRef', extensionRef: {} }], 'filters[0]', /not supported yet/],
    [[{ type: 'CORS', cors: { allowOrigins: ['https://a.test\r\nX-Injected: 1'] } }], 'filters[0].cors.allowOrigins[0]', /is not an origin/],
    [[{ type: 'CORS', cors: { allowOrigins: ['javascript://a.test'] } }], 'filters[0].cors.allowOrigins[0]', /is not an origin/],
    [[{ type: 'CORS', cors: { allowOrigins: ['https://a.*.test'] } }], 'filters[0].cors.allowOrigins[0]', /is not an origin/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*', 'https://a.test'] } }], 'filters[0].cors.allowOrigins', /\* cannot be listed with others/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*'], allowMethods: ['*', 'GET'] } }], 'filters[0].cors.allowMethods', /\* cannot be listed with others/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*'], allowMethods: ['GET;'] } }], 'filters[0].cors.allowMethods[0]', /not an HTTP method/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*'], allowHeaders: ['x a'] } }], 'filters[0].cors.allowHeaders[0]', /not a header name/],
    [[{ type: 'CORS', cors: { allowOrigins: ['https://a.test'], exposeHeaders: ['*'], allowCredentials: true } }], 'filters[0].cors.exposeHeaders', /allowCredentials/],
    [[{ type: 'CORS', cors: { allowOrigins: Array.from({ length: 65 }, (_, i) => `https://a${i}.test`) } }], 'filters[0].cors.allowOrigins', /at most 64/],
    [[{ type: 'CORS', cors: { allowOrigins: Array.from({ length: 64 }, (_, i) => `https://${'a'.repeat(60)}${i}.test`) } }], 'filters[0].cors', /longer than 4096/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*'], maxAge: 0 } }], 'filters[0].cors.maxAge', /from 1/],
    [[{ type: 'CORS', cors: { allowOrigins: ['*'], allowCredentials: 'yes' } }], 'filters[0].cors.allowCredentials', /true or false/],
    [[{ type: 'CORS', cors: {} }, { type: 'CORS', cors: {} }], 'filters[1]', /a second CORS/],
  ];
  for (const [list, field, reason] of bad) {
    const { table, warnings } = build([{ name: 'r', rules: [
      { matches: [{ path: prefix('/bad') }], backendRefs: [{ name: 'a', port: 80 }], filters: list as HTTPRouteRule['filters'] },
      rule('b', { path: prefix('/ok') }),
    ] }]);
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.ok(warnings[0]!.startsWith(`HTTPRoute team-a/r spec.rules[0].${field}: `), warnings[0]);
    assert.match(warnings[0]!, reason);
    assert.match(warnings[0]!, /rule set aside$/);
    assert.not.ok(table.some((t) => t.includes('/bad')), 'the rule is not served');
    assert.ok(table.some((t) => t.startsWith('/ok/ → b')), 'the other rule is');
  }
});

test('ReplacePrefixMatch needs PathPrefix matches; filters on a static host are set aside', () => {
  const exact = build([{ name: 'r', rules: [{ matches: [{ path: { type: 'Exact' as const, value: '/e' } }], backendRefs: [{ name: 'a', port: 80 }], filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/x' } } }] }] }]);
  assert.match(exact.warnings.join('\n'), /spec.rules\[0\].filters\[0\].urlRewrite.path.type: ReplacePrefixMatch needs every match of the rule to be a PathPrefix one; rule set aside/);
  const off = build([{ name: 'r', rules: [{ matches: [{ path: prefix('/p') }], backendRefs: [{ name: 'a', port: 80 }], filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['X-A'] } }] }] }], false);
  assert.match(off.warnings.join('\n'), /spec.rules\[0\].filters: filters are served by the Lua router only, and dynamic routes are off/);
});

test.run();
