// The request families from metrics-log lines: ingress-nginx's names, help, label sets, default
// buckets and filters, and what a hostile client or a malformed line can do to them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Registry } from 'prom-client';
import {
  REQUEST_FAMILIES, createRequestMetrics, defaultRequestMetricsConfig, type RequestMetricsConfig,
} from '../../../src/observability/request-metrics.js';
import { METRICS_LOG_FIELDS } from '../../../src/render/metrics-log.js';
import { goFloat } from '../../../src/observability/exposition.js';
import { parsePromText, samples } from '../../support/prom-text.js';

const CONTROLLER = { controller_namespace: 'ingress', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'pod-1' };

interface Req {
  ns?: string; ing?: string; svc?: string; path?: string; canary?: string; method?: string; status?: string; host?: string;
  reqLen?: string; bytes?: string; rt?: string; connect?: string; header?: string; response?: string;
}
/** A metrics-log line as NGINX writes it (fields of METRICS_LOG_FIELDS). */
function line(r: Req = {}): string {
  return [r.ns ?? 'app', r.ing ?? 'web', r.svc ?? 'web-svc', r.path ?? '/', r.canary ?? '', r.method ?? 'GET', r.status ?? '200',
    r.host ?? 'a.test', r.reqLen ?? '75', r.bytes ?? '250', r.rt ?? '0.004', r.connect ?? '0.001', r.header ?? '0.003', r.response ?? '0.003'].join('\t');
}

/** The same request as the Lua router's routed format writes it: the four route fields in one, tabs escaped. */
function routed(r: Req = {}): string {
  const f = line(r).split('\t');
  return [[f[0], f[1], f[2], f[3]].join('\\x09'), ...f.slice(4)].join('\t');
}

function setup(over: Partial<RequestMetricsConfig> = {}, hosts = ['_', 'a.test', 'b.test'], now = () => 0) {
  const registry = new Registry();
  const m = createRequestMetrics({ ...defaultRequestMetricsConfig(), ...over, registry, constLabels: CONTROLLER, now });
  m.setHosts(new Set(hosts));
  return { m, scrape: async () => parsePromText(await registry.metrics()) };
}

test('the line format has the fields the parser reads', () => {
  assert.is(METRICS_LOG_FIELDS.length, 14);
  assert.is(line().split('\t').length, METRICS_LOG_FIELDS.length);
});

test('a routed line counts as the same request in a location\'s format would', async () => {
  const a = setup();
  const b = setup();
  const reqs: Req[] = [{}, { path: '/x\\x09y', status: '404' }, { ns: '', ing: '', svc: '', path: '' }, { host: 'b.test', rt: '0.3' }];
  for (const r of reqs) {
    assert.is(a.m.addLine(line(r)), 'counted');
    assert.is(b.m.addLine(routed(r)), 'counted', routed(r));
  }
  assert.equal(await b.scrape(), await a.scrape());
  const [escaped] = samples(await b.scrape(), 'nginx_ingress_controller_requests').filter((x) => x.labels.status === '404');
  assert.is(escaped!.labels.path, '/x\\x09y', 'a tab NGINX escaped in the path stays in the path');
  assert.is(b.m.addLine(['-', ...line().split('\t').slice(4)].join('\t')), 'skipped', 'a route the router did not label (it answered itself)');
  assert.is(b.m.addLine(routed().replace('\\x09', '-')), 'malformed', 'three joins or nothing');
  assert.is(b.m.addLine(`${routed()}\textra`), 'malformed');
});

test('families, types, help and label sets are ingress-nginx\'s', async () => {
  const { m, scrape } = setup();
  assert.is(m.addLine(line()), 'counted');
  const f = await scrape();
  const types: Record<string, string> = {
    requests: 'counter', request_duration_seconds: 'histogram', response_duration_seconds: 'histogram',
    header_duration_seconds: 'histogram', connect_duration_seconds: 'histogram', request_size: 'histogram',
    response_size: 'histogram', bytes_sent: 'histogram', ingress_upstream_latency_seconds: 'summary',
  };
  for (const family of REQUEST_FAMILIES) assert.is(f.get(`nginx_ingress_controller_${family}`)?.type, types[family], family);
  assert.is(f.get('nginx_ingress_controller_requests')!.help, 'The total number of client requests');
  assert.is(f.get('nginx_ingress_controller_request_duration_seconds')!.help, 'The request processing time in milliseconds');
  const requestLabels = ['canary', 'controller_class', 'controller_namespace', 'controller_pod', 'host', 'ingress', 'method', 'namespace', 'path', 'service', 'status'];
  const [req] = samples(f, 'nginx_ingress_controller_requests');
  assert.equal(Object.keys(req!.labels).sort(), requestLabels);
  assert.equal(req!.labels, { ...CONTROLLER, status: '200', method: 'GET', path: '/', namespace: 'app', ingress: 'web', service: 'web-svc', canary: '', host: 'a.test' });
  assert.is(req!.value, 1);
  for (const h of ['request_duration_seconds', 'response_duration_seconds', 'header_duration_seconds', 'connect_duration_seconds', 'request_size', 'response_size', 'bytes_sent']) {
    const [count] = samples(f, `nginx_ingress_controller_${h}_count`);
    assert.equal(Object.keys(count!.labels).sort(), requestLabels, h);
  }
  const [latency] = samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_count');
  assert.equal(Object.keys(latency!.labels).sort(), ['canary', 'controller_class', 'controller_namespace', 'controller_pod', 'ingress', 'namespace', 'service']);
});

test('default buckets, cumulative counts, sums; le printed as Go prints it', async () => {
  const { m, scrape } = setup();
  m.addLine(line({ rt: '0.004', bytes: '250', reqLen: '15' }));
  m.addLine(line({ rt: '0.3', bytes: '5000000', reqLen: '100' }));
  m.addLine(line({ rt: '12', bytes: '20', reqLen: '101' }));
  const f = await scrape();
  const buckets = (name: string) => Object.fromEntries(samples(f, `nginx_ingress_controller_${name}_bucket`).map((s) => [s.labels.le!, s.value]));
  assert.equal(buckets('request_duration_seconds'), {
    '0.005': 1, '0.01': 1, '0.025': 1, '0.05': 1, '0.1': 1, '0.25': 1, '0.5': 2, '1': 2, '2.5': 2, '5': 2, '10': 2, '+Inf': 3,
  });
  assert.equal(buckets('request_size'), { '10': 0, '20': 1, '30': 1, '40': 1, '50': 1, '60': 1, '70': 1, '80': 1, '90': 1, '100': 2, '+Inf': 3 });
  assert.equal(buckets('bytes_sent'), { '10': 0, '100': 1, '1000': 2, '10000': 2, '100000': 2, '1e+06': 2, '1e+07': 3, '+Inf': 3 });
  assert.equal(buckets('response_size'), { '10': 0, '20': 1, '30': 1, '40': 1, '50': 1, '60': 1, '70': 1, '80': 1, '90': 1, '100': 1, '+Inf': 3 });
  assert.is(samples(f, 'nginx_ingress_controller_request_duration_seconds_sum')[0]!.value, 12.304);
  assert.is(samples(f, 'nginx_ingress_controller_request_duration_seconds_count')[0]!.value, 3);
  assert.is(samples(f, 'nginx_ingress_controller_requests')[0]!.value, 3);
  assert.equal([0.005, 1, 100000, 1e6, 1e7, 1e-5, 2.5].map(goFloat), ['0.005', '1', '100000', '1e+06', '1e+07', '1e-05', '2.5']);
});

test('without an upstream, or with several tries, the upstream times are not observed (as ingress-nginx)', async () => {
  const { m, scrape } = setup();
  m.addLine(line({ status: '308', connect: '-', header: '-', response: '-' }));
  m.addLine(line({ status: '502', connect: '0.001, 0.002', header: '0.002, 0.003', response: '0.002, 0.004' }));
  const f = await scrape();
  assert.is(samples(f, 'nginx_ingress_controller_requests').length, 2);
  assert.is(samples(f, 'nginx_ingress_controller_request_duration_seconds_count').length, 2);
  for (const h of ['response_duration_seconds', 'header_duration_seconds', 'connect_duration_seconds', 'ingress_upstream_latency_seconds']) {
    assert.is(samples(f, `nginx_ingress_controller_${h}_count`).length, 0, h);
  }
});

test('hosts: undefined hosts are skipped unless --metrics-per-undefined-host; without --metrics-per-host no host label', async () => {
  const defined = setup();
  assert.is(defined.m.addLine(line({ host: 'random-1.attacker.example' })), 'skipped');
  assert.is(defined.m.addLine(line({ host: '_', ns: '', ing: '', svc: '', path: '' })), 'counted');
  assert.is(defined.m.addLine(line({ host: 'b.test' })), 'counted');
  assert.equal(samples(await defined.scrape(), 'nginx_ingress_controller_requests').map((s) => s.labels.host).sort(), ['_', 'b.test']);

  const undefinedToo = setup({ perUndefinedHost: true });
  assert.is(undefinedToo.m.addLine(line({ host: 'wildcard.foo.com' })), 'counted');
  assert.equal(samples(await undefinedToo.scrape(), 'nginx_ingress_controller_requests').map((s) => s.labels.host), ['wildcard.foo.com']);

  const noHost = setup({ perHost: false });
  for (const host of ['a.test', 'x.example', 'y.example']) assert.is(noHost.m.addLine(line({ host })), 'counted');
  const [only, ...rest] = samples(await noHost.scrape(), 'nginx_ingress_controller_requests');
  assert.is(rest.length, 0);
  assert.not.ok('host' in only!.labels);
  assert.is(only!.value, 3);
});

test('the hosts follow the configuration', () => {
  const { m } = setup({}, ['a.test']);
  assert.is(m.addLine(line({ host: 'new.test' })), 'skipped');
  m.setHosts(new Set(['a.test', 'new.test']));
  assert.is(m.addLine(line({ host: 'new.test' })), 'counted');
});

test('--report-status-classes', async () => {
  const { m, scrape } = setup({ statusClasses: true });
  for (const status of ['200', '201', '404', '503', '504']) m.addLine(line({ status }));
  const byStatus = Object.fromEntries(samples(await scrape(), 'nginx_ingress_controller_requests').map((s) => [s.labels.status, s.value]));
  assert.equal(byStatus, { '2xx': 2, '4xx': 1, '5xx': 2 });
});

test('--exclude-socket-metrics: excluded families are neither kept nor exported', async () => {
  const { m, scrape } = setup({ families: REQUEST_FAMILIES.filter((f) => f !== 'request_size' && f !== 'header_duration_seconds') });
  m.addLine(line());
  const f = await scrape();
  assert.not.ok(f.has('nginx_ingress_controller_request_size'));
  assert.not.ok(f.has('nginx_ingress_controller_header_duration_seconds'));
  assert.ok(f.has('nginx_ingress_controller_response_size'));
  assert.is(samples(f, 'nginx_ingress_controller_response_size_count')[0]!.value, 1);
});

test('a hostile client cannot mint series with methods: unknown tokens count as OTHER', async () => {
  const { m, scrape } = setup();
  for (let i = 0; i < 5000; i++) m.addLine(line({ method: `X${i.toString(36).toUpperCase()}` }));
  for (const method of ['GET', 'PROPFIND', 'PATCH']) m.addLine(line({ method }));
  const methods = Object.fromEntries(samples(await scrape(), 'nginx_ingress_controller_requests').map((s) => [s.labels.method, s.value]));
  assert.equal(methods, { OTHER: 5000, GET: 1, PROPFIND: 1, PATCH: 1 });
  assert.is(m.seriesCount(), 5);
});

test('the label sets are bounded; beyond the bound requests are dropped, existing series keep counting', async () => {
  const { m, scrape } = setup({ perUndefinedHost: true, maxSeries: 10 });
  const outcomes = Array.from({ length: 50 }, (_, i) => m.addLine(line({ host: `h${i}.attacker.example`, connect: '-', header: '-', response: '-' })));
  assert.is(outcomes.filter((o) => o === 'counted').length, 10);
  assert.is(outcomes.filter((o) => o === 'dropped').length, 40);
  assert.is(m.addLine(line({ host: 'h0.attacker.example', connect: '-', header: '-', response: '-' })), 'counted');
  assert.is(m.seriesCount(), 10);
  const h0 = samples(await scrape(), 'nginx_ingress_controller_requests', { host: 'h0.attacker.example' });
  assert.is(h0[0]!.value, 2);
});

test('malformed lines and lines of no Ingress location are not counted', async () => {
  const { m, scrape } = setup();
  assert.is(m.addLine(''), 'malformed');
  assert.is(m.addLine('garbage'), 'malformed');
  assert.is(m.addLine(`${line()}\textra`), 'malformed');
  assert.is(m.addLine(line().split('\t').slice(0, 10).join('\t')), 'malformed');
  assert.is(m.addLine(line({ path: `/${'a'.repeat(5000)}` })), 'malformed');
  // An unset $namespace: a www redirect server, a request refused before a location.
  assert.is(m.addLine(line({ ns: '-', ing: '-', svc: '-', path: '-', canary: '-' })), 'skipped');
  assert.is(m.addLine(line({ rt: 'x', bytes: '', reqLen: 'NaN' })), 'counted');
  const f = await scrape();
  assert.is(samples(f, 'nginx_ingress_controller_requests').length, 1);
  assert.is(samples(f, 'nginx_ingress_controller_request_duration_seconds_count').length, 0);
  assert.is(samples(f, 'nginx_ingress_controller_request_size_count').length, 0);
});

test('label values NGINX escaped stay one valid label value', async () => {
  const { m, scrape } = setup();
  // NGINX's log escaping turns quotes, backslashes and control bytes into \xXX.
  m.addLine(line({ path: '/a\\x22b\\x09c', canary: 'app-"q"-80' }));
  const [s] = samples(await scrape(), 'nginx_ingress_controller_requests');
  assert.is(s!.labels.path, '/a\\x22b\\x09c');
  assert.is(s!.labels.canary, 'app-"q"-80');
});

test('series of removed Ingresses go, as ingress-nginx removes them', async () => {
  const { m, scrape } = setup();
  m.addLine(line({ ing: 'old' }));
  m.addLine(line({ ing: 'kept' }));
  m.removeIngresses(new Set(['app/old']));
  const ingresses = samples(await scrape(), 'nginx_ingress_controller_requests').map((s) => s.labels.ingress);
  assert.equal(ingresses, ['kept']);
  assert.equal(samples(await scrape(), 'nginx_ingress_controller_ingress_upstream_latency_seconds_count').map((s) => s.labels.ingress), ['kept']);
});

test('ingress_upstream_latency_seconds: quantiles of the last 10 minutes, sum and count of all time', async () => {
  let t = 0;
  const { m, scrape } = setup({}, ['a.test'], () => t);
  for (let i = 1; i <= 100; i++) m.addLine(line({ connect: (i / 1000).toFixed(3) }));
  let f = await scrape();
  const q = () => Object.fromEntries(samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds').map((s) => [s.labels.quantile, s.value]));
  assert.equal(q(), { '0.5': 0.05, '0.9': 0.09, '0.99': 0.099 });
  assert.is(samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_count')[0]!.value, 100);
  t = 11 * 60_000;
  f = await scrape();
  assert.ok(Object.values(q()).every((v) => Number.isNaN(v)), 'an empty window gives NaN, as Go\'s summary');
  assert.is(samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_count')[0]!.value, 100);
  m.addLine(line({ connect: '0.007' }));
  f = await scrape();
  assert.equal(q(), { '0.5': 0.007, '0.9': 0.007, '0.99': 0.007 });
});

test('ingress_upstream_latency_seconds keeps a bounded window whatever the connect times', async () => {
  const { m, scrape } = setup({}, ['a.test']);
  for (let ms = 1; ms <= 60_000; ms++) m.addLine(line({ connect: (ms / 1000).toFixed(3), header: '-', response: '-' }));
  const f = await scrape();
  const q = Object.fromEntries(samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds').map((s) => [s.labels.quantile, s.value]));
  // Two significant digits from 100 ms on (at most 90 values a decade): the exact 59.4 s is kept as 59 s.
  assert.equal(q, { '0.5': 30, '0.9': 54, '0.99': 59 });
  assert.ok(Math.abs(samples(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_sum')[0]!.value - 1_800_030) < 1, 'the sum is exact');
});

test.run();
