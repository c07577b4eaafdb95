// Proxy details, logs, process keys and the operator's snippets as ingress-nginx answers them
// (its docs, annotations-risk.md and test/e2e/settings/*.go): one `ingress-rx local` whose
// ConfigMap is rewritten in two phases (files, then syslog), a backend that sets cookies and
// redirects, real NGINX and real requests. docs/fidelity.md names the test of each key.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { createSocket, type Socket } from 'node:dgram';
import { connect as http2Connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, untilRunning, type LocalController, type Reply } from '../support/local-harness.js';
import { freePort } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const NS = 'pd';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let echo: EchoServer;
let echo2: EchoServer;
let backend: Server;
let streamPort = 0;
const headers = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string> = {}, svc = 'main', paths: Array<[string, string]> = [['/', 'Prefix']]) =>
  ingress(NS, name, { host, annotations: a(annotations), paths: paths.map(([path, pathType]) => ({ path, pathType, service: svc })) });
const configMap = (name: string, data: Record<string, string>, namespace = NS) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
const runningConf = async () => (await ctl.control('/nginx.conf')).body;

async function phase(data: Record<string, string>, marker: string): Promise<void> {
  ctl.write('configmap.json', [configMap('nginx-config', data)]);
  await untilRunning(ctl, marker);
  await ctl.until('plain.test', '/', (r) => r.status === 200);
}

/** A backend whose answers NGINX rewrites: a Set-Cookie with Domain and Path, a Location. */
function startBackend(address: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/preload')) {
        res.writeHead(200, { link: '</pushed.css>; rel=preload; as=style', 'content-type': 'text/plain', 'content-length': 2 });
        res.end('ok');
        return;
      }
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: 'http://backend.local:8080/next', 'content-length': 0 });
        res.end();
        return;
      }
      res.writeHead(200, { 'set-cookie': 'sid=1; Domain=backend.local; Path=/app/', 'content-type': 'text/plain', 'content-length': 2 });
      res.end('ok');
    });
    server.listen(0, address, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

const BASE: Record<string, string> = {
  'annotations-risk-level': 'Critical', 'allow-snippet-annotations': 'true',
  'main-snippet': 'env IRX_MAIN_SNIPPET;',
  'http-snippet': 'map $http_x_probe $probe_answer {\n    default "http-snippet";\n    "hi" "http-snippet-hi";\n}',
  'server-snippet': 'location = /__cm-server { return 200 $probe_answer; }',
  'location-snippet': 'more_set_headers "X-Location-Snippet: yes";',
  'default-type': 'application/x-irx',
  'relative-redirects': 'true',
  'proxy-cookie-domain': 'backend.local cm.test',
  'proxy-busy-buffers-size': '8k', 'proxy-max-temp-file-size': '0',
  'generate-request-id': 'false',
  'use-forwarded-headers': 'true', 'forwarded-host-header': 'X-Original-Host',
  'global-allowed-response-headers': 'X-Team,X-Frame-Options',
  'use-gzip': 'true', 'gzip-types': 'application/json', 'gzip-min-length': '1', 'gzip-disable': 'irx-old-browser',
  'limit-conn-zone-variable': '$binary_remote_addr$http_x_tenant',
  'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true', 'upstream-hash-by-subset-size': '1',
  'preserve-trailing-slash': 'true',
  'service-upstream': 'true',
  'access-log-params': 'buffer=4k flush=1s',
  'log-format-stream': '$remote_addr STREAMFMT $status',
  'proxy-stream-timeout': '17s', 'proxy-stream-next-upstream': 'false', 'proxy-stream-next-upstream-timeout': '7s',
  'proxy-stream-next-upstream-tries': '4', 'proxy-stream-responses': '2',
  'worker-cpu-affinity': 'auto', 'enable-multi-accept': 'false', 'enable-aio-write': 'false',
  'debug-connections': '127.0.0.99', 'lua-shared-dicts': 'configuration_data: 30, irx_dict: 512k',
  'disable-ipv6-dns': 'true', 'bind-address': '10.255.0.1', 'disable-ipv6': 'true',
};

const t = suite('proxy details, logs, process keys and operator snippets');
const over = protocolMatrix(t, () => ctl);

t.before(async () => { try { await setup(); } catch (err) { console.error('SETUP FAILED', err, ctl?.output().slice(-3000)); throw err; } });

async function setup(): Promise<void> {
  echo = await startEchoServer({ address: '127.0.5.10', name: 'main' });
  echo2 = await startEchoServer({ address: '127.0.5.12', name: 'second' });
  const b = await startBackend('127.0.5.11');
  backend = b.server;
  streamPort = await freePort();
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [
        service(NS, 'main'), ...slices(NS, 'main', [echo]),
        service(NS, 'two'), ...slices(NS, 'two', [echo, echo2]),
        service(NS, 'rewriting'), ...slices(NS, 'rewriting', [{ address: '127.0.5.11', port: b.port }]),
        // service-upstream (ConfigMap): the cluster IP (here the second echo) instead of the endpoints.
        { ...service(NS, 'clustered', { port: echo2.port }), spec: { clusterIP: echo2.address, ports: [{ name: 'http', port: echo2.port, targetPort: 'http' }] } },
        ...slices(NS, 'clustered', [echo]),
      ],
      'headers.json': [
        configMap('team-headers', { 'X-Team': 'blue $team', 'X-Frame-Options': 'DENY' }),
        configMap('bad-headers', { 'X-Powered-By': 'evil' }),
        configMap('team-headers', { 'X-Team': 'other' }, 'elsewhere'),
      ],
      'ingresses.json': [
        on('plain', 'plain.test', {}, 'rewriting'),
        on('cookies', 'cookies.test', {
          'proxy-cookie-domain': 'backend.local example.test', 'proxy-cookie-path': '/app/ /',
          'proxy-redirect-from': 'http://backend.local:8080/', 'proxy-redirect-to': 'https://front.test/',
        }, 'rewriting'),
        on('redirects', 'redirects.test', { 'permanent-redirect': '/elsewhere' }),
        on('absolute', 'absolute.test', { 'permanent-redirect': '/elsewhere', 'relative-redirects': 'false', 'use-port-in-redirects': 'true' }),
        on('absolute-noport', 'absolute-noport.test', { 'permanent-redirect': '/elsewhere', 'relative-redirects': 'false' }),
        on('headers', 'headers.test', { 'custom-headers': 'team-headers' }),
        on('headers-cross', 'headers-cross.test', { 'custom-headers': 'elsewhere/team-headers' }),
        on('headers-bad', 'headers-bad.test', { 'custom-headers': 'bad-headers' }),
        on('headers-missing', 'headers-missing.test', { 'custom-headers': 'nope' }),
        on('intercept', 'intercept.test', { 'custom-http-errors': '503' }),
        on('passthrough', 'passthrough.test', { 'custom-http-errors': '503', 'disable-proxy-intercept-errors': 'true' }),
        on('logs', 'logs.test', { 'enable-rewrite-log': 'true', 'http2-push-preload': 'true', 'limit-connections': '5' }),
        on('hashed', 'hashed.test', {}, 'two'),
        ingress(NS, 'clustered', { host: 'clustered.test', paths: [{ path: '/', service: 'clustered', port: echo2.port }] }),
        on('push', 'push.test', { 'http2-push-preload': 'true' }, 'rewriting'),
        on('ssl', 'ssl.test', { 'force-ssl-redirect': 'true' }),
        on('streamy', 'streamy.test', {
          'stream-snippet': `server {\n    listen 127.0.0.1:${streamPort};\n    return "stream-snippet\\n";\n}`,
        }),
        on('stream-bad', 'stream-bad.test', { 'stream-snippet': 'location / { }' }),
      ],
    },
  });
  await phase(BASE, 'application/x-irx');
}

t.after(async () => {
  await ctl?.stop();
  await echo2?.close();
  backend?.close();
});

over.both('proxy-cookie-domain, proxy-cookie-path and proxy-redirect-from/-to rewrite the answer; the ConfigMap gives the default', async (p) => {
  const cookie = await p.request('cookies.test', '/app/x');
  assert.is(cookie.headers['set-cookie']?.[0], 'sid=1; Domain=example.test; Path=/');
  const plain = await p.request('plain.test', '/app/x');
  assert.is(plain.headers['set-cookie']?.[0], 'sid=1; Domain=cm.test; Path=/app/', 'the ConfigMap default, and no path rewrite');
  const redirect = await p.request('cookies.test', '/redirect');
  assert.is(redirect.status, 302);
  assert.is(redirect.headers.location, 'https://front.test/next');
  assert.is((await p.request('plain.test', '/redirect')).headers.location, 'http://backend.local:8080/next', 'proxy_redirect off by default');
});

over.both('relative-redirects and use-port-in-redirects: the Location NGINX writes itself', async (p) => {
  assert.is((await p.request('redirects.test', '/x')).headers.location, '/elsewhere', 'ConfigMap relative-redirects');
  assert.is((await p.request('absolute.test', '/x')).headers.location, `${p.scheme}://absolute.test:${p.port}/elsewhere`);
  assert.is((await p.request('absolute-noport.test', '/x')).headers.location, `${p.scheme}://absolute-noport.test/elsewhere`, 'no port by default, as ingress-nginx');
});

over.http1Only('preserve-trailing-slash (ConfigMap) keeps the slash in the SSL redirect', 'the SSL redirect answers plain HTTP', async (p) => {
  const r = await p.request('ssl.test', '/dir/');
  assert.is(r.status, 308);
  assert.match(r.headers.location ?? '', /^https:\/\/ssl\.test(:\d+)?\/dir\/$/);
});

over.both('custom-headers: the ConfigMap\'s headers are sent literally; other namespaces, unlisted headers and missing ConfigMaps deny', async (p) => {
  const r = await p.request('headers.test', '/');
  assert.is(r.status, 200);
  assert.is(r.headers['x-team'], 'blue $team');
  assert.is(r.headers['x-frame-options'], 'DENY');
  for (const host of ['headers-cross.test', 'headers-bad.test', 'headers-missing.test']) {
    const denied = await p.request(host, '/');
    assert.is(denied.status, 503, host);
    assert.is(denied.headers['x-team'], undefined, host);
  }
  await ctl.logged(/custom-headers/);
  await ctl.logged(/another namespace/);
  await ctl.logged(/not in global-allowed-response-headers/);
});

over.both('disable-proxy-intercept-errors passes the upstream\'s own error through', async (p) => {
  const intercepted = await p.request('intercept.test', '/__status/503');
  assert.is(intercepted.status, 404, 'the built-in default backend answers the intercepted error');
  assert.is(intercepted.headers['x-echo-name'], undefined);
  const passed = await p.request('passthrough.test', '/__status/503');
  assert.is(passed.status, 503);
  assert.is(passed.headers['x-echo-name'], 'main', 'the upstream\'s own answer');
});

over.both('snippets of the ConfigMap: main, http, server, location and stream', async (p) => {
  const conf = await runningConf();
  assert.match(conf, /^env IRX_MAIN_SNIPPET;$/m);
  const probe = await p.request('plain.test', '/__cm-server', { headers: { 'x-probe': 'hi' } });
  assert.is(probe.body, 'http-snippet-hi', 'the server-snippet answers with the http-snippet\'s map');
  assert.is(probe.headers['content-type'], 'application/x-irx', 'default-type');
  assert.is((await p.request('headers.test', '/')).headers['x-location-snippet'], 'yes');
  const text = await new Promise<string>((resolve, reject) => {
    const socket = tcpConnect(streamPort, '127.0.0.1');
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { out += d; });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
  assert.is(text, 'stream-snippet\n', 'the Ingress\'s stream-snippet serves its own TCP port');
  // The stream access log (log-format-stream, buffered by access-log-params: flushed within 1s).
  const streamLog = join(ctl.workdir, 'logs', 'access.log');
  await waitFor(() => existsSync(streamLog) && /^127\.0\.0\.1 STREAMFMT 200$/m.test(readFileSync(streamLog, 'utf8')), { timeoutMs: 5000, what: 'the stream access log line in log-format-stream' });
  await ctl.logged(/stream-bad/, 'a stream-snippet opening a location is refused, naming its Ingress');
});

over.both('request ids, the forwarded host header, gzip-disable', async (p) => {
  const noId = await p.request('headers.test', '/');
  assert.is(headers(noId)['x-request-id'], undefined, 'generate-request-id false: none made up');
  assert.is(headers(await p.request('headers.test', '/', { headers: { 'x-request-id': 'abc' } }))['x-request-id'], 'abc');
  // As ingress-nginx: the Host comes from X-Forwarded-Host (lua_ingress.lua), forwarded-host-header names X-Original-Forwarded-Host's source.
  const fwd = await p.request('headers.test', '/', { headers: { 'x-original-host': 'original.example', 'x-forwarded-host': 'public.example' } });
  assert.equal([headers(fwd).host, headers(fwd)['x-original-forwarded-host']], ['public.example', 'original.example']);
  const gz = await p.request('headers.test', '/', { headers: { 'accept-encoding': 'gzip', 'user-agent': 'modern/1.0' } });
  assert.is(gz.headers['content-encoding'], 'gzip');
  const plain = await p.request('headers.test', '/', { headers: { 'accept-encoding': 'gzip', 'user-agent': 'irx-old-browser/1.0' } });
  assert.is(plain.headers['content-encoding'], undefined);
});

over.both('upstream-hash-by, -subset and -subset-size (ConfigMap defaults): one URI always reaches the same endpoint (subsets of one)', async (p) => {
  for (const uri of ['/a', '/b', '/c']) {
    const first = (await p.request('hashed.test', uri)).backend;
    for (let i = 0; i < 4; i++) assert.is((await p.request('hashed.test', uri)).backend, first, uri);
  }
  const backends = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<{ name: string; upstreamHashByConfig?: Record<string, unknown> }>;
  const two = backends.find((b) => b.name.includes('two'));
  assert.equal(two?.upstreamHashByConfig, { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': true, 'upstream-hash-by-subset-size': 1 });
});

over.both('service-upstream (ConfigMap default): the Service cluster IP is the only endpoint; a Service without one keeps its endpoints', async (p) => {
  for (let i = 0; i < 3; i++) assert.is((await p.request('clustered.test', '/')).backend, 'second');
  assert.is((await p.request('headers.test', '/')).backend, 'main');
});

over.http2Only('http2-push-preload: the backend\'s Link: rel=preload becomes an HTTP/2 push', 'server push is HTTP/2', async () => {
  const session = http2Connect(`https://127.0.0.1:${ctl.ports.https}`, { servername: 'push.test', rejectUnauthorized: false });
  try {
    const pushed: string[] = [];
    session.on('stream', (stream, reqHeaders) => {
      pushed.push(String(reqHeaders[':path']));
      stream.resume();
    });
    const answer = async (host: string, path: string) => new Promise<number>((resolve, reject) => {
      const req = session.request({ ':path': path, ':authority': host });
      req.on('response', (h) => resolve(Number(h[':status'])));
      req.on('error', reject);
      req.resume();
      req.end();
    });
    assert.is(await answer('push.test', '/preload'), 200);
    await waitFor(() => pushed.includes('/pushed.css'), { timeoutMs: 5000, what: 'the pushed stream' });
    assert.is(await answer('cookies.test', '/preload'), 200);
    assert.equal(pushed, ['/pushed.css'], 'no push without the annotation');
  } finally {
    session.close();
  }
});

over.both('custom-headers: a change of the named ConfigMap reaches the answers', async (p) => {
  ctl.write('headers.json', [
    configMap('team-headers', { 'X-Team': `green-${p.tag}`, 'X-Frame-Options': 'DENY' }),
    configMap('bad-headers', { 'X-Powered-By': 'evil' }),
    configMap('team-headers', { 'X-Team': 'other' }, 'elsewhere'),
  ]);
  await p.until('headers.test', '/', (r) => r.headers['x-team'] === `green-${p.tag}`, { what: 'the new X-Team' });
});

over.noRequest('keys without a visible effect are in the nginx.conf NGINX runs', 'the running nginx.conf', async () => {
  const conf = await runningConf();
  for (const line of [
    'proxy_busy_buffers_size 8k;', 'proxy_max_temp_file_size 0;', 'rewrite_log on;', 'http2_push_preload on;',
    'limit_conn_zone $binary_remote_addr$http_x_tenant zone=', 'access_log "', ' upstreaminfo buffer=4k flush=1s;',
    "log_format log_stream '$remote_addr STREAMFMT $status';", 'proxy_timeout 17s;', 'proxy_next_upstream off;',
    'proxy_next_upstream_timeout 7s;', 'proxy_next_upstream_tries 4;', 'proxy_responses 2;',
    'worker_cpu_affinity auto;', 'multi_accept off;', 'debug_connection 127.0.0.99;',
    'lua_shared_dict configuration_data 30m;', 'lua_shared_dict irx_dict 512k;', 'valid=30s ipv6=off;',
  ]) assert.ok(conf.includes(line), `running nginx.conf has ${line}`);
  assert.not.ok(conf.includes('aio_write on;'), 'enable-aio-write false');
  assert.not.ok(conf.includes('10.255.0.1'), 'bind-address replaces only wildcard listeners; local mode listens on 127.0.0.1');
});

over.both('enable-syslog: the access log line reaches a UDP syslog receiver', async (p) => {
  const udp: Socket = createSocket('udp4');
  const lines: string[] = [];
  udp.on('message', (m) => lines.push(m.toString('utf8')));
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const port = udp.address().port;
  try {
    await phase({ ...BASE, 'enable-syslog': 'true', 'syslog-host': '127.0.0.1', 'syslog-port': String(port), 'log-format-upstream': 'SYSLOGLINE $request_uri $status' }, `syslog:server=127.0.0.1:${port}`);
    // Syslog over UDP may lose a datagram (a loaded machine, a receive buffer full): a request
    // until one line arrived.
    const line = await waitFor(async () => {
      await p.request('plain.test', '/to-syslog');
      return lines.find((l) => l.includes('SYSLOGLINE /to-syslog 200'));
    }, { timeoutMs: 15_000, intervalMs: 250, what: 'the access log line over syslog' });
    assert.match(line, /^<\d+>/, 'a syslog message with its priority');
  } finally {
    udp.close();
  }
});

over.both('an operator snippet NGINX refuses quarantines the ConfigMap: the previous settings keep serving', async (p) => {
  ctl.write('configmap.json', [configMap('nginx-config', { ...BASE, 'http-snippet': 'irx_no_such_directive on;', 'default-type': 'application/x-after' })]);
  await waitFor(() => /quarantined ConfigMap pd\/nginx-config/.test(ctl.output()), { timeoutMs: 15_000, what: 'the ConfigMap quarantined' });
  const probe = await p.request('plain.test', '/__cm-server');
  assert.is(probe.status, 200);
  assert.is(probe.headers['content-type'], 'application/x-irx', 'the previous settings');
  assert.is((await p.request('cookies.test', '/app/x')).headers['set-cookie']?.[0], 'sid=1; Domain=example.test; Path=/');
});

// A controller of its own: every listener expects the PROXY protocol.
const proxied = suite('forwarded-for-proxy-protocol-header');
const overProxied = protocolMatrix(proxied, () => ctl);

proxied.before(async () => {
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [service(NS, 'main'), ...slices(NS, 'main', [echo])],
      'ingresses.json': [on('plain', 'plain.test')],
      'configmap.json': [configMap('nginx-config', {
        'use-proxy-protocol': 'true', 'use-forwarded-headers': 'true', 'forwarded-for-proxy-protocol-header': 'X-Irx-Client',
        'proxy-real-ip-cidr': '203.0.113.0/24,127.0.0.1',
      })],
    },
  });
  await untilRunning(ctl, 'real_ip_header X-Irx-Client;');
});

proxied.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

overProxied.both('forwarded-for-proxy-protocol-header: a PROXY peer in proxy-real-ip-cidr is believed about X-Forwarded-For, any other is the client', async (p) => {
  const answer = (peer: string, xff: string, extra: Record<string, string> = {}) =>
    p.request('plain.test', '/', { preface: `PROXY TCP4 ${peer} 127.0.0.1 5555 80\r\n`, headers: { 'X-Forwarded-For': xff, ...extra } });
  const realIp = async (peer: string, xff: string) => {
    const r = await answer(peer, xff);
    assert.is(r.status, 200, r.body.slice(0, 200));
    return headers(r)['x-real-ip'];
  };
  await waitFor(async () => (await realIp('192.0.2.1', '198.51.100.7').catch(() => undefined)) !== undefined, { what: 'NGINX answering PROXY requests' });
  assert.is(await realIp('203.0.113.9', '198.51.100.7'), '198.51.100.7', 'a trusted PROXY peer is believed');
  assert.is(await realIp('192.0.2.1', '198.51.100.7'), '192.0.2.1', 'an untrusted one is the client');
  const spoofed = await answer('192.0.2.1', '198.51.100.7', { 'X-Irx-Client': '10.9.9.9' });
  assert.is(spoofed.status, 400, 'a client that sends the header itself is refused');
});

t.run();
proxied.run();
