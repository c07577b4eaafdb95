// HTTPRoute filters end to end (docs/gateway-api.md): RequestHeaderModifier,
// ResponseHeaderModifier, RequestRedirect and URLRewrite applied per request by the Lua router
// with real NGINX, over HTTP/1.1 and HTTP/2; a hostile value is named and its rule set aside; a
// changed filter is served without a reload.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EchoServer } from '../support/echo-server.js';
import { prefixRoute, startGatewayLocal, stopGatewayLocal } from '../support/gateway-local.js';
import type { LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');


const FILTERS = prefixRoute('f', 'filter.test', [
  { path: '/req', to: 'app', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: {
    set: [{ name: 'X-Set', value: 'set-by-route' }], add: [{ name: 'X-Add', value: 'added' }], remove: ['X-Remove'],
  } }] },
  { path: '/resp', to: 'app', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: {
    set: [{ name: 'X-Resp', value: 'r1' }], add: [{ name: 'X-Echo-Name', value: 'extra' }], remove: ['X-Powered-By'],
  } }] },
  { path: '/old', filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' }, statusCode: 301 } }] },
  { path: '/away', filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', hostname: 'elsewhere.test', port: 8443 } }] },
  { path: '/full', filters: [{ type: 'RequestRedirect', requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/landing' } } }] },
  { path: '/v1', to: 'app', filters: [{ type: 'URLRewrite', urlRewrite: { hostname: 'internal.test', path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } } }] },
  { path: '/whole', to: 'app', filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/fixed' } } }] },
  { to: 'root' },
]);

test.before(async () => {
  ({ ctl, echo } = await startGatewayLocal(['root', 'app', 'canary'], {
    'f.json': [FILTERS],
    'bad.json': [prefixRoute('bad', 'bad.test', [
      { path: '/a', to: 'canary', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: 'v\r\nX-Injected: 1' }] } }] },
      { path: '/b', to: 'canary', filters: [{ type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'Set-Cookie:x', value: 'v' }] } }] },
      { path: '/c', filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'evil.test/\r\nX: 1' } }] },
      { path: '/d', to: 'canary', filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplaceFullPath', replaceFullPath: '/x y' } } }] },
      { path: '/e', to: 'canary', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'Host', value: 'other.test' }] } }] },
      { to: 'root' },
    ])],
  }));
  await ctl.until('filter.test', '/', (r) => r.backend === 'root', { what: 'filter.test served' });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

over.both('RequestHeaderModifier: set replaces, add appends, remove removes what the upstream gets', async (p) => {
  await p.until('filter.test', '/req', (r) => r.backend === 'app', { what: 'filter.test over this protocol' });
  const r = await p.request('filter.test', '/req/x', { headers: { 'X-Set': 'client', 'X-Add': 'client', 'X-Remove': 'secret', 'X-Keep': 'k' } });
  const h = r.json?.headers as Record<string, string>;
  assert.is(h['x-set'], 'set-by-route');
  assert.is(h['x-add'], 'client,added');
  assert.is(h['x-remove'], undefined);
  assert.is(h['x-keep'], 'k');
  assert.is(((await p.request('filter.test', '/req')).json?.headers as Record<string, string>)['x-add'], 'added', 'add without a client value');
  assert.is(((await p.request('filter.test', '/other', { headers: { 'X-Remove': 'kept' } })).json?.headers as Record<string, string>)['x-remove'], 'kept', 'only the rule\'s requests are edited');
});

over.both('ResponseHeaderModifier: set, add and remove on the answer', async (p) => {
  const r = await p.request('filter.test', '/resp');
  assert.is(r.backend, 'app');
  assert.is(r.headers['x-resp'], 'r1');
  assert.ok(String(r.headers['x-echo-name']).endsWith(',extra'), String(r.headers['x-echo-name']));
  assert.is((await p.request('filter.test', '/other')).headers['x-resp'], undefined);
});

over.both('RequestRedirect: prefix replaced with 301, scheme/host/port with 302, full path; the query kept', async (p) => {
  const a = await p.request('filter.test', '/old/page?q=1');
  assert.is(a.status, 301);
  assert.match(String(a.headers.location), /^https?:\/\/filter\.test\/new\/page\?q=1$/);
  const b = await p.request('filter.test', '/away/x');
  assert.is(b.status, 302);
  assert.is(b.headers.location, 'https://elsewhere.test:8443/away/x');
  const c = await p.request('filter.test', '/full/deep');
  assert.is(c.status, 302);
  assert.match(String(c.headers.location), /^https?:\/\/filter\.test\/landing$/);
});

over.both('attacker: a redirect goes to the host the route names, whatever Host the client sends', async (p) => {
  const r = await p.request('filter.test', '/away/%0d%0aSet-Cookie:%20a=b');
  assert.is(r.status, 302);
  assert.ok(String(r.headers.location).startsWith('https://elsewhere.test:8443/away/'), String(r.headers.location));
  assert.is(r.headers['set-cookie'], undefined, 'no header injected from the path');
});

over.both('URLRewrite: the upstream gets the new Host and path (prefix or whole), the query kept', async (p) => {
  const r = await p.request('filter.test', '/v1/items?x=1');
  assert.is(r.backend, 'app');
  assert.is(r.json?.path, '/v2/items?x=1');
  assert.is((r.json?.headers as Record<string, string>).host, 'internal.test');
  const w = await p.request('filter.test', '/whole/a/b');
  assert.is(w.json?.path, '/fixed');
  assert.is((w.json?.headers as Record<string, string>).host, 'filter.test', 'no hostname: the Host is kept');
});

over.both('attacker: CR/LF in a header value or host name, a bad header name, a bad path, Host editing: named, the rule set aside, the rest served', async (p) => {
  for (const field of [
    'spec.rules[0].filters[0].requestHeaderModifier.set[0]', 'spec.rules[1].filters[0].responseHeaderModifier.add[0]',
    'spec.rules[2].filters[0].requestRedirect.hostname', 'spec.rules[3].filters[0].urlRewrite.path', 'spec.rules[4].filters[0].requestHeaderModifier.set[0]',
  ]) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/bad.*${field.replace(/[[\].]/g, '\\$&')}.*rule set aside`), `the warning on ${field}`);
  }
  const before = echo.canary!.hits();
  for (const path of ['/a', '/b', '/c', '/d', '/e']) {
    const r = await p.request('bad.test', path);
    assert.is(r.backend, 'root', path);
    assert.is(r.headers['x-injected'], undefined);
  }
  assert.is(echo.canary!.hits(), before, 'no set-aside rule took a request');
});

over.both('a changed filter is served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('f.json', [prefixRoute('f', 'filter.test', [
    { path: '/req', to: 'app', filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-Set', value: 'changed' }] } }] },
    { to: 'root' },
  ])]);
  await p.until('filter.test', '/req', (r) => (r.json?.headers as Record<string, string> | undefined)?.['x-set'] === 'changed', { what: 'the changed filter served' });
  ctl.write('f.json', [FILTERS]);
  await p.until('filter.test', '/old', (r) => r.status === 301, { what: 'filter.test as it was' });
  assert.is(await reloads(), before, 'no reload');
});

test.run();
