// docs/gateway-api.md's conformance table is what scripts/gen-gateway-conformance.ts computes
// from the ported scenarios (test/e2e/gateway-conformance/*.test.ts) and the catalogue of the
// GATEWAY-HTTP profile; every registration names a test of the profile; the counts follow the
// conformance reports' rules (a feature passes only when each of its tests is ported).
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { featureResults, isCore, portedScenarios, registrationProblems, renderDoc, renderSection } from '../../../scripts/gen-gateway-conformance.js';
import { EXTENDED_FEATURES, GATEWAY_HTTP_TESTS } from '../../e2e/gateway-conformance/catalogue.js';

const doc = readFileSync(new URL('../../../docs/gateway-api.md', import.meta.url), 'utf8');

test('the catalogue: 38 extended features, each test once, the core tests are those requiring only core features', () => {
  assert.is(EXTENDED_FEATURES.length, 38);
  assert.is(new Set(GATEWAY_HTTP_TESTS.map((t) => t.shortName)).size, GATEWAY_HTTP_TESTS.length);
  assert.is(GATEWAY_HTTP_TESTS.filter(isCore).length, 37);
  for (const t of GATEWAY_HTTP_TESTS) for (const f of t.features) assert.ok(['Gateway', 'HTTPRoute', 'ReferenceGrant', ...EXTENDED_FEATURES].includes(f), `${t.shortName}: ${f}`);
});

test('registrations are read from test names; an unknown ShortName is a problem', () => {
  const found = portedScenarios({ 'x/core-a.test.ts': "over.both('HTTPRouteWeight › splits', async (p) => {});\ntest(`GatewayModifyListeners › adds`, () => {});\ntest('HTTPRouteNope › x', () => {});" });
  assert.equal(found.map((s) => [s.shortName, s.protocols]), [['HTTPRouteWeight', 'HTTP/1.1, HTTP/2'], ['GatewayModifyListeners', 'status or configuration, no request'], ['HTTPRouteNope', 'status or configuration, no request']]);
  assert.equal(registrationProblems(found).length, 1);
  assert.match(registrationProblems(found)[0]!, /HTTPRouteNope is not a test/);
});

test('a feature passes only when every test requiring it is ported', () => {
  const mirror = (ported: string[]) => featureResults(new Set(ported)).find((f) => f.feature === 'HTTPRouteRequestMirror')!;
  assert.equal(mirror([]).tests.sort(), ['HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors']);
  assert.not.ok(mirror(['HTTPRouteRequestMirror']).passed);
  assert.ok(mirror(['HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors']).passed);
  assert.not.ok(featureResults(new Set()).find((f) => f.feature === 'HTTPRouteRetryConnectionError')!.passed, 'a feature without a test is not counted');
});

test('every test of the profile has a row', () => {
  const section = renderSection();
  for (const t of GATEWAY_HTTP_TESTS) assert.ok(section.includes(`| \`${t.shortName}\``), t.shortName);
});

test('registrations: every ported name is a test of the profile', () => {
  assert.equal(registrationProblems(portedScenarios()), []);
});

test('docs/gateway-api.md holds the generated table (node --import tsx scripts/gen-gateway-conformance.ts)', () => {
  assert.is(renderDoc(doc), doc);
});

test.run();
