// The controller's own families from its configuration: certificates (expiry only while leading,
// without controller_* labels, gone with their host), leader election, orphaned Ingresses; and how --enable-metrics shapes nginx.conf (the metrics log, kept where a location
// turns its access log off).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetrics } from '../../../src/observability/metrics.js';
import type { SyncResult } from '../../../src/actors/sync.js';
import type { Configuration } from '../../../src/model/core/types.js';
import { createRenderer } from '../../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../../../src/render/runtime.js';
import { metricsLogPath } from '../../../src/render/metrics-log.js';
import { silentLogger } from '../../../src/log.js';
import { backend, configuration, location, server } from '../../support/config-builder.js';
import { parsePromText, samples } from '../../support/prom-text.js';

const LABELS = { controller_namespace: 'ingress', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'pod-1' };
const dir = mkdtempSync(join(tmpdir(), 'irx-cmetrics-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'), '-days', '30',
  '-subj', '/O=Acme Issuing/CN=shop.test/serialNumber=42', '-set_serial', '4660'], { stdio: 'ignore' });
const pem = readFileSync(join(dir, 'c.pem'), 'utf8') + readFileSync(join(dir, 'k.pem'), 'utf8');
rmSync(dir, { recursive: true, force: true });

function withCertificate(hosts: string[]): Configuration {
  return configuration(hosts.map((h) => server(h, { certificate: 'uid-1', tlsSecret: 'shop/shop-tls' })), {
    certificates: { 'uid-1': { uid: 'uid-1', secret: 'shop/shop-tls', pem, hosts, notAfter: '' } },
  });
}
const applied = (config: Configuration, over: Partial<SyncResult> = {}): SyncResult => ({
  sync: 1, t: 0, events: 1, itemIds: [], decision: 'reload', reason: '', checksum: 'abc', applied: true, posted: [], warnings: [], quarantined: [], durationMs: 1, config, ...over,
});
const scrape = async (m: ReturnType<typeof createMetrics>) => parsePromText(await m.exposition.metrics());

test('certificate expiry and info per host, as ingress-nginx labels them; expiry only while leading', async () => {
  const m = createMetrics(LABELS, { fallbackCertPem: () => null });
  m.observeSync(applied(withCertificate(['shop.test', 'www.shop.test'])), () => undefined, 0);
  let f = await scrape(m);
  assert.is(samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds').length, 0, 'a follower exports no expiry');
  const info = samples(f, 'nginx_ingress_controller_ssl_certificate_info');
  assert.equal(info.map((s) => s.labels.host).sort(), ['shop.test', 'www.shop.test']);
  assert.equal(info[0]!.labels, {
    namespace: 'shop', class: 'k8s.io/ingress-nginx', host: info[0]!.labels.host!, secret_name: 'shop-tls', identifier: '42-4660',
    issuer_organization: 'Acme Issuing', issuer_common_name: 'shop.test', serial_number: '4660', public_key_algorithm: 'RSA',
  });

  m.leading('ingress-controller-leader', true);
  f = await scrape(m);
  const [expiry] = samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds', { host: 'shop.test' });
  assert.ok(expiry!.value > Date.now() / 1000 + 29 * 86_400 && expiry!.value < Date.now() / 1000 + 31 * 86_400);
  assert.not.ok('controller_pod' in expiry!.labels, 'no controller_* labels, as in ingress-nginx');
  assert.equal(samples(f, 'nginx_ingress_controller_leader_election_status')[0]!.labels, { ...LABELS, name: 'ingress-controller-leader' });
  assert.is(samples(f, 'nginx_ingress_controller_leader_election_status')[0]!.value, 1);

  // A host that goes takes its series with it.
  m.observeSync(applied(withCertificate(['shop.test'])), () => undefined, 0);
  f = await scrape(m);
  assert.equal(samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds').map((s) => s.labels.host), ['shop.test']);

  m.leading('ingress-controller-leader', false);
  f = await scrape(m);
  assert.is(samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds').length, 0);
  assert.is(samples(f, 'nginx_ingress_controller_leader_election_status')[0]!.value, 0);
});

test('without leader election there is no leader_election_status; local mode exports expiry itself', async () => {
  const m = createMetrics(LABELS, { leader: true });
  m.leading(null, true);
  m.observeSync(applied(withCertificate(['shop.test'])), () => undefined, 0);
  const f = await scrape(m);
  assert.is(samples(f, 'nginx_ingress_controller_leader_election_status').length, 0);
  assert.is(samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds').length, 1);
});

test('orphaned Ingresses; a failed reload', async () => {
  const m = createMetrics(LABELS);
  const loc = (ing: string, b: string) => location({ ingress: { namespace: 'shop', name: ing }, service: { name: b, port: '80' }, backend: `shop-${b}-80` });
  const cfg = configuration([server('a.test', { locations: [loc('ok', 'web'), loc('gone', 'missing')] }), server('b.test', { locations: [loc('idle', 'empty')] })], {
    backends: [backend('upstream-default-backend'), backend('shop-web-80', [{ address: '10.0.0.1', port: '80' }], { service: { metadata: { namespace: 'shop', name: 'web' }, spec: { type: 'ClusterIP' } } }),
      backend('shop-missing-80'), backend('shop-empty-80', [], { service: { metadata: { namespace: 'shop', name: 'empty' }, spec: { type: 'ClusterIP' } } })],
  });
  m.observeSync(applied(cfg), () => undefined, 0);
  m.observeSync(applied(cfg, { reload: { ok: false, error: 'nginx -t failed' }, applied: false }), () => undefined, 0);
  const f = await scrape(m);
  const orphan = (name: string, type: string) => samples(f, 'nginx_ingress_controller_orphan_ingress', { ingress: name, type })[0]?.value;
  assert.equal([orphan('ok', 'no-service'), orphan('ok', 'no-endpoint'), orphan('gone', 'no-service'), orphan('idle', 'no-service'), orphan('idle', 'no-endpoint')], [0, 0, 1, 0, 1]);
  assert.is(orphan('gone', 'no-endpoint'), undefined, 'without a Service, endpoints are not looked at (as ingress-nginx)');
  assert.is(samples(f, 'nginx_ingress_controller_config_last_reload_successful')[0]!.value, 0);
  assert.is(samples(f, 'nginx_ingress_controller_errors')[0]!.value, 1);
  assert.equal(samples(f, 'nginx_ingress_controller_errors')[0]!.labels, LABELS);

  // The next sync: 'gone' deleted, 'idle' given an endpoint, 'ok' now pointing at the missing Service.
  const next = configuration([server('a.test', { locations: [loc('ok', 'missing')] }), server('b.test', { locations: [loc('idle', 'empty')] })], {
    backends: [backend('upstream-default-backend'), backend('shop-missing-80'),
      backend('shop-empty-80', [{ address: '10.0.0.2', port: '80' }], { service: { metadata: { namespace: 'shop', name: 'empty' }, spec: { type: 'ClusterIP' } } })],
  });
  m.observeSync(applied(next), () => undefined, 0);
  const g = await scrape(m);
  const now = (name: string, type: string) => samples(g, 'nginx_ingress_controller_orphan_ingress', { ingress: name, type })[0]?.value;
  assert.equal([now('ok', 'no-service'), now('ok', 'no-endpoint'), now('gone', 'no-service'), now('idle', 'no-service'), now('idle', 'no-endpoint')], [1, undefined, undefined, 0, 0]);
  assert.is(samples(g, 'nginx_ingress_controller_orphan_ingress').length, 3, 'a deleted Ingress leaves no series');
});

test('takeovers: per Ingress and side, from each built sync\'s warnings; gone with them', async () => {
  const m = createMetrics(LABELS);
  const cfg = configuration([server('a.test')]);
  const warnings = [
    { object: 'Ingress team-a/taker', field: 'spec.rules', reason: 'Takeover', message: 'takes traffic of Ingress team-b/victim (namespace team-b): on host a.test …' },
    { object: 'Ingress team-b/victim', field: 'spec.rules', reason: 'Takeover', message: 'Ingress team-a/taker of namespace team-a takes traffic of this Ingress: on host a.test …' },
    { object: 'Ingress team-c/other', field: 'spec.rules', reason: 'Takeover', message: 'host a.test belongs to namespace team-b (its oldest Ingress is team-b/victim); its rules for it are refused (--host-ownership)' },
    { object: 'Ingress team-a/taker', field: 'spec.rules', message: 'host a.test location "/x/" would duplicate the one from the older Ingress team-b/victim; ignored' },
  ];
  m.observeSync(applied(cfg, { warnings }), () => undefined, 0);
  const f = await scrape(m);
  assert.equal(samples(f, 'ingress_rx_takeovers').map((s) => [s.labels.namespace, s.labels.name, s.labels.side, s.value]),
    [['team-a', 'taker', 'takes', 1], ['team-b', 'victim', 'taken', 1]]);
  // A failed sync (no model) keeps the last report; the next build without takeovers clears it.
  m.observeSync({ ...applied(cfg), config: undefined, warnings: [] }, () => undefined, 0);
  assert.is(samples(await scrape(m), 'ingress_rx_takeovers').length, 2);
  m.observeSync(applied(cfg), () => undefined, 0);
  assert.is(samples(await scrape(m), 'ingress_rx_takeovers').length, 0);
});

test('--enable-metrics: the metrics log in nginx.conf, kept by a location without access log; none without', () => {
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
  const quiet = location({ path: '/quiet', pathType: 'Exact', accessLog: false, ingress: { namespace: 'shop', name: 'web' } });
  const cfg = configuration([server('a.test', { locations: [location({ ingress: { namespace: 'shop', name: 'web' } }), quiet] })]);
  const rt = defaultRuntime({ prefix: '/var/lib/irx' });
  const off = renderer.render(cfg, rt);
  assert.not.ok(off.includes('ingress_rx_metrics'));
  assert.ok(off.includes('            access_log off;\n'));
  const on = renderer.render(cfg, { ...rt, metricsLog: metricsLogPath(rt.prefix) });
  const directive = 'access_log "/var/lib/irx/logs/metrics.log" ingress_rx_metrics buffer=64k flush=1s;';
  assert.ok(on.includes(`    log_format ingress_rx_metrics '$namespace\\t$ingress_name\\t`));
  assert.ok(on.includes(`\n    ${directive}\n`), 'http level');
  assert.ok(on.includes(`\n            ${directive}\n`), 'the location that turns its access log off');
  assert.not.ok(on.includes('            access_log off;\n'));
});

test.run();
