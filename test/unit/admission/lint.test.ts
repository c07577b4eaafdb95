// `ingress-rx lint`: golden output over a cluster dump that uses every annotation ingress-nginx
// documents and over a repository of manifests; file:line down to the field; exit status; stdin;
// and the same verdicts as the admission webhook for every Ingress of the dump.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Writable } from 'node:stream';
import { parseAllDocuments } from 'yaml';
import { formatFinding, lintManifests, loadCluster, modelFindings, type LintOptions } from '../../../src/admission/lint.js';
import { createReviewer } from '../../../src/admission/review.js';
import { INGRESS_NGINX_ANNOTATIONS } from '../../../src/admission/ingress-nginx-keys.js';
import { WARN_RULES } from '../../../src/admission/verdict.js';
import { defaultStoreOptions } from '../../../src/store/store.js';
import { runLint } from '../../../src/cli/lint.js';
import { expectGolden } from '../../support/golden.js';
import { CONFIGMAP, FIXTURES, NOW, PREFIX, clusterDump } from '../../support/migrate-fixture.js';
import { fieldPath } from '../../../src/streams/manifests-locate.js';

const ROOT = FIXTURES;

const dump = clusterDump;
const options = (extra: Partial<LintOptions['store']> = {}): LintOptions => ({
  store: { ...defaultStoreOptions(), watchIngressWithoutClass: true, configmap: CONFIGMAP, ...extra }, annotationsPrefix: PREFIX, now: () => NOW,
});

const golden = (name: string, text: string) => expectGolden(join(ROOT, name), text, name);

function sink(): Writable & { text: () => string } {
  let text = '';
  const w = new Writable({ write(chunk, _enc, done) { text += String(chunk); done(); } });
  return Object.assign(w, { text: () => text });
}

test('the dump uses every annotation ingress-nginx documents', () => {
  const used = new Set<string>();
  for (const doc of parseAllDocuments(dump()[0]!.text)) {
    for (const item of (doc.toJS() as { items: Array<{ metadata: { annotations?: Record<string, string> } }> }).items) {
      for (const k of Object.keys(item.metadata.annotations ?? {})) if (k.startsWith(`${PREFIX}/`)) used.add(k.slice(PREFIX.length + 1));
    }
  }
  assert.equal(INGRESS_NGINX_ANNOTATIONS.filter((a) => !used.has(a)), []);
});

test('golden: lint of the cluster dump', () => {
  const r = lintManifests(dump(), options());
  golden('migrate/expected/lint.txt', r.findings.map((f) => formatFinding(f)).join('\n') + '\n');
  assert.equal(r.skipped, [{ key: 'other/traefik-app', reason: 'IngressClass "traefik" not found' }]);
  assert.is(r.served.length, 17);
});

test('golden: lint of a repository of manifests (syntax error, a field\'s line, an object defined twice)', () => {
  const dir = join(ROOT, 'lint', 'repo');
  const files = ['apps/broken.yaml', 'apps/shop.yaml', 'apps/zz-copy.json'].map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
  const r = lintManifests(files, options({ configmap: '' }));
  golden('lint/expected/repo.txt', r.findings.map((f) => formatFinding(f)).join('\n') + '\n');
});

test('the path budgets: an Ingress over its own, and a namespace\'s youngest past its own, are errors naming the flag', () => {
  const doc = (name: string, created: string, paths: number) => ({
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name, namespace: 'team', creationTimestamp: created },
    spec: { rules: [{ host: `${name}.test`, http: { paths: Array.from({ length: paths }, (_, i) => ({ path: `/p${i}`, pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } })) } }] },
  });
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [doc('old', '2026-01-01T00:00:00Z', 6), doc('young', '2026-01-02T00:00:00Z', 6), doc('huge', '2026-01-03T00:00:00Z', 20)] });
  const r = lintManifests([{ file: 'budget.json', text }], { ...options({ configmap: '' }), budgets: { maxPathsPerIngress: 10, maxPathsPerNamespace: 10, maxBytesPerIngress: 0, maxBytesPerNamespace: 0 } });
  // In file order.
  const over = r.findings.filter((f) => f.field === 'spec.rules').map((f) => `${f.severity} ${f.object}: ${f.message}`);
  assert.equal(over, [
    'deny Ingress team/young: namespace team holds 6 paths in older Ingresses and this one adds 6, more than a namespace may hold (--max-paths-per-namespace=10); the older ones are served; the controller sets it aside',
    'deny Ingress team/huge: spec.rules holds 20 paths, more than one Ingress may hold (--max-paths-per-ingress=10); the controller sets it aside',
  ]);
});

test('a finding points at the line of its field, also inside a List item', () => {
  const r = lintManifests(dump(), options());
  const lines = dump()[0]!.text.split('\n');
  const at = (f: { line: number }) => lines[f.line - 1]!;
  const bad = r.findings.find((f) => f.object === 'Ingress apps/typos' && f.field.includes('proxy-read-timeout'))!;
  assert.match(at(bad), /nginx\.ingress\.kubernetes\.io\/proxy-read-timeout: soon/);
  const tls = r.findings.find((f) => f.object === 'Ingress apps/wrong-cert')!;
  assert.match(at(tls), /secretName: tls-cert/);
  const stolen = r.findings.find((f) => f.object === 'Ingress apps/thief')!;
  assert.match(at(stolen), /^\s*rules:/);
  const cm = r.findings.find((f) => f.field === 'data["log-format-upstream"]')!;
  assert.match(at(cm), /log-format-upstream:/);
  assert.equal(fieldPath('metadata.annotations["a/b.c"]'), ['metadata', 'annotations', 'a/b.c']);
  assert.equal(fieldPath('spec.rules[2].http.paths[10].path'), ['spec', 'rules', 2, 'http', 'paths', 10, 'path']);
});

test('lint and the webhook agree on what is refused, Ingress by Ingress', () => {
  const loaded = loadCluster(dump(), options());
  const reviewer = createReviewer({ store: loaded.store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW });
  const fromLint = modelFindings(loaded, options()).filter((f) => f.severity === 'deny' && f.object.startsWith('Ingress '))
    .map((f) => `${f.object}: ${f.field}: ${f.message}`).sort();
  const fromReview = loaded.store.listIngresses().flatMap((ing) => reviewer.review(ing).findings
    .filter((f) => f.severity === 'deny').map((f) => `${f.object}: ${f.field}: ${f.message}`)).sort();
  assert.equal(fromReview, fromLint);
  assert.is(fromLint.length, 4);
});

test('every warn rule is reachable: the dump and the review tests between them reach the ConfigMap one', () => {
  const rules = new Set(lintManifests(dump(), options()).findings.map((f) => f.rule));
  assert.ok(rules.has('unsupported-configmap-key'));
  assert.ok(rules.has('unsupported-annotation'));
  assert.ok(WARN_RULES.some((r) => r.name === 'unsupported-configmap-key'));
});

test('a tcp-services entry whose ExternalName Service names a host: a warning (a deliberate difference), found without the flag too', () => {
  const manifest = (cm: string) => [{ file: 'tcp.yaml', text: [
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cm}\n  namespace: ingress-nginx\ndata:\n  "5353": "apps/dns-external:5353"\n  "6000": "apps/by-ip:6000"\n`,
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: dns-external\n  namespace: apps\nspec:\n  type: ExternalName\n  externalName: dns.example.com\n  ports:\n  - port: 5353\n',
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: by-ip\n  namespace: apps\nspec:\n  type: ExternalName\n  externalName: 192.0.2.10\n  ports:\n  - port: 6000\n',
  ].join('---\n') }];
  const warned = (r: ReturnType<typeof lintManifests>) => r.findings.map((f) => `${f.severity} ${f.rule} ${f.file}:${f.line} ${f.object} ${f.field}`);
  const expected = ['warn l4-external-name tcp.yaml:7 ConfigMap ingress-nginx/tcp-services data["5353"]'];
  const assumed = lintManifests(manifest('tcp-services'), options({ configmap: '' }));
  assert.equal(warned(assumed), expected);
  assert.match(assumed.assumed ?? '', /ConfigMap ingress-nginx\/tcp-services is taken as --tcp-services-configmap/);
  assert.match(assumed.findings[0]!.message, /externalName "dns\.example\.com" is a name; a TCP\/UDP service takes an address/);
  // As UDP services, under the flag's name: the same.
  const udp = lintManifests(manifest('dns-udp'), options({ configmap: '', udpServicesConfigmap: 'ingress-nginx/dns-udp' }));
  assert.equal(warned(udp), ['warn l4-external-name tcp.yaml:7 ConfigMap ingress-nginx/dns-udp data["5353"]']);
  assert.is(udp.assumed, 'the input holds no IngressClass: ingressClassName "nginx" (--ingress-class) is taken as this controller\'s class');
  // A ConfigMap the controller would not read is not checked.
  assert.equal(warned(lintManifests(manifest('other'), options({ configmap: '' }))), []);
});

test('without EndpointSlices in the files (a repository), missing endpoints are not reported; with them (a dump), they are', () => {
  const clean = [{ file: 'web.yaml', text: readFileSync(join(ROOT, 'lint', 'clean', 'web.yaml'), 'utf8') }];
  assert.not.ok(lintManifests(clean, options({ configmap: '' })).findings.some((f) => /no ready endpoints/.test(f.message)));
  const slice = `---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: other-1\n  namespace: apps\n  labels:\n    kubernetes.io/service-name: other\naddressType: IPv4\nendpoints: []\n`;
  const withSlices = [{ file: 'web.yaml', text: clean[0]!.text + slice }];
  assert.ok(lintManifests(withSlices, options({ configmap: '' })).findings.some((f) => /apps\/web has no ready endpoints/.test(f.message)));
});

test('exit status: 1 with errors, 0 with warnings only, 1 with --strict, 2 for unreadable input; stdin and JSON', () => {
  const flags = { ...options().store, defaultSslCertificate: '', watchNamespace: '', annotationsPrefix: PREFIX, configmap: '' } as never;
  const run = (paths: string[], extra: Record<string, unknown> = {}) => {
    const out = sink();
    const err = sink();
    const code = runLint(paths, { ...(flags as object), ...extra, now: () => NOW } as never, out, err);
    return { code, out: out.text(), err: err.text() };
  };
  const repo = relative(process.cwd(), join(ROOT, 'lint', 'repo'));
  const clean = relative(process.cwd(), join(ROOT, 'lint', 'clean'));
  const r1 = run([repo]);
  assert.is(r1.code, 1);
  assert.match(r1.out, /\n3 errors, 2 warnings in 1 Ingress \(4 objects, 3 files\)\n$/);
  assert.match(r1.out, new RegExp(`^${repo.replace(/[./]/g, '\\$&')}/apps/broken\\.yaml:16: error: YAML syntax error`, 'm'));
  assert.is(run([clean]).code, 0);
  assert.is(run([clean], { strict: true }).code, 1);
  const missing = run([join(ROOT, 'lint', 'nowhere')]);
  assert.is(missing.code, 2);
  assert.match(missing.err, /no such file or directory/);
  const piped = run(['-'], { stdin: () => dump()[0]!.text, configmap: CONFIGMAP, output: 'json' });
  assert.is(piped.code, 1);
  const json = JSON.parse(piped.out) as { errors: number; warnings: number; findings: Array<{ file: string }> };
  assert.is(json.errors, 5);
  assert.ok(json.findings.every((f) => f.file === '<stdin>' || f.file === ''));
});

test('without an IngressClass in the input, ingressClassName equal to --ingress-class is checked, and lint says it assumed so', () => {
  // 133 of 305 public Ingresses name ingressClassName: nginx in files that hold no IngressClass.
  const manifest = (className: string) => [{ file: 'app.yaml', text: [
    'apiVersion: networking.k8s.io/v1', 'kind: Ingress', 'metadata:', '  name: web', '  namespace: apps', '  annotations:',
    `    ${PREFIX}/proxy-read-timeout: soon`, `    ${PREFIX}/allowlist-source-range: 10.0.0.0/33`, 'spec:', `  ingressClassName: ${className}`,
    '  rules:', '  - host: web.example.com', '    http:', '      paths:', '      - path: /', '        pathType: Prefix',
    '        backend:', '          service:', '            name: web', '            port:', '              number: 80', '',
  ].join('\n') }];
  const strict = { store: { ...defaultStoreOptions(), configmap: '' }, annotationsPrefix: PREFIX, now: () => NOW };
  const r = lintManifests(manifest('nginx'), strict);
  assert.equal(r.served, ['apps/web']);
  assert.equal(r.findings.filter((f) => f.severity === 'deny').map((f) => f.field).sort(),
    [`metadata.annotations["${PREFIX}/allowlist-source-range"]`, `metadata.annotations["${PREFIX}/proxy-read-timeout"]`]);
  assert.is(r.assumed, 'the input holds no IngressClass: ingressClassName "nginx" (--ingress-class) is taken as this controller\'s class');
  // Another class name is still another controller's; --ingress-class names ours.
  assert.equal(lintManifests(manifest('traefik'), strict).skipped, [{ key: 'apps/web', reason: 'IngressClass "traefik" not found' }]);
  assert.equal(lintManifests(manifest('internal'), { ...strict, store: { ...strict.store, ingressClass: 'internal' } }).served, ['apps/web']);
  // With an IngressClass in the input, it decides as in the cluster, and nothing is assumed.
  const withClass = [{ file: 'class.yaml', text: 'apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: nginx\nspec:\n  controller: example.com/other\n' }, ...manifest('nginx')];
  const other = lintManifests(withClass, strict);
  assert.is(other.assumed, null);
  assert.equal(other.skipped, [{ key: 'apps/web', reason: 'IngressClass "nginx" belongs to controller "example.com/other"' }]);
  // The command says what it assumed and fails on the error.
  const flags = { ...strict.store, defaultSslCertificate: '', watchNamespace: '', annotationsPrefix: PREFIX, configmap: '' } as never;
  const out = sink();
  const code = runLint(['-'], { ...(flags as object), stdin: () => manifest('nginx')[0]!.text, now: () => NOW } as never, out, sink());
  assert.is(code, 1);
  assert.match(out.text(), /^note: the input holds no IngressClass: ingressClassName "nginx" \(--ingress-class\) is taken as this controller's class\n/);
  assert.match(out.text(), /\n2 errors, \d+ warnings? in 1 Ingress/);
});

test.run();
