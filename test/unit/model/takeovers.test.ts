// Cross-namespace takeovers are visible (a warning on both Ingresses, reason Takeover), and
// --host-ownership refuses them: a canary, a regex path or an alias from another namespace.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { stableJSON } from '../../../src/model/core/json.js';
import type { Configuration, ModelWarning } from '../../../src/model/core/types.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';

const NOW = new Date('2026-11-22T00:00:00Z');
const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-02-01T00:00:00Z';

function cluster() {
  const store = testStore();
  for (const [ns, svc, ip] of [['team-a', 'web', '10.0.0.1'], ['team-a', 'api', '10.0.0.2'], ['team-b', 'evil', '10.0.1.1']] as const) {
    store.put('Service', service(svc, ns));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, [ip], ns));
  }
  store.put('Ingress', ingress('web', 'shop.test', [['/', 'Prefix', 'web', 80], ['/api', 'Prefix', 'api', 80]], { ns: 'team-a', ts: OLD }));
  return store;
}

const build = (store: ReturnType<typeof testStore>, hostOwnership = false) =>
  createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, hostOwnership }).build(store);
const takeovers = (ws: ModelWarning[]) => ws.filter((w) => w.reason === 'Takeover').map((w) => `${w.object}: ${w.message}`);
const paths = (c: Configuration, host: string) => c.servers.find((s) => s.hostname === host)!.locations.map((l) => `${l.path} -> ${l.backend}`);
const backend = (c: Configuration, name: string) => c.backends.find((b) => b.name === name);

test('a canary from another namespace on a tenant\'s path: warned on both Ingresses; refused under --host-ownership', () => {
  const store = cluster();
  store.put('Ingress', ingress('canary', 'shop.test', [['/', 'Prefix', 'evil', 80]], {
    ns: 'team-b', ts: NEW, annotations: { canary: 'true', 'canary-weight': '100' },
  }));
  const open = build(store);
  assert.equal(backend(open.config, 'team-a-web-80')!.alternativeBackends, ['team-b-evil-80'], 'merged, as ingress-nginx does');
  const t = takeovers(open.warnings);
  assert.is(t.length, 2, t.join('\n'));
  assert.match(t.find((w) => w.startsWith('Ingress team-b/canary'))!, /takes traffic of Ingress team-a\/web .*canary backend team-b-evil-80 takes part of the traffic of host shop\.test path \//);
  assert.match(t.find((w) => w.startsWith('Ingress team-a/web'))!, /Ingress team-b\/canary of namespace team-b takes traffic of this Ingress/);

  const owned = build(store, true);
  assert.equal(backend(owned.config, 'team-a-web-80')!.alternativeBackends, []);
  assert.is(backend(owned.config, 'team-b-evil-80'), undefined);
  assert.ok(owned.warnings.some((w) => w.object === 'Ingress team-b/canary' && /host shop\.test belongs to namespace team-a \(its oldest Ingress is team-a\/web\); its canary for path \/ is refused/.test(w.message)));
});

test('a canary of the same namespace is no takeover', () => {
  const store = cluster();
  store.put('Service', service('next', 'team-a'));
  store.put('Ingress', ingress('canary', 'shop.test', [['/', 'Prefix', 'next', 80]], { ns: 'team-a', ts: NEW, annotations: { canary: 'true', 'canary-weight': '10' } }));
  assert.equal(takeovers(build(store).warnings), []);
});

test('a regex path of another namespace tried before a tenant\'s path: warned; refused under --host-ownership', () => {
  const store = cluster();
  store.put('Ingress', ingress('rx', 'shop.test', [['/.*', 'ImplementationSpecific', 'evil', 80]], { ns: 'team-b', ts: NEW, annotations: { 'use-regex': 'true' } }));
  const open = build(store);
  assert.ok(paths(open.config, 'shop.test').includes('/.* -> team-b-evil-80'));
  const t = takeovers(open.warnings);
  assert.is(t.length, 2, t.join('\n'));
  assert.match(t[0]!, /^Ingress team-b\/rx: takes traffic of Ingress team-a\/web .*on host shop\.test path \/\.\* \(location "~\* \^\/\.\*"\) wins requests that path \/ \(location "~\* \^\/"\) matches, e\.g\. \//);
  assert.is(t.length, 2, 'one warning per pair of Ingresses: /api is longer, so it is tried first, and /.* takes nothing of it');

  const owned = build(store, true);
  assert.not.ok(paths(owned.config, 'shop.test').some((p) => p.includes('team-b')));
  assert.ok(owned.warnings.some((w) => w.object === 'Ingress team-b/rx' && w.message.includes('its rules for it are refused (--host-ownership)')));
  assert.equal(takeovers(owned.warnings).filter((w) => w.includes('takes traffic')), []);
});

test('an alias naming another tenant\'s host, or under its wildcard host, is no longer silent', () => {
  const store = cluster();
  store.put('Ingress', ingress('wild', '*.shop.test', [['/', 'Prefix', 'web', 80]], { ns: 'team-a', ts: OLD }));
  // x.pay.shop.test is two labels below: the wildcard's server name does not serve it, so no takeover.
  store.put('Ingress', ingress('x', 'evil.test', [['/', 'Prefix', 'evil', 80]], { ns: 'team-b', ts: NEW, annotations: { 'server-alias': 'shop.test,pay.shop.test,x.pay.shop.test' } }));
  const open = build(store);
  const evil = open.config.servers.find((s) => s.hostname === 'evil.test')!;
  assert.equal(evil.aliases, ['pay.shop.test', 'x.pay.shop.test'], 'a host is never an alias; a name under a wildcard can be');
  assert.ok(open.warnings.some((w) => w.object === 'Ingress team-b/x' && /alias shop\.test of host evil\.test is a host of Ingress team-a\/web \(namespace team-a\); ignored/.test(w.message)));
  const t = takeovers(open.warnings);
  assert.is(t.length, 2, t.join('\n'));
  assert.match(t.join('\n'), /Ingress team-a\/wild: Ingress team-b\/x of namespace team-b takes traffic of this Ingress: alias pay\.shop\.test of host evil\.test is served instead of the wildcard host \*\.shop\.test/);

  const owned = build(store, true);
  assert.equal(owned.config.servers.find((s) => s.hostname === 'evil.test')!.aliases, ['x.pay.shop.test']);
  assert.ok(owned.warnings.some((w) => w.object === 'Ingress team-b/x' && /host \*\.shop\.test belongs to namespace team-a .*its alias pay\.shop\.test, a name under that wildcard host, is refused/.test(w.message)));
});

test("a host under another namespace's wildcard host is warned on both Ingresses, by full and incremental builds alike", () => {
  const store = cluster();
  store.put('Ingress', ingress('wild', '*.shop.test', [['/', 'Prefix', 'web', 80]], { ns: 'team-a', ts: OLD }));
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  assert.equal(takeovers(builder.build(store).warnings), []);
  store.put('Ingress', ingress('under', 'pay.shop.test', [['/', 'Prefix', 'evil', 80]], { ns: 'team-b', ts: NEW }));
  const incremental = builder.build(store, [{ kind: 'Ingress', key: 'team-b/under' }]);
  const t = takeovers(incremental.warnings);
  assert.equal(t, takeovers(build(store).warnings), 'the incremental build reports what a full one does');
  assert.is(t.length, 2, t.join('\n'));
  assert.match(t.find((w) => w.startsWith('Ingress team-b/under'))!, /takes traffic of Ingress team-a\/wild .*host pay\.shop\.test is served instead of the wildcard host \*\.shop\.test/);
  assert.match(t.find((w) => w.startsWith('Ingress team-a/wild'))!, /Ingress team-b\/under of namespace team-b takes traffic of this Ingress/);
  // Its own namespace's host under the wildcard, and a name two labels below, take nothing.
  store.put('Ingress', ingress('own', 'cart.shop.test', [['/', 'Prefix', 'web', 80]], { ns: 'team-a', ts: NEW }));
  store.put('Ingress', ingress('deep', 'x.pay2.shop.test', [['/', 'Prefix', 'evil', 80]], { ns: 'team-b', ts: NEW }));
  assert.equal(takeovers(builder.build(store, [{ kind: 'Ingress', key: 'team-a/own' }, { kind: 'Ingress', key: 'team-b/deep' }]).warnings), t);
  // The taker leaves: its warnings go with it, incrementally too.
  store.remove('Ingress', ingress('under', 'pay.shop.test', [], { ns: 'team-b' }));
  assert.equal(takeovers(builder.build(store, [{ kind: 'Ingress', key: 'team-b/under' }]).warnings), []);
});

test('--host-ownership: the namespace of the oldest Ingress owns a host; the owner changing is followed by incremental builds', () => {
  const store = cluster();
  const other = (path: string) => ingress('other', 'shop.test', [[path, 'Prefix', 'evil', 80]], { ns: 'team-b', ts: NEW });
  store.put('Ingress', other('/admin'));
  assert.ok(paths(build(store).config, 'shop.test').includes('/admin -> team-b-evil-80'), 'off by default: ingress-nginx merges the paths');

  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, hostOwnership: true });
  const cold = () => stableJSON(build(store, true).config);
  let r = builder.build(store);
  assert.not.ok(paths(r.config, 'shop.test').some((p) => p.includes('team-b')));
  assert.is(backend(r.config, 'team-b-evil-80'), undefined, 'no backend for refused rules');
  assert.ok(r.warnings.some((w) => w.object === 'Ingress team-b/other' && w.reason === 'Takeover'));

  // A contested host costs its own hosts' work (the topology patched, not recomputed), and gives
  // the decisions and warnings of a full build.
  const coldWarnings = () => build(store, true).warnings;
  store.put('Ingress', other('/admin2'));
  r = builder.build(store, [{ kind: 'Ingress', key: 'team-b/other' }]);
  assert.not.ok(paths(r.config, 'shop.test').some((p) => p.includes('team-b')));
  assert.is(stableJSON(r.config), cold());
  assert.equal(r.warnings, coldWarnings());
  assert.is(r.path, 'updated', 'a change on a contested host patches the topology');

  store.remove('Ingress', ingress('web', 'shop.test', [], { ns: 'team-a' }));
  r = builder.build(store, [{ kind: 'Ingress', key: 'team-a/web' }]);
  assert.ok(paths(r.config, 'shop.test').includes('/admin2 -> team-b-evil-80'), 'the next oldest namespace owns the host now');
  assert.is(stableJSON(r.config), cold());
  assert.equal(r.warnings, coldWarnings());
  assert.is(r.path, 'updated', 'the owner changing patches the topology');

  store.put('Ingress', ingress('late', 'shop.test', [['/late', 'Prefix', 'web', 80]], { ns: 'team-c', ts: '2026-03-01T00:00:00Z' }));
  r = builder.build(store, [{ kind: 'Ingress', key: 'team-c/late' }]);
  assert.not.ok(paths(r.config, 'shop.test').some((p) => p.includes('/late')), 'a third namespace is refused too');
  assert.is(stableJSON(r.config), cold());
  assert.equal(r.warnings, coldWarnings());
  assert.is(r.path, 'updated');
});

test.run();
