// fastcgi-index and fastcgi-params-configmap: the ConfigMap is a second input a tenant controls.
// Its names and values are checked as ingress-nginx checks them, they reach nginx.conf only
// quoted, and any problem (another namespace, a missing ConfigMap, a hostile name or value) denies
// the locations with a warning naming the Ingress and the annotation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import type { ConfigMap, Ingress } from '../../../../src/store/kube-types.js';
import type { StoreReader } from '../../../../src/store/types.js';
import { HOSTILE_VALUES } from '../../../support/hostile.js';
import { renderLocation } from '../../../support/render-blocks.js';

const P = 'nginx.ingress.kubernetes.io';
const FIELD = `metadata.annotations["${P}/fastcgi-params-configmap"]`;

function parse(ann: Record<string, string>, configMaps: Record<string, Record<string, string>> = {}, settings: Partial<NginxSettings> = {}) {
  const store = { getConfigMap: (key: string) => (configMaps[key] ? ({ metadata: {}, data: configMaps[key] } as ConfigMap) : undefined) } as unknown as StoreReader;
  const ing: Ingress = { metadata: { name: 'php', namespace: 'shop', annotations: Object.fromEntries(Object.entries(ann).map(([k, v]) => [`${P}/${k}`, v])) }, spec: {} };
  return parseAnnotations(ing, { prefix: P, settings: { ...defaultSettings(), ...settings }, store });
}

test('the index and the ConfigMap\'s parameters (in name order), read in the Ingress\'s namespace', () => {
  const { value, warnings } = parse({ 'backend-protocol': 'FCGI', 'fastcgi-index': 'index.php', 'fastcgi-params-configmap': 'php-params' },
    { 'shop/php-params': { SCRIPT_FILENAME: '$document_root$fastcgi_script_name', DOCUMENT_ROOT: '/var/www/html', APP_ENV: 'prod.eu-1_x' } });
  assert.equal(warnings, []);
  assert.is(value.denied, null);
  assert.equal(value.fastcgi, { index: 'index.php', params: { APP_ENV: 'prod.eu-1_x', DOCUMENT_ROOT: '/var/www/html', SCRIPT_FILENAME: '$document_root$fastcgi_script_name' } });
  assert.equal(parse({ 'fastcgi-index': 'index.php' }).value.fastcgi, { index: 'index.php', params: {} });
  assert.is(parse({}).value.fastcgi, null);
});

test('the block prints fastcgi_index and one fastcgi_param each, quoted, variables kept', () => {
  const text = renderLocation({ backendProtocol: 'FCGI', fastcgi: { index: 'index.php', params: { SCRIPT_FILENAME: '$document_root$fastcgi_script_name', APP: '/srv/${uri}' } } }).locationsText;
  assert.match(text, 'include /etc/nginx/fastcgi_params;');
  assert.match(text, 'fastcgi_index "index.php";');
  assert.match(text, 'fastcgi_param APP "/srv/${uri}";');
  assert.match(text, 'fastcgi_param SCRIPT_FILENAME "$document_root$fastcgi_script_name";');
  assert.match(text, 'fastcgi_pass upstream_balancer;');
});

test('a ConfigMap in another namespace, a missing one, or an invalid reference denies the locations, naming the annotation', () => {
  const other = parse({ 'fastcgi-params-configmap': 'kube-system/php-params' }, { 'kube-system/php-params': { SCRIPT_FILENAME: '/etc/shadow' } });
  assert.is(other.value.denied, 'fastcgi-params-configmap: ConfigMap kube-system/php-params is in another namespace (allow-cross-namespace-resources is false)');
  assert.equal(other.warnings.map((w) => [w.object, w.field]), [['Ingress shop/php', FIELD]]);
  const allowed = parse({ 'fastcgi-params-configmap': 'kube-system/php-params' }, { 'kube-system/php-params': { SCRIPT_FILENAME: '/srv/i.php' } }, { allowCrossNamespaceResources: true });
  assert.equal(allowed.value.fastcgi?.params, { SCRIPT_FILENAME: '/srv/i.php' });
  const missing = parse({ 'fastcgi-params-configmap': 'nope' });
  assert.is(missing.value.denied, 'fastcgi-params-configmap: ConfigMap shop/nope not found');
  assert.match(missing.warnings[0]!.message, 'ConfigMap shop/nope not found');
  assert.ok(parse({ 'fastcgi-params-configmap': 'a/b/c' }).value.denied);
});

test('hostile names and values deny the locations: ;, braces, newlines, quotes, spaces, unknown variables, too many entries', () => {
  const bad: Array<[string, string]> = [
    ['SCRIPT_FILENAME', '/x.php; include /etc/passwd'], ['SCRIPT_FILENAME', '/x{'], ['SCRIPT_FILENAME', '/x\nfastcgi_pass evil'],
    ['SCRIPT_FILENAME', '"/x"'], ['SCRIPT_FILENAME', '/a b'], ['SCRIPT_FILENAME', '$nope'], ['SCRIPT_FILENAME', 'a=b'],
    ['NAME WITH SPACE', '/x'], ['A;B', '/x'], ['A{', '/x'], ['', '/x'],
    // Every hostile value but `${host}`, a variable a parameter may name.
    ...HOSTILE_VALUES.map((h) => ['SCRIPT_FILENAME', h.value] as [string, string]).filter(([, v]) => !/^[A-Za-z0-9/._-]*$/.test(v) && v !== '${host}'),
  ];
  for (const [name, value] of bad) {
    const r = parse({ 'fastcgi-params-configmap': 'p' }, { 'shop/p': { [name]: value } });
    assert.ok(r.value.denied?.startsWith('fastcgi-params-configmap: ConfigMap shop/p: '), `${JSON.stringify(name)}=${JSON.stringify(value.slice(0, 40))}: ${r.value.denied}`);
    assert.is(r.value.fastcgi, null);
  }
  const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`P${i}`, 'x']));
  assert.match(parse({ 'fastcgi-params-configmap': 'p' }, { 'shop/p': many }).value.denied ?? '', /101 entries \(at most 100\)/);
  for (const index of ['../x.php', 'a b', 'index.php;', '$uri']) {
    const r = parse({ 'fastcgi-index': index });
    assert.is(r.value.fastcgi, null, index);
    assert.equal(r.warnings.map((w) => w.field), [`metadata.annotations["${P}/fastcgi-index"]`]);
  }
});

test.run();
