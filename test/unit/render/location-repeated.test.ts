// The location frame reuses what the previous location of the same server printed (the naming
// lines, the upstream name and the Lua rewrite phase) when it was printed from equal values
// (src/render/location.ts, RepeatedPieces): each location of a server whose neighbours differ in
// one value at a time prints what it prints in a server of its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultAnnotations } from '../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import type { Location } from '../../../src/model/core/types.js';
import { serverView } from '../../../src/render/view.js';
import { location, server, type LocationOverrides } from '../../support/config-builder.js';
import { RUNTIME } from '../../support/render-blocks.js';

const render = (locations: Location[]) =>
  serverView(server('app.example.com', { locations }), { settings: defaultSettings(), runtime: RUNTIME, wwwRedirectFrom: null }).locationsText;

const blocks = (text: string): Map<string, string> => {
  const out = new Map<string, string>();
  for (const block of text.split(/(?=^ {8}location )/m)) out.set(/^ {8}location (.*) \{/.exec(block)?.[1] ?? '', block);
  return out;
};

test('each location prints its own names, backend and Lua phase whatever its neighbour printed', () => {
  const d = defaultAnnotations(defaultSettings());
  const one = { namespace: 'team-a', name: 'one' };
  const cases: LocationOverrides[] = [
    { path: '/a', ingress: one, service: { name: 'web', port: '80' }, backend: 'team-a-web-80' },
    { path: '/b', ingress: one, service: { name: 'web', port: '80' }, backend: 'team-a-web-80' },
    { path: '/c', ingress: { namespace: 'team-a', name: 'two' }, service: { name: 'web', port: '80' }, backend: 'team-a-web-80' },
    { path: '/d', ingress: one, service: { name: 'api', port: '80' }, backend: 'team-a-web-80' },
    { path: '/e', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080' },
    { path: '/f', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080', rewrite: { ...d.rewrite, sslRedirect: true } },
    { path: '/g', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080', rewrite: { ...d.rewrite, forceSSLRedirect: true } },
    { path: '/h', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080', defaultBackend: 'team-a-errors-80' },
    { path: '/h2', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080' },
    { path: '/i', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080', configurationSnippet: 'set $x 1;' },
    { path: '/j', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080', redirect: { url: 'https://new.example.com/', code: 308 } },
    { path: '/k', ingress: one, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080' },
    { path: '/l', ingress: { namespace: 'team-b', name: 'one' }, service: { name: 'api', port: '8080' }, backend: 'team-a-api-8080' },
  ];
  const locations = cases.map((c) => location({ pathType: 'Exact', ...c }));
  const together = blocks(render(locations));
  assert.is(together.size, cases.length);
  for (const loc of locations) {
    const alone = [...blocks(render([loc])).values()];
    assert.is(alone.length, 1);
    assert.is(together.get(`= "${loc.path}"`), alone[0], loc.path);
  }
  // The cases print what they differ in (so the comparison above compares something).
  const text = [...together.values()];
  assert.match(text[2]!, 'set $ingress_name "two";');
  assert.match(text[3]!, 'set $service_name "api";');
  assert.match(text[4]!, 'balancer.rewrite("team-a-api-8080")');
  assert.not.match(text[4]!, 'lua_ingress.rewrite');
  assert.match(text[5]!, 'lua_ingress.rewrite("ssl-redirect"');
  assert.match(text[6]!, 'force-ssl-redirect');
  assert.match(text[7]!, 'balancer.rewrite("team-a-api-8080", ');
  assert.match(text[8]!, 'balancer.rewrite("team-a-api-8080")\n');
  assert.match(text[9]!, 'balancer.rewrite()');
  assert.match(text[10]!, 'return 308');
  assert.match(text[12]!, 'set $namespace "team-b";');
});

test.run();
