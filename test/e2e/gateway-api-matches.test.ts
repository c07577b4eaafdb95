// HTTPRoute header, query parameter and method matches end to end (docs/gateway-api.md):
// `ingress-rx local` with real NGINX; the Lua router evaluates them per request, over HTTP/1.1 and
// HTTP/2; the Gateway API's precedence picks among rules; a request that meets no condition falls
// through to a shorter path; a changed match is served without a reload; a hostile value is named
// and only its match set aside. RegularExpression paths: searched in the decoded path as NGINX's
// `location ~` does (case-sensitive), after Exact and before the longest PathPrefix, with their
// header conditions; a pattern that could backtrack catastrophically is set aside.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../support/echo-server.js';
import { GATEWAY_V1 as V1, startGatewayLocal, stopGatewayLocal } from '../support/gateway-local.js';
import type { LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');

function httpRoute(name: string, host: string, rules: Array<{ matches?: unknown[]; to: string }>) {
  return {
    apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host],
      rules: rules.map((r) => ({ ...(r.matches ? { matches: r.matches } : {}), backendRefs: [{ name: r.to, port: 80 }] })),
    },
  };
}

const header = (name: string, value: string, type = 'Exact') => ({ type, name, value });
const MATCHES = httpRoute('m', 'match.test', [
  { matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [header('X-Env', 'canary')] }], to: 'canary' },
  { matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [header('x-version', '^v[0-9]+$', 'RegularExpression')] }], to: 'v2' },
  // ORed matches; the fields of one match ANDed.
  { matches: [{ queryParams: [header('debug', '1')], method: 'POST' }, { queryParams: [header('tier', '^gold|platinum$', 'RegularExpression')] }], to: 'exact' },
  { matches: [{ path: { type: 'PathPrefix', value: '/api' } }], to: 'app' },
  { to: 'root' },
]);

const regex = (value: string) => ({ type: 'RegularExpression', value });
const REGEX_PATHS = httpRoute('rx', 'rx.test', [
  { matches: [{ path: regex('^/items/[0-9]+$'), headers: [header('X-Env', 'canary')] }], to: 'canary' },
  { matches: [{ path: regex('^/items/[0-9]+$') }], to: 'v2' },
  { matches: [{ path: { type: 'PathPrefix', value: '/items' } }], to: 'app' },
  { to: 'root' },
]);

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['root', 'app', 'exact', 'canary', 'v2'], {
    'm.json': [MATCHES],
    'plain.json': [httpRoute('plain', 'plain.test', [{ to: 'root' }])],
    'rx.json': [REGEX_PATHS],
    'rxbad.json': [httpRoute('rxbad', 'rxbad.test', [
      { matches: [{ path: regex('^/(a+)+$') }], to: 'canary' },
      { matches: [{ path: regex('^/(?<id>[0-9]+)$') }], to: 'canary' },
      { matches: [{ path: { type: 'Exact', value: '/fine' } }], to: 'exact' },
      { to: 'root' },
    ])],
    'bad.json': [httpRoute('bad', 'bad.test', [
      { matches: [{ headers: [header('X-Evil', 'a\r\nX-Injected: 1')] }], to: 'canary' },
      { matches: [{ headers: [header('X Bad', 'v')] }], to: 'canary' },
      { matches: [{ queryParams: [header('q', '(unclosed', 'RegularExpression')] }], to: 'canary' },
      { matches: [{ method: 'BREW' }], to: 'canary' },
      { to: 'root' },
    ])],
  }));
  await ctl.until('match.test', '/api', (r) => r.backend === 'app', { what: 'match.test served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

over.both('header matches: Exact (names caseless, values not) and RegularExpression, before the rule without conditions; no match falls through', async (p) => {
  await p.until('match.test', '/api', (r) => r.backend === 'app', { what: 'match.test over this protocol' });
  assert.is((await p.request('match.test', '/api/x', { headers: { 'x-env': 'canary' } })).backend, 'canary');
  assert.is((await p.request('match.test', '/api/x', { headers: { 'X-Env': 'Canary' } })).backend, 'app', 'values compare exactly');
  assert.is((await p.request('match.test', '/api', { headers: { 'X-Version': 'v12' } })).backend, 'v2');
  assert.is((await p.request('match.test', '/api', { headers: { 'X-Version': 'v12-beta' } })).backend, 'app', 'the pattern is anchored by its own ^…$');
  assert.is((await p.request('match.test', '/api', { headers: { 'X-Env': 'canary', 'X-Version': 'v1' } })).backend, 'canary', 'the earlier rule of equal precedence wins');
  assert.is((await p.request('match.test', '/other', { headers: { 'X-Env': 'canary' } })).backend, 'root', 'a header match on /api does not take /other');
});

over.both('query parameter and method matches: the fields of one match ANDed, the matches of a rule ORed', async (p) => {
  assert.is((await p.request('match.test', '/x?debug=1', { method: 'POST' })).backend, 'exact');
  assert.is((await p.request('match.test', '/x?debug=1')).backend, 'root', 'GET: the method does not match');
  assert.is((await p.request('match.test', '/x?debug=2', { method: 'POST' })).backend, 'root', 'the value does not match');
  assert.is((await p.request('match.test', '/x?tier=gold')).backend, 'exact', 'the second match of the rule');
  assert.is((await p.request('match.test', '/x?a=b&tier=platinum')).backend, 'exact');
  assert.is((await p.request('match.test', '/x?tier=silver')).backend, 'root');
  assert.is((await p.request('match.test', '/x?tier=xplatinum')).backend, 'exact', 'a pattern is found anywhere unless anchored (platinum$)');
  assert.is((await p.request('match.test', '/x?debug=1&debug=2', { method: 'POST' })).backend, 'exact', 'the first of repeated values is tested');
  assert.is((await p.request('match.test', '/x?debug=2&debug=1', { method: 'POST' })).backend, 'root');
  assert.is((await p.request('match.test', '/x?Debug=1', { method: 'POST' })).backend, 'root', 'query parameter names compare exactly');
  assert.is((await p.request('match.test', '/api?tier=gold')).backend, 'app', 'a longer path wins over conditions (precedence)');
});

over.both('a host without conditions is served as before, its matches memoised', async (p) => {
  assert.is((await p.request('plain.test', '/a', { headers: { 'x-env': 'canary' } })).backend, 'root');
});

over.both('attacker: a header value with CR/LF, a bad header name, a bad pattern and an unknown method set their match aside, the rest is served', async (p) => {
  for (const field of ['spec.rules[0].matches[0].headers[0]', 'spec.rules[1].matches[0].headers[0]', 'spec.rules[2].matches[0].queryParams[0]', 'spec.rules[3].matches[0].method']) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/bad.*${field.replace(/[[\].]/g, '\\$&')}`), `the warning on ${field}`);
  }
  const before = echo.canary!.hits();
  assert.is((await p.request('bad.test', '/?q=x', { headers: { 'x-evil': 'a', 'x-injected': '1' } })).backend, 'root');
  assert.is((await p.request('bad.test', '/', { method: 'POST' })).backend, 'root');
  assert.is(echo.canary!.hits(), before, 'no set-aside match took a request');
});

over.both('RegularExpression paths: before the longest prefix, with their conditions, case-sensitive, on the decoded path', async (p) => {
  await p.until('rx.test', '/items/12', (r) => r.backend === 'v2', { what: 'rx.test over this protocol' });
  assert.is((await p.request('rx.test', '/items/12', { headers: { 'X-Env': 'canary' } })).backend, 'canary', 'the regex with a header condition');
  assert.is((await p.request('rx.test', '/items/12?page=2')).backend, 'v2', 'the query is not part of the path');
  assert.is((await p.request('rx.test', '/items/%31%32')).backend, 'v2', 'matched on the decoded path');
  assert.is((await p.request('rx.test', '/items/12/x')).backend, 'app', 'anchored by its own ^…$: the prefix takes the rest');
  assert.is((await p.request('rx.test', '/items/abc')).backend, 'app');
  assert.is((await p.request('rx.test', '/Items/12')).backend, 'root', 'case-sensitive');
});

over.both('attacker: a RegularExpression path that could backtrack catastrophically, or with named groups, is named and set aside; the rest is served', async (p) => {
  await ctl.logged(/HTTPRoute team-a\/rxbad.*spec\.rules\[0\]\.matches\[0\]\.path\.value: path \\?"\^\/\(a\+\)\+\$\\?".*attack/, 'the ReDoS pattern named');
  await ctl.logged(/HTTPRoute team-a\/rxbad.*spec\.rules\[1\]\.matches\[0\]\.path\.value: .*named groups/, 'the named group named');
  const before = echo.canary!.hits();
  assert.is((await p.request('rxbad.test', `/${'a'.repeat(4000)}!`)).backend, 'root');
  assert.is((await p.request('rxbad.test', '/12')).backend, 'root');
  assert.is((await p.request('rxbad.test', '/fine')).backend, 'exact');
  assert.is(echo.canary!.hits(), before, 'no set-aside match took a request');
});

over.both('a changed RegularExpression path is served without a reload', async (p) => {
  const before = await reloads();
  const live = httpRoute('rxlive', 'rxlive.test', [{ matches: [{ path: regex(`^/${p.tag}/[a-f0-9]{4}$`) }], to: 'v2' }, { to: 'root' }]);
  ctl.write(`rxlive-${p.tag}.json`, [live]);
  await p.until('rxlive.test', `/${p.tag}/beef`, (r) => r.backend === 'v2', { what: 'the new pattern served' });
  assert.is((await p.request('rxlive.test', `/${p.tag}/beefs`)).backend, 'root');
  ctl.remove(`rxlive-${p.tag}.json`);
  await p.until('rxlive.test', `/${p.tag}/beef`, (r) => r.status === 404, { what: 'the route gone' });
  assert.is(await reloads(), before, 'no reload');
});

over.both('a changed match is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('m.json', [httpRoute('m', 'match.test', [
    { matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [header('X-Env', 'blue')] }], to: 'v2' },
    { to: 'root' },
  ])]);
  await p.until('match.test', '/api', (r) => r.backend === 'v2', { what: 'the changed match served', headers: { 'X-Env': 'blue' } });
  assert.is((await p.request('match.test', '/api', { headers: { 'X-Env': 'canary' } })).backend, 'root', 'the old match is gone');
  ctl.write('m.json', [MATCHES]);
  await p.until('match.test', '/api', (r) => r.backend === 'canary', { what: 'match.test as it was', headers: { 'X-Env': 'canary' } });
  assert.is(await reloads(), before, 'no reload');
});

test.run();
