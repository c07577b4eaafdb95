// `migrate-report`'s Gateway API column: whether an Ingress could be an HTTPRoute with no loss,
// and which annotations and fields have only a partial Gateway API equivalent or none. The table
// covers every annotation ingress-nginx reads, so no key is judged by the fallback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GATEWAY_EQUIVALENTS, equivalentOf, httpRouteFit } from '../../../src/admission/gateway-equivalents.js';
import { INGRESS_NGINX_ANNOTATIONS } from '../../../src/admission/ingress-nginx-keys.js';
import { migrationReport } from '../../../src/admission/migrate.js';
import { formatReport } from '../../../src/admission/migrate-format.js';
import { defaultStoreOptions } from '../../../src/store/store.js';
import { PREFIX, ingress } from '../../support/model-objects.js';

test('every annotation ingress-nginx reads has an entry written for it; the table names nothing else', () => {
  assert.equal([...INGRESS_NGINX_ANNOTATIONS].filter((k) => GATEWAY_EQUIVALENTS[k] === undefined), []);
  assert.equal(Object.keys(GATEWAY_EQUIVALENTS).filter((k) => !INGRESS_NGINX_ANNOTATIONS.includes(k)), []);
  for (const [k, e] of Object.entries(GATEWAY_EQUIVALENTS)) assert.ok(e.equivalent.length > 10, k);
  assert.is(equivalentOf('no-such-key').fit, 'none');
});

test('an Ingress of Prefix and Exact paths to numbered ports, with redirects and a weighted canary, is an HTTPRoute with no loss', () => {
  const ing = ingress('shop', 'shop.example.com', [['/', 'Prefix', 'web', 80], ['/x', 'Exact', 'web', 80]], {
    annotations: { 'ssl-redirect': 'true', 'canary': 'true', 'canary-weight': '10', 'server-alias': 'www.example.com', 'unrelated.io/x': 'y' },
    tls: [{ hosts: ['shop.example.com'], secretName: 'tls' }],
  });
  assert.equal(httpRouteFit(ing, PREFIX), { lossless: true, gaps: [] });
});

test('what has no full equivalent is named: annotations, regular expression paths, named ports, resource backends', () => {
  const ing = ingress('api', 'api.example.com', [['/v1/(.*)', 'ImplementationSpecific', 'web', 'http'], ['/b', 'Prefix', 'web', 80]], {
    annotations: { 'auth-url': 'http://auth', 'rewrite-target': '/$1', 'use-regex': 'true', 'limit-rps': '5', 'permanent-redirect': 'https://x' },
  });
  ing.spec.rules![0]!.http!.paths.push({ path: '/r', pathType: 'Prefix', backend: { resource: { apiGroup: 'k8s.example.com', kind: 'Bucket', name: 'b' } } });
  const fit = httpRouteFit(ing, PREFIX);
  assert.is(fit.lossless, false);
  assert.equal(fit.gaps.map((g) => `${g.key} ${g.fit}`), [
    'auth-url none', 'limit-rps none', 'rewrite-target partial', 'use-regex partial',
    'backend.service.port.name partial', 'backend.resource none', 'pathType: ImplementationSpecific partial',
  ]);
  assert.match(fit.gaps.find((g) => g.key === 'rewrite-target')!.equivalent, /URLRewrite .*no regular expression captures/);
});

test('the report: per Ingress and in the summary, in text, Markdown (a tenant\'s key stays text) and JSON', () => {
  const files = [{
    file: 'dump.json',
    text: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      ingress('plain', 'plain.example.com', [['/', 'Prefix', 'web', 80]]),
      ingress('snippet', 's.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'configuration-snippet': 'more_set_headers "a: b";', 'x|y<b>': 'v' } }),
    ] }),
  }];
  const r = migrationReport(files, { store: { ...defaultStoreOptions(), watchIngressWithoutClass: true }, configmap: '', annotationsPrefix: PREFIX, now: () => new Date('2026-06-01T00:00:00Z') });
  assert.is(r.summary.httpRouteLossless, 1);
  const text = formatReport(r, 'text');
  assert.ok(text.includes('As HTTPRoutes (Gateway API): 1 of 2 Ingresses with no loss'), text);
  assert.ok(text.includes('    as an HTTPRoute: no loss\n'), text);
  assert.ok(text.includes('      configuration-snippet: none — no configuration text in the Gateway API\n'), text);
  const md = formatReport(r, 'markdown');
  assert.ok(md.includes('| default/snippet | `configuration-snippet` | **none**: no configuration text in the Gateway API |'), md);
  assert.ok(md.includes('`x\\|y<b>`'), 'a key in a code span, its bar escaped');
  assert.not.ok(/<b>(?!`)/.test(md.replace(/`[^`]*`/g, '')), 'no HTML outside code spans');
  const json = JSON.parse(formatReport(r, 'json'));
  assert.equal(json.ingresses.map((i: { key: string; httpRoute: { lossless: boolean } }) => [i.key, i.httpRoute.lossless]), [['default/plain', true], ['default/snippet', false]]);
});

test.run();
