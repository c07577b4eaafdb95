// The Kubernetes Ingress conformance scenarios (kubernetes-sigs/ingress-controller-conformance,
// features/*.feature: default backend, load balancing, host rules, path rules, ingress class),
// written for one `ingress-rx local` and real NGINX. The catch-all of the default-backend and
// load-balancing features answers every unknown host, so those run first and the file is then
// removed, as the conformance suite deletes each feature's namespace.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { cliArgs } from '../support/cli-command.js';

const NS = 'conformance';
const ROOT = new URL('../..', import.meta.url).pathname;
let ctl: LocalController;
let cert: GeneratedCertificate;
const certDir = mkdtempSync(join(tmpdir(), 'irx-conformance-'));
const echo: Record<string, EchoServer[]> = {};

const backend = (name: string, port: Record<string, unknown> = { number: 8080 }) => ({ service: { name, port } });
const rule = (host: string, paths: Array<[string, string, string, Record<string, unknown>?]>) => ({
  host, http: { paths: paths.map(([path, pathType, svc, port]) => ({ path, pathType, backend: backend(svc, port) })) },
});
const ing = (name: string, spec: object, created?: string) => ({
  apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
  metadata: { name, namespace: NS, ...(created ? { creationTimestamp: created } : {}) }, spec,
});

const SERVICES = [
  'wildcard-foo-com', 'foo-bar-com', 'foo-exact', 'foo-prefix', 'aaa-slash-bbb-prefix', 'aaa-prefix',
  'aaa-slash-bbb-slash-prefix', 'foo-slash-exact', 'ingress-class-prefix', 'older-prefix',
];

const servedBy = (r: Reply) => r.backend?.replace(/-\d+$/, '');

const defaultBackend = suite('default backend and load balancing (a catch-all Ingress)');
const overDefaultBackend = protocolMatrix(defaultBackend, () => ctl);

defaultBackend.before(async () => {
  echo['echo-service'] = await Promise.all(Array.from({ length: 10 }, (_, i) => startEchoServer({ address: `127.0.0.${10 + i}`, name: `echo-service-${i}` })));
  for (const [i, name] of SERVICES.entries()) echo[name] = [await startEchoServer({ address: `127.0.1.${10 + i}`, name })];
  cert = await generateCertificate(certDir, 'foo.bar.com');
  // Service ports as the features write them: 8080, or the port named http.
  const svc = (name: string) => service(NS, name, { port: 8080 });
  ctl = await startLocal({
    files: {
      'services.json': Object.keys(echo).flatMap((n) => [svc(n), ...slices(NS, n, echo[n]!)]),
      'default-backend.json': [ing('default-backend', { defaultBackend: backend('echo-service') })],
    },
  });
});

overDefaultBackend.both('an Ingress with no rules sends every request to its default backend', async (p) => {
  const cases: Array<[string, string, string]> = [
    ['GET', 'my-host', '/'], ['GET', 'my-host', '/sub-path'], ['POST', 'some-host', '/'],
    ['PUT', `127.0.0.1:${p.port}`, '/resource'], ['DELETE', 'some-host', '/resource'], ['PATCH', 'my-host', '/resource'],
  ];
  for (const [method, host, path] of cases) {
    const r = await p.request(host, path, { method, headers: { 'User-Agent': 'Go-http-client/1.1' } });
    const what = `${method} ${host}${path}`;
    assert.is(r.status, 200, what);
    assert.is(servedBy(r), 'echo-service', what);
    for (const h of ['content-length', 'content-type', 'date']) assert.ok(r.headers[h], `${what}: response header ${h}`);
    // ingress-nginx's `more_clear_headers Server` (server-tokens false): kept, against the feature.
    assert.is(r.headers.server, undefined, what);
    assert.is(r.json?.method, method, what);
    assert.is(r.json?.path, path, what);
    assert.is(r.json?.proto, '1.1', what);
    assert.is((r.json?.headers as Record<string, string>)['user-agent'], 'Go-http-client/1.1', what);
  }
});

overDefaultBackend.both('load balancing: 100 requests reach all 10 endpoints of the backend', async (p) => {
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const r = await p.request('load-balancing', '/');
    assert.is(r.status, 200);
    seen.add(r.backend!);
  }
  assert.is(seen.size, 10);
});

defaultBackend.after(async () => {
  ctl.remove('default-backend.json');
  await ctl.until('my-host', '/', (r) => r.status === 404, { what: 'the catch-all to be gone' });
});

const hostRules = suite('host rules');
const overHostRules = protocolMatrix(hostRules, () => ctl);

hostRules.before(async () => {
  ctl.write('tls.json', [tlsSecret(NS, 'conformance-tls', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8'))]);
  ctl.write('host-rules.json', [ing('host-rules', {
    tls: [{ hosts: ['foo.bar.com'], secretName: 'conformance-tls' }],
    rules: [
      rule('*.foo.com', [['/', 'Prefix', 'wildcard-foo-com']]),
      rule('foo.bar.com', [['/', 'Prefix', 'foo-bar-com', { name: 'http' }]]),
    ],
  })]);
  await ctl.until('foo.bar.com', '/', (r) => r.status === 200 && r.headers['strict-transport-security'] !== undefined, { https: true, ca: readFileSync(cert.certPath) });
});

overHostRules.both('TLS to the matching host, the certificate verified for its name', async (p) => {
  const r = await p.request('foo.bar.com', '/', { https: true, ca: readFileSync(cert.certPath) });
  assert.is(r.status, 200);
  assert.is(servedBy(r), 'foo-bar-com');
  assert.is((r.json?.headers as Record<string, string>).host, 'foo.bar.com');
});

overHostRules.http1Only('HTTP to the matching host (redirected to HTTPS, since the host has TLS)', 'the redirect answers plain HTTP', async (p) => {
  const r = await p.request('foo.bar.com', '/x/');
  // The feature expects 200 over plain HTTP; with TLS on the host, ingress-nginx (and so
  // ingress-rx) redirects first (ssl-redirect defaults to true), without the trailing slash.
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://foo.bar.com:${ctl.ports.https}/x`);
});

overHostRules.both('no route for a host that does not match', async (p) => {
  assert.is((await p.request('subdomain.bar.com', '/')).status, 404);
});

overHostRules.both('a wildcard host matches one DNS label, not two and not none', async (p) => {
  const r = await p.request('bar.foo.com', '/');
  assert.is(r.status, 200);
  assert.is(servedBy(r), 'wildcard-foo-com');
  assert.is((r.json?.headers as Record<string, string>).host, 'bar.foo.com');
  assert.is((await p.request('baz.bar.foo.com', '/')).status, 404);
  assert.is((await p.request('foo.com', '/')).status, 404);
});

const pathRules = suite('path rules');
const overPathRules = protocolMatrix(pathRules, () => ctl);

const PATH_CASES: Array<[string, string, number, string?]> = [
  ['exact-path-rules', '/foo', 200, 'foo-exact'],
  ['exact-path-rules', '/foo/', 404],
  ['exact-path-rules', '/FOO', 404],
  ['exact-path-rules', '/bar', 404],
  ['prefix-path-rules', '/foo', 200, 'foo-prefix'],
  ['prefix-path-rules', '/foo/', 200, 'foo-prefix'],
  ['prefix-path-rules', '/FOO', 404],
  ['prefix-path-rules', '/aaa/bbb', 200, 'aaa-slash-bbb-prefix'],
  ['prefix-path-rules', '/aaa/bbb/ccc', 200, 'aaa-slash-bbb-prefix'],
  ['prefix-path-rules', '/aaa/ccc', 200, 'aaa-prefix'],
  ['prefix-path-rules', '/aaaccc', 404],
  ['mixed-path-rules', '/foo', 200, 'foo-exact'],
  ['mixed-path-rules', '/foo/x', 200, 'foo-prefix'],
  ['trailing-slash-path-rules', '/aaa/bbb', 200, 'aaa-slash-bbb-slash-prefix'],
  ['trailing-slash-path-rules', '/aaa/bbb/', 200, 'aaa-slash-bbb-slash-prefix'],
  ['trailing-slash-path-rules', '/foo', 404],
  // Not in the feature: the same precedence across two Ingresses (the Prefix one older).
  ['mixed-path-rules', '/bar', 200, 'foo-exact'],
  ['mixed-path-rules', '/bar/x', 200, 'older-prefix'],
];

pathRules.before(async () => {
  ctl.write('path-rules.json', [
    ing('path-rules', {
      rules: [
        rule('exact-path-rules', [['/foo', 'Exact', 'foo-exact']]),
        rule('prefix-path-rules', [['/foo', 'Prefix', 'foo-prefix'], ['/aaa/bbb', 'Prefix', 'aaa-slash-bbb-prefix'], ['/aaa', 'Prefix', 'aaa-prefix']]),
        rule('mixed-path-rules', [['/foo', 'Prefix', 'foo-prefix'], ['/foo', 'Exact', 'foo-exact']]),
        rule('trailing-slash-path-rules', [['/aaa/bbb/', 'Prefix', 'aaa-slash-bbb-slash-prefix'], ['/foo/', 'Exact', 'foo-slash-exact']]),
      ],
    }, '2024-01-02T00:00:00Z'),
    // Exact wins over Prefix across Ingresses too, whichever is older.
    ing('older-prefix', { rules: [rule('mixed-path-rules', [['/bar', 'Prefix', 'older-prefix']])] }, '2024-01-01T00:00:00Z'),
    ing('newer-exact', { rules: [rule('mixed-path-rules', [['/bar', 'Exact', 'foo-exact']])] }, '2024-01-03T00:00:00Z'),
  ]);
  // Every route that answers 200 in the feature, so no scenario runs before its backend is there.
  for (const [host, path, status] of PATH_CASES) if (status === 200) await ctl.until(host, path, (r) => r.status === 200);
});

overPathRules.both('each scenario of path_rules.feature', async (p) => {
  for (const [host, path, status, by] of PATH_CASES) {
    const r = await p.request(host, path);
    assert.is(r.status, status, `${host}${path}`);
    if (by) assert.is(servedBy(r), by, `${host}${path}`);
  }
});

const ingressClass = suite('ingress class');
const overIngressClass = protocolMatrix(ingressClass, () => ctl);

overIngressClass.both('an Ingress with an IngressClass that does not exist is not served, and is named with the reason', async (p) => {
  ctl.write('class.json', [{
    ...ing('test-ingress-class', { ingressClassName: 'some-invalid-class-name', rules: [rule('ingress-class', [['/', 'Prefix', 'ingress-class-prefix']])] }),
  }]);
  const line = `Ingress ${NS}/test-ingress-class is not served: IngressClass \\"some-invalid-class-name\\" not found`;
  await ctl.until('ingress-class', '/', () => ctl.output().includes(line), { what: 'the log line naming the Ingress' });
  assert.is((await p.request('ingress-class', '/')).status, 404);
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...cliArgs(), 'dbg', 'ingresses', '--workdir', ctl.workdir,
  ], { cwd: ROOT });
  assert.is(stdout, `${NS}/test-ingress-class: not served: IngressClass "some-invalid-class-name" not found\n`);
});

ingressClass.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).flat().map((e) => e.close()));
  rmSync(certDir, { recursive: true, force: true });
});

defaultBackend.run();
hostRules.run();
pathRules.run();
ingressClass.run();
