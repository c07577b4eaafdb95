// Names derived from Kubernetes objects never collide across namespaces: the htpasswd file of
// Secret team-x/auth is not that of team/x-auth, whatever characters the names hold, and the
// backend of Service team/x-auth is not that of team-x/auth although ingress-nginx names both
// team-x-auth-80.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { authFilePath, defaultRuntime, pathComponent } from '../../src/render/runtime.js';
import { createModelBuilder } from '../../src/model/build.js';
import { stableJSON } from '../../src/model/core/json.js';
import { ingress, service, slice, testStore, PREFIX } from '../support/model-objects.js';

const rt = defaultRuntime({ prefix: '/var/lib/ingress-rx' });

test('team-x/auth and team/x-auth get two files, each under its namespace', () => {
  assert.is(authFilePath(rt, 'team-x/auth'), '/var/lib/ingress-rx/auth/team-x/auth.passwd');
  assert.is(authFilePath(rt, 'team/x-auth'), '/var/lib/ingress-rx/auth/team/x-auth.passwd');
});

test('every distinct Secret reference gets a distinct path inside the auth directory', () => {
  // Names a manifests directory may hold (no API server validates them in local mode).
  const alphabet = ['a', 'b', '-', '.', '%', '/', '_', ' ', 'é', '2'];
  const refs = new Set<string>(['..', '../x', 'x/..', './a', 'a/.', '%2F', '/', 'a/', '/a', 'a%2Fb/c', 'a/b%2Fc', 'a/b/c']);
  let seed = 7;
  const next = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed >>> 8; };
  for (let i = 0; i < 4000; i++) {
    const len = 1 + (next() % 7);
    refs.add(Array.from({ length: len }, () => alphabet[next() % alphabet.length]).join(''));
  }
  const byPath = new Map<string, string>();
  for (const ref of refs) {
    const p = authFilePath(rt, ref);
    assert.ok(p.startsWith(`${join(rt.prefix, 'auth')}/`), `${ref} → ${p}`);
    assert.not.ok(p.split('/').some((c) => c === '..' || c === '.'), `${ref} → ${p}`);
    const other = byPath.get(p);
    assert.is(other, undefined, `${JSON.stringify(ref)} and ${JSON.stringify(other)} share ${p}`);
    byPath.set(p, ref);
  }
});

test('path components escape what is not plain, the escape character included', () => {
  assert.is(pathComponent('plain-name.v2_x'), 'plain-name.v2_x');
  assert.is(pathComponent('a%b/c d'), 'a%25b%2Fc%20d');
  assert.is(pathComponent('..'), '%2E.');
  assert.is(pathComponent('.hidden'), '%2Ehidden');
});

/** Services team-x/auth and team/x-auth (both team-x-auth-80 to ingress-nginx), the first used by the older Ingress team-x/site. */
function twoServicesOneName() {
  const store = testStore();
  store.put('Service', service('auth', 'team-x'));
  store.put('EndpointSlice', slice('auth-1', 'auth', ['10.0.0.1'], 'team-x'));
  store.put('Service', service('x-auth', 'team'));
  store.put('EndpointSlice', slice('x-auth-1', 'x-auth', ['10.0.9.9'], 'team'));
  store.put('Ingress', ingress('site', 'x.test', [['/', 'Prefix', 'auth', 80]], { ns: 'team-x', ts: '2026-01-01T00:00:00Z' }));
  return store;
}

test('two Services with one ingress-nginx backend name: the older keeps it, the younger gets its own', () => {
  const store = twoServicesOneName();
  store.put('Ingress', ingress('bypass', 'bypass.test', [['/', 'Prefix', 'x-auth', 80]], { ns: 'team', ts: '2026-02-01T00:00:00Z' }));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 });
  const { config, warnings } = builder.build(store);
  const backendOf = (host: string) => config.servers.find((s) => s.hostname === host)!.locations.find((l) => l.path === '/')!.backend;
  const endpointsOf = (name: string) => config.backends.find((b) => b.name === name)?.endpoints.map((e) => e.address);
  assert.is(backendOf('x.test'), 'team-x-auth-80');
  assert.is(backendOf('bypass.test'), 'team/x-auth:80');
  assert.equal(endpointsOf('team-x-auth-80'), ['10.0.0.1']);
  assert.equal(endpointsOf('team/x-auth:80'), ['10.0.9.9'], "bypass.test reaches its own Service, not team-x's");
  assert.ok(warnings.some((w) => w.object === 'Ingress team/bypass'
    && w.message.includes('backend name team-x-auth-80 of Service team/x-auth port 80 is already that of Service team-x/auth port 80 (Ingress team-x/site)')));

  // The older Ingress gone, the younger takes the ingress-nginx name back; builds stay equal to cold ones.
  store.remove('Ingress', ingress('site', 'x.test', [], { ns: 'team-x' }));
  const after = builder.build(store, [{ kind: 'Ingress', key: 'team-x/site' }]);
  assert.is(after.config.servers.find((s) => s.hostname === 'bypass.test')!.locations.find((l) => l.path === '/')!.backend, 'team-x-auth-80');
  assert.is(stableJSON(after.config), stableJSON(createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 }).build(store).config));
});

test('an Ingress updated in place into and out of a name conflict: each build equals a cold one', () => {
  const store = twoServicesOneName();
  // Enough others that one updated Ingress is a small change of the list (the claims' incremental path).
  for (let i = 0; i < 8; i++) {
    store.put('Service', service(`web-${i}`, 'team'));
    store.put('Ingress', ingress(`other-${i}`, `o${i}.test`, [['/', 'Prefix', `web-${i}`, 80]], { ns: 'team', ts: `2026-03-0${i + 1}T00:00:00Z` }));
  }
  const at = (svc: string) => ingress('bypass', 'bypass.test', [['/', 'Prefix', svc, 80]], { ns: 'team', ts: '2026-02-01T00:00:00Z' });
  store.put('Ingress', at('web-0'));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 });
  builder.build(store);
  const backendOf = (config: { servers: ReadonlyArray<{ hostname: string; locations: ReadonlyArray<{ path: string; backend: string }> }> }) =>
    config.servers.find((s) => s.hostname === 'bypass.test')!.locations.find((l) => l.path === '/')!.backend;
  for (const [svc, backend] of [['x-auth', 'team/x-auth:80'], ['web-1', 'team-web-1-80'], ['x-auth', 'team/x-auth:80']] as const) {
    store.put('Ingress', at(svc));
    const { config } = builder.build(store, [{ kind: 'Ingress', key: 'team/bypass' }]);
    assert.is(backendOf(config), backend, svc);
    assert.is(stableJSON(config), stableJSON(createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 }).build(store).config), svc);
  }
});

test("default-backend Services of two namespaces with one ingress-nginx name keep their own error backends", () => {
  const store = testStore();
  for (const [ns, svc, ip] of [['team-x', 'errors', '10.0.0.1'], ['team', 'x-errors', '10.0.9.9'], ['team-x', 'web', '10.0.0.2'], ['team', 'web', '10.0.9.8']] as const) {
    store.put('Service', service(svc, ns));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, [ip], ns));
  }
  const withErrors = (ns: string, host: string, svc: string, ts: string) => ingress('site', host, [['/', 'Prefix', 'web', 80]], {
    ns, ts, annotations: { 'default-backend': svc, 'custom-http-errors': '503' },
  });
  store.put('Ingress', withErrors('team-x', 'x.test', 'errors', '2026-01-01T00:00:00Z'));
  store.put('Ingress', withErrors('team', 'team.test', 'x-errors', '2026-02-01T00:00:00Z'));
  const { config } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 }).build(store);
  const errorsOf = (host: string) => config.servers.find((s) => s.hostname === host)!.locations.find((l) => l.path === '/')!.settings.defaultBackend!;
  assert.is(errorsOf('x.test'), 'custom-default-backend-team-x-errors');
  assert.is(errorsOf('team.test'), 'team/x-errors');
  assert.equal(config.backends.find((b) => b.name === 'team/x-errors')?.endpoints.map((e) => e.address), ['10.0.9.9']);
  assert.equal(config.backends.find((b) => b.name === 'custom-default-backend-team-x-errors')?.endpoints.map((e) => e.address), ['10.0.0.1']);
});

test.run();
