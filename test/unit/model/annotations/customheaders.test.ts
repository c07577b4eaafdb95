// custom-headers: the ConfigMap it names is a second input a tenant controls. Its header names are
// checked against global-allowed-response-headers, its values reach nginx.conf only quoted, and
// any problem denies the locations instead of dropping the headers silently.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { ConfigMap, Ingress } from '../../../../src/store/kube-types.js';
import type { StoreReader } from '../../../../src/store/types.js';
import { serverView } from '../../../../src/render/view.js';
import { defaultRuntime } from '../../../../src/render/runtime.js';
import { location, server } from '../../../support/config-builder.js';
import { HOSTILE_VALUES } from '../../../support/hostile.js';

const P = 'nginx.ingress.kubernetes.io';
const ALLOWED = { globalAllowedResponseHeaders: ['X-Team', 'X-Frame-Options'] };

function parse(ref: string, configMaps: Record<string, Record<string, string>>, settings: Partial<NginxSettings> = ALLOWED) {
  const store = { getConfigMap: (key: string) => (configMaps[key] ? ({ metadata: {}, data: configMaps[key] } as ConfigMap) : undefined) } as unknown as StoreReader;
  const ing: Ingress = { metadata: { name: 'web', namespace: 'shop', annotations: { [`${P}/custom-headers`]: ref } }, spec: {} };
  return parseAnnotations(ing, { prefix: P, settings: { ...defaultSettings(), ...settings }, store });
}

const rendered = (headers: Record<string, string>) =>
  serverView(server('a.example.com', { locations: [location({ customHeaders: headers })] }), { settings: defaultSettings(), runtime: defaultRuntime(), wwwRedirectFrom: null }).locationsText;

test('allowed headers are kept in name order; the ConfigMap is read in the Ingress namespace', () => {
  const { value, warnings } = parse('team', { 'shop/team': { 'X-Team': 'blue', 'X-Frame-Options': 'DENY' } });
  assert.equal(warnings, []);
  assert.equal(value.customHeaders, { 'X-Frame-Options': 'DENY', 'X-Team': 'blue' });
  assert.is(value.denied, null);
});

test('a missing ConfigMap, another namespace, an unlisted or invalid header, a control character deny the locations', () => {
  const cases: Array<[string, Record<string, Record<string, string>>, RegExp]> = [
    ['nope', {}, /not found/],
    ['other/team', { 'other/team': { 'X-Team': 'x' } }, /another namespace/],
    ['team', { 'shop/team': { 'X-Powered-By': 'x' } }, /not in global-allowed-response-headers/],
    ['team', { 'shop/team': { 'X Team': 'x' } }, /header/],
    ['team', { 'shop/team': { 'X-Team': 'a\nSet-Cookie: x=1' } }, /control character/],
    ['team', { 'shop/team': { 'X-Team': 'x'.repeat(100_000) } }, /characters long/],
    ['a/b/c', {}, /name/],
  ];
  for (const [ref, cms, why] of cases) {
    const { value, warnings } = parse(ref, cms);
    assert.is(value.customHeaders, null, ref);
    assert.match(value.denied ?? '', why, `${ref}: ${value.denied}`);
    assert.ok(warnings.length > 0, ref);
  }
  const cross = parse('other/team', { 'other/team': { 'X-Team': 'x' } }, { ...ALLOWED, allowCrossNamespaceResources: true });
  assert.equal(cross.value.customHeaders, { 'X-Team': 'x' });
});

test('hostile values stay inside one quoted more_set_headers argument, `$` literal', () => {
  for (const h of HOSTILE_VALUES) {
    const { value } = parse('team', { 'shop/team': { 'X-Team': h.value } });
    if (value.customHeaders === null) continue;
    const text = rendered(value.customHeaders);
    const line = text.split('\n').find((l) => l.includes('more_set_headers "X-Team:'));
    assert.ok(line, h.name);
    // One argument: every quote inside is escaped, and the line ends where the argument ends.
    assert.match(line!, /^\s*more_set_headers "X-Team: (?:[^"\\$]|\\.|\$\{literal_dollar\})*";$/, `${h.name}: ${line}`);
  }
});

test.run();
