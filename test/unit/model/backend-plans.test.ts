// A backend shared by several Ingresses, as ingress-nginx assembles it: load balancing, hashing
// and service-upstream from the oldest user; cookie affinity from the paths that set it (the
// cookie only on them, its settings the oldest such Ingress's, the first affinity-mode set); and
// a warning on each Ingress whose settings the backend does not take, naming the one it takes.
// Checked on a full build and on the incremental topology update after one Ingress changes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import type { Backend } from '../../../src/model/core/types.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';

const OLD = '2026-01-01T00:00:00Z';
const MID = '2026-01-02T00:00:00Z';
const NEW = '2026-01-03T00:00:00Z';

function build(ingresses: Ingress[]) {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1', '10.0.0.2']));
  for (const i of ingresses) store.put('Ingress', i);
  const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z') });
  const first = builder.build(store);
  return { store, builder, first };
}
const web = (b: { config: { backends: readonly Backend[] } }) => b.config.backends.find((x) => x.name === 'default-web-80')!;
const sharedWarnings = (warnings: ReadonlyArray<{ object: string; message: string }>) =>
  warnings.filter((w) => w.message.startsWith('backend default-web-80 is shared')).map((w) => `${w.object}: ${w.message}`);

test('the cookie is set on the affinity Ingress\'s paths only, whichever Ingress is older', () => {
  for (const [sticky, plain] of [[OLD, NEW], [NEW, OLD]] as const) {
    const { first } = build([
      ingress('sticky', 'a.example.com', [['/foo/bar', 'Prefix', 'web', 80]], { ts: sticky, annotations: { affinity: 'cookie' } }),
      ingress('plain', 'a.example.com', [['/foo', 'Prefix', 'web', 80]], { ts: plain }),
    ]);
    const a = web(first).sessionAffinityConfig;
    assert.is(a.name, 'cookie', `sticky ${sticky === OLD ? 'older' : 'newer'}`);
    assert.equal(a.cookieSessionAffinity.locations, { 'a.example.com': ['/foo/bar'] });
    assert.equal(sharedWarnings(first.warnings), [
      'Ingress default/plain: backend default-web-80 is shared with Ingress default/sticky, which sets affinity "cookie": on this Ingress\'s paths a request keeps the endpoint its cookie names, and no cookie is set',
    ]);
  }
});

test('cookie settings are the oldest affinity Ingress\'s (ingress-nginx: the newest\'s), affinity-mode the first one set; the others are told', () => {
  const { first } = build([
    ingress('one', 'one.example.com', [['/', 'Prefix', 'web', 80]], { ts: OLD, annotations: { affinity: 'cookie', 'session-cookie-name': 'first' } }),
    ingress('two', 'two.example.com', [['/', 'Prefix', 'web', 80]], { ts: MID, annotations: { affinity: 'cookie', 'affinity-mode': 'persistent', 'session-cookie-name': 'second' } }),
    ingress('three', 'three.example.com', [['/x', 'Prefix', 'web', 80]], { ts: NEW, annotations: { affinity: 'cookie', 'affinity-mode': 'balanced', 'session-cookie-name': 'second' } }),
  ]);
  const a = web(first).sessionAffinityConfig;
  assert.is(a.cookieSessionAffinity.name, 'first');
  assert.is(a.mode, 'persistent', 'the oldest Ingress that sets affinity-mode');
  assert.equal(a.cookieSessionAffinity.locations, { 'one.example.com': ['/'], 'two.example.com': ['/'], 'three.example.com': ['/x'] });
  assert.equal(sharedWarnings(first.warnings), [
    'Ingress default/two: backend default-web-80 is shared with Ingress default/one, the oldest Ingress using it with affinity "cookie": its session cookie (session-cookie-*) is that Ingress\'s, not this one\'s',
    'Ingress default/three: backend default-web-80 is shared with Ingress default/one, the oldest Ingress using it with affinity "cookie": its session cookie (session-cookie-*) is that Ingress\'s, not this one\'s',
    'Ingress default/three: backend default-web-80 is shared with Ingress default/two, the oldest Ingress using it that sets affinity-mode: its affinity-mode is that Ingress\'s, not this one\'s',
  ]);
});

test('load-balance, upstream-hash-by and service-upstream are the oldest user\'s; a newer Ingress asking otherwise is told', () => {
  const { first } = build([
    ingress('owner', 'o.example.com', [['/', 'Prefix', 'web', 80]], { ts: OLD, annotations: { 'load-balance': 'ewma' } }),
    ingress('user', 'u.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'upstream-hash-by': '$request_uri', 'service-upstream': 'true' } }),
  ]);
  const b = web(first);
  assert.is(b['load-balance'], 'ewma');
  assert.equal(b.upstreamHashByConfig, {});
  assert.equal(sharedWarnings(first.warnings), [
    'Ingress default/user: backend default-web-80 is shared with Ingress default/owner, the oldest Ingress using it: its load-balance, upstream-hash-by, service-upstream are that Ingress\'s, not this one\'s',
  ]);
});

test('the incremental update finds the same affinity and warnings as a full build', () => {
  const sticky = ingress('sticky', 'a.example.com', [['/foo/bar', 'Prefix', 'web', 80]], { ts: NEW, annotations: { affinity: 'cookie' } });
  const plain = ingress('plain', 'a.example.com', [['/foo', 'Prefix', 'web', 80]], { ts: OLD });
  const { store, builder, first } = build([sticky, plain]);
  assert.is(sharedWarnings(first.warnings).length, 1);
  // The affinity Ingress drops affinity: the backend is no longer sticky, and nobody is warned.
  store.put('Ingress', { ...sticky, metadata: { ...sticky.metadata, resourceVersion: '2', annotations: {} } });
  const second = builder.build(store, [{ kind: 'Ingress', key: 'default/sticky' }]);
  assert.is(web(second).sessionAffinityConfig.name, '');
  assert.equal(sharedWarnings(second.warnings), []);
  // And back.
  store.put('Ingress', { ...sticky, metadata: { ...sticky.metadata, resourceVersion: '3' } });
  const third = builder.build(store, [{ kind: 'Ingress', key: 'default/sticky' }]);
  assert.equal(web(third).sessionAffinityConfig, web(first).sessionAffinityConfig);
  assert.equal(third.warnings, first.warnings);
});

test('use-regex with cookie affinity and no session-cookie-path is warned about, as ingress-nginx logs it', () => {
  const { first } = build([
    ingress('regex', 'r.example.com', [['/foo/.*', 'ImplementationSpecific', 'web', 80]], { annotations: { affinity: 'cookie', 'use-regex': 'true' } }),
  ]);
  assert.ok(first.warnings.some((w) => w.object === 'Ingress default/regex' && w.message.startsWith('session-cookie-path should be set when use-regex is true')));
});

test.run();
