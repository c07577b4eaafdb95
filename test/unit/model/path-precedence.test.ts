// Who owns a request on a shared host (docs/security.md): of two paths that make one NGINX
// location, the oldest Ingress's is kept whatever its spelling; a path of one namespace that NGINX
// chooses for requests an older Ingress of another namespace matches is warned on both, with an
// example, and the webhook says so before it is applied. The regular expressions are compared
// as automata, never run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { createReviewer } from '../../../src/admission/review.js';
import { LocationChooser } from '../../../src/model/core/location-choice.js';
import { regexLanguage, commonURIs } from '../../../src/model/core/regex-language.js';
import type { Configuration, ModelWarning, Server } from '../../../src/model/core/types.js';
import type { PathType } from '../../../src/store/kube-types.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';

const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-02-01T00:00:00Z';
const HOST = 'shop.test';
type Paths = Array<[string, PathType]>;

/** team-b's older Ingress (its paths behind an allowlist) and team-a's younger one on one host. */
function cluster(victim: Paths, takerPaths: Paths, opts: { takerNs?: string; takerAnnotations?: Record<string, string>; victimTs?: string } = {}) {
  const store = testStore();
  for (const [ns, svc] of [['team-b', 'secret'], ['team-a', 'evil']] as const) {
    store.put('Service', service(svc, ns));
    store.put('EndpointSlice', slice(`${svc}-1`, svc, ['10.0.0.1'], ns));
  }
  store.put('Ingress', ingress('victim', HOST, victim.map(([p, t]) => [p, t, 'secret', 80]), {
    ns: 'team-b', ts: opts.victimTs ?? OLD, annotations: { 'whitelist-source-range': '10.9.0.0/16' },
  }));
  const taker = ingress('taker', HOST, takerPaths.map(([p, t]) => [p, t, 'evil', 80]), { ns: opts.takerNs ?? 'team-a', ts: NEW, annotations: opts.takerAnnotations ?? {} });
  return { store, taker };
}

function build(store: ReturnType<typeof testStore>, dynamicRoutes = false) {
  return createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date(NEW), dynamicRoutes }).build(store);
}

const server = (c: Configuration): Server => c.servers.find((s) => s.hostname === HOST)!;
/** Where a URI goes: the backend of the location NGINX (and the router) choose. */
const goesTo = (c: Configuration, uri: string) => new LocationChooser(server(c)).choose(uri)?.loc.backend ?? null;
const takeovers = (ws: readonly ModelWarning[]) => ws.filter((w) => w.reason === 'Takeover').map((w) => `${w.object}: ${w.message}`);

test('finding 1: Prefix /internal and a younger ImplementationSpecific /internal/ make one location; the older Ingress keeps it, static and dynamic', () => {
  for (const dynamic of [false, true]) {
    const { store, taker } = cluster([['/internal', 'Prefix']], [['/internal/', 'ImplementationSpecific']]);
    store.put('Ingress', taker);
    const r = build(store, dynamic);
    assert.is(server(r.config).staticBecause === null, dynamic);
    for (const uri of ['/internal', '/internal/', '/internal/anything']) assert.is(goesTo(r.config, uri), 'team-b-secret-80', `${uri} (dynamic ${dynamic})`);
    assert.ok(r.warnings.some((w) => w.object === 'Ingress team-a/taker' && w.message === 'host shop.test location "/internal/" would duplicate the one from the older Ingress team-b/victim; ignored'), JSON.stringify(r.warnings));
    assert.equal(takeovers(r.warnings), [], 'the older Ingress lost nothing');
  }
  // Ages the other way round: the older ImplementationSpecific /internal/ keeps /internal/; the
  // younger Prefix /internal keeps `= /internal`, which the older one answered with NGINX's 301
  // to /internal/: that request is taken, and said so.
  const { store, taker } = cluster([['/internal/', 'ImplementationSpecific']], [['/internal', 'Prefix']]);
  store.put('Ingress', taker);
  const r = build(store);
  assert.is(goesTo(r.config, '/internal/x'), 'team-b-secret-80');
  assert.is(goesTo(r.config, '/internal'), 'team-a-evil-80');
  assert.match(takeovers(r.warnings).join('\n'), /Ingress team-a\/taker: takes traffic of Ingress team-b\/victim .* path \/internal \(location "= \/internal"\) wins requests that path \/internal\/ matches, e\.g\. \/internal$/m);
});

test('finding 2: Exact /admin, Exact /internal and Prefix /internal/deep over an older namespace\'s paths are warned on both Ingresses, with an example', () => {
  const cases: Array<{ victim: Paths; taker: Paths; uri: string; says: RegExp }> = [
    { victim: [['/admin', 'Prefix']], taker: [['/admin', 'Exact']], uri: '/admin', says: /Exact path \/admin wins requests that path \/admin \(location "= \/admin"\) matches, e\.g\. \/admin$/ },
    { victim: [['/internal', 'Prefix']], taker: [['/internal', 'Exact']], uri: '/internal', says: /Exact path \/internal wins requests that path \/internal \(location "= \/internal"\) matches/ },
    { victim: [['/internal', 'Prefix']], taker: [['/internal/deep', 'Prefix']], uri: '/internal/deep/x', says: /path \/internal\/deep \(location "\/internal\/deep\/"\) wins requests that path \/internal \(location "\/internal\/"\) matches, e\.g\. \/internal\/deep\/$/ },
    { victim: [['/', 'Prefix']], taker: [['/api', 'Prefix']], uri: '/api/v1', says: /path \/api \(location "\/api\/"\) wins requests that path \/ matches/ },
  ];
  for (const c of cases) {
    const { store, taker } = cluster(c.victim, c.taker);
    store.put('Ingress', taker);
    const r = build(store);
    assert.is(goesTo(r.config, c.uri), 'team-a-evil-80', `${c.uri}: the more specific path wins, as the Ingress spec says`);
    const t = takeovers(r.warnings);
    assert.is(t.length, 2, t.join('\n'));
    assert.match(t.find((w) => w.startsWith('Ingress team-a/taker: takes traffic of Ingress team-b/victim (namespace team-b): on host shop.test '))!, c.says);
    assert.ok(t.some((w) => w.startsWith('Ingress team-b/victim: Ingress team-a/taker of namespace team-a takes traffic of this Ingress: on host shop.test ')), t.join('\n'));
    // The same paths in the victim's own namespace, or a younger victim, are no takeover.
    const same = cluster(c.victim, c.taker, { takerNs: 'team-b' });
    same.store.put('Ingress', same.taker);
    assert.equal(takeovers(build(same.store).warnings), []);
    const younger = cluster(c.victim, c.taker, { victimTs: '2026-03-01T00:00:00Z' });
    younger.store.put('Ingress', younger.taker);
    assert.equal(takeovers(build(younger.store).warnings), [], 'a younger Ingress had nothing to lose');
  }
});

test('paths that share no request are no takeover: a shorter younger path, a sibling, a longer older one', () => {
  for (const [victim, taker] of [
    [[['/api/x', 'Prefix']], [['/api', 'Prefix']]], [[['/api', 'Prefix']], [['/web', 'Prefix']]], [[['/ab', 'Prefix']], [['/a', 'Prefix']]],
  ] as Array<[Paths, Paths]>) {
    const { store, taker: t } = cluster(victim, taker);
    store.put('Ingress', t);
    assert.equal(takeovers(build(store).warnings), [], JSON.stringify({ victim, taker }));
  }
});

test('NGINX answers /p with a 301 to a prefix location /p/ without `= /p`: that location owns /p, statically and in the router alike', () => {
  const { store, taker } = cluster([['/', 'Prefix']], [['/b/', 'ImplementationSpecific']]);
  store.put('Ingress', taker);
  const r = build(store);
  assert.is(goesTo(r.config, '/b'), 'team-a-evil-80', 'the 301 to /b/');
  assert.is(goesTo(r.config, '/bc'), 'team-b-secret-80');
  assert.is(takeovers(r.warnings).length, 2);
});

test('host-wide regex mode: patterns are compared as automata; what cannot be compared is reported as possible, never silently', () => {
  const rx = { 'use-regex': 'true' };
  let { store, taker } = cluster([['/internal', 'Prefix']], [['/int[e]rnal/d', 'ImplementationSpecific']], { takerAnnotations: rx });
  store.put('Ingress', taker);
  assert.match(takeovers(build(store).warnings).join('\n'), /path \/int\[e\]rnal\/d \(location "~\* \^\/int\[e\]rnal\/d"\) wins requests that path \/internal \(location "~\* \^\/internal"\) matches, e\.g\. \/internal\/d/);
  // Disjoint patterns share no request.
  ({ store, taker } = cluster([['/internal', 'Prefix']], [['/api/(v1|v2)', 'ImplementationSpecific']], { takerAnnotations: rx }));
  store.put('Ingress', taker);
  assert.equal(takeovers(build(store).warnings), []);
  // A look-ahead is beyond an automaton: said as possible.
  ({ store, taker } = cluster([['/internal', 'Prefix']], [['/(?=i)[a-z]+/', 'ImplementationSpecific']], { takerAnnotations: rx }));
  store.put('Ingress', taker);
  assert.match(takeovers(build(store).warnings).join('\n'), /may win requests that path \/internal \(location "~\* \^\/internal"\) matches \(its regular expressions could not be compared\)/);
});

test('past the bound of comparisons per host, what was not compared is said as possible, not dropped', () => {
  // 40 patterns, none of which shares a request with ~* ^/internal: each costs a comparison.
  const patterns: Paths = Array.from({ length: 40 }, (_, i) => [`/intern[0-9]+x{${i + 1}}`, 'ImplementationSpecific']);
  const { store, taker } = cluster([['/internal', 'Prefix']], patterns, { takerAnnotations: { 'use-regex': 'true' } });
  store.put('Ingress', taker);
  const started = process.hrtime.bigint();
  const t = takeovers(build(store).warnings);
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 20_000, 'bounded');
  assert.is(t.length, 2, t.join('\n'));
  assert.match(t[0]!, /may win requests that path \/internal \(location "~\* \^\/internal"\) matches \(its regular expressions could not be compared\)/);
  // Under the bound the same patterns are compared, and found to share nothing.
  const few = cluster([['/internal', 'Prefix']], patterns.slice(0, 20), { takerAnnotations: { 'use-regex': 'true' } });
  few.store.put('Ingress', few.taker);
  assert.equal(takeovers(build(few.store).warnings), []);
});

test('the admission review says it before it is applied: a takeover is a warning, a duplicate of an older location a denial', () => {
  const reviewFor = (victim: Paths, taker: Paths) => {
    const { store, taker: t } = cluster(victim, taker);
    return createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date(NEW) }).review(t);
  };
  const exact = reviewFor([['/admin', 'Prefix']], [['/admin', 'Exact']]);
  assert.ok(exact.allowed);
  assert.ok(exact.findings.some((f) => f.severity === 'warn' && f.rule === 'cross-namespace-takeover' && /takes traffic of Ingress team-b\/victim .*e\.g\. \/admin$/.test(f.message)), JSON.stringify(exact.findings));
  const dup = reviewFor([['/internal', 'Prefix']], [['/internal/', 'ImplementationSpecific']]);
  assert.not.ok(dup.allowed);
  assert.ok(dup.findings.some((f) => f.severity === 'deny' && /location "\/internal\/" would duplicate the one from the older Ingress team-b\/victim/.test(f.message)), JSON.stringify(dup.findings));
});

test('regular-expression languages: `$`, caseless matching, what the automaton cannot hold, and a hostile pattern stay bounded', () => {
  const rewrite = regexLanguage('/foo(/|$)(.*)', true)!;
  assert.equal(['/foo', '/foo/', '/FOO/bar', '/foox'].map((u) => rewrite.test(u)), [true, true, true, false]);
  assert.equal(commonURIs(rewrite, regexLanguage('/foo/bar', true)!, 1), ['/foo/bar']);
  assert.equal(commonURIs(regexLanguage('/a', true)!, regexLanguage('/b', true)!, 1), []);
  assert.is(regexLanguage('/(?<=a)b', true), null);
  assert.equal(['/aa', '/ab'].map((u) => regexLanguage('/(a)\\1', true)!.test(u)), [true, false], 'a back-reference of finitely many words');
  assert.is(regexLanguage('/(a+)\\1', true), null);
  assert.is(regexLanguage('/(a{100}){100}', true), null, 'too many states');
  const started = process.hrtime.bigint();
  assert.ok(regexLanguage('/(a|aa)+$', true)!.test(`/${'a'.repeat(5000)}`));
  assert.ok(Number(process.hrtime.bigint() - started) / 1e6 < 2000, 'linear in the URI');
});

test.run();
