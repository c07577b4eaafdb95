// Patterns public projects use with ingress-nginx (test/fixtures/real-world/, each file naming its
// project): linted as a user lints them before applying (no errors, the default class assumed),
// all served at once by `ingress-rx local` (NGINX runs a configuration holding every one of
// them), and a sample sent real requests over HTTP/1.1 and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { lintManifests } from '../../src/admission/lint.js';
import { defaultStoreOptions } from '../../src/store/store.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'real-world');
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();
const texts = FILES.map((file) => ({ file, text: readFileSync(join(DIR, file), 'utf8') }));
const objects = texts.flatMap(({ text }) => parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string } }));
const INGRESSES = objects.filter((o) => o.kind === 'Ingress').map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

const certDir = mkdtempSync(join(tmpdir(), 'irx-real-world-'));
const echo: Record<string, EchoServer> = {};
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const upstream = (r: Reply) => r.json as { name: string; path: string; headers: Record<string, string>; bodyBytes: number } | undefined;
const basic = `Basic ${Buffer.from('admin:longhorn-pw').toString('base64')}`;

/** The Services the sample reaches: namespace/name, the Service port's name, and a backend of its own. */
const SAMPLE: Array<[string, string]> = [
  ['monitoring/grafana', 'http'], ['linkerd-viz/web', 'http'], ['longhorn-system/longhorn-frontend', 'http'],
  ['shop/shop', 'http'], ['shop/cm-acme-http-solver-x7k2p', 'http'], ['rollout/podinfo-primary', 'http'],
  ['rollout/podinfo-canary', 'http'], ['store/api', 'http'], ['harbor/harbor-core', 'http'], ['portal/portal', 'http'],
  ['kubernetes-dashboard/kubernetes-dashboard', 'https'],
];

test.before(async () => {
  const tls = await generateCertificate(certDir, 'dashboard.internal');
  const tlsPem = { cert: readFileSync(tls.certPath, 'utf8'), key: readFileSync(tls.keyPath, 'utf8') };
  for (const [i, [key, port]] of SAMPLE.entries()) {
    echo[key] = await startEchoServer({ address: `127.0.4.${10 + i}`, name: key, ...(port === 'https' ? { tls: tlsPem } : {}) });
  }
  const cluster = [
    { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } },
    ...SAMPLE.map(([key, port]) => {
      const [namespace, svc] = key.split('/') as [string, string];
      return {
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
        metadata: { name: `${svc}-1`, namespace, labels: { 'kubernetes.io/service-name': svc } },
        addressType: 'IPv4', ports: [{ name: port, port: echo[key]!.port }],
        endpoints: [{ addresses: [echo[key]!.address], conditions: { ready: true } }],
      };
    }),
  ];
  ctl = await startLocal({ files: { 'cluster.json': cluster }, args: ['--enable-ssl-passthrough', '--ssl-passthrough-proxy-port', String(await freePort())] });
  // Written once it runs, as a user applies them (the first sync of them all may outlast the start timeout on a loaded machine).
  for (const { file, text } of texts) ctl.write(file, text);
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
  rmSync(certDir, { recursive: true, force: true });
});

test('every pattern lints as a user lints it: no errors, ingressClassName nginx taken as the default class [no request]', () => {
  const r = lintManifests(texts, { store: defaultStoreOptions(), annotationsPrefix: 'nginx.ingress.kubernetes.io' });
  assert.ok(FILES.length >= 12, `${FILES.length} patterns`);
  assert.equal(r.findings.filter((f) => f.severity === 'deny'), [], 'no errors');
  // Certificates cert-manager (or the user) creates later are the only warnings, with gRPC's
  // cleartext HTTP/2, which ingress-rx does not serve (docs/differences.md).
  for (const f of r.findings) assert.match(f.message, /Secret .*: not found; host .* uses the default certificate|no cleartext HTTP\/2 \(h2c\)/, `${f.file}: ${f.message}`);
  assert.equal([...r.served].sort(), [...INGRESSES].sort(), 'every Ingress is served');
  assert.ok(r.assumed, 'says what it assumed');
});

test('local mode serves every pattern at once: every host is in the configuration NGINX runs (its servers or the route table), no Ingress refused [no request]', async () => {
  const hosts = [...new Set(objects.flatMap((o) => (o as { spec?: { rules?: Array<{ host?: string }> } }).spec?.rules?.map((r) => r.host ?? '') ?? []))].filter(Boolean);
  assert.ok(hosts.length >= 14, hosts.join(' '));
  await waitFor(async () => {
    const running = (await ctl.control('/nginx.conf')).body + (await ctl.control('/configuration/routes')).body;
    return hosts.every((h) => running.includes(h));
  }, { timeoutMs: 30_000, what: `every host of ${FILES.length} patterns running` });
  // As lint said, the only warnings are the certificates not created yet and gRPC's cleartext; and the Services the
  // sample gives no endpoints have none.
  const expected = (l: string) => /Secret [^ ]+: not found; host [^ ]+ uses the default certificate|no cleartext HTTP\/2 \(h2c\)/.test(l)
    || SAMPLE.every(([key]) => !l.includes(`Service ${key} has no ready endpoints`)) && / has no ready endpoints \(503\)/.test(l);
  const warnings = ctl.output().split('\n').filter((l) => /"level":[4-6]0/.test(l) && !expected(l));
  assert.equal(warnings, []);
});

over.both('Grafana under a sub path: the regex capture is the path the backend gets', async (p) => {
  const r = await p.until('ops.rw.test', '/grafana/api/health?x=1', (r) => r.status === 200);
  assert.equal([upstream(r)?.name, upstream(r)?.path], ['monitoring/grafana', '/api/health?x=1']);
  assert.is(upstream(await p.request('ops.rw.test', '/grafana'))?.path, '/');
});

over.both('Linkerd dashboard: basic auth first, then the Host is the Service\'s cluster name', async (p) => {
  const denied = await p.until('linkerd.rw.test', '/', (r) => r.status === 401);
  assert.match(String(denied.headers['www-authenticate']), 'Basic realm="Authentication Required"');
  const r = await p.request('linkerd.rw.test', '/', { headers: { Authorization: basic } });
  assert.is(r.status, 200);
  assert.is(upstream(r)?.headers.host, 'web.linkerd-viz.svc.cluster.local:8084');
});

over.both('Longhorn: basic auth, and an upload far past the default body size', async (p) => {
  assert.is((await p.until('longhorn.rw.test', '/', (r) => r.status === 401)).status, 401);
  const body = 'x'.repeat(3 * 1024 * 1024);
  const r = await p.request('longhorn.rw.test', '/v1/backingimages', { method: 'POST', body, headers: { Authorization: basic } });
  assert.equal([r.status, upstream(r)?.bodyBytes], [200, body.length]);
});

over.http1Only('cert-manager HTTP-01: the challenge answers over plain HTTP while the host redirects to HTTPS', 'the challenge is plain HTTP', async (p) => {
  const challenge = await p.until('shop.rw.test', '/.well-known/acme-challenge/Xq3vN8tLrP0cD5hK', (r) => r.status === 200);
  assert.is(upstream(challenge)?.name, 'shop/cm-acme-http-solver-x7k2p');
  const page = await p.request('shop.rw.test', '/cart');
  assert.is(page.status, 308);
  assert.is(page.headers.location, `https://shop.rw.test:${ctl.ports.https}/cart`);
  assert.is(upstream(await p.request('shop.rw.test', '/cart', { https: true }))?.name, 'shop/shop');
});

over.both('canary by header: "always" reaches the canary, "never" and no header the primary', async (p) => {
  const always = await p.until('podinfo.rw.test', '/', (r) => upstream(r)?.name === 'rollout/podinfo-canary', { headers: { 'X-Canary': 'always' } });
  assert.is(always.status, 200);
  assert.is(upstream(await p.request('podinfo.rw.test', '/', { headers: { 'X-Canary': 'never' } }))?.name, 'rollout/podinfo-primary');
  assert.is(upstream(await p.request('podinfo.rw.test', '/'))?.name, 'rollout/podinfo-primary');
});

over.both('CORS for an API: the front end\'s preflight is answered with its origin and credentials; another origin gets none', async (p) => {
  const preflight = (origin: string) => p.request('api.rw.test', '/orders', { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT' } });
  const ok = await p.until('api.rw.test', '/orders', (r) => r.status === 204, { method: 'OPTIONS', headers: { Origin: 'https://admin.rw.test', 'Access-Control-Request-Method': 'PUT' } });
  assert.is(ok.headers['access-control-allow-origin'], 'https://admin.rw.test');
  assert.is(ok.headers['access-control-allow-credentials'], 'true');
  assert.is(ok.headers['access-control-max-age'], '600');
  assert.match(String(ok.headers['access-control-allow-methods']), 'PUT');
  assert.is((await preflight('https://evil.example')).headers['access-control-allow-origin'], undefined);
});

over.both('Harbor: an image layer of any size (proxy-body-size 0) goes through', async (p) => {
  const body = 'l'.repeat(5 * 1024 * 1024);
  const r = await p.until('registry.rw.test', '/v2/library/app/blobs/uploads/', (r) => r.status === 200, { https: true, method: 'PUT', body });
  assert.equal([upstream(r)?.name, upstream(r)?.bodyBytes], ['harbor/harbor-core', body.length]);
});

over.both('app-root: the site root redirects to the application', async (p) => {
  const r = await p.until('portal.rw.test', '/', (r) => r.status === 302);
  assert.match(String(r.headers.location), /\/app1$/);
  assert.is(upstream(await p.request('portal.rw.test', '/app1/x'))?.name, 'portal/portal');
});

over.both('Kubernetes Dashboard: backend-protocol HTTPS re-encrypts to a backend serving TLS', async (p) => {
  const r = await p.until('k8s.rw.test', '/api/v1/login', (r) => r.status === 200);
  assert.is(upstream(r)?.name, 'kubernetes-dashboard/kubernetes-dashboard');
});

test.run();
