// Runs `ingress-rx local` as a child process on free loopback ports, with helpers to write
// manifests into its directory and to send real HTTP(S) requests through its NGINX.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, unlinkSync, mkdirSync, renameSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { cpus, tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from './ports.js';
import { waitFor } from './wait.js';
import type { EchoServer } from './echo-server.js';
import { controlChannel } from '../../src/render/control.js';
import { defaultRuntime } from '../../src/render/runtime.js';
import { controlRequest, type ControlResponse } from '../../src/actors/control-client.js';
import { runDbg } from '../../src/cli/dbg.js';
import { cliArgs } from './cli-command.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  /** The header names and values as received, in order (HTTP/2: without pseudo-headers). */
  rawHeaders: string[];
  body: string;
  /** The body's bytes as received (a compressed answer's, say). */
  bytes: Buffer;
  /** The echo backend's name when the reply came from one. */
  backend?: string;
  json?: Record<string, unknown>;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  https?: boolean;
  /** Override the port (default: the controller's HTTP or HTTPS port). */
  port?: number;
  ca?: string | Buffer;
  body?: string;
  /** Source address of the connection (any 127.x address works on loopback). */
  localAddress?: string;
  /** Sent on the connection before HTTP or TLS begins (a PROXY protocol header). */
  preface?: string;
  /** TLS: the server name sent (null: none); the host's name by default. */
  sni?: string | null;
  /** TLS: a client certificate and its key (PEM). */
  cert?: string;
  key?: string;
}

/** The TLS options of a request: SNI (none for an address or `sni: null`), trust and client certificate. */
export function tlsOptions(host: string, opts: RequestOptions): { servername?: string; ca?: string | Buffer; cert?: string; key?: string } {
  const name = opts.sni === undefined ? (host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.split(':')[0]!) : opts.sni;
  return {
    ...(name && !isIP(name) ? { servername: name } : {}),
    ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
    ...(opts.cert !== undefined ? { cert: opts.cert, key: opts.key } : {}),
  };
}

export interface LocalController {
  dir: string;
  workdir: string;
  ports: { http: number; https: number; status: number; stream: number; healthz: number; defaultServer: number };
  /** Everything the child printed (JSON log lines). */
  output(): string;
  /**
   * Waits until the output matches `pattern` and returns it. NGINX serves a sync's configuration
   * before the controller logs that sync's warnings: a line is awaited, not read once.
   */
  logged(pattern: RegExp | string, what?: string): Promise<string>;
  write(file: string, objects: object[] | string): void;
  remove(file: string): void;
  request(host: string, path: string, opts?: RequestOptions): Promise<Reply>;
  metric(name: string): Promise<number>;
  /** A request to NGINX's control server (its unix socket in the workdir, with the controller's token unless `anonymous`). */
  control(path: string, opts?: { method?: string; body?: string; anonymous?: boolean }): Promise<ControlResponse>;
  /** Waits until `check` holds for a request's reply (polls; no fixed sleep). */
  until(host: string, path: string, check: (r: Reply) => boolean, opts?: RequestOptions & { what?: string; timeoutMs?: number }): Promise<Reply>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  child: ChildProcess;
}

/** A reply from what a client received: the body read as UTF-8 and, for JSON, parsed (an echo backend names itself in it). */
export function replyOf(status: number, headers: IncomingHttpHeaders, rawHeaders: string[], chunks: Buffer[]): Reply {
  const bytes = Buffer.concat(chunks);
  const reply: Reply = { status, headers, rawHeaders, body: bytes.toString('utf8'), bytes };
  if (String(headers['content-type'] ?? '').includes('application/json')) {
    try { reply.json = JSON.parse(reply.body) as Record<string, unknown>; reply.backend = String(reply.json.name ?? ''); } catch { /* not JSON */ }
  }
  return reply;
}

/** A TCP connection to 127.0.0.1:`port` that sends `preface` first, then TLS (`tls`) or nothing more. */
export function prefacedConnection(port: number, preface: string, tls?: ReturnType<typeof tlsOptions> & { ALPNProtocols?: string[] }): Socket {
  const tcp = tcpConnect(port, '127.0.0.1');
  tcp.write(preface);
  return tls ? tlsConnect({ socket: tcp, ...tls, rejectUnauthorized: tls.ca !== undefined }) : tcp;
}

export function sendRequest(port: number, host: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const tls = tlsOptions(host, opts);
    const common = {
      host: '127.0.0.1', port, path, method: opts.method ?? 'GET',
      headers: { Host: host, Connection: 'close', ...(opts.headers ?? {}) },
      timeout: 10_000,
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      ...(opts.preface !== undefined ? { createConnection: () => prefacedConnection(port, opts.preface!, opts.https ? tls : undefined) } : {}),
    };
    const handle = (res: import('node:http').IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve(replyOf(res.statusCode ?? 0, res.headers, res.rawHeaders, chunks)));
    };
    const req = opts.https
      // `servername: ''` sends no SNI where Node would otherwise send the Host's name.
      // An agent (even `agent: false`'s own) would ignore `createConnection`, and so a preface.
      ? httpsRequest({ ...common, servername: '', ...tls, rejectUnauthorized: opts.ca !== undefined, ...(opts.preface === undefined ? { agent: false } : {}) }, handle)
      : httpRequest(common, handle);
    req.on('timeout', () => req.destroy(new Error(`request to ${host}${path} timed out`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * IRX_TEST_DYNAMIC_ROUTES=0 runs every controller of a test file with --enable-dynamic-routes=false
 * (every host a server block), so one file checks both paths (test/e2e/*.static.test.ts import a
 * file with it set).
 */
export const DYNAMIC_ROUTES_ARGS: readonly string[] = process.env.IRX_TEST_DYNAMIC_ROUTES === '0' ? ['--enable-dynamic-routes=false'] : [];

/**
 * IRX_TEST_ROUTER_HOOK=1 adds a host-less Ingress path to every local controller's manifests, so
 * the default server keeps a location of its own and asks the Lua router in its server rewrite
 * phase instead of routing in its `/` (src/render/dynamic-routes.ts; test/e2e/*.hook.test.ts).
 */
const ROUTER_HOOK_FILES: Record<string, object[]> = process.env.IRX_TEST_ROUTER_HOOK === '1'
  ? { 'router-hook.json': [ingress('irx-test', 'hostless', { paths: [{ path: '/irx-test-hostless', service: 'none' }] })] }
  : {};

export async function startLocal(opts: { files?: Record<string, object[] | string>; args?: string[]; env?: Record<string, string> } = {}): Promise<LocalController> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-manifests-'));
  const write = (file: string, objects: object[] | string) => {
    const p = join(dir, file);
    mkdirSync(dirname(p), { recursive: true });
    const text = typeof objects === 'string' ? objects : JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 1);
    // Write then rename, so the watcher never sees a half-written file.
    writeFileSync(`${p}.tmp`, text);
    renameSync(`${p}.tmp`, p);
  };
  for (const [f, objs] of Object.entries({ ...ROUTER_HOOK_FILES, ...opts.files })) write(f, objs);
  const ctl = await startCli('local', (ports) => [
    '--manifests', dir,
    '--http-port', String(ports.http), '--https-port', String(ports.https), '--status-port', String(ports.status),
    '--stream-port', String(ports.stream), '--healthz-port', String(ports.healthz), '--default-server-port', String(ports.defaultServer),
    '--sync-rate-limit', '20', '--log-level', 'info',
    ...DYNAMIC_ROUTES_ARGS,
    ...(opts.args ?? []),
  ], opts.env, () => rmSync(dir, { recursive: true, force: true }));
  return { ...ctl, dir, write, remove: (file) => unlinkSync(join(dir, file)) };
}

/** `ingress-rx controller` against an API server (e.g. the fake one), ingress-nginx flag syntax. */
export async function startController(opts: { kubeconfig: string; args?: string[]; env?: Record<string, string>; untilHealthy?: boolean }): Promise<CliProcess> {
  return startCli('controller', (ports) => [
    `--kubeconfig=${opts.kubeconfig}`,
    `--http-port=${ports.http}`, `--https-port=${ports.https}`, `--status-port=${ports.status}`,
    `--stream-port=${ports.stream}`, `--healthz-port=${ports.healthz}`, `--default-server-port=${ports.defaultServer}`,
    '--sync-rate-limit=20', '--log-level=info', '--shutdown-grace-period=0', '--post-shutdown-grace-period=0',
    ...DYNAMIC_ROUTES_ARGS,
    ...(opts.args ?? []),
  ], opts.env, undefined, opts.untilHealthy);
}

export type CliProcess = Omit<LocalController, 'dir' | 'write' | 'remove'>;

async function startCli(command: string, argsFor: (ports: LocalController['ports']) => string[], env: Record<string, string> = {}, cleanup: () => void = () => {}, untilHealthy = true): Promise<CliProcess> {
  const workdir = mkdtempSync(join(tmpdir(), 'irx-work-'));
  const [http, https, status, stream, healthz, defaultServer] = await freePorts(6);
  const ports = { http, https, status, stream, healthz, defaultServer };
  const workdirFlag = command === 'controller' ? [`--workdir=${workdir}`] : ['--workdir', workdir];
  const child = spawn(process.execPath, [
    ...cliArgs(), command, ...workdirFlag, ...argsFor(ports),
  ], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => { exitCode = code; resolve(code); }));

  const ctl: CliProcess = {
    workdir, ports, child,
    output: () => out,
    async logged(pattern, what) {
      const matches = () => (typeof pattern === 'string' ? out.includes(pattern) : pattern.test(out));
      await waitFor(matches, { timeoutMs: 15_000, what: `${what ?? 'a line'} matching ${String(pattern)} in the controller's output` })
        .catch((err: Error) => { throw new Error(`${err.message}
--- output ---
${out.slice(-3000)}`); });
      return out;
    },
    request: (host, path, o = {}) => sendRequest(o.port ?? (o.https ? https : http), host, path, o),
    async metric(name) {
      const r = await sendRequest(healthz, '127.0.0.1', '/metrics');
      const line = r.body.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
      if (!line) throw new Error(`metric ${name} not found`);
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    },
    control(path, o = {}) {
      return controlRequest(controlChannel(defaultRuntime({ prefix: workdir })), o.method ?? 'GET', path, { body: o.body, anonymous: o.anonymous, timeoutMs: 10_000 });
    },
    until: (host, path, check, o = {}) => untilReply(workdir, () => ctl.request(host, path, o), check, { what: o.what ?? `${host}${path}`, timeoutMs: o.timeoutMs }),
    async stop(signal = 'SIGTERM') {
      if (exitCode === undefined) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      cleanup();
      rmSync(workdir, { recursive: true, force: true });
      return code;
    },
  };

  if (!untilHealthy) return ctl;
  try {
    await waitFor(async () => {
      if (exitCode !== undefined) throw new Error(`ingress-rx ${command} exited with ${exitCode}:\n${out.slice(-4000)}`);
      const r = await sendRequest(healthz, '127.0.0.1', '/healthz').catch(() => null);
      return r?.status === 200;
      // Generous: CI builds the image beside the tests, and a loaded machine starts Node slowly.
    }, { timeoutMs: 60_000, what: `ingress-rx ${command} to become healthy` });
  } catch (err) {
    await ctl.stop('SIGKILL');
    const failure = new Error(`${(err as Error).message}\n--- output ---\n${out.slice(-4000)}`);
    // uvu prints nothing for an error thrown in a before hook, where most controllers start.
    process.stderr.write(`startLocal: ${failure.message}\n`);
    throw failure;
  }
  return ctl;
}

/** Sends `send()` until `check` holds for its reply, from one generation of NGINX workers (polls; no fixed sleep). */
export async function untilReply(workdir: string, send: () => Promise<Reply>, check: (r: Reply) => boolean, o: { what: string; timeoutMs?: number }): Promise<Reply> {
  let last: Reply | undefined;
  try {
    return await waitFor(async () => {
      // During a reload old and new workers both accept for ~100 ms; a reply from the new
      // generation says nothing about the next request until the old one stops accepting.
      if (!oneGeneration(workdir)) return undefined;
      last = await send();
      return check(last) && oneGeneration(workdir) ? last : undefined;
    }, { timeoutMs: o.timeoutMs ?? 15_000, what: o.what });
  } catch (err) {
    throw new Error(`${(err as Error).message}; last reply: ${last ? `${last.status} ${last.body.slice(0, 300)}` : 'none'}`);
  }
}

/** True when no more NGINX workers accept than one generation has (old ones are shutting down). */
export function oneGeneration(prefix: string): boolean {
  try {
    const master = Number(readFileSync(join(prefix, 'nginx.pid'), 'utf8'));
    const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    const accepting = workers.filter((pid) => {
      // The cache manager and loader (auth-cache) are children too, but accept nothing.
      try { return /worker process$/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '')); } catch { return false; }
    });
    // As many as the running configuration asks for (auto: one per CPU).
    const asked = /\nworker_processes (\d+);/.exec(readFileSync(join(prefix, 'nginx.conf'), 'utf8'))?.[1];
    return accepting.length <= (asked ? Number(asked) : cpus().length);
  } catch {
    return true; // no NGINX (yet): nothing to wait for
  }
}

// ---- manifest builders (plain objects, written as JSON documents)

export function service(ns: string, name: string, opts: { port?: number; type?: string; externalName?: string } = {}) {
  return {
    apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns },
    spec: opts.type === 'ExternalName'
      ? { type: 'ExternalName', externalName: opts.externalName, ports: [{ name: 'http', port: opts.port ?? 80 }] }
      : { ports: [{ name: 'http', port: opts.port ?? 80, targetPort: 'http' }] },
  };
}

/** One EndpointSlice per echo server (each listens on its own port), all for one Service. */
export function slices(ns: string, svc: string, servers: Array<Pick<EchoServer, 'address' | 'port'>>, opts: { ready?: boolean } = {}) {
  return servers.map((s, i) => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${svc}-${i}`, namespace: ns, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: s.port }],
    endpoints: [{ addresses: [s.address], conditions: { ready: opts.ready ?? true } }],
  }));
}

export interface PathSpec { path: string; pathType?: string; service: string; port?: number }

export function ingress(ns: string, name: string, opts: {
  host?: string; paths?: PathSpec[]; annotations?: Record<string, string>; tls?: Array<{ hosts: string[]; secretName: string }>;
  created?: string; className?: string; defaultBackend?: { service: string; port?: number };
}) {
  const backend = (svc: string, port?: number) => ({ service: { name: svc, port: { number: port ?? 80 } } });
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name, namespace: ns, annotations: opts.annotations ?? {}, ...(opts.created ? { creationTimestamp: opts.created } : {}) },
    spec: {
      ...(opts.className ? { ingressClassName: opts.className } : {}),
      ...(opts.tls ? { tls: opts.tls } : {}),
      ...(opts.defaultBackend ? { defaultBackend: backend(opts.defaultBackend.service, opts.defaultBackend.port) } : {}),
      ...(opts.paths ? {
        rules: [{
          ...(opts.host ? { host: opts.host } : {}),
          http: { paths: opts.paths.map((p) => ({ path: p.path, pathType: p.pathType ?? 'Prefix', backend: backend(p.service, p.port) })) },
        }],
      } : {}),
    },
  };
}

export function tlsSecret(ns: string, name: string, cert: string, key: string) {
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name, namespace: ns },
    data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
  };
}

/** What `ingress-rx dbg quarantine` prints for the controller of this work directory. */
export async function dbgQuarantine(workdir: string): Promise<string> {
  let text = '';
  await runDbg(['quarantine'], { workdir }, (s) => { text += s; });
  return text;
}

/** Waits until NGINX's workers run a configuration (as its status server serves it) that has `marker`. */
export async function untilRunning(ctl: Pick<LocalController, 'control'>, marker: string): Promise<void> {
  // The file is written before the reload: wait until the workers answer its checksum.
  await waitFor(async () => {
    const conf = (await ctl.control('/nginx.conf')).body;
    const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
    return conf.includes(marker) && (await ctl.control('/configuration-checksum')).body === checksum;
  }, { timeoutMs: 15_000, what: `NGINX running a configuration with ${marker}` });
}
