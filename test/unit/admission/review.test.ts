// The webhook's review logic without the HTTPS server: which Ingresses are refused and which only
// warned about, that every warn rule of src/admission/verdict.ts is reached through the real
// model, that a review builds only the candidate's neighbourhood, and that it agrees with the
// controller's full model build about every Ingress of a cluster.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigMap, Ingress } from '../../../src/store/kube-types.js';
import { createReviewer, type ReviewResult } from '../../../src/admission/review.js';
import { WARN_RULES, severityOf, warnRulesMarkdown } from '../../../src/admission/verdict.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { PREFIX, ingress, service, slice, testStore, tlsSecret } from '../../support/model-objects.js';
import { deepInspectionMatch } from '../../../src/model/core/paths.js';

const certs = new URL('../../fixtures/model/_certs/', import.meta.url).pathname;
const pem = (f: string) => readFileSync(join(certs, f), 'utf8');

function cluster(options: Parameters<typeof testStore>[0] = {}) {
  const store = testStore(options);
  for (const name of ['web', 'api', 'other']) {
    store.put('Service', service(name));
    store.put('EndpointSlice', slice(`${name}-1`, name, ['10.0.0.1']));
  }
  store.put('Service', service('noeps'));
  store.put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  store.put('Secret', tlsSecret('mismatch', pem('tls.crt'), pem('other.key')));
  store.put('Secret', tlsSecret('other', pem('other.crt'), pem('other.key')));
  store.put('Ingress', ingress('owner', 'shop.example.com', [['/cart', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z') });
  return { store, reviewer };
}

const denials = (r: ReviewResult) => r.findings.filter((f) => f.severity === 'deny').map((f) => `${f.field}: ${f.message}`);
const warnings = (r: ReviewResult) => r.findings.filter((f) => f.severity === 'warn');
const rulesOf = (r: ReviewResult) => warnings(r).map((f) => f.rule);

const NEW = '2026-05-01T00:00:00Z';
const rulesHit = new Set<string>();
function record(r: ReviewResult): ReviewResult {
  for (const f of r.findings) if (f.rule) rulesHit.add(f.rule);
  return r;
}

test('a valid Ingress is allowed without findings; the review is of our class only', () => {
  const { reviewer } = cluster();
  const r = reviewer.review(ingress('fine', 'fine.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'proxy-body-size': '8m' } }));
  assert.ok(r.served);
  assert.ok(r.allowed);
  assert.equal(r.findings, []);
  const other = ingress('theirs', 'x.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'kubernetes.io/ingress.class': 'traefik', 'proxy-body-size': 'nonsense' } });
  const r2 = reviewer.review(other);
  assert.is(r2.served, false);
  assert.ok(r2.allowed, 'another controller\'s Ingress is none of our business');
  assert.match(r2.reason, /traefik/);
});

test('invalid annotation values, risk, disabled snippets and bad paths deny, each naming its field', () => {
  const { reviewer } = cluster();
  const r = reviewer.review(ingress('bad', 'bad.example.com', [['/ok', 'Prefix', 'web', 80], ['/a b', 'Prefix', 'web', 80], ['/x[0-9]', 'Exact', 'web', 80]], {
    ts: NEW,
    annotations: {
      'proxy-body-size': 'lots', 'configuration-snippet': 'return 200;', 'limit-rps': 'x',
    },
  }));
  assert.not.ok(r.allowed);
  const d = denials(r);
  assert.ok(d.some((x) => x.startsWith(`metadata.annotations["${PREFIX}/proxy-body-size"]: "lots" is not a size`)), d.join('\n'));
  assert.ok(d.some((x) => x.startsWith(`metadata.annotations["${PREFIX}/configuration-snippet"]: annotation has risk Critical, above annotations-risk-level High`)), d.join('\n'));
  assert.ok(d.some((x) => x.startsWith(`metadata.annotations["${PREFIX}/limit-rps"]`)), d.join('\n'));
  assert.ok(d.some((x) => /^spec\.rules\[0\]\.http\.paths\[1\]\.path: path "\/a b"/.test(x)), d.join('\n'));
  assert.ok(d.some((x) => /^spec\.rules\[0\]\.http\.paths\[2\]\.path: .*strict-validate-path-type/.test(x)), d.join('\n'));
  assert.is(d.length, 5, d.join('\n'));
});

test('the ConfigMap decides: a risk above annotations-risk-level denies, and so do snippets while they are disabled', () => {
  const { store, reviewer } = cluster({ configmap: 'ingress/cfg' });
  const cfg = (data: Record<string, string>) => store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ingress' }, data } as ConfigMap);
  cfg({ 'annotations-risk-level': 'Low' });
  const risky = ingress('risky', 'risky.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'rewrite-target': '/x' } });
  const r = reviewer.review(risky);
  assert.not.ok(r.allowed);
  assert.match(denials(r)[0]!, /rewrite-target.*above annotations-risk-level Low/);
  cfg({ 'annotations-risk-level': 'Critical' });
  assert.ok(reviewer.review(risky).allowed, 'the same Ingress, once the ConfigMap allows it');
  const snippet = ingress('snip', 'snip.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'configuration-snippet': 'return 200;' } });
  assert.match(denials(reviewer.review(snippet))[0]!, /snippet annotations are not allowed/);
  cfg({ 'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'true' });
  assert.ok(reviewer.review(snippet).allowed);
});

test('a key above annotations-risk-level denies even where its group reads nothing else (modsecurity-transaction-id alone)', () => {
  const { store, reviewer } = cluster({ configmap: 'ingress/cfg' });
  store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ingress' }, data: { 'annotations-risk-level': 'Medium', 'allow-snippet-annotations': 'true' } } as ConfigMap);
  const r = reviewer.review(ingress('modsec', 'modsec.example.com', [['/', 'Prefix', 'web', 80]], {
    ts: NEW, annotations: { 'denylist-source-range': '1.1.1.1/32', 'modsecurity-transaction-id': 'bla123', 'modsecurity-snippet': 'SecRuleEngine On' },
  }));
  assert.not.ok(r.allowed);
  const d = denials(r);
  assert.ok(d.some((x) => x.startsWith(`metadata.annotations["${PREFIX}/modsecurity-transaction-id"]: annotation has risk High, above annotations-risk-level Medium`)), d.join('\n'));
  assert.ok(d.some((x) => x.startsWith(`metadata.annotations["${PREFIX}/modsecurity-snippet"]: annotation has risk Critical, above annotations-risk-level Medium`)), d.join('\n'));
  assert.is(d.length, 2, d.join('\n'));
});

test('a host and path another Ingress already owns denies, naming it; the older owner updating is fine', () => {
  const { reviewer, store } = cluster();
  const r = reviewer.review(ingress('thief', 'shop.example.com', [['/cart', 'Prefix', 'api', 80], ['/new', 'Prefix', 'api', 80]], { ts: NEW }));
  assert.not.ok(r.allowed);
  assert.equal(denials(r), ['spec.rules: host shop.example.com path /cart (Prefix) is already defined by the older Ingress default/owner; ignored']);
  assert.is(r.tested, 2, 'the candidate and the owner of its host');
  // An Exact /cart does not collide with Prefix /cart in NGINX: no denial.
  assert.ok(reviewer.review(ingress('exact', 'shop.example.com', [['/cart', 'Exact', 'api', 80]], { ts: NEW })).allowed);
  // The owner itself, updated (same creation time), keeps its path.
  const owner = store.getIngress('default/owner')!;
  const updated: Ingress = { ...owner, spec: { ...owner.spec, rules: [{ host: 'shop.example.com', http: { paths: [...owner.spec.rules![0]!.http!.paths, { path: '/more', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } };
  assert.ok(reviewer.review(updated).allowed);
});

test('after warm() and store changes, a review sees each Ingress under its current hosts only', () => {
  const { reviewer, store } = cluster();
  const thief = () => ingress('thief', 'shop.example.com', [['/cart', 'Prefix', 'api', 80]], { ts: NEW });
  reviewer.warm();
  assert.not.ok(reviewer.review(thief()).allowed, 'the owner holds shop.example.com/cart');
  // The owner moves to another host: its old host is free, the new one taken.
  store.put('Ingress', ingress('owner', 'moved.example.com', [['/cart', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  const r = reviewer.review(thief());
  assert.ok(r.allowed, denials(r).join('; '));
  assert.is(r.tested, 1, 'no other Ingress names shop.example.com now');
  const moved = reviewer.review(ingress('thief', 'moved.example.com', [['/cart', 'Prefix', 'api', 80]], { ts: NEW }));
  assert.equal(denials(moved), ['spec.rules: host moved.example.com path /cart (Prefix) is already defined by the older Ingress default/owner; ignored']);
});

test('an Ingress over the per-Ingress path budget is denied before any model is built, naming the flag', () => {
  const { store } = cluster();
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, budgets: { maxPathsPerIngress: 5, maxPathsPerNamespace: 0, maxBytesPerIngress: 0, maxBytesPerNamespace: 0 } });
  const paths = (n: number) => Array.from({ length: n }, (_, i) => [`/p${i}`, 'Prefix', 'web', 80] as [string, 'Prefix', string, number]);
  assert.ok(reviewer.review(ingress('five', 'five.example.com', paths(5), { ts: NEW })).allowed);
  const r = reviewer.review(ingress('six', 'six.example.com', paths(6), { ts: NEW }));
  assert.is(r.allowed, false);
  assert.equal(denials(r), ['spec.rules: 6 paths, more than one Ingress may hold (--max-paths-per-ingress=5); the controller would set it aside']);
  assert.is(r.tested, 0, 'no model was built');
});

test('a candidate without creationTimestamp is the newest (it is being created)', () => {
  const { reviewer } = cluster();
  const ing = ingress('fresh', 'shop.example.com', [['/cart', 'Prefix', 'api', 80]]);
  delete ing.metadata.creationTimestamp;
  assert.not.ok(reviewer.review(ing).allowed);
});

test('TLS: a Secret that does not fit the host denies; a missing one warns; cert-manager Ingresses only warn', () => {
  const { reviewer } = cluster();
  const tls = (secretName: string, annotations: Record<string, string> = {}) => reviewer.review(ingress('tls', 'tls.example.com', [['/', 'Prefix', 'web', 80]], {
    ts: NEW, annotations, tls: [{ hosts: ['tls.example.com'], secretName }],
  }));
  assert.ok(tls('tls').allowed);
  const wrong = tls('other');
  assert.not.ok(wrong.allowed);
  assert.match(denials(wrong)[0]!, /^spec\.tls\[0\]\.secretName: Secret default\/other: certificate is not valid for tls\.example\.com/);
  const mismatch = record(tls('mismatch'));
  assert.not.ok(mismatch.allowed);
  assert.match(denials(mismatch)[0]!, /does not match the certificate/);
  const missing = record(tls('absent'));
  assert.ok(missing.allowed);
  assert.equal(rulesOf(missing), ['missing-object']);
  const managed = record(tls('other', { 'cert-manager.io/cluster-issuer': 'letsencrypt' }));
  assert.ok(managed.allowed);
  assert.equal(rulesOf(managed), ['cert-manager-certificate']);
});

test('warn-only classes: unsupported annotation, missing Service and auth Secret, canary without primary, taken alias, no-effect annotations, a repeated path, a cross-namespace takeover, a renamed backend', () => {
  const { reviewer, store } = cluster();
  const check = (r: ReviewResult, rule: string) => {
    record(r);
    assert.ok(r.allowed, `${rule}: ${denials(r).join('; ')}`);
    assert.ok(rulesOf(r).includes(rule), `${rule} in ${JSON.stringify(r.findings)}`);
  };
  check(reviewer.review(ingress('u', 'u.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'no-such-annotation': 'http://m/' } })), 'unsupported-annotation');
  check(reviewer.review(ingress('s', 's.example.com', [['/', 'Prefix', 'noeps', 80]], { ts: NEW })), 'backend-endpoints');
  check(reviewer.review(ingress('m', 'm.example.com', [['/', 'Prefix', 'nosvc', 80]], { ts: NEW })), 'missing-object');
  check(reviewer.review(ingress('a', 'a.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'auth-type': 'basic', 'auth-secret': 'nope' } })), 'missing-object');
  check(reviewer.review(ingress('c', 'nocanary.example.com', [['/', 'Prefix', 'api', 80]], { ts: NEW, annotations: { canary: 'true', 'canary-weight': '10' } })), 'canary-pairing');
  check(reviewer.review(ingress('n', 'n.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'canary-weight': '10' } })), 'no-effect');
  check(reviewer.review(ingress('g', 'g.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'backend-protocol': 'GRPC' } })), 'grpc-cleartext');
  const twice = ingress('t', 't.example.com', [['/p', 'Prefix', 'web', 80], ['/p', 'Prefix', 'api', 80]], { ts: NEW });
  check(reviewer.review(twice), 'path-listed-twice');
  check(reviewer.review(ingress('rx', 'rx.example.com', [['/exact', 'Exact', 'web', 80], ['/r', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'rewrite-target': '/' } })), 'regex-mode-exact');
  store.put('Ingress', ingress('first', 'first.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'server-alias': 'shared.example.com' } }));
  check(reviewer.review(ingress('second', 'second.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'server-alias': 'shared.example.com' } })), 'alias-taken');
  check(reviewer.review(ingress('third', 'third.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'server-alias': 'shop.example.com' } })), 'alias-taken');
  // Another namespace: its canary on the owner's path, and a Service whose backend name is default's.
  store.put('Service', service('cart', 'team-b'));
  store.put('EndpointSlice', slice('cart-1', 'cart', ['10.0.1.1'], 'team-b'));
  check(reviewer.review(ingress('cx', 'shop.example.com', [['/cart', 'Prefix', 'cart', 80]], { ns: 'team-b', ts: NEW, annotations: { canary: 'true', 'canary-weight': '10' } })), 'cross-namespace-takeover');
  store.put('Service', service('b-web', 'default'));
  store.put('EndpointSlice', slice('b-web-1', 'b-web', ['10.0.2.1']));
  store.put('Service', service('web', 'default-b'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.3.1'], 'default-b'));
  store.put('Ingress', ingress('older', 'older.example.com', [['/', 'Prefix', 'b-web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  check(reviewer.review(ingress('younger', 'older.example.com', [['/y', 'Prefix', 'web', 80]], { ns: 'default-b', ts: NEW })), 'backend-renamed');
  // A Service an ssl-passthrough host uses speaks TLS: plain HTTP to it from another host is told; HTTPS is not.
  store.put('Service', service('tls-only'));
  store.put('EndpointSlice', slice('tls-only-1', 'tls-only', ['10.0.4.1']));
  store.put('Ingress', ingress('pt', 'pt.example.com', [['/', 'Prefix', 'tls-only', 80]], { ts: '2026-01-01T00:00:00Z', annotations: { 'ssl-passthrough': 'true' } }));
  check(reviewer.review(ingress('plain', 'plain.example.com', [['/', 'Prefix', 'tls-only', 80]], { ts: NEW })), 'passthrough-backend-protocol');
  assert.not.ok(rulesOf(reviewer.review(ingress('tls', 'tls.example.com', [['/', 'Prefix', 'tls-only', 80]], { ts: NEW, annotations: { 'backend-protocol': 'HTTPS' } }))).includes('passthrough-backend-protocol'));
  check(reviewer.review(ingress('regex', 'regex.example.com', [['/r/.*', 'ImplementationSpecific', 'web', 80]], { ts: NEW, annotations: { affinity: 'cookie', 'use-regex': 'true' } })), 'session-cookie-path');
  check(reviewer.review(ingress('etc', 'etc.example.com', [['/etc/nginx', 'Prefix', 'web', 80]], { ts: NEW })), 'deep-inspection');
  check(reviewer.review(ingress('lua', 'lua.example.com', [['/x_by_lua', 'ImplementationSpecific', 'web', 80]], { ts: NEW })), 'deep-inspection');
  assert.equal(['/etc', '/etcetera/nginx', '/grassroots', '/a/root;x', '/var/run/secrets/token'].map(deepInspectionMatch), [null, null, null, 'a root directive', '/var/run/secrets']);
});

test('a backend shared with an Ingress on another host: the review sees the Ingress that decides its settings', () => {
  const { reviewer, store } = cluster();
  store.put('Ingress', ingress('sticky', 'sticky.example.com', [['/', 'Prefix', 'api', 80]], { ts: '2026-01-02T00:00:00Z', annotations: { affinity: 'cookie' } }));
  const r = record(reviewer.review(ingress('plain', 'plain.example.com', [['/', 'Prefix', 'api', 80]], { ts: NEW })));
  assert.ok(r.allowed);
  assert.equal(warnings(r).map((f) => `${f.rule}: ${f.message}`), [
    'shared-backend: backend default-api-80 is shared with Ingress default/sticky, which sets affinity "cookie": on this Ingress\'s paths a request keeps the endpoint its cookie names, and no cookie is set',
  ]);
  // The oldest user of a backend is in the neighbourhood (its load balancing is the backend's), not every user.
  for (let i = 0; i < 20; i++) store.put('Ingress', ingress(`user-${i}`, `user-${i}.example.com`, [['/', 'Prefix', 'other', 80]], { ts: NEW }));
  const hashed = record(reviewer.review(ingress('hashed', 'hashed.example.com', [['/', 'Prefix', 'other', 80]], { ts: '2026-06-01T00:00:00Z', annotations: { 'upstream-hash-by': '$uri' } })));
  assert.is(hashed.tested, 2);
  assert.match(warnings(hashed)[0]!.message, /^backend default-other-80 is shared with Ingress default\/user-\d+, the oldest Ingress using it: its upstream-hash-by are/);
});

test('what fails only for HTTP/2 clients is a warning: a snippet with a Lua API HTTP/2 requests cannot use, ciphers HTTP/2 clients refuse', () => {
  const { store, reviewer } = cluster({ configmap: 'ingress/cfg' });
  const cfg = (data: Record<string, string>) => store.put('ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'ingress' }, data } as ConfigMap);
  cfg({ 'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'true', 'ssl-protocols': 'TLSv1.2' });
  const capture = 'access_by_lua_block {\n  local res = ngx.location.capture("/check")\n}';
  const lua = record(reviewer.review(ingress('capture', 'capture.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'configuration-snippet': capture } })));
  assert.ok(lua.allowed, JSON.stringify(lua.findings));
  assert.match(warnings(lua).find((f) => f.rule === 'fails-over-http2')?.message ?? '', /line 2: lua-nginx-module refuses ngx\.location\.capture inside an HTTP\/2 request/);
  const ciphers = record(reviewer.review(ingress('cbc', 'cbc.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'ssl-ciphers': 'AES128-SHA:AES256-SHA' } })));
  assert.ok(ciphers.allowed);
  assert.match(warnings(ciphers).find((f) => f.rule === 'fails-over-http2')?.message ?? '', /HTTP\/2 needs an ECDHE or DHE cipher with GCM/);
  // With use-http2 off, or with an AEAD cipher, nothing to say.
  assert.equal(rulesOf(reviewer.review(ingress('gcm', 'gcm.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'ssl-ciphers': 'ECDHE-RSA-AES128-GCM-SHA256' } }))), []);
  cfg({ 'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'true', 'ssl-protocols': 'TLSv1.2', 'use-http2': 'false' });
  assert.equal(rulesOf(reviewer.review(ingress('capture', 'capture.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW, annotations: { 'configuration-snippet': capture } }))), []);
});

test("a host under another namespace's wildcard host is a takeover the review sees (the wildcard is in the candidate's neighbourhood)", () => {
  const { reviewer, store } = cluster();
  store.put('Ingress', ingress('wild', '*.wild.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  store.put('Service', service('cart', 'team-b'));
  store.put('EndpointSlice', slice('cart-1', 'cart', ['10.0.1.1'], 'team-b'));
  const r = record(reviewer.review(ingress('under', 'a.wild.example.com', [['/', 'Prefix', 'cart', 80]], { ns: 'team-b', ts: NEW })));
  assert.ok(r.allowed);
  assert.ok(rulesOf(r).includes('cross-namespace-takeover'), JSON.stringify(r.findings));
  // Two labels below the wildcard are not its names; the same namespace takes nothing from itself.
  const deeper = reviewer.review(ingress('deeper', 'x.a.wild.example.com', [['/', 'Prefix', 'cart', 80]], { ns: 'team-b', ts: NEW }));
  assert.not.ok(rulesOf(deeper).includes('cross-namespace-takeover'), JSON.stringify(deeper.findings));
  const own = reviewer.review(ingress('own', 'b.wild.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW }));
  assert.not.ok(rulesOf(own).includes('cross-namespace-takeover'), JSON.stringify(own.findings));
});

test('--disable-catch-all: a catch-all Ingress of ours is refused as ingress-nginx does', () => {
  const { reviewer } = cluster({ disableCatchAll: true });
  const catchAll: Ingress = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'all', namespace: 'default', creationTimestamp: NEW },
    spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
  };
  const r = reviewer.review(catchAll);
  assert.not.ok(r.allowed);
  assert.match(denials(r)[0]!, /--disable-catch-all/);
  const theirs = { ...catchAll, metadata: { ...catchAll.metadata, annotations: { 'kubernetes.io/ingress.class': 'other' } } };
  assert.ok(reviewer.review(theirs).allowed, 'not ours: no opinion');
});

test('every warn rule about Ingresses is reached through the model (a changed model message fails here)', () => {
  // The ConfigMap rules never concern a reviewed Ingress; test/unit/admission/lint.test.ts reaches them.
  // The Gateway API rules are reached in ./review-gateway.test.ts.
  const elsewhere = new Set(['unsupported-configmap-key', 'l4-external-name', 'gateway-api-not-built-yet', 'ingress-host-migration', 'routes-detached']);
  assert.equal([...rulesHit].sort(), WARN_RULES.map((r) => r.name).filter((n) => !elsewhere.has(n)).sort());
});

test('a review builds only the neighbourhood: 300 other Ingresses are not in the build', () => {
  const { store, reviewer } = cluster();
  for (let i = 0; i < 300; i++) store.put('Ingress', ingress(`bulk-${i}`, `bulk-${i}.example.com`, [['/', 'Prefix', 'web', 80]]));
  store.put('Ingress', ingress('neighbour', 'shop.example.com', [['/other', 'Prefix', 'web', 80]], { annotations: { 'server-alias': 'alias.example.com' } }));
  // Of the Ingresses sharing its Service, only the oldest (default/owner: the backend's settings are its).
  assert.is(reviewer.review(ingress('solo', 'solo.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW })).tested, 2);
  assert.is(reviewer.review(ingress('near', 'shop.example.com', [['/x', 'Prefix', 'web', 80]], { ts: NEW })).tested, 3);
  // Claiming a name another Ingress uses as an alias brings that Ingress in.
  assert.is(reviewer.review(ingress('alias', 'alias.example.com', [['/', 'Prefix', 'web', 80]], { ts: NEW })).tested, 3);
});

test('the review and the controller\'s full build agree on what is refused, Ingress by Ingress', () => {
  const { store, reviewer } = cluster();
  const objects = [
    ingress('dup', 'shop.example.com', [['/cart', 'Prefix', 'api', 80]], { ts: '2026-02-01T00:00:00Z' }),
    ingress('badval', 'v.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-02-02T00:00:00Z', annotations: { 'proxy-read-timeout': 'soon' } }),
    ingress('tlsbad', 'tls.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-02-03T00:00:00Z', tls: [{ hosts: ['tls.example.com'], secretName: 'other' }] }),
    ingress('tlsgood', 'tls.example.com', [['/ok', 'Prefix', 'web', 80]], { ts: '2026-02-04T00:00:00Z', tls: [{ hosts: ['tls.example.com'], secretName: 'tls' }] }),
    ingress('aliasA', 'a1.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-02-05T00:00:00Z', annotations: { 'server-alias': 'same.example.com' } }),
    ingress('aliasB', 'b1.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-02-06T00:00:00Z', annotations: { 'server-alias': 'same.example.com' } }),
    ingress('strict', 's.example.com', [['/a+b', 'Prefix', 'web', 80]], { ts: '2026-02-07T00:00:00Z' }),
    ingress('fine', 'f.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-02-08T00:00:00Z' }),
  ];
  for (const o of objects) store.put('Ingress', o);
  const full = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z') }).build(store);
  const refusedByFull = new Set<string>();
  for (const w of full.warnings) {
    const m = /^Ingress (\S+)$/.exec(w.object);
    const ing = m && store.getIngress(m[1]!);
    if (ing && severityOf(w, { annotations: ing.metadata.annotations ?? {} }) === 'deny') refusedByFull.add(`${m![1]}: ${w.field}: ${w.message}`);
  }
  const refusedByReview = new Set<string>();
  for (const ing of store.listIngresses()) {
    for (const d of denials(reviewer.review(ing))) refusedByReview.add(`default/${ing.metadata.name}: ${d}`);
  }
  assert.equal([...refusedByReview].sort(), [...refusedByFull].sort());
  assert.is(refusedByFull.size, 4, [...refusedByFull].join('\n'));
});

test('docs/admission.md shows the warn rules generated from the code', () => {
  const doc = readFileSync(new URL('../../../docs/admission.md', import.meta.url), 'utf8');
  assert.is(doc.split('<!-- warn-rules:begin -->\n')[1]?.split('<!-- warn-rules:end -->')[0], warnRulesMarkdown());
});

test.run();
