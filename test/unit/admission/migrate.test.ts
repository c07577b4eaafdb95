// `ingress-rx migrate-report`: golden text, Markdown and JSON over the cluster dump that uses every
// annotation ingress-nginx documents; the catalogue behind it derives support from the parsers,
// links only sections docs/differences.md has, and names an alternative for every refused key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { migrationReport, type MigrateOptions } from '../../../src/admission/migrate.js';
import { formatReport } from '../../../src/admission/migrate-format.js';
import { anchorOf, annotationVerdict, configMapVerdict, linkedSections } from '../../../src/admission/catalogue.js';
import { INGRESS_NGINX_ANNOTATIONS, INGRESS_NGINX_CONFIGMAP_KEYS } from '../../../src/admission/ingress-nginx-keys.js';
import { ANNOTATION_GROUPS } from '../../../src/model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS } from '../../../src/model/core/config/parse.js';
import { defaultStoreOptions } from '../../../src/store/store.js';
import { runMigrateReport } from '../../../src/cli/migrate-report.js';
import { expectGolden } from '../../support/golden.js';
import { CONFIGMAP, FIXTURES, NOW, PREFIX, clusterDump } from '../../support/migrate-fixture.js';

const ROOT = FIXTURES;
const dump = clusterDump;
const opts: MigrateOptions = {
  store: { ...defaultStoreOptions(), watchIngressWithoutClass: true }, configmap: CONFIGMAP, annotationsPrefix: PREFIX, now: () => NOW,
};

const golden = (name: string, text: string) => expectGolden(join(ROOT, 'migrate', 'expected', name), text, name);

const report = migrationReport(dump(), opts);

test('golden: text, Markdown and JSON', () => {
  golden('report.txt', formatReport(report, 'text'));
  golden('report.md', formatReport(report, 'markdown'));
  golden('report.json', formatReport(report, 'json'));
});

test('the summary adds up, and names what the dump holds', () => {
  const s = report.summary;
  assert.is(s.ingresses.total, 17);
  assert.is(s.ingresses['as-is'] + s.ingresses.differences + s.ingresses.changes, 17);
  const uses = Object.values(s.annotationUses).reduce((a, b) => a + b, 0);
  assert.is(uses, report.ingresses.reduce((n, i) => n + i.annotations.length, 0));
  assert.is(s.annotationKeys.unknown, 1, 'the typo proxy-body-sise');
  assert.is(s.configMapKeys.unknown, 1, 'the typo proxy-read-timoeut');
  assert.is(s.refusedValues, 3, 'proxy-read-timeout "soon", limit-rps "-5", log-format-upstream with a quote');
  assert.equal(report.skipped, [{ key: 'other/traefik-app', reason: 'IngressClass "traefik" not found' }]);
  const byKey = Object.fromEntries(report.ingresses.map((i) => [i.key, i]));
  assert.is(byKey['apps/cors']!.outcome, 'as-is');
  assert.is(byKey['apps/thief']!.outcome, 'changes');
  assert.match(byKey['apps/thief']!.problems[0]!.message, /already defined by the older Ingress apps\/web/);
  const typo = byKey['apps/typos']!.annotations.find((a) => a.key === 'proxy-read-timeout')!;
  assert.is(typo.status, 'identical');
  assert.equal(typo.problems, [{ severity: 'deny', message: '"soon" is not an integer' }]);
});

test('every annotation and ConfigMap key ingress-nginx documents has a verdict; every refused one an alternative', () => {
  for (const key of INGRESS_NGINX_ANNOTATIONS) {
    const v = annotationVerdict(key);
    assert.is.not(v.status, 'unknown', key);
    if (v.status === 'refused') assert.not.match(v.note!, /^no equivalent in ingress-rx/, `${key}: say what to use instead`);
  }
  for (const key of INGRESS_NGINX_CONFIGMAP_KEYS) {
    const v = configMapVerdict(key);
    assert.is.not(v.status, 'unknown', key);
    if (v.status === 'refused') assert.not.match(v.note!, /^no equivalent in ingress-rx/, `${key}: say what to use instead`);
  }
});

test('support comes from the parsers: every key they read is supported, nothing else', () => {
  const parsed = new Set(ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)));
  for (const key of INGRESS_NGINX_ANNOTATIONS) assert.is(annotationVerdict(key).status !== 'refused', parsed.has(key), key);
  for (const key of parsed) assert.ok(INGRESS_NGINX_ANNOTATIONS.includes(key), `${key} is read by ingress-rx but not an ingress-nginx annotation`);
  const cmKeys = new Set(CONFIGMAP_KEYS.map((k) => k.key));
  for (const key of INGRESS_NGINX_CONFIGMAP_KEYS) assert.is(configMapVerdict(key).status !== 'refused', cmKeys.has(key), key);
  assert.is(annotationVerdict('proxy-body-sise').status, 'unknown');
});

test('every linked section is a heading of docs/differences.md', () => {
  const doc = readFileSync(new URL('../../../docs/differences.md', import.meta.url), 'utf8');
  const anchors = new Set([...doc.matchAll(/^## (.+)$/gm)].map((m) => anchorOf(m[1]!)));
  for (const section of linkedSections()) assert.ok(anchors.has(anchorOf(section)), section);
  assert.ok(linkedSections().length >= 3);
});

test('a tenant\'s value cannot write Markdown or HTML into the report', () => {
  const hostile = dump()[0]!.text.replace('nginx.ingress.kubernetes.io/proxy-body-sise: 1m',
    'nginx.ingress.kubernetes.io/proxy-body-sise: "`x` | <img src=x> [click](http://evil/) **bold**"');
  const md = formatReport(migrationReport([{ file: 'cluster.yaml', text: hostile }], opts), 'markdown');
  const line = md.split('\n').find((l) => l.includes('proxy-body-sise') && l.includes('img'))!;
  assert.ok(line, 'the value is shown');
  // Inside a code span Markdown and HTML are text; the fence outruns the value's backticks and its pipe is escaped.
  assert.ok(line.includes('| `` "`x` \\| <img src=x> [click](http://evil/) **bol…" `` |'), line);
  assert.is(line.split(' | ').length, 4, 'the table row keeps its four cells');
});

test('the command: stdin, formats, exit 2 for missing input', () => {
  const out = { text: '' };
  const w = new Writable({ write(c, _e, d) { out.text += String(c); d(); } });
  const err = new Writable({ write(_c, _e, d) { d(); } });
  const flags = { ...opts.store, configmap: CONFIGMAP, annotationsPrefix: PREFIX, defaultSslCertificate: '', watchNamespace: '' };
  assert.is(runMigrateReport(['-'], { ...flags, output: 'markdown', now: () => NOW, stdin: () => dump()[0]!.text } as never, w, err), 0);
  assert.match(out.text, /^# Moving to ingress-rx: migration report\n/);
  assert.is(runMigrateReport([join(ROOT, 'migrate', 'nowhere.yaml')], flags as never, w, err), 2);
});

test.run();
