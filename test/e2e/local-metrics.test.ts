// `ingress-rx local` with real NGINX and real requests: /metrics carries ingress-nginx's request,
// NGINX process, stub_status and controller families with their labels; the access log keeps
// ingress-nginx's default format (a known request's line parses with the format its docs give)
// and its ConfigMap options.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import type { EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { parsePromText, samples, type PromFamily } from '../support/prom-text.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
/** ingress-nginx's default log-format-upstream, as its log-format documentation gives it. */
const DOCUMENTED_FORMAT = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" '
  + '$request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name] $upstream_addr '
  + '$upstream_response_length $upstream_response_time $upstream_status $req_id';

/** A parser of a log_format: each $variable becomes a named group delimited by the literal text around it. */
function formatParser(format: string): (line: string) => Record<string, string> | null {
  const re = new RegExp(`^${format.split(/(\$[a-z_]+)/).map((part) => (part.startsWith('$') ? `(?<${part.slice(1)}>.*?)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`);
  return (line) => (re.exec(line)?.groups as Record<string, string> | undefined) ?? null;
}

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let backend: Server;
let canary: Server;
let auth: Server;
let cert: GeneratedCertificate;
const tmp = mkdtempSync(join(tmpdir(), 'irx-metrics-'));
const hits = { backend: 0, canary: 0, auth: 0 };

/** Answers with the status its path asks for (`/status/404`), 200 otherwise. */
async function statusServer(address: string, count: () => void): Promise<Server> {
  const s = createServer((req, res) => {
    count();
    const m = /^\/status\/(\d{3})/.exec(req.url ?? '');
    const body = 'hello from the backend\n';
    res.writeHead(m ? Number(m[1]) : 200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise<void>((r) => s.listen(0, address, r));
  return s;
}
const endpoint = (s: Server) => s.address() as AddressInfo as unknown as EchoServer;

async function scrape(): Promise<Map<string, PromFamily>> {
  const r = await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz });
  return parsePromText(r.body);
}
const value = (f: Map<string, PromFamily>, name: string, match: Record<string, string> = {}) =>
  samples(f, name, match).reduce((a, s) => a + s.value, 0);

test.before(async () => {
  backend = await statusServer('127.0.0.2', () => hits.backend++);
  canary = await statusServer('127.0.0.3', () => hits.canary++);
  auth = await statusServer('127.0.0.4', () => hits.auth++);
  cert = await generateCertificate(tmp, 'tls.test');
  const authPort = (auth.address() as AddressInfo).port;
  const b = (name: string) => [service('app', name), ...slices('app', name, [endpoint(name === 'canary' ? canary : backend)])];
  ctl = await startLocal({
    args: ['--configmap', 'ingress/config'],
    files: {
      'services.json': [...b('web'), ...b('canary'), ...b('other'), service('app', 'no-endpoints')],
      'ingresses.json': [
        ingress('app', 'web-a', { host: 'a.test', paths: [{ path: '/', service: 'web' }, { path: '/counted', service: 'web' }] }),
        ingress('app', 'web-a-canary', { host: 'a.test', annotations: { [`${P}/canary`]: 'true', [`${P}/canary-weight`]: '50' }, paths: [{ path: '/', service: 'canary' }, { path: '/counted', service: 'canary' }] }),
        ingress('app', 'web-b', { host: 'b.test', paths: [{ path: '/', service: 'other' }, { path: '/status', service: 'other' }, { path: '/down', service: 'no-endpoints' }] }),
        ingress('app', 'quiet', { host: 'q.test', annotations: { [`${P}/enable-access-log`]: 'false' }, paths: [{ path: '/', service: 'web' }] }),
        ingress('app', 'guarded', { host: 'auth.test', annotations: { [`${P}/auth-url`]: `http://127.0.0.4:${authPort}/check` }, paths: [{ path: '/', service: 'web' }] }),
        ingress('app', 'orphan', { host: 'o.test', paths: [{ path: '/', service: 'missing' }] }),
        tlsSecret('app', 'tls-cert', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
        ingress('app', 'secure', { host: 'tls.test', tls: [{ hosts: ['tls.test'], secretName: 'tls-cert' }], paths: [{ path: '/', service: 'web' }] }),
      ],
    },
  });
  await ctl.until('b.test', '/', (r) => r.status === 200);
  await ctl.until('a.test', '/', (r) => r.status === 200);
});

test.after(async () => {
  await ctl?.stop();
  for (const s of [backend, canary, auth]) await new Promise((r) => s?.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

over.both('request metrics: ingress-nginx\'s families and labels for 2xx, 4xx, 5xx, canary and two Ingresses', async (p) => {
  // Paths of their own: nothing else requests them, so what they count is this run's.
  const before = await scrape();
  for (let i = 0; i < 20; i++) await p.request('a.test', `/counted/${i}`);
  for (let i = 0; i < 5; i++) await p.request('b.test', '/status/404');
  for (let i = 0; i < 3; i++) assert.is((await p.request('b.test', '/down/x')).status, 503);
  await p.request('b.test', '/status/201', { method: 'POST', body: 'x'.repeat(300) });
  // A host no Ingress defines: answered by the catch-all server, not counted (--metrics-per-host).
  assert.is((await p.request('undefined.test', '/')).status, 404);

  const since = (m: Map<string, PromFamily>, name: string, match: Record<string, string>) => value(m, name, match) - value(before, name, match);
  const req = (m: Map<string, PromFamily>, match: Record<string, string>) => since(m, 'nginx_ingress_controller_requests', match);
  const f = await waitFor(async () => {
    const m = await scrape();
    return req(m, { path: '/counted' }) >= 20 && req(m, { path: '/down' }) >= 3 && req(m, { path: '/status' }) >= 6 ? m : null;
  }, { timeoutMs: 10_000, what: 'the requests counted' });
  assert.is(req(f, { ingress: 'web-a', path: '/counted', status: '200', method: 'GET' }), 20);
  assert.is(req(f, { ingress: 'web-b', path: '/status', status: '404', method: 'GET' }), 5);
  assert.is(req(f, { ingress: 'web-b', path: '/status', status: '201', method: 'POST' }), 1);
  assert.is(req(f, { ingress: 'web-b', path: '/down', status: '503' }), 3);
  const a = samples(f, 'nginx_ingress_controller_requests', { path: '/counted' });
  // The canary Ingress has /counted too: it took some of the weighted traffic.
  assert.equal(a.map((s) => s.labels.canary).sort(), ['', 'app-canary-80']);
  for (const s of a) {
    assert.equal(s.labels, {
      controller_namespace: 'local', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'local',
      namespace: 'app', ingress: 'web-a', service: 'web', path: '/counted', host: 'a.test', method: 'GET', status: '200', canary: s.labels.canary!,
    });
  }
  assert.is(samples(f, 'nginx_ingress_controller_requests', { host: 'undefined.test' }).length, 0);
  // Every histogram family has the series; the upstream ones only for proxied requests.
  for (const h of ['request_duration_seconds', 'response_duration_seconds', 'header_duration_seconds', 'connect_duration_seconds', 'request_size', 'response_size', 'bytes_sent']) {
    assert.is(since(f, `nginx_ingress_controller_${h}_count`, { path: '/status', status: '404' }), 5, h);
  }
  assert.is(samples(f, 'nginx_ingress_controller_response_duration_seconds_count', { path: '/down' }).length, 0, 'a 503 from NGINX has no upstream time');
  assert.ok(value(f, 'nginx_ingress_controller_request_size_sum', { method: 'POST' }) > 300);
  assert.is(since(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_count', { ingress: 'web-a', canary: 'app-canary-80' })
    + since(f, 'nginx_ingress_controller_ingress_upstream_latency_seconds_count', { ingress: 'web-a', canary: '' }) >= 20, true);
  assert.ok(value(f, 'ingress_rx_metrics_log_lines_total', { outcome: 'skipped' }) >= 1);
  assert.is(value(f, 'ingress_rx_metrics_log_lines_total', { outcome: 'malformed' }), 0);
});

over.both('a location with enable-access-log "false" is counted; auth subrequests are not', async (p) => {
  const before = await scrape();
  const q0 = value(before, 'nginx_ingress_controller_requests', { ingress: 'quiet' });
  const g0 = value(before, 'nginx_ingress_controller_requests', { ingress: 'guarded' });
  const auth0 = hits.auth;
  for (let i = 0; i < 4; i++) assert.is((await p.request('q.test', '/quiet-request')).status, 200);
  for (let i = 0; i < 3; i++) assert.is((await p.request('auth.test', '/guarded-request')).status, 200);
  assert.is(hits.auth - auth0, 3, 'each request made one auth subrequest');
  const f = await waitFor(async () => {
    const m = await scrape();
    return value(m, 'nginx_ingress_controller_requests', { ingress: 'quiet' }) >= q0 + 4
      && value(m, 'nginx_ingress_controller_requests', { ingress: 'guarded' }) >= g0 + 3 ? m : null;
  }, { timeoutMs: 10_000, what: 'quiet and guarded requests counted' });
  assert.is(value(f, 'nginx_ingress_controller_requests', { ingress: 'quiet' }) - q0, 4);
  assert.is(value(f, 'nginx_ingress_controller_requests', { ingress: 'guarded' }) - g0, 3, 'the subrequests are not requests');
  const log = readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8');
  assert.not.ok(log.includes('/quiet-request'), 'enable-access-log "false" keeps the request out of the access log');
  assert.not.ok(log.includes('/check'), 'auth subrequests stay out of the access log, as in ingress-nginx');
});

over.noRequest('NGINX process and stub_status families', 'the metrics', async () => {
  const f = await scrape();
  const g = (name: string, match: Record<string, string> = {}) => value(f, `nginx_ingress_controller_nginx_process_${name}`, match);
  // The master and its children (workers of a finished reload may still be exiting: read both until they agree).
  const children = () => {
    const master = Number(readFileSync(join(ctl.workdir, 'nginx.pid'), 'utf8'));
    return readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).length;
  };
  await waitFor(async () => value(await scrape(), 'nginx_ingress_controller_nginx_process_num_procs') === 1 + children(), { what: 'num_procs = master + children' });
  assert.ok(children() >= 1);
  assert.ok(g('cpu_seconds_total') > 0);
  assert.ok(g('resident_memory_bytes') > 1e6);
  assert.ok(g('virtual_memory_bytes') > g('resident_memory_bytes'));
  const started = g('oldest_start_time_seconds');
  assert.ok(started > Date.now() / 1000 - 600 && started <= Date.now() / 1000 + 1, `oldest start ${started}`);
  assert.ok(g('connections_total', { state: 'accepted' }) >= g('connections', { state: 'active' }));
  assert.ok(g('connections_total', { state: 'handled' }) > 10);
  assert.ok(g('requests_total') > 30);
  assert.ok(g('connections', { state: 'active' }) >= 1, 'the stub_status request itself is active');
  for (const name of ['num_procs', 'cpu_seconds_total', 'requests_total']) {
    const [s] = samples(f, `nginx_ingress_controller_nginx_process_${name}`);
    assert.equal(s!.labels, { controller_namespace: 'local', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'local' }, name);
  }
  assert.is(f.get('nginx_ingress_controller_nginx_process_cpu_seconds_total')!.type, 'counter');
  assert.is(f.get('nginx_ingress_controller_nginx_process_connections')!.type, 'gauge');
});

over.noRequest('controller families: certificates per host, orphaned Ingresses, build, reloads', 'the metrics', async () => {
  const f = await scrape();
  const x = new X509Certificate(readFileSync(cert.certPath));
  const [expiry] = samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds', { host: 'tls.test' });
  assert.equal(expiry!.labels, { namespace: 'app', class: 'k8s.io/ingress-nginx', host: 'tls.test', secret_name: 'tls-cert', identifier: `-${BigInt(`0x${x.serialNumber}`)}` });
  assert.is(expiry!.value, Math.floor(Date.parse(x.validTo) / 1000));
  const [info] = samples(f, 'nginx_ingress_controller_ssl_certificate_info', { host: 'tls.test' });
  assert.equal(info!.labels, {
    ...expiry!.labels, issuer_organization: '', issuer_common_name: 'tls.test', serial_number: String(BigInt(`0x${x.serialNumber}`)), public_key_algorithm: 'ECDSA',
  });
  const fallback = samples(f, 'nginx_ingress_controller_ssl_expire_time_seconds', { host: '_' });
  assert.is(fallback.length, 1, 'the self-signed default certificate of `_`');
  assert.is(fallback[0]!.labels.secret_name, '');
  assert.is(samples(f, 'nginx_ingress_controller_orphan_ingress', { ingress: 'orphan', type: 'no-service' })[0]?.value, 1);
  assert.is(samples(f, 'nginx_ingress_controller_orphan_ingress', { ingress: 'web-a', type: 'no-service' })[0]?.value, 0);
  assert.is(samples(f, 'nginx_ingress_controller_orphan_ingress', { ingress: 'web-b', type: 'no-endpoint' })[0]?.value, 1, 'its /down path has a Service without endpoints');
  assert.is(samples(f, 'nginx_ingress_controller_orphan_ingress', { ingress: 'web-a', type: 'no-endpoint' })[0]?.value, 0);
  const [build] = samples(f, 'nginx_ingress_controller_build_info');
  assert.is(build!.value, 1);
  assert.match(build!.labels.release!, /^\d+\.\d+\.\d+/);
  assert.is(value(f, 'nginx_ingress_controller_config_last_reload_successful'), 1);
  assert.ok(value(f, 'nginx_ingress_controller_config_last_reload_successful_timestamp_seconds') > 1e9);
  assert.ok(value(f, 'nginx_ingress_controller_config_hash') > 0);
  assert.ok(f.has('nginx_ingress_controller_success') && f.has('nginx_ingress_controller_errors'));
  assert.ok(value(f, 'process_cpu_seconds_total') > 0, "the controller's own process families");
});

over.both('access log: a known request\'s line parses with the format ingress-nginx documents', async (p) => {
  const parse = formatParser(DOCUMENTED_FORMAT);
  const id = p.protocol === 'HTTP/1.1' ? '0123456789abcdef0123456789abcdef' : 'fedcba9876543210fedcba9876543210';
  const r = await p.request('b.test', '/golden?x=1', { headers: { 'User-Agent': 'golden-agent/1.0', Referer: 'https://ref.example/p', 'X-Request-ID': id } });
  assert.is(r.status, 200);
  const line = await waitFor(() => readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8').split('\n').find((l) => l.includes(id)), { what: 'the logged line' });
  const g = parse(line);
  assert.ok(g, `does not parse: ${line}`);
  assert.is(g!.remote_addr, '127.0.0.1');
  assert.is(g!.remote_user, '-');
  assert.match(g!.time_local!, /^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}$/);
  assert.is(g!.request, `GET /golden?x=1 ${p.protocol === 'HTTP/1.1' ? 'HTTP/1.1' : 'HTTP/2.0'}`);
  assert.is(g!.status, '200');
  assert.is(g!.body_bytes_sent, String(Buffer.byteLength(r.body)));
  assert.is(g!.http_referer, 'https://ref.example/p');
  assert.is(g!.http_user_agent, 'golden-agent/1.0');
  assert.match(g!.request_length!, /^\d+$/);
  assert.match(g!.request_time!, /^\d+\.\d{3}$/);
  assert.is(g!.proxy_upstream_name, 'app-other-80');
  assert.is(g!.proxy_alternative_upstream_name, '');
  assert.is(g!.upstream_addr, `127.0.0.2:${(backend.address() as AddressInfo).port}`);
  assert.is(g!.upstream_response_length, g!.body_bytes_sent);
  assert.match(g!.upstream_response_time!, /^\d+\.\d{3}$/);
  assert.is(g!.upstream_status, '200');
  assert.is(g!.req_id, id);
});

/** Writes the ConfigMap and waits until NGINX runs it (its checksum changed). */
async function configure(data: Record<string, string>): Promise<void> {
  const before = (await ctl.control('/configuration-checksum')).body;
  ctl.write('config.json', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: 'ingress' }, data }]);
  await waitFor(async () => (await ctl.control('/configuration-checksum')).body !== before, { timeoutMs: 15_000, what: 'the ConfigMap applied' });
  await ctl.until('b.test', '/', (r) => r.status === 200);
}
const accessLog = () => readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8');

over.both('access log options: escape-json, escape-none, skip-access-log-urls, access-log-path, error-log-path, disable-access-log', async (p) => {
  const hostile = 'agent "quoted" \\ back';
  // escape=json: a JSON format stays JSON whatever the client sends.
  await configure({ 'log-format-escape-json': 'true', 'log-format-upstream': '{"ua": "$http_user_agent", "uri": "$request_uri", "status": $status}' });
  await p.request('b.test', `/json-line-${p.tag}`, { headers: { 'User-Agent': hostile } });
  const json = await waitFor(() => accessLog().split('\n').find((l) => l.includes(`/json-line-${p.tag}`)), { what: 'the JSON line' });
  assert.equal(JSON.parse(json), { ua: hostile, uri: `/json-line-${p.tag}`, status: 200 });

  await configure({ 'log-format-escape-none': 'true', 'log-format-upstream': '$request_uri $http_user_agent' });
  await p.request('b.test', `/raw-line-${p.tag}`, { headers: { 'User-Agent': 'raw "q"' } });
  assert.ok(await waitFor(() => accessLog().includes(`/raw-line-${p.tag} raw "q"`)), 'escape=none writes the quotes as they came');

  const other = join(tmp, `other-access-${p.tag}.log`);
  const errors = join(tmp, `other-error-${p.tag}.log`);
  await configure({ 'skip-access-log-urls': '/skipped', 'access-log-path': other, 'error-log-path': errors });
  await p.request('b.test', '/skipped');
  await p.request('b.test', `/not-skipped-${p.tag}`);
  const text = await waitFor(() => (existsSync(other) && readFileSync(other, 'utf8').includes(`/not-skipped-${p.tag}`) ? readFileSync(other, 'utf8') : null), { what: 'the log at access-log-path' });
  assert.not.ok(text.includes('GET /skipped'), 'skip-access-log-urls');
  assert.ok(existsSync(errors), 'NGINX opened error-log-path');
  assert.not.ok(accessLog().includes(`/not-skipped-${p.tag}`));

  // disable-access-log: nothing logged, request metrics still counted.
  const before = value(await scrape(), 'nginx_ingress_controller_requests', { ingress: 'web-b', path: '/' });
  await configure({ 'disable-access-log': 'true', 'access-log-path': other });
  const size = readFileSync(other, 'utf8').length;
  for (let i = 0; i < 3; i++) await p.request('b.test', '/unlogged');
  await waitFor(async () => value(await scrape(), 'nginx_ingress_controller_requests', { ingress: 'web-b', path: '/' }) >= before + 3, { what: 'metrics without an access log' });
  assert.is(readFileSync(other, 'utf8').length, size);
});

test.run();
