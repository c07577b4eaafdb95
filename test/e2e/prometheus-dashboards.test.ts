// ingress-nginx's Grafana dashboards and alert rules, unchanged, against a real Prometheus that
// scrapes a local-mode controller under a little traffic (2xx, 4xx, 5xx, a canary, two
// Ingresses, a certificate that expires within a week, then a reload that fails): every panel query,
// template variable and alert expression of test/fixtures/prometheus returns data with the
// expected label values. Scrapes carry the Kubernetes target labels (namespace, pod) that make
// Prometheus rename the metrics' own `namespace` to `exported_namespace`, as in a cluster.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { startPrometheus, type Prometheus, type PromVector } from '../support/prometheus.js';
import { waitFor } from '../support/wait.js';
import { REPO_ROOT } from '../../src/version.js';
import { protocolClient, PROTOCOLS } from '../support/protocols.js';

interface Expect { labels?: Record<string, string[]>; positive?: boolean; finite?: boolean }
interface Fixture {
  variables: Record<string, string>;
  templating: Array<{ dashboard: string; name: string; query: string; expect: string[] }>;
  panels: Array<{ dashboard: string; panel: string; expr: string; expect: Expect }>;
  alerts: Array<{ alert: string; expr: string; expect: Expect }>;
}
const fixture = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'prometheus', 'ingress-nginx-queries.json'), 'utf8')) as Fixture;
const P = 'nginx.ingress.kubernetes.io';

/** Grafana's substitution of $name (and ${name}) by the variable's value. */
const withVariables = (expr: string) => expr.replace(/\$\{?([a-z_]+)\}?/g, (m, name: string) => fixture.variables[name] ?? m);

let ctl: LocalController;
let prom: Prometheus;
let backend: Server;
let canary: Server;
let traffic: Promise<void> | null = null;
let stopTraffic = false;
const tmp = mkdtempSync(join(tmpdir(), 'irx-dashboards-'));

async function statusServer(address: string): Promise<Server> {
  const s = createServer((req, res) => {
    const m = /^\/status\/(\d{3})/.exec(req.url ?? '');
    res.writeHead(m ? Number(m[1]) : 200, { 'content-type': 'text/plain' });
    res.end('ok\n');
  });
  await new Promise<void>((r) => s.listen(0, address, r));
  return s;
}
const endpoint = (s: Server) => s.address() as AddressInfo as unknown as EchoServer;

/** A steady mix until told to stop: mostly 200s, and 404, 500 and 503 enough for the error alerts, over both protocols. */
async function runTraffic(): Promise<void> {
  const mix: Array<[string, string, string?]> = [
    ['a.test', '/'], ['a.test', '/'], ['a.test', '/'], ['b.test', '/'], ['b.test', '/', 'POST'],
    ['b.test', '/status/404'], ['b.test', '/status/500'], ['b.test', '/down/now'],
  ];
  for (let i = 0; !stopTraffic; i++) {
    const [host, path, method] = mix[i % mix.length]!;
    // Browsers' HTTP/2 and other clients' HTTP/1.1, in turns.
    await protocolClient(ctl, PROTOCOLS[i % 2]!).request(host, path, { method: method ?? 'GET', ...(method === 'POST' ? { body: 'payload' } : {}) }).catch(() => {});
    await new Promise((r) => setTimeout(r, 20));
  }
}

test.before(async () => {
  backend = await statusServer('127.0.0.2');
  canary = await statusServer('127.0.0.3');
  const cert = await generateCertificate(tmp, 'tls.test');
  const b = (name: string, s: Server) => [service('app', name), ...slices('app', name, [endpoint(s)])];
  ctl = await startLocal({
    args: ['--configmap', 'ingress/config'],
    files: {
      'apps.json': [
        ...b('web', backend), ...b('canary', canary), ...b('other', backend), service('app', 'no-endpoints'),
        ingress('app', 'web-a', { host: 'a.test', paths: [{ path: '/', service: 'web' }] }),
        ingress('app', 'web-a-canary', { host: 'a.test', annotations: { [`${P}/canary`]: 'true', [`${P}/canary-weight`]: '30' }, paths: [{ path: '/', service: 'canary' }] }),
        ingress('app', 'web-b', { host: 'b.test', paths: [{ path: '/', service: 'other' }, { path: '/status', service: 'other' }, { path: '/down', service: 'no-endpoints' }] }),
        tlsSecret('app', 'tls-cert', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
        ingress('app', 'secure', { host: 'tls.test', tls: [{ hosts: ['tls.test'], secretName: 'tls-cert' }], paths: [{ path: '/', service: 'web' }] }),
      ],
    },
  });
  await ctl.until('a.test', '/', (r) => r.status === 200);
  await ctl.until('b.test', '/', (r) => r.status === 200);
  prom = await startPrometheus({ targets: [`127.0.0.1:${ctl.ports.healthz}`], labels: { namespace: 'local', pod: 'local', kubernetes_pod_name: 'local' } });
  traffic = runTraffic();
  // Rates need a few samples of a growing counter in their window.
  await waitFor(async () => {
    const r = await prom.query('min(count_over_time(nginx_ingress_controller_requests{ingress="web-b",status="503"}[1m]))');
    return Number(r[0]?.value[1] ?? 0) >= 4;
  }, { timeoutMs: 30_000, what: 'Prometheus to have scraped the request metrics a few times' });
  // Then a reload fails and stays failed: the default certificate's file is damaged under the
  // running NGINX (no Ingress or ConfigMap is to blame, so nothing can be set aside), and a
  // harmless ConfigMap change asks for a reload. NGINX keeps serving the last good configuration;
  // the dashboards' "Last Config Failed" and the NGINXConfigFailed alert see it.
  writeFileSync(join(ctl.workdir, 'ssl', 'default-fake-certificate.pem'), 'damaged\n');
  ctl.write('config.json', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: 'ingress' }, data: { 'proxy-body-size': '2m' } }]);
  await waitFor(async () => (await prom.query('nginx_ingress_controller_config_last_reload_successful == 0')).length > 0,
    { timeoutMs: 30_000, what: 'the failed reload seen by Prometheus' });
});

test.after(async () => {
  stopTraffic = true;
  await traffic;
  await prom?.stop();
  await ctl?.stop();
  for (const s of [backend, canary]) await new Promise((r) => s?.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

function check(what: string, result: PromVector[], expect: Expect): void {
  assert.ok(result.length > 0, `${what}: no data`);
  for (const [label, values] of Object.entries(expect.labels ?? {})) {
    const seen = new Set(result.map((r) => r.metric[label]));
    for (const v of values) assert.ok(seen.has(v), `${what}: no series with ${label}="${v}" (has ${[...seen].join(', ')})`);
  }
  for (const r of result) {
    const v = Number(r.value[1]);
    if (expect.finite || expect.positive) assert.ok(Number.isFinite(v), `${what}: ${r.value[1]} for ${JSON.stringify(r.metric)}`);
    if (expect.positive) assert.ok(v > 0, `${what}: ${v} for ${JSON.stringify(r.metric)}`);
  }
}

test('the fixture covers both dashboards and the chart\'s alert rules', () => {
  assert.is(fixture.panels.filter((p) => p.dashboard === 'NGINX Ingress controller').length, 21);
  assert.is(fixture.panels.filter((p) => p.dashboard === 'Request Handling Performance').length, 13);
  assert.equal(fixture.alerts.map((a) => a.alert), ['NGINXConfigFailed', 'NGINXCertificateExpiry', 'NGINXTooMany500s', 'NGINXTooMany400s']);
});

test('template variables: label_values of each dashboard variable', async () => {
  for (const t of fixture.templating) {
    const m = /^label_values\((.*),\s*([a-z_]+)\)$/s.exec(t.query);
    assert.ok(m, t.query);
    const values = await prom.labelValues(withVariables(m![1]!.trim()), m![2]!);
    for (const v of t.expect) assert.ok(values.includes(v), `${t.dashboard} $${t.name}: ${v} not in ${values.join(', ')}`);
  }
});

test('every panel query returns data with the expected labels', async () => {
  for (const p of fixture.panels) check(`${p.dashboard} / ${p.panel}: ${p.expr.replace(/\s+/g, ' ').slice(0, 120)}`, await prom.query(withVariables(p.expr)), p.expect);
});

test('every alert rule of the chart fires', async () => {
  for (const a of fixture.alerts) check(a.alert, await prom.query(a.expr), a.expect);
});

test.run();
