// ConfigMap keys as ingress-nginx answers them (its docs and test/e2e/settings/*.go): one
// `ingress-rx local` whose ConfigMap is rewritten in phases (keys that exclude each other, such as
// use-forwarded-headers on and off, use-http2 off or the PROXY protocol, get phases of their own),
// real NGINX and real requests over HTTP/1.1 and HTTP/2. docs/fidelity.md names the test of each key.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { connect as http2Connect } from 'node:http2';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { DYNAMIC_ROUTES_ARGS, ingress, service, slices, startLocal, untilRunning, type LocalController, type Reply } from '../support/local-harness.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix, StreamReset } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const NS = 'fid';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const echo: Record<string, EchoServer> = {};
const headers = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string> = {}, svc = 'main', paths: Array<[string, string]> = [['/', 'Prefix']]) =>
  ingress(NS, name, { host, annotations: a(annotations), paths: paths.map(([path, pathType]) => ({ path, pathType, service: svc })) });
const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data });

/** The nginx.conf NGINX runs, as its status server serves it. */
const runningConf = async () => (await ctl.control('/nginx.conf')).body;
/** Log files the log-path keys name (created by NGINX's master). */
const logDir = mkdtempSync(join(tmpdir(), 'irx-fidelity-logs-'));
let accessLogFile = '';
const accessLog = () => readFileSync(accessLogFile || join(ctl.workdir, 'logs', 'access.log'), 'utf8');

/** Rewrites the main ConfigMap and waits until NGINX runs a configuration that has `marker`. */
/** Syncs that reloaded and then applied everything (the route table is POSTed after the reload). */
const appliedReloads = () => ctl.output().split('\n').filter((l) => /"decision":"reload"/.test(l) && /"applied":true/.test(l)).length;

async function phase(data: Record<string, string>, marker: string, opts: { probe?: boolean } = {}): Promise<void> {
  const reloadsBefore = appliedReloads();
  ctl.write('configmap.json', [configMap('nginx-config', data)]);
  await untilRunning(ctl, marker);
  await waitFor(() => appliedReloads() > reloadsBefore, { timeoutMs: 15_000, what: 'the sync of the new ConfigMap applied whole' });
  if (opts.probe !== false) await ctl.until('plain.test', '/', () => true);
}

/** One raw HTTP/1.1 exchange (a PROXY protocol header first, or a keep-alive request). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { out += d; if (out.includes('\r\n\r\n') && /"name"/.test(out)) socket.end(); });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('raw request timed out')));
  });
}

/** The TLS version and ALPN protocol NGINX agrees to for a client offering `versions`. */
function handshake(host: string, opts: { maxVersion?: 'TLSv1.2' | 'TLSv1.3'; alpn?: string[] } = {}): Promise<{ version: string | null; alpn: string | false } | Error> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host: '127.0.0.1', port: ctl.ports.https, servername: host, rejectUnauthorized: false,
      ...(opts.maxVersion ? { maxVersion: opts.maxVersion } : {}), ...(opts.alpn ? { ALPNProtocols: opts.alpn } : {}),
    }, () => {
      resolve({ version: socket.getProtocol(), alpn: socket.alpnProtocol ?? false });
      socket.end();
    });
    socket.on('error', (err) => resolve(err));
  });
}

/** Whether the host has no server block: the Lua router serves it. */
const servedByRouter = (host: string) => !readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8').includes(`server_name ${host};`);

const PHASE_A: Record<string, string> = {
  'add-headers': `${NS}/resp-headers`,
  'proxy-set-headers': `${NS}/req-headers`,
  'allow-backend-server-header': 'true',
  'hide-headers': 'X-Echo-Name',
  'block-cidrs': '127.0.9.0/24',
  'block-user-agents': '~*badbot',
  'block-referers': 'spam.example',
  'custom-http-errors': '418',
  'denylist-source-range': '127.0.8.0/24',
  'whitelist-source-range': '127.0.0.0/24, 127.0.8.0/24, 127.0.9.0/24',
  'enable-access-log-for-default-backend': 'true',
  'log-format-upstream': '$remote_addr FID $request_uri $status $uri',
  'enable-auth-access-log': 'true',
  'log-format-escape-json': 'true',
  'skip-access-log-urls': '/skipme',
  'ssl-redirect': 'false',
  'hsts-max-age': '100',
  'hsts-include-subdomains': 'false',
  'hsts-preload': 'true',
  'use-gzip': 'true', 'gzip-level': '9', 'gzip-min-length': '100', 'gzip-types': 'application/json',
  'limit-req-status-code': '429', 'limit-conn-status-code': '430',
  'limit-rate': '1', 'limit-rate-after': '2',
  'load-balance': 'ewma',
  'proxy-body-size': '1k',
  'proxy-connect-timeout': '3', 'proxy-send-timeout': '4', 'proxy-read-timeout': '1',
  'proxy-buffer-size': '8k', 'proxy-buffers-number': '8', 'proxy-buffering': 'on', 'proxy-request-buffering': 'off',
  'proxy-http-version': '1.0',
  'proxy-next-upstream': 'off', 'proxy-next-upstream-timeout': '5', 'proxy-next-upstream-tries': '2',
  'client-body-buffer-size': '16k',
  'proxy-add-original-uri-header': 'true',
  'retry-non-idempotent': 'true',
  'server-tokens': 'true',
  'client-header-buffer-size': '1k', 'large-client-header-buffers': '2 1k',
  'client-header-timeout': '30', 'client-body-timeout': '31',
  'enable-underscores-in-headers': 'true', 'ignore-invalid-headers': 'false',
  'error-log-level': 'info',
  'http2-max-concurrent-streams': '64', 'grpc-buffer-size-kb': '8', 'map-hash-bucket-size': '128', 'max-worker-connections': '2048', 'max-worker-open-files': '4096',
  'proxy-headers-hash-bucket-size': '128', 'proxy-headers-hash-max-size': '1024',
  'server-name-hash-bucket-size': '128', 'server-name-hash-max-size': '2048',
  'variables-hash-bucket-size': '128', 'variables-hash-max-size': '4096',
  'worker-processes': '1', 'worker-shutdown-timeout': '30s',
  'upstream-keepalive-connections': '16', 'upstream-keepalive-requests': '100', 'upstream-keepalive-time': '30m', 'upstream-keepalive-timeout': '20',
  'reuse-port': 'false',
  'annotation-value-word-blocklist': 'evil',
  'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'true',
  'allow-cross-namespace-resources': 'true',
  'strict-validate-path-type': 'false',
  'no-auth-locations': '/public',
  'ssl-protocols': 'TLSv1.3', 'ssl-ciphers': 'ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384', 'ssl-ecdh-curve': 'X25519:prime256v1',
  'ssl-prefer-server-ciphers': 'false', 'ssl-session-cache': 'true', 'ssl-session-cache-size': '5m', 'ssl-session-tickets': 'true',
  'ssl-session-timeout': '5m', 'ssl-buffer-size': '8k', 'ssl-early-data': 'true',
  'keep-alive': '0', 'keep-alive-requests': '5',
  'use-geoip2': 'true',
};

const phaseA = suite('phase A: one ConfigMap with most keys away from their defaults');
const overA = protocolMatrix(phaseA, () => ctl);

phaseA.before(async () => {
  for (const [i, name] of ['main', 'slow', 'fast'].entries()) echo[name] = await startEchoServer({ address: `127.0.4.${10 + i}`, name, delayMs: name === 'slow' ? 150 : 0 });
  const dead = { address: '127.0.4.20', port: await freePort('127.0.4.20') };
  const htpasswd = execFileSync('openssl', ['passwd', '-apr1', 's3cret']).toString().trim();
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [
        service(NS, 'main'), ...slices(NS, 'main', [echo.main!]),
        service(NS, 'ewma'), ...slices(NS, 'ewma', [echo.slow!, echo.fast!]),
        service(NS, 'with-dead'), ...slices(NS, 'with-dead', [echo.main!, dead]),
      ],
      'headers.json': [configMap('resp-headers', { 'X-Global': 'yes' }), configMap('req-headers', { 'X-To-Upstream': 'v-$host' })],
      'secrets.json': [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'other' }, data: { auth: Buffer.from(`bob:${htpasswd}\n`).toString('base64') } },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: NS }, data: { auth: Buffer.from(`bob:${htpasswd}\n`).toString('base64') } },
      ],
      'ingresses.json': [
        on('plain', 'plain.test'),
        ingress(NS, 'tls', { host: 'tls.test', tls: [{ hosts: ['tls.test'], secretName: 'nope' }], paths: [{ path: '/', service: 'main' }] }),
        on('dead', 'dead.test', {}, 'with-dead'),
        on('ewma', 'ewma.test', {}, 'ewma'),
        on('rps', 'rps.test', { 'limit-rps': '1', 'limit-burst-multiplier': '1' }),
        on('conn', 'conn.test', { 'limit-connections': '1' }),
        on('snippet', 'snippet.test', {
          'configuration-snippet': 'more_set_headers "X-Snippet: location";',
          'server-snippet': 'location = /from-server-snippet { return 200 "server-snippet"; }',
        }),
        on('blocked-word', 'blocked-word.test', { 'upstream-vhost': 'evil.example' }),
        on('cross', 'cross.test', { 'auth-type': 'basic', 'auth-secret': 'other/users' }),
        on('strict', 'strict.test', {}, 'main', [['/file+txt', 'Exact']]),
        on('noauth', 'noauth.test', { 'auth-type': 'basic', 'auth-secret': 'users' }, 'main', [['/', 'Prefix'], ['/public', 'Prefix']]),
        on('plain-http', 'plain-http.test', {}, 'main', [['/', 'Prefix'], ['/plain-http', 'Prefix']]),
        // The echo answers 200 to any path: an auth service that lets everything through.
        on('extauth', 'extauth.test', { 'auth-url': `http://${echo.main!.address}:${echo.main!.port}/auth-check` }),
      ],
    },
  });
  await phase(PHASE_A, 'worker_processes 1;');
});

overA.both('add-headers, proxy-set-headers, allow-backend-server-header, hide-headers, proxy-add-original-uri-header, proxy-http-version', async (p) => {
  const r = await p.request('plain.test', '/p?q=1');
  assert.is(r.status, 200);
  assert.is(r.headers['x-global'], 'yes');
  assert.is(r.headers.server, 'echo');
  assert.is(r.headers['x-echo-name'], undefined);
  assert.is(headers(r)['x-to-upstream'], 'v-plain.test');
  assert.is(headers(r)['x-original-uri'], '/p?q=1');
  assert.is(r.json?.proto, '1.0');
});

overA.both('server-tokens: NGINX names itself on its own answers', async (p) => {
  assert.match(String((await p.request('unknown.test', '/')).headers.server), /^nginx\/\d/);
});

overA.both('block-cidrs, block-user-agents, block-referers, denylist-source-range and whitelist-source-range as defaults of every location', async (p) => {
  assert.is((await p.request('plain.test', '/')).status, 200);
  assert.is((await p.request('plain.test', '/', { localAddress: '127.0.9.1' })).status, 403, 'block-cidrs');
  assert.is((await p.request('plain.test', '/', { headers: { 'User-Agent': 'BadBot/1.0' } })).status, 403, 'block-user-agents');
  assert.is((await p.request('plain.test', '/', { headers: { Referer: 'spam.example' } })).status, 403, 'block-referers');
  assert.is((await p.request('plain.test', '/', { localAddress: '127.0.8.1' })).status, 403, 'denylist-source-range');
  assert.is((await p.request('plain.test', '/', { localAddress: '127.0.7.1' })).status, 403, 'whitelist-source-range');
});

overA.both('custom-http-errors as the default of every location: the default backend answers those codes', async (p) => {
  assert.is((await p.request('plain.test', '/__status/418')).status, 404);
  assert.is((await p.request('plain.test', '/__status/500')).status, 500);
});

overA.both('the access log: log-format-upstream with escape=json, skip-access-log-urls, enable-access-log-for-default-backend', async (p) => {
  await p.request('plain.test', '/logged?a="b"');
  await p.request('plain.test', '/skipme');
  await p.request('unknown.test', '/default-backend-logged');
  await waitFor(() => accessLog().includes('/default-backend-logged'), { what: 'the default backend request in the access log' });
  assert.match(accessLog(), /^127\.0\.0\.1 FID \/logged\?a=\\"b\\" 200 \/logged$/m);
  assert.not.match(accessLog(), /skipme/);
});

overA.both('enable-auth-access-log: the external auth subrequest has its own access log line', async (p) => {
  assert.is((await p.request('extauth.test', '/authed')).status, 200);
  await waitFor(() => /^127\.0\.0\.1 FID \/authed 200 \/_external-auth \w+$/m.test(accessLog()), { what: 'the auth subrequest in the access log' });
});

overA.both('ssl-redirect false; hsts-max-age, hsts-include-subdomains, hsts-preload', async (p) => {
  assert.is((await p.request('tls.test', '/')).status, 200, 'no redirect');
  const r = await p.request('tls.test', '/', { https: true });
  assert.is(r.headers['strict-transport-security'], 'max-age=100; preload');
});

overA.both('use-gzip with gzip-level, gzip-min-length, gzip-types', async (p) => {
  const r = await p.request('plain.test', '/gz', { headers: { 'Accept-Encoding': 'gzip' } });
  assert.is(r.headers['content-encoding'], 'gzip');
  const small = await p.request('plain.test', '/__bytes/50', { headers: { 'Accept-Encoding': 'gzip' } });
  assert.is(small.headers['content-encoding'], undefined, 'octet-stream is not in gzip-types');
  // The body decompresses to the echo's JSON.
  assert.is(JSON.parse(gunzipSync(r.bytes).toString()).name, 'main');
});

overA.both('limit-req-status-code and limit-conn-status-code', async (p) => {
  const rps = (await Promise.all(Array.from({ length: 6 }, () => p.request('rps.test', '/')))).map((r) => r.status);
  assert.ok(rps.includes(429), String(rps));
  const conn = (await Promise.all(Array.from({ length: 3 }, () => p.request('conn.test', '/__delay/300')))).map((r) => r.status);
  assert.ok(conn.includes(430), String(conn));
});

overA.both('limit-rate and limit-rate-after as the default of every location (with proxy-buffering on)', async (p) => {
  const t0 = Date.now();
  assert.is((await p.request('plain.test', '/__bytes/4000')).body.length, 4000);
  assert.ok(Date.now() - t0 >= 700);
});

overA.both('load-balance ewma as the default of every backend', async (p) => {
  const backends = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<Record<string, unknown>>;
  assert.is(backends.find((b) => b.name === `${NS}-ewma-80`)?.['load-balance'], 'ewma');
  let fast = 0;
  for (let i = 0; i < 20; i++) if ((await p.request('ewma.test', '/')).json?.name === 'fast') fast++;
  assert.ok(fast >= 12, `fast endpoint: ${fast} of 20`);
});

overA.both('proxy-body-size, proxy-read-timeout, proxy-next-upstream off as the defaults of every location', async (p) => {
  assert.is((await p.request('plain.test', '/', { method: 'POST', body: 'x'.repeat(2000) })).status, 413);
  assert.is((await p.request('plain.test', '/__delay/1500')).status, 504);
  const codes: number[] = [];
  for (let i = 0; i < 6; i++) codes.push((await p.request('dead.test', '/')).status);
  assert.ok(codes.includes(502), String(codes));
});

overA.both('large-client-header-buffers and client-header-buffer-size: a header above them is refused', async (p) => {
  // HTTP/1.1: 400 (Request Header Or Cookie Too Large); HTTP/2: NGINX refuses the stream without an
  // answer (ENHANCE_YOUR_CALM; with keep-alive 0 the connection may end first, which cancels it).
  const answer = await p.request('plain.test', '/', { headers: { 'X-Big': 'x'.repeat(1500) } }).then((r) => r.status, (e: unknown) => (e instanceof StreamReset ? 'reset' : e));
  assert.is(answer, p.protocol === 'HTTP/1.1' ? 400 : 'reset');
  assert.is((await p.request('plain.test', '/', { headers: { 'X-Big': 'x'.repeat(900) } })).status, 200);
});

overA.both('enable-underscores-in-headers passes headers with underscores', async (p) => {
  assert.is(headers(await p.request('plain.test', '/', { headers: { X_Under: 'yes' } }))['x_under'], 'yes');
});

overA.both('keep-alive 0 closes every connection', async (p) => {
  if (p.protocol === 'HTTP/1.1') {
    const text = await raw(ctl.ports.http, 'GET / HTTP/1.1\r\nHost: plain.test\r\nConnection: keep-alive\r\n\r\n');
    assert.match(text, /^HTTP\/1.1 200/);
    assert.match(text, /\r\nConnection: close\r\n/i);
    // The client's own request is counted as the protocol client's.
    assert.is((await p.request('plain.test', '/')).headers.connection, 'close');
    return;
  }
  // HTTP/2: NGINX ends the connection (GOAWAY) once its stream is answered.
  const session = http2Connect(`https://127.0.0.1:${p.port}`, { servername: 'plain.test', rejectUnauthorized: false });
  const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  session.on('error', () => {});
  const req = session.request({ ':path': '/', ':authority': 'plain.test' });
  req.resume();
  await new Promise((resolve) => req.once('end', resolve));
  await goaway;
  await closed;
  assert.is((await p.request('plain.test', '/')).status, 200);
});

overA.both('annotation-value-word-blocklist refuses the annotation; annotations-risk-level Critical with allow-snippet-annotations allows snippets', async (p) => {
  assert.is(headers(await p.request('blocked-word.test', '/')).host, 'blocked-word.test');
  await ctl.logged(/upstream-vhost.*annotation-value-word-blocklist/);
  assert.is((await p.request('snippet.test', '/')).headers['x-snippet'], 'location');
  const s = await p.request('snippet.test', '/from-server-snippet');
  assert.is(s.body, 'server-snippet');
});

overA.both('allow-cross-namespace-resources lets auth-secret name another namespace; no-auth-locations skips authentication', async (p) => {
  const basic = { Authorization: `Basic ${Buffer.from('bob:s3cret').toString('base64')}` };
  assert.is((await p.request('cross.test', '/')).status, 401);
  assert.is((await p.request('cross.test', '/', { headers: basic })).status, 200);
  assert.is((await p.request('noauth.test', '/')).status, 401);
  assert.is((await p.request('noauth.test', '/public/x')).status, 200);
  // The credentials stay with NGINX (ingress-nginx clears Authorization upstream).
  assert.is(headers(await p.request('cross.test', '/', { headers: basic })).authorization, undefined);
});

overA.both('strict-validate-path-type false accepts an Exact path with a plus', async (p) => {
  assert.is((await p.request('strict.test', '/file+txt')).status, 200);
});

overA.noRequest('ssl-protocols, ssl-ciphers, ssl-ecdh-curve, ssl-session-* and the other TLS keys: what NGINX negotiates and runs', 'TLS handshakes and the running nginx.conf', async () => {
  const tls13 = await handshake('tls.test', { alpn: ['h2', 'http/1.1'] });
  assert.ok(!(tls13 instanceof Error) && tls13.version === 'TLSv1.3', String(tls13));
  assert.is(!(tls13 instanceof Error) && tls13.alpn, 'h2', 'use-http2 (default true) offers h2');
  assert.ok((await handshake('tls.test', { maxVersion: 'TLSv1.2' })) instanceof Error, 'TLS 1.2 is refused');
  const conf = await runningConf();
  for (const d of [
    'ssl_protocols TLSv1.3;', 'ssl_ciphers ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384;', 'ssl_ecdh_curve X25519:prime256v1;',
    'ssl_prefer_server_ciphers off;', 'ssl_session_cache shared:SSL:5m;', 'ssl_session_timeout 5m;', 'ssl_session_tickets on;',
    'ssl_buffer_size 8k;', 'ssl_early_data on;',
  ]) assert.ok(conf.includes(d), d);
});

overA.noRequest('worker-processes: NGINX runs that many workers', "NGINX's processes", async () => {
  const master = Number(readFileSync(join(ctl.workdir, 'nginx.pid'), 'utf8'));
  const workers = () => readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/)
    .filter((pid) => { try { const c = readFileSync(`/proc/${pid}/cmdline`, 'utf8'); return c.includes('worker process') && !c.includes('shutting down'); } catch { return false; } });
  await waitFor(() => workers().length === 1, { what: 'one worker' });
});

overA.noRequest('keys without a visible effect are in the configuration NGINX runs', 'the running nginx.conf', async () => {
  const conf = await runningConf();
  for (const d of [
    'proxy_connect_timeout 3s;', 'proxy_send_timeout 4s;', 'proxy_buffer_size 8k;', 'proxy_buffers 8 8k;', 'proxy_request_buffering off;',
    'proxy_next_upstream_timeout 5s;', 'proxy_next_upstream_tries 2;', 'client_body_buffer_size 16k;', 'proxy_next_upstream off non_idempotent;',
    'client_header_timeout 30s;', 'client_body_timeout 31s;', 'ignore_invalid_headers off;', ' info;', 'http2_max_concurrent_streams 64;',
    'map_hash_bucket_size 128;', 'worker_connections 2048;', 'worker_rlimit_nofile 4096;', 'proxy_headers_hash_bucket_size 128;',
    'proxy_headers_hash_max_size 1024;', 'server_names_hash_bucket_size 128;', 'server_names_hash_max_size 2048;',
    'variables_hash_bucket_size 128;', 'variables_hash_max_size 4096;', 'worker_shutdown_timeout 30s;', 'keepalive 16;',
    'keepalive_requests 100;', 'keepalive_time 30m;', 'keepalive_timeout 20s;', 'keepalive_requests 5;', 'grpc_buffer_size 8k;',
  ]) assert.ok(conf.includes(d), d);
  assert.not.ok(conf.includes('reuseport'), 'reuse-port false');
  await ctl.logged(/use-geoip2/, 'use-geoip2 without databases is reported');
});

const phaseB = suite('phase B: use-forwarded-headers and other defaults turned back');
const overB = protocolMatrix(phaseB, () => ctl);

phaseB.before(async () => {
  await phase({
    'use-forwarded-headers': 'true', 'compute-full-forwarded-for': 'true', 'proxy-real-ip-cidr': '127.0.0.0/24',
    'denylist-source-range': '203.0.113.0/24', hsts: 'false', 'disable-access-log': 'true',
    'proxy-set-headers': `${NS}/req-headers`,
  }, 'set_real_ip_from 127.0.0.0/24;');
});

overB.both('use-forwarded-headers: X-Forwarded-* of a trusted peer are believed; compute-full-forwarded-for appends the peer', async (p) => {
  const r = await p.request('plain.test', '/', { headers: { 'X-Forwarded-For': '198.51.100.7', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'public.example', 'X-Forwarded-Port': '443' } });
  assert.is(r.status, 200);
  const { 'x-real-ip': realIp, 'x-forwarded-for': xff, 'x-forwarded-proto': proto, 'x-forwarded-host': host, 'x-forwarded-port': port } = headers(r);
  assert.equal({ realIp, xff, proto, host, port }, {
    realIp: '198.51.100.7', xff: '198.51.100.7, 127.0.0.1', proto: 'https', host: 'public.example', port: '443',
  });
  // proxy-set-headers is the http level's, which the router's location inherits as a server block's does.
  assert.is(headers(r)['x-to-upstream'], 'v-plain.test');
});

overB.both('use-forwarded-headers with proxy-real-ip-cidr: allow/deny lists judge the real client; an untrusted peer is not believed', async (p) => {
  assert.is((await p.request('plain.test', '/', { headers: { 'X-Forwarded-For': '203.0.113.9' } })).status, 403);
  assert.is((await p.request('plain.test', '/', { headers: { 'X-Forwarded-For': '198.51.100.7' } })).status, 200);
  const untrusted = await p.request('plain.test', '/', { localAddress: '127.0.5.1', headers: { 'X-Forwarded-For': '203.0.113.9' } });
  assert.is(untrusted.status, 200);
  assert.is(headers(untrusted)['x-real-ip'], '127.0.5.1');
  // The ConfigMap's denylist judges the real client in the router as in a server block.
  assert.is(servedByRouter('plain.test'), DYNAMIC_ROUTES_ARGS.length === 0, 'plain.test is the router\'s (a server block with --enable-dynamic-routes=false)');
});

overB.both('hsts false sends no Strict-Transport-Security; disable-access-log logs nothing', async (p) => {
  const r = await p.request('tls.test', '/', { https: true });
  assert.is(r.status, 200);
  assert.is(r.headers['strict-transport-security'], undefined);
  const before = accessLog().length;
  await p.request('plain.test', '/not-logged');
  assert.is(accessLog().length, before);
});

overB.both('the defaults again: strict-validate-path-type drops the Exact path with a plus, auth-secret of another namespace denies', async (p) => {
  assert.is((await p.request('strict.test', '/file+txt')).status, 404);
  assert.is((await p.request('cross.test', '/', { headers: { Authorization: `Basic ${Buffer.from('bob:s3cret').toString('base64')}` } })).status, 503);
});

const phaseNoH2 = suite('phase: use-http2 false');
const overNoH2 = protocolMatrix(phaseNoH2, () => ctl);

phaseNoH2.before(async () => {
  await phase({ 'use-http2': 'false' }, 'listen 127.0.0.1:' + String(ctl.ports.https) + ' ssl;');
});

overNoH2.http1Only('use-http2 false: ALPN offers no h2; HTTPS is served over HTTP/1.1', 'the ConfigMap turns HTTP/2 off', async (p) => {
  const hs = await handshake('tls.test', { alpn: ['h2', 'http/1.1'] });
  assert.ok(!(hs instanceof Error) && hs.alpn !== 'h2', String(!(hs instanceof Error) && hs.alpn));
  assert.is((await p.request('tls.test', '/', { https: true })).status, 200);
});

const phaseC = suite('phase C: enable-real-ip with forwarded-for-header; force-ssl-redirect with http-redirect-code');
const overC = protocolMatrix(phaseC, () => ctl);

phaseC.before(async () => {
  await phase({
    'enable-real-ip': 'true', 'forwarded-for-header': 'X-Client-IP', 'force-ssl-redirect': 'true', 'http-redirect-code': '301',
    'no-tls-redirect-locations': '/plain-http', 'log-format-upstream': '$remote_addr FIDC $request_uri', 'log-format-escape-none': 'true',
    'access-log-path': join(logDir, 'access-c.log'), 'error-log-path': join(logDir, 'error-c.log'),
  }, 'real_ip_header X-Client-IP;');
  accessLogFile = join(logDir, 'access-c.log');
});

overC.both('enable-real-ip and forwarded-for-header: the client address comes from that header', async (p) => {
  const r = await p.request('plain-http.test', '/plain-http/x', { headers: { 'X-Client-IP': '192.0.2.44' } });
  assert.is(headers(r)['x-real-ip'], '192.0.2.44');
  await waitFor(() => accessLog().includes('FIDC'), { what: 'the phase C access log line' });
});

overC.noRequest('access-log-path and error-log-path: NGINX writes its logs there', "NGINX's log files", async () => {
  await waitFor(() => existsSync(accessLogFile) && accessLog().includes('FIDC'), { what: 'the access log at access-log-path' });
  await waitFor(() => existsSync(join(logDir, 'error-c.log')) && /start worker process/.test(readFileSync(join(logDir, 'error-c.log'), 'utf8')), { what: 'the error log at error-log-path' });
});

overC.http1Only('force-ssl-redirect with http-redirect-code 301; no-tls-redirect-locations stays on HTTP; log-format-escape-none', 'the SSL redirect answers plain HTTP', async (p) => {
  const r = await p.request('plain-http.test', '/x');
  assert.is(r.status, 301);
  assert.is(r.headers.location, `https://plain-http.test:${ctl.ports.https}/x`);
  assert.is((await p.request('plain-http.test', '/plain-http')).status, 200);
  await p.request('plain-http.test', '/plain-http?a="b"');
  await waitFor(() => accessLog().includes('FIDC /plain-http?a="b"'), { what: 'an unescaped line' });
});

const phaseD = suite('phase D: use-proxy-protocol');
const overD = protocolMatrix(phaseD, () => ctl);

phaseD.before(async () => {
  await ctl.stop(); // NGINX keeps PROXY-protocol listeners: the harness's plain requests no longer fit
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`, '--enable-ssl-passthrough', '--ssl-passthrough-proxy-port', String(await freePort())],
    files: {
      'services.json': [service(NS, 'main'), ...slices(NS, 'main', [echo.main!])],
      'ingresses.json': [
        on('plain', 'plain.test'), on('passthrough', 'passthrough.test', { 'ssl-passthrough': 'true' }),
        on('deny-pp', 'deny-pp.test', { 'denylist-source-range': '203.0.113.0/24', 'allowlist-source-range': '2001:db8::/32, 198.51.100.0/24' }),
      ],
      'configmap.json': [configMap('nginx-config', LOGS_D)],
    },
  });
  accessLogFile = join(logDir, 'http-d.log');
});

/** A PROXY protocol v1 header naming `from` as the client. */
const proxyHeader = (from: string) => (from.includes(':') ? `PROXY TCP6 ${from} ::1 5555 80\r\n` : `PROXY TCP4 ${from} 127.0.0.1 5555 80\r\n`);

// Over HTTP/2 the PROXY header goes to the HTTPS port, where the ssl-passthrough listener reads it
// and hands the TLS connection on with the client address.
overD.both('use-proxy-protocol: the address of the PROXY header is the client; proxy-protocol-header-timeout on the ssl-passthrough listener', async (p) => {
  const r = await p.request('plain.test', '/', { preface: proxyHeader('203.0.113.9') });
  assert.is(r.status, 200);
  assert.is(headers(r)['x-real-ip'], '203.0.113.9');
  assert.ok((await runningConf()).includes('proxy_protocol_timeout 3s;'));
});

overD.both('use-proxy-protocol: source ranges judge the address of the PROXY header, an IPv4-mapped IPv6 one by the IPv4 networks', async (p) => {
  const status = async (from: string) => (await p.request('deny-pp.test', '/', { preface: proxyHeader(from) })).status;
  assert.equal([await status('203.0.113.9'), await status('198.51.100.7'), await status('192.0.2.1')], [403, 200, 403]);
  assert.equal([await status('::ffff:203.0.113.9'), await status('::ffff:198.51.100.7'), await status('2001:db8::7'), await status('2001:db9::7')], [403, 200, 200, 403]);
  assert.is(servedByRouter('deny-pp.test'), DYNAMIC_ROUTES_ARGS.length === 0, 'deny-pp.test is the router\'s (a server block with --enable-dynamic-routes=false)');
});

const LOGS_D = {
  'use-proxy-protocol': 'true', 'proxy-protocol-header-timeout': '3',
  'http-access-log-path': join(logDir, 'http-d.log'), 'stream-access-log-path': join(logDir, 'stream-d.log'),
};

overD.both('http-access-log-path and stream-access-log-path split the two logs; disable-http-access-log and disable-stream-access-log stop them', async (p) => {
  await p.request('plain.test', `/to-http-log-${p.tag}`, { preface: proxyHeader('203.0.113.9') });
  await waitFor(() => existsSync(accessLogFile) && accessLog().includes(`/to-http-log-${p.tag}`), { what: 'the request in http-access-log-path' });
  // A TCP session through the ssl-passthrough stream server (not TLS: it goes to NGINX's HTTPS servers, which close it).
  const streamLog = LOGS_D['stream-access-log-path'];
  const streamBefore = existsSync(streamLog) ? readFileSync(streamLog, 'utf8').length : 0;
  await raw(ctl.ports.https, `${proxyHeader('203.0.113.9')}not tls\r\n\r\n`).catch(() => '');
  await waitFor(() => existsSync(streamLog) && readFileSync(streamLog, 'utf8').length > streamBefore, { what: 'the session in stream-access-log-path' });
  await phase({ ...LOGS_D, 'disable-http-access-log': 'true', 'disable-stream-access-log': 'true' }, "$session_time';\n    access_log off;", { probe: false });
  const [httpBefore, streamNow] = [accessLog().length, readFileSync(streamLog, 'utf8').length];
  await p.request('plain.test', '/not-logged', { preface: proxyHeader('203.0.113.9') });
  await raw(ctl.ports.https, `${proxyHeader('203.0.113.9')}not tls\r\n\r\n`).catch(() => '');
  assert.is(accessLog().length, httpBefore);
  assert.is(readFileSync(streamLog, 'utf8').length, streamNow);
  // The logs on again for the next protocol's run.
  await phase(LOGS_D, ' log_stream;', { probe: false });
});

phaseD.after(async () => {
  await ctl?.stop();
  rmSync(logDir, { recursive: true, force: true });
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

phaseA.run();
phaseB.run();
phaseNoH2.run();
phaseC.run();
phaseD.run();
