// The rule that says which hosts are dynamic (src/model/ingress/dynamic-routes.ts), the route table the
// router gets (src/model/core/routes-payload.ts) and the decision: a dynamic host's change is a POST.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { decide } from '../../../src/model/core/decide.js';
import { DEFAULT_SERVER_STATIC, DYNAMIC_ROUTES_OFF, MAX_DYNAMIC_REGEX_LOCATIONS, ingressStaticReason, routeRuleLines } from '../../../src/model/ingress/dynamic-routes.js';
import { defaultAnnotations } from '../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { snapshot } from '../../../src/model/core/hash.js';
import { redirectParts, redirectStaticReason } from '../../../src/model/checks/redirect-url.js';
import { createRoutesSerialiser, routesPayload, type RouteEntry } from '../../../src/model/core/routes-payload.js';
import { routeResponse } from '../../../src/model/core/route-settings.js';
import { CORS_DEFAULTS } from '../../../src/model/ingress/annotations/cors.js';
import type { Configuration, Location, Server } from '../../../src/model/core/types.js';
import { ingress, service, testStore, PREFIX } from '../../support/model-objects.js';

const NOW = new Date('2026-03-01T00:00:00Z');
const builder = (dynamicRoutes = true) => createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes });
const server = (c: Configuration, host: string): Server => c.servers.find((s) => s.hostname === host)!;

function store() {
  const s = testStore();
  s.put('Service', service('web'));
  s.put('Ingress', ingress('plain', 'plain.example.com', [['/', 'Prefix', 'web', 80], ['/api', 'Prefix', 'web', 80], ['/x', 'Exact', 'web', 80]]));
  s.put('Ingress', ingress('auth', 'auth.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'auth-url': 'http://auth.example.com/check' } }));
  s.put('Ingress', ingress('body', 'body.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'proxy-body-size': '9m' } }));
  s.put('Ingress', ingress('canary', 'canary.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'load-balance': 'ewma', 'ssl-redirect': 'false' } }));
  // Two Ingresses on one host: one needs directives, so the host keeps its server block.
  s.put('Ingress', ingress('mixed-a', 'mixed.example.com', [['/a', 'Prefix', 'web', 80]]));
  s.put('Ingress', ingress('mixed-b', 'mixed.example.com', [['/b', 'Prefix', 'web', 80]], { annotations: { 'rewrite-target': 'https://example.com/' }, ts: '2026-01-02T00:00:00Z' }));
  s.put('Ingress', ingress('satisfy', 'satisfy.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { satisfy: 'any', 'allowlist-source-range': '10.0.0.0/8' } }));
  s.put('Ingress', ingress('rewrite-log', 'rewrite-log.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'rewrite-target': '/x', 'enable-rewrite-log': 'true' } }));
  return s;
}

test('per Ingress, then per host: dynamic unless some Ingress needs directives, with the reason', () => {
  const { config } = builder().build(store());
  assert.is(server(config, 'plain.example.com').staticBecause, null);
  assert.is(server(config, 'canary.example.com').staticBecause, null, 'backend policies and ssl-redirect are applied per request');
  assert.is(server(config, 'auth.example.com').staticBecause, 'Ingress default/auth: auth-url needs an NGINX subrequest');
  assert.is(server(config, 'body.example.com').staticBecause, 'Ingress default/body: proxy-body-size needs client_max_body_size in a location');
  assert.is(server(config, 'mixed.example.com').staticBecause, "Ingress default/mixed-b: a rewrite-target that is a URL is a redirect by NGINX's rewrite");
  assert.is(server(config, 'satisfy.example.com').staticBecause, "Ingress default/satisfy: satisfy any needs NGINX's satisfy in a location");
  assert.is(server(config, 'rewrite-log.example.com').staticBecause, 'Ingress default/rewrite-log: enable-rewrite-log needs rewrite_log in a location');
  assert.is(server(config, '_').staticBecause, DEFAULT_SERVER_STATIC);
  assert.ok(routeRuleLines(config).includes('routes: plain.example.com: dynamic'));
  assert.ok(routeRuleLines(config).includes('routes: auth.example.com: static: Ingress default/auth: auth-url needs an NGINX subrequest'));
});

test('without --enable-dynamic-routes every host is static and the table is empty', () => {
  const { config } = builder(false).build(store());
  for (const s of config.servers) assert.is(s.staticBecause, DYNAMIC_ROUTES_OFF);
  assert.equal(routesPayload(config), { hosts: {} });
});

test('the route table: dynamic hosts only, locations as NGINX tries them, the variables of the location', () => {
  const { config } = builder().build(store());
  const { hosts } = routesPayload(config);
  assert.equal(Object.keys(hosts).sort(), ['canary.example.com', 'plain.example.com']);
  const plain = hosts['plain.example.com']!;
  assert.equal(plain.map((e) => `${e.match} ${e.pattern}`), ['prefix /api/', 'exact /api', 'exact /x', 'prefix /']);
  const api = plain[0]!;
  assert.equal({ ns: api.namespace, ing: api.ingress, svc: api.service, port: api.port, path: api.path, backend: api.backend, redirect: api.redirect },
    { ns: 'default', ing: 'plain', svc: 'web', port: '80', path: '/api', backend: 'default-web-80', redirect: 'ssl-redirect' });
  assert.is(hosts['canary.example.com']![0]!.redirect, '', 'ssl-redirect "false" is carried');
});

test('the route table carries the URI and redirect settings a location would apply, and only those set', () => {
  const s = testStore();
  s.put('Service', service('web'));
  const one = (name: string, annotations: Record<string, string>, path = '/', pathType: 'Prefix' | 'ImplementationSpecific' = 'Prefix') =>
    s.put('Ingress', ingress(name, `${name}.example.com`, [[path, pathType, 'web', 80]], { annotations }));
  one('plain', {});
  one('redirect', { 'permanent-redirect': '/to$uri?h=$host&s=$server_name&n=$nope', 'use-port-in-redirects': 'true', 'force-ssl-redirect': 'true' });
  one('relative', { 'temporal-redirect': 'https://x.example/$request_uri', 'relative-redirects': 'true' });
  one('rewrite', { 'rewrite-target': '/$2?a=$1', 'use-regex': 'true', 'app-root': '/app', 'x-forwarded-prefix': '/p' }, '/api(/|$)(.*)', 'ImplementationSpecific');
  one('prefix', { 'rewrite-target': '/new' }, '/old');
  one('headers', { 'upstream-vhost': 'in.example:81', 'connection-proxy-header': 'keep-alive' });
  one('code300', { 'permanent-redirect': 'https://x.example/', 'permanent-redirect-code': '300' });
  one('scheme-target', { 'rewrite-target': 'http://x.example/' });
  const { config } = builder().build(s);
  const { hosts } = routesPayload(config);
  const entry = (host: string) => hosts[`${host}.example.com`]!.find((e) => e.path !== '' && !e.denied)!;
  const uriFields = (host: string) => {
    const { return: ret, appRoot, rewrite, xForwardedPrefix, upstreamVhost, connection } = entry(host);
    return JSON.parse(JSON.stringify({ return: ret, appRoot, rewrite, xForwardedPrefix, upstreamVhost, connection })) as object;
  };
  assert.equal(uriFields('plain'), {}, 'a plain route carries none');
  assert.equal(uriFields('redirect'), { return: { code: 301, parts: ['/to', 'uri', '?h=', 'host', '&s=redirect.example.com&n=$nope'], absolute: true, port: true } });
  assert.is(entry('redirect').redirect, 'force-ssl-redirect ssl-redirect use-port-in-redirects', 'the SSL redirect names the port as the location does');
  assert.equal(uriFields('relative'), { return: { code: 302, parts: ['https://x.example/', 'request_uri', ''], absolute: false, port: false } });
  assert.equal(uriFields('rewrite'), { appRoot: '/app', rewrite: { regex: '(?i)/api(/|$)(.*)', target: '/$2?a=$1' }, xForwardedPrefix: '/p' });
  assert.equal(uriFields('prefix'), { rewrite: { regex: '(?i)/old', target: '/new' } }, 'a rewrite-target other than the path makes the host a regex host');
  assert.equal(uriFields('headers'), { upstreamVhost: ['in.example:81'], connection: 'keep-alive' });
  assert.is(server(config, 'code300.example.com').staticBecause, 'Ingress default/code300: redirect code 300 answers with the URL as the body (NGINX\'s return)');
  assert.is(server(config, 'scheme-target.example.com').staticBecause, 'Ingress default/scheme-target: a rewrite-target that is a URL is a redirect by NGINX\'s rewrite');
});

test('a redirect URL as NGINX reads it: allowed variables, literal others, $server_name the host\'s; captures stay static', () => {
  assert.equal(redirectParts('https://a/$host${uri}x$nope$', 'h.example'), ['https://a/', 'host', '', 'uri', 'x$nope$']);
  assert.equal(redirectParts('/$server_name/$http_x_a-b', '*.w.example'), ['/*.w.example/', 'http_x_a', '-b']);
  assert.is(redirectParts('/$1', 'h'), null);
  assert.is(redirectParts('/${1}', 'h'), null, 'a braced capture is a capture to NGINX as well');
  assert.is(redirectParts('/$escaped_request_uri', 'h'), null);
  assert.is(redirectStaticReason({ url: 'https://a/', code: 307 }), null);
  assert.match(redirectStaticReason({ url: 'https://a/', code: 304 }) ?? '', /code 304/);
});

test('timeouts, tries and source ranges: carried where they differ from the http level, static where Lua cannot apply them exactly', () => {
  const s = store();
  const on = (name: string, annotations: Record<string, string>) => s.put('Ingress', ingress(name, `${name}.example.com`, [['/', 'Prefix', 'web', 80]], { annotations }));
  on('timeouts', { 'proxy-read-timeout': '1', 'proxy-connect-timeout': '5', 'proxy-next-upstream-tries': '1' });
  on('lists', { 'allowlist-source-range': '10.0.0.0/8, 127.0.0.1', 'denylist-source-range': '10.1.0.0/16' });
  on('zero', { 'proxy-send-timeout': '0' });
  on('tries', { 'proxy-next-upstream-tries': '4' });
  on('unlimited', { 'proxy-next-upstream-tries': '0' });
  on('zone', { 'allowlist-source-range': 'fe80::1%eth0' });
  const { config } = builder().build(s);
  const { hosts } = routesPayload(config);
  const entry = (host: string) => hosts[`${host}.example.com`]![0]!;
  // connect 5 is the ConfigMap's: 0 leaves the http level's.
  assert.equal({ timeouts: entry('timeouts').timeouts, tries: entry('timeouts').tries }, { timeouts: [0, 0, 1], tries: 1 });
  assert.equal({ deny: entry('lists').deny, allow: entry('lists').allow }, { deny: ['10.1.0.0/16'], allow: ['10.0.0.0/8', '127.0.0.1'] });
  const plain = entry('plain');
  assert.equal([plain.timeouts, plain.tries, plain.deny, plain.allow], [undefined, undefined, undefined, undefined], 'a plain route carries none');
  assert.is(server(config, 'zero.example.com').staticBecause, 'Ingress default/zero: proxy-send-timeout 0 is not a timeout the Lua balancer can set');
  assert.is(server(config, 'tries.example.com').staticBecause, "Ingress default/tries: proxy-next-upstream-tries 4 is above the ConfigMap's 3, the most the Lua balancer may try");
  assert.is(server(config, 'unlimited.example.com').staticBecause, "Ingress default/unlimited: proxy-next-upstream-tries 0 (no limit) is above the ConfigMap's 3, the most the Lua balancer may try");
  assert.is(server(config, 'zone.example.com').staticBecause, "Ingress default/zone: allowlist-source-range fe80::1%eth0: a zone index is NGINX's to read");

  const b = builder();
  const before = snapshot(b.build(s).config);
  on('timeouts', { 'proxy-read-timeout': '2' });
  const d = decide(before, snapshot(b.build(s).config));
  assert.equal([d.kind, d.routesChanged, d.reason], ['dynamic', true, 'routes of timeouts.example.com changed']);
});

test('a host with more regular expressions than the router tries is static', () => {
  const s = testStore();
  s.put('Service', service('web'));
  const paths = Array.from({ length: MAX_DYNAMIC_REGEX_LOCATIONS + 1 }, (_, i) => [`/r${i}/.*`, 'ImplementationSpecific', 'web', 80] as [string, 'ImplementationSpecific', string, number]);
  s.put('Ingress', ingress('re', 're.example.com', paths, { annotations: { 'use-regex': 'true' } }));
  s.put('Ingress', ingress('re2', 're2.example.com', paths.slice(0, 3), { annotations: { 'use-regex': 'true' } }));
  const { config } = builder().build(s);
  assert.match(server(config, 're.example.com').staticBecause ?? '', /regular-expression locations/);
  assert.is(server(config, 're2.example.com').staticBecause, null);
  assert.ok(routesPayload(config).hosts['re2.example.com']!.every((e) => e.match === 'regex' || e.pattern.startsWith('/')));
});

test('adding, changing or removing a dynamic host is a dynamic update of the routes; turning static is a reload', () => {
  const s = store();
  const b = builder();
  const first = snapshot(b.build(s).config);
  s.put('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80]]));
  const added = snapshot(b.build(s).config);
  let d = decide(first, added);
  assert.is(d.kind, 'dynamic', d.reason);
  assert.ok(d.routesChanged);
  assert.match(d.reason, /routes of new\.example\.com added/);

  s.put('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80], ['/more', 'Prefix', 'web', 80]]));
  const changed = snapshot(b.build(s).config);
  d = decide(added, changed);
  assert.is(d.kind, 'dynamic', d.reason);
  assert.match(d.reason, /routes of new\.example\.com changed/);

  s.put('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'proxy-body-size': '5m' } }));
  const turned = snapshot(b.build(s).config);
  d = decide(changed, turned);
  assert.is(d.kind, 'reload', 'the host needs a server block now');
  assert.ok(d.routesChanged, 'and leaves the route table');

  s.remove('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80]]));
  const removed = snapshot(b.build(s).config);
  d = decide(added, removed);
  assert.is(d.kind, 'dynamic', d.reason);
  assert.match(d.reason, /routes of new\.example\.com removed/);
});

test("the actor's route-table body: the whole table first, JSON.stringify's text; then only the hosts that changed and those gone, against the table NGINX accepted", () => {
  const s = store();
  const b = builder();
  let n = 0;
  const serialise = createRoutesSerialiser(() => `t${++n}`);
  const parse = (p: { body: readonly string[] }) => JSON.parse(p.body.join('')) as { base?: string; id: string; hosts: Record<string, unknown>; deleted?: string[] };
  const first = b.build(s).config;
  const whole = serialise.post(routesPayload(first));
  assert.is(whole.delta, false);
  assert.is(whole.body.join(''), `{"id":"t1",${JSON.stringify(routesPayload(first)).slice(1)}`);
  // Not accepted (the POST failed): the next is the whole table again.
  assert.is(serialise.post(routesPayload(first)).delta, false);
  serialise.post(routesPayload(first)).accepted();

  s.put('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80]]));
  const added = serialise.post(routesPayload(b.build(s).config));
  assert.equal(parse(added), { base: 't3', id: 't4', hosts: { 'new.example.com': routesPayload(b.build(s).config).hosts['new.example.com'] }, deleted: [] });
  added.accepted();
  s.put('Ingress', ingress('new', 'new.example.com', [['/', 'Prefix', 'web', 80], ['/more', 'Exact', 'web', 80]]));
  s.remove('Ingress', ingress('plain', 'plain.example.com', [['/', 'Prefix', 'web', 80]]));
  const changed = serialise.post(routesPayload(b.build(s).config));
  const body = parse(changed);
  assert.equal([body.base, Object.keys(body.hosts), body.deleted], ['t4', ['new.example.com'], ['plain.example.com']]);
  assert.ok(JSON.stringify(body.hosts['new.example.com']).includes('/more'));
  // NGINX refused it (or it got lost): the whole table next.
  serialise.forget();
  const again = serialise.post(routesPayload(b.build(s).config));
  assert.equal([again.delta, again.body.join('')], [false, `{"id":"t6",${JSON.stringify(routesPayload(b.build(s).config)).slice(1)}`]);
  assert.is(createRoutesSerialiser(() => 'x').post({ hosts: {} }).body.join(''), '{"id":"x","hosts":{}}');

  // The same entries array is taken as unchanged (the model never mutates one it handed out).
  const entries = [{ ...routesPayload(b.build(s).config).hosts['new.example.com']![0]! }] as RouteEntry[];
  const once = createRoutesSerialiser(() => 'x').post({ hosts: { 'a.test': entries } }).body.join('');
  entries.push({ ...entries[0]!, pattern: '/later' });
  assert.is(createRoutesSerialiser(() => 'x').post({ hosts: { 'a.test': entries } }).body.join(''), once, 'reused');
  assert.ok(createRoutesSerialiser(() => 'x').post({ hosts: { 'a.test': [...entries] } }).body.join('').includes('/later'), 'a new array is serialised');
});

test("the operator's server- and location-snippets keep every host static: the router's request would leave their locations", () => {
  const settings = defaultSettings();
  const parsed = defaultAnnotations(settings);
  assert.is(ingressStaticReason(parsed, settings), null);
  assert.match(ingressStaticReason(parsed, { ...settings, serverSnippet: 'location = /x { return 200; }' }) ?? '', /server-snippet \(ConfigMap\)/);
  assert.match(ingressStaticReason(parsed, { ...settings, locationSnippet: 'add_header X-A b;' }) ?? '', /location-snippet \(ConfigMap\)/);
  assert.match(ingressStaticReason(parsed, { ...settings, sslRejectHandshake: true }) ?? '', /ssl-reject-handshake/);
});

test('CORS and custom headers: the route carries the headers; names add-headers also sets, built-in names and values NGINX would trim keep the Ingress static', () => {
  const settings = defaultSettings();
  const cors = { ...CORS_DEFAULTS, enabled: true, allowOrigin: ['https://*.example.com', 'tauri://localhost:3000'], exposeHeaders: 'X-Total', allowCredentials: false };
  const parsed = { ...defaultAnnotations(settings), cors, customHeaders: { 'X-Team': 'blue $team' } };
  assert.is(ingressStaticReason(parsed, settings), null);
  assert.equal(routeResponse({ settings: { cors, customHeaders: parsed.customHeaders } } as unknown as Location), {
    cors: {
      origin: '^(https://[A-Za-z0-9-]+\\.example\\.com|tauri://localhost:3000)$',
      headers: [['Access-Control-Allow-Methods', CORS_DEFAULTS.allowMethods], ['Access-Control-Allow-Headers', CORS_DEFAULTS.allowHeaders],
        ['Access-Control-Expose-Headers', 'X-Total'], ['Access-Control-Max-Age', '1728000']],
    },
    headers: [['X-Team', 'blue $team']],
  });
  assert.equal(routeResponse({ settings: { cors: { ...cors, allowOrigin: ['*'] }, customHeaders: null } } as unknown as Location).cors?.origin, '', 'any origin');
  assert.equal(routeResponse({ settings: { cors: null, customHeaders: null } } as unknown as Location), {});
  const withGlobal = { ...settings, addHeaders: { 'x-team': 'global', 'Access-Control-Max-Age': '5' } };
  assert.is(ingressStaticReason({ ...parsed, cors: null }, withGlobal), 'custom-headers sets X-Team, which add-headers (ConfigMap) sets too');
  assert.is(ingressStaticReason({ ...parsed, customHeaders: null }, withGlobal), 'enable-cors sets Access-Control-Max-Age, which add-headers (ConfigMap) sets too');
  const custom = (h: Record<string, string>) => ingressStaticReason({ ...parsed, cors: null, customHeaders: h }, settings);
  assert.is(custom({ 'Cache-Control': 'no-store' }), 'custom-headers sets Cache-Control, a header NGINX sets itself');
  assert.is(custom({ 'X-A': ' padded' }), "custom-headers X-A: an empty value or one with surrounding spaces is NGINX's to trim");
  assert.is(custom({ 'X-A': '' }), "custom-headers X-A: an empty value or one with surrounding spaces is NGINX's to trim");
});

test.run();
