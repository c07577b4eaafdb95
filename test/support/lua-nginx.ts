// A minimal NGINX harness for Lua tests: renders the production Lua wiring (shared dicts, init
// blocks, upstream_balancer, status server) around our lua/ modules, runs the real
// /usr/sbin/nginx under a temp prefix, and offers small HTTP(S) helpers.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, mkdir, writeFile, readFile, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from './ports.js';
import { http2Request } from './protocols.js';
import { waitFor } from './wait.js';
import { backend as modelBackend } from './config-builder.js';
import { controlChannel, writeControlToken, type ControlChannel } from '../../src/render/control.js';
import { controlRequest } from '../../src/actors/control-client.js';
import { defaultRuntime } from '../../src/render/runtime.js';
import { withLuaInReach } from '../../src/render/worker-access.js';

const run = promisify(execFile);
const repoRoot = resolve(new URL('../..', import.meta.url).pathname);
export const NGINX_BINARY = process.env.NGINX_BINARY ?? '/usr/sbin/nginx';
const MODULES_DIR = '/usr/lib/nginx/modules';

export interface LocationRewriteConfig {
  force_ssl_redirect?: boolean;
  ssl_redirect?: boolean;
  preserve_trailing_slash?: boolean;
  use_port_in_redirects?: boolean;
}

export interface LuaNginxLocation {
  /** NGINX location prefix, e.g. `/` or `/rr/`. */
  path: string;
  /** `$proxy_upstream_name` of the location. */
  backend: string;
  rewrite?: LocationRewriteConfig;
}

export interface LuaNginxOptions {
  workers?: number;
  /** Defaults to one `location /` for backend `default-echo-80`. */
  locations?: LuaNginxLocation[];
  /** Merged over the production `lua_ingress.set_config` values (https_port is filled in). */
  luaIngressConfig?: Record<string, string | number | boolean>;
  /** Lua appended to init_by_lua_block, e.g. `configuration.resolvers = { "127.0.0.1:5353" }`. */
  extraInitLua?: string;
  /**
   * address_policy.configure(): the echo backends run on loopback, so loopback is allowed by
   * default, except NGINX's own HTTP(S) ports (as local mode does).
   */
  allowUpstreamAddresses?: string[];
  /** address_policy.configure()'s own_addresses: the controller pod's addresses (none by default). */
  ownAddresses?: string[];
  /** Raw location blocks added to the server (test probes such as a content_by_lua location). */
  extraLocations?: string;
}

export interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RequestOptions {
  path?: string;
  method?: string;
  host?: string;
  headers?: Record<string, string>;
  body?: string;
  https?: boolean;
  /** SNI name for HTTPS; defaults to `host`. */
  servername?: string;
  /** HTTP/2 (over TLS with ALPN h2, `host` as :authority) instead of HTTP/1.1; implies `https`. */
  http2?: boolean;
}

export interface LuaNginx {
  prefix: string;
  httpPort: number;
  httpsPort: number;
  /** The control server (unix socket and token), as the controller reaches it. */
  control: ControlChannel;
  masterPid: number;
  /** PIDs of the current worker processes (children of the master). */
  workerPids(): Promise<number[]>;
  /** A request to the control server (the configuration endpoint), with the token. */
  status(method: string, path: string, body?: string): Promise<HttpReply>;
  /** POST to the control server, failing the test unless it answers 201. */
  configure(path: string, payload: unknown): Promise<void>;
  request(opts?: RequestOptions): Promise<HttpReply>;
  /** The subject CN of the certificate served for an SNI name (`null`: no SNI sent). */
  servedCertificateCN(servername: string | null): Promise<string>;
  errorLog(): Promise<string>;
  /** SIGHUP the master and wait until only new workers run (a real reload, same prefix). */
  reload(): Promise<number[]>;
  stop(): Promise<void>;
}

export interface GeneratedCertificate {
  certPath: string;
  keyPath: string;
  /** Certificate followed by its private key, as the servers payload carries it. */
  pem: string;
}

/** A self-signed EC certificate (RSA with `rsa`, for the ECDHE-RSA ciphers) made with the openssl CLI. */
export async function generateCertificate(dir: string, cn: string, sans: string[] = [cn], opts: { rsa?: boolean } = {}): Promise<GeneratedCertificate> {
  await mkdir(dir, { recursive: true });
  const base = join(dir, cn.replace(/[^a-zA-Z0-9.-]/g, '_') + '-' + Math.random().toString(36).slice(2, 8));
  const certPath = `${base}.crt`;
  const keyPath = `${base}.key`;
  await run('openssl', [
    'req', '-x509', ...(opts.rsa ? ['-newkey', 'rsa:2048'] : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1']), '-nodes',
    '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', `/CN=${cn}`,
    '-addext', `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}`,
  ]);
  const pem = (await readFile(certPath, 'utf8')) + (await readFile(keyPath, 'utf8'));
  return { certPath, keyPath, pem };
}

function luaValue(v: string | number | boolean): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function luaTable(obj: Record<string, string | number | boolean>): string {
  return `{ ${Object.entries(obj).map(([k, v]) => `${k} = ${luaValue(v)}`).join(', ')} }`;
}

function renderConf(o: {
  prefix: string; luaDir: string; workers: number; httpPort: number; httpsPort: number; control: ControlChannel; tokenPath: string;
  fallback: GeneratedCertificate; locations: LuaNginxLocation[]; luaIngressConfig: Record<string, string | number | boolean>;
  extraInitLua: string; allow: string[]; ownAddresses: string[]; extraLocations: string;
}): string {
  const locations = o.locations.map((l) => {
    const rewrite = { ssl_redirect: true, ...l.rewrite };
    // The production wiring (src/render/view.ts): the settings as words, the variables read.
    const flags = Object.entries(rewrite).filter(([, on]) => on).map(([k]) => k.replace(/_/g, '-')).join(' ');
    return `
    location ${l.path} {
      set $proxy_upstream_name ${JSON.stringify(l.backend)};
      set $proxy_alternative_upstream_name "";
      rewrite_by_lua_block { freshness.catch_up() lua_ingress.rewrite(${JSON.stringify(flags)}) balancer.rewrite() }
      header_filter_by_lua_block { balancer.header_filter() lua_ingress.header() }
      add_header X-Worker-Pid $pid always;
      add_header X-Upstream-Name $proxy_upstream_name always;
      add_header X-Alternative-Upstream-Name $proxy_alternative_upstream_name always;
      proxy_set_header Host $host;
      proxy_pass http://upstream_balancer;
    }`;
  }).join('\n');
  return `
load_module ${MODULES_DIR}/ndk_http_module.so;
load_module ${MODULES_DIR}/ngx_http_lua_module.so;
daemon off;
master_process on;
worker_processes ${o.workers};
pid ${o.prefix}/nginx.pid;
error_log ${o.prefix}/error.log notice;
events { worker_connections 1024; }
http {
  access_log off;
  # The scheme lua_ingress reads with use-forwarded-headers, as nginx.conf.liquid maps it.
  map $http_x_forwarded_proto $pass_access_scheme {
    default $http_x_forwarded_proto;
    "" $scheme;
  }
  client_body_temp_path ${o.prefix}/client_body;
  proxy_temp_path ${o.prefix}/proxy;
  fastcgi_temp_path ${o.prefix}/fastcgi;
  uwsgi_temp_path ${o.prefix}/uwsgi;
  scgi_temp_path ${o.prefix}/scgi;
  lua_package_path "${o.luaDir}/?.lua;;";
  lua_shared_dict configuration_data 20m;
  lua_shared_dict certificate_data 20m;
  lua_shared_dict certificate_servers 5m;
  lua_shared_dict balancer_ewma 10m;
  lua_shared_dict balancer_ewma_last_touched_at 10m;
  lua_shared_dict balancer_ewma_locks 1m;
  init_by_lua_block {
    collectgarbage("collect")
    configuration = require("configuration")
    freshness = require("freshness")
    control = require("control")
    control.load_token("${o.tokenPath}")
    address_policy = require("address_policy")
    address_policy.configure({ allow = { ${o.allow.map((c) => JSON.stringify(c)).join(', ')} }, own_ports = { ${o.httpPort}, ${o.httpsPort} }, own_addresses = { ${o.ownAddresses.map((a) => JSON.stringify(a)).join(', ')} } })
    balancer = require("balancer")
    certificate = require("certificate")
    lua_ingress = require("lua_ingress")
    lua_ingress.set_config(${luaTable(o.luaIngressConfig)})
    ${o.extraInitLua}
  }
  init_worker_by_lua_block { lua_ingress.init_worker() balancer.init_worker() }
  upstream upstream_balancer {
    server 0.0.0.1;
    balancer_by_lua_block { balancer.balance() }
    keepalive 320;
  }
  server {
    listen 127.0.0.1:${o.httpPort};
    listen 127.0.0.1:${o.httpsPort} ssl http2;
    server_name _;
    ssl_certificate ${o.fallback.certPath};
    ssl_certificate_key ${o.fallback.keyPath};
    ssl_certificate_by_lua_block { certificate.call() }
${locations}
${o.extraLocations}
  }
  server {
    listen unix:${o.control.socketPath};
    access_by_lua_block { control.authorize() }
    location /configuration {
      client_max_body_size 21m;
      client_body_buffer_size 21m;
      proxy_buffering off;
      content_by_lua_block { configuration.call() }
    }
    location = /is-dynamic-lb-initialized {
      content_by_lua_block { configuration.handle_is_dynamic_lb_initialized() }
    }
  }
}
`;
}

export function httpCall(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; servername?: string; timeoutMs?: number } = {}): Promise<HttpReply> {
  const u = new URL(url);
  const fn = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolvePromise, reject) => {
    const req = fn(u, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      agent: false,
      rejectUnauthorized: false,
      servername: opts.servername,
      timeout: opts.timeoutMs ?? 10_000,
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function childPids(parent: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(parent)]).catch(() => ({ stdout: '' }));
  return stdout.split(/\s+/).filter(Boolean).map(Number).sort((a, b) => a - b);
}

export async function startLuaNginx(opts: LuaNginxOptions = {}): Promise<LuaNginx> {
  const prefix = await mkdtemp(join(tmpdir(), 'ingress-rx-lua-'));
  // As the controller does: workers (nobody, under a root master) read modules a worker requires
  // first from a copy in the prefix when the checkout is a directory only its owner enters.
  await chmod(prefix, 0o755);
  const luaDir = withLuaInReach({ ...defaultRuntime({ prefix }), luaDir: join(repoRoot, 'lua') }).luaDir;
  const [httpPort, httpsPort] = await freePorts(2);
  const paths = { controlSocketPath: join(prefix, 'run', 'control.sock'), controlTokenPath: join(prefix, 'run', 'control.token') };
  writeControlToken(paths);
  const control = controlChannel(paths);
  const fallback = await generateCertificate(join(prefix, 'fallback'), 'fallback.invalid');
  const locations = opts.locations ?? [{ path: '/', backend: 'default-echo-80' }];
  const luaIngressConfig = {
    http_redirect_code: 308, hsts: true, hsts_max_age: 31536000, hsts_include_subdomains: true,
    hsts_preload: false, https_port: httpsPort, ...opts.luaIngressConfig,
  };
  const conf = renderConf({ prefix, luaDir, workers: opts.workers ?? 2, httpPort, httpsPort, control, tokenPath: paths.controlTokenPath, fallback, locations, luaIngressConfig, extraInitLua: opts.extraInitLua ?? '', allow: opts.allowUpstreamAddresses ?? ['loopback'], ownAddresses: opts.ownAddresses ?? [], extraLocations: opts.extraLocations ?? '' });
  const confPath = join(prefix, 'nginx.conf');
  await writeFile(confPath, conf);

  let exited = false;
  let output = '';
  const child: ChildProcess = spawn(NGINX_BINARY, ['-p', prefix, '-c', confPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d) => { output += d; });
  child.stderr?.on('data', (d) => { output += d; });
  const exitedPromise = new Promise<void>((r) => child.once('exit', () => { exited = true; r(); }));

  const errorLog = () => readFile(join(prefix, 'error.log'), 'utf8').catch(() => '');
  const stop = async (): Promise<void> => {
    if (!exited) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => { if (!exited) child.kill('SIGKILL'); }, 3000);
      await exitedPromise;
      clearTimeout(timer);
    }
    if (!process.env.KEEP_NGINX_PREFIX) await rm(prefix, { recursive: true, force: true });
  };

  try {
    await waitFor(async () => {
      if (exited) throw new Error(`nginx exited: ${output} ${await errorLog()}`);
      const r = await controlRequest(control, 'GET', '/is-dynamic-lb-initialized', { timeoutMs: 1000 }).catch(() => null);
      return r !== null;
    }, { timeoutMs: 10_000, what: 'nginx control server' });
    const workers = opts.workers ?? 2;
    await waitFor(async () => (await childPids(child.pid!)).length >= workers, { what: 'nginx workers' });
  } catch (err) {
    await stop();
    throw err;
  }

  const status = async (method: string, path: string, body?: string): Promise<HttpReply> =>
    ({ headers: {}, ...(await controlRequest(control, method, path, { body, timeoutMs: 10_000 })) });

  return {
    prefix, httpPort, httpsPort, control,
    masterPid: child.pid!,
    workerPids: () => childPids(child.pid!),
    status,
    async configure(path, payload) {
      const r = await status('POST', path, JSON.stringify(payload));
      if (r.status !== 201) throw new Error(`POST ${path} answered ${r.status}: ${r.body}`);
    },
    async request(o: RequestOptions = {}) {
      if (o.http2) {
        const r = await http2Request(httpsPort, o.host ?? 'localhost', o.path ?? '/', { method: o.method, headers: o.headers, body: o.body, sni: o.servername ?? o.host ?? null });
        return { status: r.status, headers: r.headers, body: r.body };
      }
      const port = o.https ? httpsPort : httpPort;
      const scheme = o.https ? 'https' : 'http';
      const headers = { ...(o.host ? { host: o.host } : {}), ...o.headers };
      return httpCall(`${scheme}://127.0.0.1:${port}${o.path ?? '/'}`, {
        method: o.method, headers, body: o.body, servername: o.https ? (o.servername ?? o.host ?? undefined) : undefined,
      });
    },
    servedCertificateCN(servername) {
      return new Promise((resolvePromise, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: httpsPort, rejectUnauthorized: false, ...(servername === null ? {} : { servername }) }, () => {
          const cn = socket.getPeerCertificate().subject?.CN;
          socket.end();
          resolvePromise(Array.isArray(cn) ? cn[0] : (cn ?? ''));
        });
        socket.on('error', reject);
      });
    },
    errorLog,
    async reload() {
      const before = await childPids(child.pid!);
      process.kill(child.pid!, 'SIGHUP');
      const workers = opts.workers ?? 2;
      return waitFor(async () => {
        const now = await childPids(child.pid!);
        return now.length === workers && now.every((p) => !before.includes(p)) ? now : null;
      }, { what: 'the reloaded workers' });
    },
    stop,
  };
}

/** A backend in the shape the controller POSTs (ingress-nginx's JSON names), with wire-level extras. */
export function backend(name: string, endpoints: { address: string; port: string }[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...modelBackend(name, endpoints), ...extra };
}

/**
 * Sends batches of `batch` concurrent requests until every worker of `nginx` has answered one
 * (X-Worker-Pid); returns every answer, so a test can assert each of them, not just the last.
 */
export async function answersFromEveryWorker(nginx: LuaNginx, opts: RequestOptions, batch = 8): Promise<HttpReply[]> {
  const workers = (await nginx.workerPids()).map(String);
  const answers: HttpReply[] = [];
  const seen = new Set<string>();
  const deadline = Date.now() + 10_000;
  while (!workers.every((pid) => seen.has(pid))) {
    if (Date.now() > deadline) throw new Error(`answers from workers ${[...seen].join(', ')} only, of ${workers.join(', ')}`);
    for (const r of await Promise.all(Array.from({ length: batch }, () => nginx.request(opts)))) {
      answers.push(r);
      seen.add(String(r.headers['x-worker-pid']));
    }
  }
  return answers;
}
