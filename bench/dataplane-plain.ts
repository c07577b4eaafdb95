// The data plane against plain NGINX (issue 31): `ingress-rx local` with one TLS Ingress and
// default settings (a dynamic host: the Lua router in the default server) against a hand-written
// NGINX proxy on the same machine — same certificate, TLS, HTTP/2, access_log on, a static
// `upstream` with keepalive to the same backend (a one-worker NGINX answering `return 200`); and
// against a second hand-written proxy configured with ingress-nginx's per-request defaults (the
// controller's own proxy, TLS and log lines: sameDefaultsConf), which tells what ingress-rx itself adds.
// h2load (HTTP/2) and wrk (HTTP/1.1 over TLS) in alternating turns (A B B A): requests/s and the
// NGINX CPU per request (master + workers, from /proc) of each. Then where the difference goes:
// the controller's nginx.conf with one per-request feature removed at a time (a variant of the
// rendered text, loaded with SIGHUP; bench-only, no setting), and each one's NGINX CPU per request
// against the default's.
//   node --import tsx bench/dataplane-plain.ts [--full] [--callgrind [--only NAME] [--callgrind-out DIR]] [--static]
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash } from 'node:crypto';
import { basename, join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { controlChannel } from '../src/render/control.js';
import { defaultRuntime } from '../src/render/runtime.js';
import { controlRequest } from '../src/actors/control-client.js';
import { ingress, oneGeneration, sendRequest, service, slices, tlsSecret } from '../test/support/local-harness.js';
import { freePorts } from '../test/support/ports.js';
import { waitFor } from '../test/support/wait.js';
import { benchCertificate, CACHE_DIR } from './gen.js';
import { arg, attempt, emitFigures, isFull, loadAverage, median, printTable, round, verdict, type Row } from './lib.js';
import { startLocalMode, type LocalMode } from './local-mode.js';
import { ensureDebianTool, ensureWrk, failure, get, nginxRunUs, startNginx, stopNginx, upstreamConf, wrk } from './nginx-tools.js';

const run = promisify(execFile);
const HOST = 'dp.bench.example';

interface Turn { rps: number; requests: number; errors: number; cpuUsPerRequest: number }

/** What both hand-written proxies start with (one process per core, as the controller's NGINX). */
const prologue = (prefix: string) => `daemon off;
master_process on;
worker_processes auto;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 16384; }
http {
  client_body_temp_path ${prefix}/cb; proxy_temp_path ${prefix}/px; fastcgi_temp_path ${prefix}/fc; uwsgi_temp_path ${prefix}/uw; scgi_temp_path ${prefix}/sc;
`;

/** Both proxies' TLS site for HOST, up to its location. */
const site = (port: number, cert: string, key: string) => `  server {
    listen 127.0.0.1:${port} ssl http2;
    server_name ${HOST};
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
`;

/** The hand-written proxy: what an operator writes for one TLS site in front of one backend. */
function plainConf(prefix: string, port: number, upstream: number, cert: string, key: string): string {
  return `${prologue(prefix)}  access_log ${prefix}/access.log combined;
  upstream backend {
    server 127.0.0.1:${upstream};
    keepalive 320;
  }
${site(port, cert, key)}    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/**
 * The hand-written proxy with ingress-nginx's per-request defaults, the fair reference for what
 * ingress-rx itself adds: proxy_buffering off (a second TLS record per response), the proxy and
 * TLS settings and the 15 standard proxy headers (request id from NGINX's `$request_id`), the
 * `upstreaminfo` access log and the buffered metrics line, HSTS, no Server header. The http-level
 * directives and log formats are the controller's own lines (`controllerConf`), so that both
 * write the same bytes; the location sets statically what the router sets per request (`n`).
 */
function sameDefaultsConf(prefix: string, port: number, upstream: number, cert: string, key: string, controllerConf: string, n: Names): string {
  const http = controllerConf.slice(controllerConf.indexOf('\nhttp {'), controllerConf.indexOf('\n    upstream upstream_balancer {'));
  const lines = (re: RegExp, what: string) => {
    const found = http.split('\n').filter((l) => re.test(l));
    if (found.length === 0) throw new Error(`same-defaults reference: no ${what} in the controller's nginx.conf`);
    return found.join('\n');
  };
  const module = /^load_module "[^"]*ngx_http_headers_more_filter_module\.so";$/m.exec(controllerConf)?.[0];
  const keepalive = /upstream upstream_balancer \{\n(?:.*\n)*?((?:\s+keepalive.*\n)+)/.exec(controllerConf)?.[1];
  const hsts = /hsts = true, hsts_max_age = (\d+), hsts_include_subdomains = (true|false), hsts_preload = (true|false)/.exec(controllerConf);
  if (!module || !keepalive || !hsts) throw new Error('same-defaults reference: the controller\'s nginx.conf has no headers-more module, upstream keepalive or HSTS setting');
  // A dynamic host's metrics line names its route by one variable the router sets; a server block's location sets four.
  const metricsFormat = controllerConf.includes(' ingress_rx_metrics_routed buffer=') ? 'ingress_rx_metrics_routed' : 'ingress_rx_metrics';
  const [namespace, ingress, service, path] = n.labels.split('\t');
  const metricsNames = metricsFormat === 'ingress_rx_metrics_routed'
    ? `      set $irx_labels "${n.labels.replaceAll('\t', '\\t')}";\n`
    : `      set $namespace "${namespace}";\n      set $ingress_name "${ingress}";\n      set $service_name "${service}";\n      set $location_path "${path}";\n`;
  const hstsValue = `max-age=${hsts[1]}${hsts[2] === 'true' ? '; includeSubDomains' : ''}${hsts[3] === 'true' ? '; preload' : ''}`;
  return `${module}
${prologue(prefix)}${lines(/^    (aio|tcp_nopush|tcp_nodelay|reset_timedout_connection|keepalive_timeout|keepalive_requests|server_tokens|more_clear_headers|default_type|absolute_redirect|port_in_redirect|aio_write) /, 'connection settings')}
${lines(/^    proxy_(?!temp_path)[a-z_]+ /, 'proxy settings')}
${lines(/^    ssl_(protocols|ciphers|prefer_server_ciphers|session_cache|session_timeout|session_tickets|buffer_size|ecdh_curve|early_data) /, 'TLS settings')}
${lines(new RegExp(`^    log_format (upstreaminfo|${metricsFormat}) `), 'log formats')}
  map $http_x_request_id $req_id {
    default $http_x_request_id;
    "" $request_id;
  }
  map $http_host $this_host {
    default $http_host;
    "" $host;
  }
  map $server_port $pass_port {
    default $server_port;
    ${port} 443;
  }
  map $http_upgrade $connection_upgrade {
    default upgrade;
    "" "";
  }
  upstream backend {
    server 127.0.0.1:${upstream};
${keepalive}  }
${site(port, cert, key)}    location / {
      set $proxy_upstream_name "${n.backend}";
      set $proxy_alternative_upstream_name "";
${metricsNames}      add_header Strict-Transport-Security "${hstsValue}" always;
      access_log ${prefix}/access.log upstreaminfo;
      access_log ${prefix}/metrics.log ${metricsFormat} buffer=64k flush=1s;
      proxy_pass http://backend;
    }
  }
}
`;
}

/** Whether the two answer alike: the same response header names and Strict-Transport-Security (else the reference is not the same). */
async function sameResponse(irxPort: number, samePort: number): Promise<Row> {
  const [irx, same] = await Promise.all([irxPort, samePort].map((p) => sendRequest(p, HOST, '/', { https: true })));
  const names = (h: Record<string, unknown>) => Object.keys(h).filter((k) => k !== 'date').sort().join(' ');
  const alike = names(irx!.headers) === names(same!.headers) && irx!.headers['strict-transport-security'] === same!.headers['strict-transport-security'];
  if (!alike) throw new Error(`the same-defaults reference answers otherwise: ingress-rx ${JSON.stringify(irx!.headers)}, reference ${JSON.stringify(same!.headers)}`);
  return { figure: 'response headers, ingress-rx and plain with the same defaults', value: names(irx!.headers), note: `HSTS ${String(irx!.headers['strict-transport-security'])} from both` };
}

/**
 * h2load's clients open their connections once and never reconnect after a GOAWAY, and both
 * NGINXes send one after `keepalive_requests` (1,000, NGINX's and ingress-nginx's default) streams.
 * A timed run (`-D`) long enough to reach it measured that cap: 64 connections × 1,000 streams in
 * a 5 s turn is the 12,800 requests/s both NGINXes "served", and every stream in flight when a
 * GOAWAY came counted as an error. So a turn is a fixed count of streams per connection, below it.
 */
const H2_CONNECTIONS = 64;
const H2_STREAMS_PER_CONNECTION_MAX = 900;
/** About `seconds` at ~11.5k requests/s (a quiet machine), never past the cap above. */
const h2StreamsPerConnection = (seconds: number) => Math.min(H2_STREAMS_PER_CONNECTION_MAX, Math.max(50, Math.round(seconds * 180)));

async function h2load(port: number, seconds: number): Promise<Omit<Turn, 'cpuUsPerRequest'>> {
  const n = H2_CONNECTIONS * h2StreamsPerConnection(seconds);
  // SNI and :authority name the host; --connect-to keeps the connection on loopback (no lookup).
  const { stdout } = await run('h2load', [`-c${H2_CONNECTIONS}`, '-m10', `-n${n}`, `--connect-to=127.0.0.1:${port}`, `https://${HOST}/`], { timeout: 600_000 });
  const rps = Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(stdout)?.[1]);
  const ok2xx = /status codes: (\d+) 2xx/.exec(stdout)?.[1];
  if (!Number.isFinite(rps) || ok2xx === undefined) throw new Error(`h2load output not understood: ${stdout.slice(0, 400)}`);
  // Every stream sent and not answered 2xx (refused after a GOAWAY, reset, timed out, 4xx/5xx).
  return { rps, requests: n, errors: n - Number(ok2xx) };
}

type Client = 'h2' | 'h1';

/** A turn of `seconds` (wrk takes whole seconds) and the NGINX CPU it cost per request. */
async function turn(client: Client, masterPid: number, port: number, seconds: number): Promise<Turn> {
  const before = nginxRunUs(masterPid);
  const r = client === 'h2' ? await h2load(port, seconds) : await wrk(port, HOST, Math.max(1, Math.round(seconds)), 'https');
  return { rps: r.rps, requests: r.requests, errors: r.errors, cpuUsPerRequest: (nginxRunUs(masterPid) - before) / r.requests };
}

// ---- variants of the controller's nginx.conf: one per-request feature removed

interface Names { backend: string; labels: string }

/** The dynamic host's location (the default server's `/`, where router.route() runs). */
function routerLocation(conf: string): { start: number; end: number } {
  const start = conf.indexOf('        location "/" {\n', conf.indexOf('    ## start server _\n'));
  const end = conf.indexOf('\n        }\n', start);
  if (start < 0 || end < 0) throw new Error('the router location is not in nginx.conf');
  return { start, end };
}

function inLocation(conf: string, edit: (loc: string) => string): string {
  const { start, end } = routerLocation(conf);
  return conf.slice(0, start) + edit(conf.slice(start, end)) + conf.slice(end);
}

function replaced(text: string, from: string | RegExp, to: string, what: string): string {
  const out = text.replace(from, to);
  if (out === text) throw new Error(`variant ${what}: ${String(from)} not found in nginx.conf`);
  return out;
}

const ROUTER_REWRITE = /            rewrite_by_lua_block \{\n                router\.route\("@ingress_rx_default_backend"\)\n            \}\n/;

/** What router.route() sets for this route, as static directives (a server block's location does this). */
function staticRoute(n: Names, rewrite: boolean): string {
  const labels = n.labels.replaceAll('\t', '\\t');
  return `            set $proxy_upstream_name "${n.backend}";\n            set $irx_labels "${labels}";\n`
    + (rewrite ? `            rewrite_by_lua_block {\n                balancer.rewrite("${n.backend}")\n            }\n` : '');
}

const HEADER_FILTER = /\n( +)header_filter_by_lua_block \{\n(?:.*\n)*?\1\}/g;
const dropHeaderFilters = (c: string) => replaced(c, HEADER_FILTER, '', 'header filter');
const staticUpstream = (c: string, upstream: number) => {
  const keepalive = /upstream upstream_balancer \{\n(?:.*\n)*?((?:\s+keepalive.*\n)+)/.exec(c)?.[1] ?? '';
  const block = `    upstream bench_static {\n        server 127.0.0.1:${upstream};\n${keepalive}    }\n`;
  return replaced(inLocation(c, (l) => replaced(l, 'proxy_pass http://upstream_balancer;', 'proxy_pass http://bench_static;', 'balancer')),
    '    upstream upstream_balancer {', `${block}    upstream upstream_balancer {`, 'balancer');
};
const withoutHeader = (loc: string, name: string) => replaced(loc, new RegExp(`\\n +proxy_set_header ${name} .*;`), '', name);
const dropHeader = (name: string) => (c: string) => inLocation(c, (l) => withoutHeader(l, name));

interface Variant { name: string; what: string; edit: (conf: string, n: Names, upstream: number, files: { cert: string; key: string }) => string; quick: boolean }

const STANDARD_HEADERS = ['X-Real-IP', 'X-Forwarded-For', 'X-Forwarded-Host', 'X-Forwarded-Port', 'X-Forwarded-Proto', 'X-Forwarded-Scheme', 'X-Scheme', 'X-Original-Forwarded-For', 'X-Original-Forwarded-Host', 'Proxy'];

const VARIANTS: Variant[] = [
  { name: 'all Lua phases', what: 'static $proxy_upstream_name and labels, static upstream, no header filter', quick: true,
    edit: (c, n, up) => dropHeaderFilters(staticUpstream(inLocation(c, (l) => replaced(l, ROUTER_REWRITE, staticRoute(n, false), 'router')), up)) },
  { name: 'everything in the location', what: 'the location as plain NGINX\'s: proxy_pass to a static upstream, Connection "", nothing else', quick: false,
    edit: (c, _n, up) => inLocation(staticUpstream(c, up), () => '        location "/" {\n            access_log off;\n            proxy_set_header Connection "";\n            proxy_pass http://bench_static;') },
  { name: 'router (rewrite_by_lua: router.route)', what: 'the route as static `set`s, balancer.rewrite() kept (a server block\'s location)', quick: true,
    edit: (c, n) => inLocation(c, (l) => replaced(l, ROUTER_REWRITE, staticRoute(n, true), 'router')) },
  { name: 'rewrite phase (router + balancer.rewrite)', what: 'the route as static `set`s, no rewrite_by_lua', quick: true,
    edit: (c, n) => inLocation(c, (l) => replaced(l, ROUTER_REWRITE, staticRoute(n, false), 'rewrite')) },
  { name: 'balancer_by_lua', what: 'proxy_pass to a static upstream of the same endpoint, same keepalive', quick: true,
    edit: (c, _n, up) => staticUpstream(c, up) },
  { name: 'header_filter_by_lua', what: 'no header filter (server and location)', quick: true, edit: dropHeaderFilters },
  { name: 'log_by_lua', what: 'none rendered: nothing to remove', quick: false, edit: (c) => c },
  { name: 'metrics log line', what: 'no metrics access_log, router sets no labels', quick: true,
    edit: (c) => replaced(replaced(c, /\n +access_log "[^"]*metrics\.log" ingress_rx_metrics\w* buffer=64k flush=1s;/g, '', 'metrics'), 'route_labels = true', 'route_labels = false', 'metrics') },
  { name: 'access log', what: 'no access_log upstreaminfo in the location', quick: true,
    edit: (c) => inLocation(c, (l) => replaced(l, /\n +access_log "[^"]*access\.log" upstreaminfo(?: if=\$loggable)?;/, '', 'access log')) },
  { name: 'access log format', what: 'NGINX\'s `combined` instead of upstreaminfo (and no if= where there is one)', quick: true,
    edit: (c) => replaced(inLocation(c, (l) => replaced(l, / upstreaminfo(?: if=\$loggable)?;/, ' combined;', 'format')), /log_format upstreaminfo '.*';/, 'log_format upstreaminfo \'$remote_addr\';', 'format') },
  { name: 'request id', what: 'no X-Request-ID, no $req_id in the access log', quick: true,
    edit: (c) => replaced(dropHeader('X-Request-ID')(c), / \$req_id';/, '\';', 'request id') },
  { name: 'Host header ($dynamic_upstream_host)', what: 'proxy_set_header Host and its `set` removed ($proxy_host sent)', quick: true,
    edit: (c) => inLocation(c, (l) => replaced(withoutHeader(l, 'Host'), /\n +set \$dynamic_upstream_host .*;/, '', 'host')) },
  { name: 'Upgrade/Connection ($dynamic_connection)', what: 'Connection "" and no Upgrade, no `set`', quick: true,
    edit: (c) => inLocation(c, (l) => replaced(replaced(withoutHeader(l, 'Upgrade'), /proxy_set_header Connection .*;/, 'proxy_set_header Connection "";', 'connection'), /\n +set \$dynamic_connection .*;/, '', 'connection')) },
  { name: 'X-Real-IP, X-Forwarded-*, X-Scheme, X-Original-*, Proxy', what: 'the other standard proxy headers together', quick: true,
    edit: (c) => STANDARD_HEADERS.reduce((acc, h) => dropHeader(h)(acc), c) },
  ...STANDARD_HEADERS.map((h): Variant => ({ name: `proxy header ${h}`, what: 'that proxy_set_header removed', quick: false, edit: dropHeader(h) })),
  { name: 'X-Forwarded-Port as $server_port', what: 'what --https-port 443 could render: no $pass_port map', quick: false,
    edit: (c) => inLocation(c, (l) => replaced(l, 'proxy_set_header X-Forwarded-Port $pass_port;', 'proxy_set_header X-Forwarded-Port $server_port;', 'port')) },
  { name: '$proxy_alternative_upstream_name set', what: 'the location\'s `set` to ""', quick: false,
    edit: (c) => inLocation(c, (l) => replaced(l, /\n +set \$proxy_alternative_upstream_name "";/, '', 'alternative')) },
  { name: 'more_clear_headers Server', what: 'the header filter of headers-more', quick: true,
    edit: (c) => replaced(c, '\n    more_clear_headers Server;', '', 'server header') },
  { name: 'ssl_certificate_by_lua', what: 'the certificate as static files in http', quick: true,
    edit: (c, _n, _u, f) => replaced(c, /    ssl_certificate \$fallback_certificate;\n    ssl_certificate_key \$fallback_certificate_key;\n    ssl_certificate_by_lua_block \{\n(?:.*\n)*?    \}\n/,
      `    ssl_certificate "${f.cert}";\n    ssl_certificate_key "${f.key}";\n`, 'certificate') },
  { name: 'proxy_buffering off', what: 'proxy_buffering on (NGINX\'s default)', quick: true,
    edit: (c) => replaced(c, 'proxy_buffering off;', 'proxy_buffering on;', 'buffering') },
  { name: 'TLS settings (protocols, ciphers, buffer, curve)', what: 'NGINX\'s defaults for ssl_protocols … ssl_early_data', quick: false,
    edit: (c) => replaced(c, /    ssl_protocols .*\n(?:    ssl_.*\n)*?    ssl_early_data off;\n/, '', 'TLS') },
  { name: 'ssl_buffer_size 4k', what: 'NGINX\'s default 16k', quick: false,
    edit: (c) => replaced(c, /    ssl_buffer_size 4k;\n/, '', 'buffer') },
  { name: 'session resumption cache', what: 'ssl_session_cache none', quick: false,
    edit: (c) => replaced(c, 'ssl_session_cache shared:SSL:10m;', 'ssl_session_cache none;', 'session cache') },
];

const byName = (name: string) => VARIANTS.find((v) => v.name === name)!;
VARIANTS.push({ name: 'all of it', what: 'the location as plain NGINX\'s and every http-level feature above removed', quick: false,
  edit: (c, n, up, f) => ['everything in the location', 'header_filter_by_lua', 'more_clear_headers Server', 'ssl_certificate_by_lua', 'TLS settings (protocols, ciphers, buffer, curve)']
    .reduce((acc, name) => byName(name).edit(acc, n, up, f), c) });

/** Loads `conf` in the controller's NGINX with SIGHUP; resolves once only workers running it accept. */
async function load(local: LocalMode, conf: string, tag: string): Promise<void> {
  const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
  if (!checksum) throw new Error('no checksum line in nginx.conf');
  const text = conf.replaceAll(checksum, tag);
  writeFileSync(join(local.workdir, 'nginx.conf'), text);
  const master = Number(readFileSync(join(local.workdir, 'nginx.pid'), 'utf8'));
  process.kill(master, 'SIGHUP');
  const control = controlChannel(defaultRuntime({ prefix: local.workdir }));
  await waitFor(async () => {
    const r = await controlRequest(control, 'GET', '/configuration-checksum', { timeoutMs: 2000 }).catch(() => null);
    return r?.body.trim() === tag && oneGeneration(local.workdir);
  }, { timeoutMs: 30_000, what: `NGINX running variant ${tag}` }).catch(() => {
    throw new Error(`variant ${tag} not loaded: ${readFileSync(join(local.workdir, 'logs', 'reload.log'), 'utf8').slice(-600)}`);
  });
}

// ---- --callgrind: instructions per request, which no other load on the machine changes

/** The controller's nginx.conf for a copy of its work directory: other ports, one process, no master. */
function cloneConf(conf: string, workdir: string, clone: string, ports: Array<[number, number]>): string {
  // One process, and as many reuseport sockets as it polls: the rendered count (2 here) would give
  // each listen a second socket nobody accepts from, and half the connections would hang.
  let text = conf.replaceAll(workdir, clone).replace(/^worker_processes [^;]+;/m, 'worker_processes 1;').replace('master_process on;', 'master_process off;');
  for (const [from, to] of ports) text = text.replaceAll(`127.0.0.1:${from} `, `127.0.0.1:${to} `).replaceAll(`127.0.0.1:${from};`, `127.0.0.1:${to};`);
  return text;
}

/** Valgrind's callgrind on NGINX (`conf`, one process): instructions per request over `n` HTTP/2 requests after a warm-up. */
async function instructionsPerRequest(prefix: string, conf: string, port: number, n: number, ready: () => Promise<void>): Promise<number> {
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  const out = join(prefix, 'callgrind.out');
  rmSync(out, { force: true });
  const child = spawn('valgrind', ['--tool=callgrind', `--callgrind-out-file=${out}`, '/usr/sbin/nginx', '-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err += d; });
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`NGINX under valgrind exited: ${err.slice(-500)}`);
      return (await sendRequest(port, HOST, '/', { https: true }).catch(() => null)) !== null;
    }, { timeoutMs: 120_000, what: 'NGINX under valgrind' }).catch((e: Error) => { throw new Error(`${e.message} (${prefix}): ${err.slice(-800)}`); });
    await ready();
    await run('h2load', ['-c4', '-m10', `-n${Math.max(200, n / 4)}`, `--connect-to=127.0.0.1:${port}`, `https://${HOST}/`], { timeout: 600_000 });
    await run('callgrind_control', ['-z', String(child.pid)]);
    const { stdout } = await run('h2load', ['-c4', '-m10', `-n${n}`, `--connect-to=127.0.0.1:${port}`, `https://${HOST}/`], { timeout: 600_000 });
    const ok = Number(/status codes: (\d+) 2xx/.exec(stdout)?.[1] ?? 0);
    if (ok !== n) throw new Error(`${n - ok} of ${n} requests not answered 2xx under valgrind`);
    await run('callgrind_control', ['-d', String(child.pid)]);
    const dumps = readdirSync(prefix).filter((f) => f.startsWith('callgrind.out')).map((f) => join(prefix, f));
    const totals = dumps.map((f) => Number(/^(?:totals|summary): (\d+)/m.exec(readFileSync(f, 'utf8'))?.[1] ?? 0));
    // The dump after the zeroing is the one with the fewest instructions (the final one at exit is not written yet).
    const measured = Math.min(...totals.filter((t) => t > 0));
    // --callgrind-out DIR: keeps that dump (for callgrind_annotate), named after the configuration.
    const keep = arg('--callgrind-out');
    if (keep) {
      const name = join(keep, `${basename(prefix)}-${createHash('sha256').update(conf).digest('hex').slice(0, 8)}`);
      cpSync(dumps[totals.indexOf(measured)]!, `${name}.callgrind`);
      writeFileSync(`${name}.conf`, conf);
    }
    return measured / n;
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    for (const f of readdirSync(prefix).filter((f) => f.startsWith('callgrind.out'))) rmSync(join(prefix, f), { force: true });
  }
}

async function main(): Promise<void> {
  ensureWrk();
  ensureDebianTool('h2load', 'nghttp2-client');
  const full = isFull();
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { dataplane_vs_plain_h2: null, dataplane_vs_plain_h1: null, dataplane_vs_plain_h2_cpu: null, dataplane_vs_plain_h1_cpu: null, dataplane_vs_plain_h2_instructions: null,
    dataplane_vs_plain_same_defaults_h2: null, dataplane_vs_plain_same_defaults_h1: null, dataplane_vs_plain_same_defaults_h2_cpu: null, dataplane_vs_plain_same_defaults_h1_cpu: null, dataplane_vs_plain_same_defaults_h2_instructions: null };
  const children: ChildProcess[] = [];
  let local: LocalMode | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-plain-'));
  const loads: string[] = [`start ${loadAverage()}`];
  try {
    const [upPort, plainPort] = await freePorts(2);
    const [upPrefix, plainPrefix] = [join(dir, 'upstream'), join(dir, 'plain')];
    for (const p of [upPrefix, plainPrefix]) mkdirSync(join(p, 'logs'), { recursive: true });
    writeFileSync(join(upPrefix, 'nginx.conf'), upstreamConf(upPrefix, [upPort!]));
    children.push(startNginx(upPrefix, join(upPrefix, 'nginx.conf')));
    const { cert, key } = benchCertificate();
    const files = { cert: join(CACHE_DIR, 'bench-tls.crt'), key: join(CACHE_DIR, 'bench-tls.key') };
    writeFileSync(join(plainPrefix, 'nginx.conf'), plainConf(plainPrefix, plainPort!, upPort!, files.cert, files.key));
    // Its own session, as the controller starts its NGINX (same share of the CPU under autogroup scheduling).
    const plain = startNginx(plainPrefix, join(plainPrefix, 'nginx.conf'), { ownSession: true });
    children.push(plain);
    local = await startLocalMode({
      prefix: 'irx-bench-plain-local-',
      // --static: the host gets a server block of its own (the path every host took before dynamic routes).
      args: process.argv.includes('--static') ? ['--enable-dynamic-routes=false'] : [],
      fill: (m) => writeFileSync(join(m, 'site.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
        service('default', 'be'), ...slices('default', 'be', [{ address: '127.0.0.1', port: upPort! }]), tlsSecret('default', 'site-tls', cert, key),
        ingress('default', 'site', { host: HOST, paths: [{ path: '/', service: 'be' }], tls: [{ hosts: [HOST], secretName: 'site-tls' }] }),
      ] })),
    });
    const irxPort = local.ports.https;
    await waitFor(async () => (await get(upPort!, 'x', '/').catch(() => ({ status: 0 }))).status === 200, { timeoutMs: 10_000, what: 'the upstream NGINX' }).catch(failure(children[0]!, 'upstream NGINX'));
    await waitFor(async () => (await sendRequest(plainPort!, HOST, '/', { https: true }).catch(() => null))?.status === 200, { timeoutMs: 10_000, what: 'plain NGINX' }).catch(failure(plain, 'plain NGINX'));
    await waitFor(async () => (await sendRequest(irxPort, HOST, '/', { https: true }).catch(() => null))?.status === 200, { timeoutMs: 120_000, what: 'ingress-rx serving the TLS host' });
    // What router.route() sets for the route, for the variants that set it statically.
    // (Awaited: NGINX writes an HTTP/2 stream's line after its last frame, and the readiness probe above is the only request so far.)
    const accessLog = () => readFileSync(join(local!.workdir, 'logs', 'access.log'), 'utf8').trim().split('\n').pop() ?? '';
    const backendOf = (line: string) => /\[([^\]]+)\] \[[^\]]*\] 127\.0\.0\.1:/.exec(line)?.[1];
    await waitFor(() => backendOf(accessLog()) !== undefined, { timeoutMs: 10_000, what: 'a proxied line in the access log' })
      .catch(() => { throw new Error(`no backend name in the access log line ${accessLog()}`); });
    const backend = backendOf(accessLog())!;
    const names: Names = { backend, labels: 'default\tsite\tbe\t/' };
    const controllerConf = readFileSync(join(local.workdir, 'nginx.conf'), 'utf8');
    const [samePort] = await freePorts(1);
    const samePrefix = join(dir, 'same');
    mkdirSync(join(samePrefix, 'logs'), { recursive: true });
    writeFileSync(join(samePrefix, 'nginx.conf'), sameDefaultsConf(samePrefix, samePort!, upPort!, files.cert, files.key, controllerConf, names));
    const same = startNginx(samePrefix, join(samePrefix, 'nginx.conf'), { ownSession: true });
    children.push(same);
    await waitFor(async () => (await sendRequest(samePort!, HOST, '/', { https: true }).catch(() => null))?.status === 200, { timeoutMs: 10_000, what: 'plain NGINX with the same defaults' }).catch(failure(same, 'plain NGINX with the same defaults'));
    rows.push(await sameResponse(irxPort, samePort!));
    const irxMaster = () => Number(readFileSync(join(local!.workdir, 'nginx.pid'), 'utf8'));
    const target = { plain: { pid: plain.pid!, port: plainPort! }, same: { pid: same.pid!, port: samePort! }, irx: { pid: irxMaster(), port: irxPort } };

    const seconds = full ? 5 : 2;
    for (const [client, rounds] of [['h2', full ? 3 : 1], ['h1', full ? 2 : 1]] as const) {
      if (process.argv.includes('--no-headline')) break;
      await attempt(rows, `${client} against plain NGINX`, async () => {
        for (const t of Object.values(target)) await turn(client, t.pid, t.port, 1); // warm-up
        const turns = { plain: [] as Turn[], same: [] as Turn[], irx: [] as Turn[] };
        for (let r = 0; r < rounds; r++) {
          for (const who of ['plain', 'same', 'irx', 'irx', 'same', 'plain'] as const) turns[who].push(await turn(client, target[who].pid, target[who].port, seconds));
        }
        const rps = (ts: Turn[]) => median(ts.map((t) => t.rps));
        const cpu = (ts: Turn[]) => median(ts.map((t) => t.cpuUsPerRequest));
        const ratio = rps(turns.irx) / rps(turns.plain);
        const cpuRatio = cpu(turns.plain) / cpu(turns.irx);
        fig[`dataplane_vs_plain_${client}`] = round(ratio, 3);
        fig[`dataplane_vs_plain_${client}_cpu`] = round(cpuRatio, 3);
        const how = client === 'h2' ? `h2load -c${H2_CONNECTIONS} -m10 -n${H2_CONNECTIONS * h2StreamsPerConnection(seconds)}` : `wrk -t2 -c32 -d${seconds}s https`;
        const sameRatio = rps(turns.irx) / rps(turns.same);
        const sameCpuRatio = cpu(turns.same) / cpu(turns.irx);
        fig[`dataplane_vs_plain_same_defaults_${client}`] = round(sameRatio, 3);
        fig[`dataplane_vs_plain_same_defaults_${client}_cpu`] = round(sameCpuRatio, 3);
        const errors = [...turns.plain, ...turns.same, ...turns.irx].reduce((a, t) => a + t.errors, 0);
        rows.push({ figure: `${client === 'h2' ? 'HTTP/2' : 'HTTP/1.1 over TLS'}: plain NGINX / plain, same defaults / ingress-rx requests/s`, value: `${rps(turns.plain).toFixed(0)} / ${rps(turns.same).toFixed(0)} / ${rps(turns.irx).toFixed(0)}`,
          note: `${how}, ${rounds * 2} turns each (A B C C B A), medians; errors ${errors}` });
        rows.push({ figure: `dataplane_vs_plain_${client} (requests/s)`, value: ratio.toFixed(3), target: '≥ 0.95', status: verdict(ratio, 0.95, true),
          note: `NGINX CPU per request plain ${cpu(turns.plain).toFixed(1)} µs, ingress-rx ${cpu(turns.irx).toFixed(1)} µs: ratio ${cpuRatio.toFixed(3)}` });
        rows.push({ figure: `dataplane_vs_plain_same_defaults_${client} (requests/s)`, value: sameRatio.toFixed(3), target: '≥ 0.95', status: verdict(sameRatio, 0.95, true),
          note: `NGINX CPU per request plain with ingress-nginx's defaults ${cpu(turns.same).toFixed(1)} µs, ingress-rx ${cpu(turns.irx).toFixed(1)} µs: ratio ${sameCpuRatio.toFixed(3)}` });
      });
      loads.push(`${client} ${loadAverage()}`);
    }

    // Where the difference goes: one feature removed at a time, in the controller's NGINX (HTTP/2),
    // by CPU time; or, with --callgrind, by instructions in a copy under valgrind.
    if (!process.argv.includes('--callgrind')) await attempt(rows, 'per-feature cost', async () => {
      const original = readFileSync(join(local!.workdir, 'nginx.conf'), 'utf8');
      const client: Client = arg('--ablate-client') === 'h1' ? 'h1' : 'h2';
      const seconds = full ? 3 : 1.5;
      const measure = async (conf: string, tag: string) => {
        await load(local!, conf, tag);
        const pid = irxMaster();
        await turn(client, pid, irxPort, 0.5);
        const turns: Turn[] = [];
        for (let i = 0; i < (full ? 2 : 1); i++) turns.push(await turn(client, pid, irxPort, seconds));
        return { cpu: median(turns.map((t) => t.cpuUsPerRequest)), rps: median(turns.map((t) => t.rps)) };
      };
      const defaults: Array<{ cpu: number; rps: number }> = [await measure(original, 'default-0')];
      const costs: Array<{ v: Variant; m: { cpu: number; rps: number } }> = [];
      const only = arg('--only');
      const chosen = VARIANTS.filter((v) => (only ? v.name.includes(only) : full || v.quick) && v.name !== 'log_by_lua');
      for (const [i, v] of chosen.entries()) {
        costs.push({ v, m: await measure(v.edit(original, names, upPort!, files), `variant-${i}`) });
        if (i % 6 === 5) defaults.push(await measure(original, `default-${i}`));
      }
      defaults.push(await measure(original, 'default-end'));
      await load(local!, original, /^# Configuration checksum: (\w+)/.exec(original)![1]!);
      const base = median(defaults.map((d) => d.cpu));
      rows.push({ figure: `NGINX CPU per request, default (${client === 'h2' ? 'HTTP/2' : 'HTTP/1.1'})`, value: `${base.toFixed(1)} µs`,
        note: `median of ${defaults.length} turns between the variants: ${defaults.map((d) => `${d.cpu.toFixed(1)} µs at ${d.rps.toFixed(0)}/s`).join(', ')}` });
      for (const { v, m } of costs) {
        rows.push({ figure: `cost of ${v.name}`, value: `${(base - m.cpu).toFixed(1)} µs`, note: `${v.what}; ${m.cpu.toFixed(1)} µs without it, ${m.rps.toFixed(0)} requests/s` });
      }
      rows.push({ figure: 'cost of log_by_lua', value: '0', note: 'no log phase is rendered (the EWMA sample is taken in the header filter)' });
    });
    if (process.argv.includes('--callgrind')) {
      await attempt(rows, 'instructions per request (callgrind)', async () => {
        ensureDebianTool('valgrind', 'valgrind');
        const control = controlChannel(defaultRuntime({ prefix: local!.workdir }));
        const payloads = new Map<string, string>();
        // The certificate as the controller posts it (PEM of certificate and key, by a uid); the
        // backends and routes as the controller's NGINX holds them.
        payloads.set('servers', JSON.stringify({ certificates: { 'bench-site-tls': `${cert}\n${key}` }, servers: { [HOST]: 'bench-site-tls' }, complete: true }));
        for (const what of ['backends', 'routes']) payloads.set(what, (await controlRequest(control, 'GET', `/configuration/${what}`, { timeoutMs: 10_000 })).body);
        const clone = join(dir, 'clone');
        cpSync(local!.workdir, clone, { recursive: true, filter: (f) => !f.endsWith('.sock') && !f.endsWith('nginx.pid') });
        const [h, s, d] = await freePorts(3);
        const conf = readFileSync(join(local!.workdir, 'nginx.conf'), 'utf8');
        const ports = [[local!.ports.http, h!], [irxPort, s!], [Number(/listen 127\.0\.0\.1:(\d+) default_server;/.exec(conf)?.[1]), d!]] as Array<[number, number]>;
        const post = async () => {
          const cloneControl = controlChannel(defaultRuntime({ prefix: clone }));
          for (const [what, body] of payloads) {
            const r = await controlRequest(cloneControl, 'POST', `/configuration/${what}`, { body, timeoutMs: 60_000 });
            if (r.status !== 201) throw new Error(`POST ${what} to the copy: ${r.status} ${r.body}`);
          }
        };
        const n = full ? 3000 : 1000;
        const plainCg = join(dir, 'plain-cg');
        mkdirSync(join(plainCg, 'logs'), { recursive: true });
        const [pp] = await freePorts(1);
        const plainIr = await instructionsPerRequest(plainCg, plainConf(plainCg, pp!, upPort!, files.cert, files.key).replace('worker_processes auto;', 'worker_processes 1;').replace('master_process on;', 'master_process off;'), pp!, n, async () => {});
        const irxIr = await instructionsPerRequest(clone, cloneConf(conf, local!.workdir, clone, ports), s!, n, post);
        const sameCg = join(dir, 'same-cg');
        mkdirSync(join(sameCg, 'logs'), { recursive: true });
        const [sp] = await freePorts(1);
        const sameIr = await instructionsPerRequest(sameCg, sameDefaultsConf(sameCg, sp!, upPort!, files.cert, files.key, conf, names).replace('worker_processes auto;', 'worker_processes 1;').replace('master_process on;', 'master_process off;'), sp!, n, async () => {});
        fig.dataplane_vs_plain_h2_instructions = round(plainIr / irxIr, 3);
        fig.dataplane_vs_plain_same_defaults_h2_instructions = round(sameIr / irxIr, 3);
        rows.push({ figure: 'instructions per HTTP/2 request, plain NGINX / plain, same defaults / ingress-rx', value: `${(plainIr / 1000).toFixed(1)}k / ${(sameIr / 1000).toFixed(1)}k / ${(irxIr / 1000).toFixed(1)}k`,
          note: `ratios ${(plainIr / irxIr).toFixed(3)} / ${(sameIr / irxIr).toFixed(3)}; callgrind, one NGINX process, h2load -c4 -m10 -n${n} after a warm-up; user space only (the kernel's share is not counted)` });
        const only = arg('--only');
        for (const v of VARIANTS.filter((x) => (only ? x.name.includes(only) : full || x.quick) && x.name !== 'log_by_lua')) {
          const ir = await instructionsPerRequest(clone, cloneConf(v.edit(conf, names, upPort!, files), local!.workdir, clone, ports), s!, n, post);
          rows.push({ figure: `instructions of ${v.name}`, value: `${((irxIr - ir) / 1000).toFixed(2)}k`, note: `${v.what}; ${(ir / 1000).toFixed(1)}k without it` });
        }
      });
    }
    loads.push(`end ${loadAverage()}`);
  } finally {
    if (local) await local.stop();
    for (const c of children) await stopNginx(c);
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push({ figure: 'load average (1/5/15 min)', value: loads.join('; '), note: 'shared 2 cores: read CPU per request rather than requests/s' });
  printTable('data plane against plain NGINX', rows);
  emitFigures(fig);
}

await main();
