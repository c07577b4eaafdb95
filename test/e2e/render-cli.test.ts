// `ingress-rx render` offline: model, payloads and nginx.conf from a manifests directory,
// deterministic, and `--test` runs the real `nginx -t` on the result.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRender } from '../../src/cli/render.js';
import { silentLogger } from '../../src/log.js';

const tmp = mkdtempSync(join(tmpdir(), 'irx-render-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test('renders the quickstart to model, payloads and nginx.conf that nginx -t accepts, byte-identical twice', async () => {
  const [a, b] = [join(tmp, 'a'), join(tmp, 'b')];
  assert.is(await runRender({ manifests: 'examples/quickstart', out: a, test: true, logger: silentLogger() }), 0);
  assert.is(await runRender({ manifests: 'examples/quickstart', out: b, logger: silentLogger() }), 0);
  assert.equal(readdirSync(a).sort(), ['backends.json', 'model.json', 'nginx.conf', 'routes.json', 'servers.json']);
  for (const f of readdirSync(a)) assert.is(readFileSync(join(a, f), 'utf8'), readFileSync(join(b, f), 'utf8'), f);
  const conf = readFileSync(join(a, 'nginx.conf'), 'utf8');
  // Every quickstart host is dynamic (api's rewrite-target and CORS are the router's too): the route table's.
  const routes = JSON.parse(readFileSync(join(a, 'routes.json'), 'utf8')) as { hosts: Record<string, Array<{ rewrite?: unknown }>> };
  assert.equal(Object.keys(routes.hosts).sort(), ['api.example.test', 'secure.example.test', 'shop.example.test', 'web.example.test']);
  for (const host of Object.keys(routes.hosts)) assert.not.match(conf, `## start server ${host}`);
  assert.ok(routes.hosts['api.example.test']!.some((e) => e.rewrite), 'api\'s rewrite-target is in its routes');
  const backends = JSON.parse(readFileSync(join(a, 'backends.json'), 'utf8')) as Array<{ name: string; alternativeBackends: string[] }>;
  assert.equal(backends.find((x) => x.name === 'demo-web-http')?.alternativeBackends, ['demo-web-canary-80']);
});

test('render names the Ingresses it leaves out, with the reason', async () => {
  const dir = join(tmp, 'left-out');
  mkdirSync(dir);
  writeFileSync(join(dir, 'ing.yaml'), [
    'apiVersion: networking.k8s.io/v1', 'kind: Ingress', 'metadata: {name: typo, namespace: apps}',
    'spec: {ingressClassName: ngnix, rules: [{host: a.test, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: s, port: {number: 80}}}}]}}]}',
  ].join('\n'));
  const err: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((s: string) => { err.push(String(s)); return true; }) as typeof process.stderr.write;
  try {
    assert.is(await runRender({ manifests: dir, out: join(tmp, 'left-out-out'), logger: silentLogger() }), 0);
  } finally {
    process.stderr.write = write;
  }
  assert.ok(err.includes('left out: Ingress apps/typo is not served: IngressClass "ngnix" not found\n'), err.join(''));
  assert.match(err.join(''), /, 1 Ingresses left out →/);
});

test('a missing manifests directory exits 2', async () => {
  assert.is(await runRender({ manifests: join(tmp, 'nope'), out: join(tmp, 'c'), logger: silentLogger() }), 2);
});

test.run();
