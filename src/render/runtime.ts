// NginxRuntime: everything nginx.conf needs that is not in the model — where NGINX lives on
// disk, which ports it listens on, and where the Lua modules and GeoIP files are.
import { mkdirSync, chmodSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT as repoRoot } from '../version.js';
import { prepareControlDirs } from './control.js';
import { usableCpus } from './cpu-count.js';

export interface FallbackCert {
  certPath: string;
  keyPath: string;
}

export interface NginxRuntime {
  /** NGINX prefix (-p): pid, logs, temp paths and auxiliary files live under it. */
  prefix: string;
  /** The live configuration file. */
  confPath: string;
  pidPath: string;
  errorLogPath: string;
  /** error_log level; overrides the ConfigMap's error-log-level when set. */
  errorLogLevel?: string;
  /** Access log file, or 'stdout'-style paths such as /dev/stdout. */
  accessLogPath: string;
  /** Addresses the HTTP/HTTPS/default servers listen on: ['127.0.0.1'] locally, ['*', '[::]'] in a cluster. */
  listenAddresses: string[];
  httpPort: number;
  httpsPort: number;
  /**
   * --status-port: NGINX no longer listens on it (the control server is on `controlSocketPath`);
   * kept as a port tcp-services may not take, as in ingress-nginx.
   */
  statusPort: number;
  /** The control server's unix socket (configuration endpoint, nginx.conf, status); see docs/security.md. */
  controlSocketPath: string;
  /** The controller's per-start token for the control server (mode 0600), read by init_by_lua. */
  controlTokenPath: string;
  /** Stream (TCP/UDP) configuration server; always bound to 127.0.0.1. */
  streamPort: number;
  /** Default server (catch-all 404, the built-in default backend). */
  defaultServerPort: number;
  /** Absolute path of the Lua modules directory. */
  luaDir: string;
  /** Directory of dynamic NGINX modules. */
  modulesDir: string;
  /** `user` directive; omitted when undefined. */
  user?: string;
  /** Directory holding GeoLite2-*.mmdb files. */
  geoipDir: string;
  /**
   * The hard RLIMIT_NOFILE NGINX inherits, read when the runtime is made (worker_rlimit_nofile
   * and worker_connections derive from it when the ConfigMap leaves them 0).
   */
  openFilesLimit: number;
  /**
   * What `worker-processes: auto` (the default) renders as: the CPU limit of the controller's
   * cgroup, else its CPU count (src/render/cpu-count.ts), as ingress-nginx writes it.
   */
  cpus: number;
  /** Overrides settings.workerProcesses when set (tests use 1). */
  workerProcesses?: string;
  /** Self-signed certificate used when no certificate matches (see ensureFallbackCertificate). */
  fallbackCert: FallbackCert;
  /** Resolver addresses (already bracketed for IPv6); empty → read `resolvConf`. */
  resolvers?: string[];
  /** The resolv.conf whose nameservers, search domains and ndots NGINX and Lua use (default /etc/resolv.conf; local mode's --resolv-conf). */
  resolvConf?: string;
  /**
   * --enable-ssl-passthrough: a stream server on the HTTPS port reads the SNI and hands
   * ssl-passthrough hosts' TLS to their backends; NGINX's HTTPS servers move to
   * 127.0.0.1:proxyPort (--ssl-passthrough-proxy-port). Off when undefined.
   */
  sslPassthrough?: { proxyPort: number };
  /** Request metrics (--enable-metrics): the metrics log NGINX writes (see metrics-log.ts). Off when undefined. */
  metricsLog?: string;
  /**
   * The upstream address policy for Lua (lua/address_policy.lua), as the model applies it:
   * allowed node-local classes and the controller's own ports. Strict when undefined.
   */
  upstreamAddresses?: { allow: string[]; ownPorts: number[]; ownAddresses?: string[] };
}

export const DEFAULT_TEMPLATE_DIR = join(repoRoot, 'nginx');
export const DEFAULT_LUA_DIR = join(repoRoot, 'lua');

/** A runtime with ingress-nginx's default ports; every path derives from `prefix`. */
export function defaultRuntime(overrides: Partial<NginxRuntime> & { prefix?: string } = {}): NginxRuntime {
  const prefix = resolve(overrides.prefix ?? join(repoRoot, '.work', 'nginx'));
  return {
    prefix,
    confPath: join(prefix, 'nginx.conf'),
    pidPath: join(prefix, 'nginx.pid'),
    errorLogPath: join(prefix, 'logs', 'error.log'),
    accessLogPath: join(prefix, 'logs', 'access.log'),
    listenAddresses: ['*'],
    httpPort: 80,
    httpsPort: 443,
    statusPort: 10246,
    controlSocketPath: join(prefix, 'run', 'control.sock'),
    controlTokenPath: join(prefix, 'run', 'control.token'),
    streamPort: 10247,
    defaultServerPort: 8181,
    luaDir: DEFAULT_LUA_DIR,
    modulesDir: '/usr/lib/nginx/modules',
    geoipDir: join(prefix, 'geoip'),
    openFilesLimit: hardOpenFilesLimit(),
    cpus: usableCpus(),
    fallbackCert: { certPath: join(prefix, 'ssl', 'default-fake-certificate.pem'), keyPath: join(prefix, 'ssl', 'default-fake-certificate.key') },
    ...overrides,
  };
}

/**
 * The master's own log (notice level, requests log elsewhere): where NGINX says whether it took
 * a configuration sent with SIGHUP, read by the reload actor (src/actors/reload-log.ts).
 */
export function reloadLogPath(runtime: NginxRuntime): string {
  return join(runtime.prefix, 'logs', 'reload.log');
}

/** Sub-directories of the prefix the configuration refers to. */
export function tempPaths(runtime: NginxRuntime): Record<'client_body' | 'proxy' | 'fastcgi' | 'uwsgi' | 'scgi', string> {
  const t = join(runtime.prefix, 'tmp');
  return { client_body: join(t, 'client-body'), proxy: join(t, 'proxy'), fastcgi: join(t, 'fastcgi'), uwsgi: join(t, 'uwsgi'), scgi: join(t, 'scgi') };
}

/**
 * One path component from a name: injective (every byte outside [A-Za-z0-9_.-] is %XX, `%`
 * itself included) and never `.`, `..` or hidden (a leading dot is escaped too).
 */
export function pathComponent(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]|^\./gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

/**
 * Where a file made from a Secret (`namespace/name`) is written beside nginx.conf: under the
 * folder of its kind, a directory per namespace, so `team-x/auth` and `team/x-auth` are two files.
 * A render block that writes a file from a Secret names it with this.
 */
export function secretFilePath(runtime: NginxRuntime, folder: string, secret: string, extension: string): string {
  const slash = secret.indexOf('/');
  // `%` and `%%` are no escaped name: the directories of "no namespace" and "empty namespace".
  const namespace = slash < 0 ? '%%' : slash === 0 ? '%' : pathComponent(secret.slice(0, slash));
  return join(runtime.prefix, pathComponent(folder), namespace, `${pathComponent(secret.slice(slash + 1))}${extension}`);
}

/** Where the htpasswd file of an auth Secret (`namespace/name`) is written. */
export function authFilePath(runtime: NginxRuntime, secret: string): string {
  return secretFilePath(runtime, 'auth', secret, '.passwd');
}

/**
 * Creates the prefix layout. Directories are world-readable because a root master runs its
 * workers as `nobody` when no `user` is set.
 */
export function preparePrefix(runtime: NginxRuntime): void {
  const dirs = [runtime.prefix, join(runtime.prefix, 'logs'), join(runtime.prefix, 'auth'), join(runtime.prefix, 'ssl'), join(runtime.prefix, 'tmp'), ...Object.values(tempPaths(runtime))];
  for (const d of dirs) {
    mkdirSync(d, { recursive: true });
    chmodSync(d, 0o755);
  }
  prepareControlDirs(runtime);
}

/** The Ingresses the controller leaves out (JSON), served by the status server for `dbg ingresses`. */
export function leftOutPath(runtime: NginxRuntime): string {
  return join(runtime.prefix, 'left-out.json');
}

/** The unix socket of the n-th ssl-passthrough route's inner stream server. */
export function passthroughSocketPath(runtime: NginxRuntime, n: number): string {
  return join(runtime.prefix, `passthrough-${n}.sock`);
}

/**
 * Deletes ssl-passthrough sockets a killed master left behind: NGINX does not bind a unix socket
 * whose file exists. Only call it before starting a new master.
 */
export function removeStaleSockets(runtime: NginxRuntime): void {
  let names: string[];
  try {
    names = readdirSync(runtime.prefix);
  } catch {
    return;
  }
  for (const n of names) if (/^passthrough-\d+\.sock$/.test(n)) rmSync(join(runtime.prefix, n), { force: true });
  rmSync(runtime.controlSocketPath, { force: true });
}

/** This process's hard RLIMIT_NOFILE (NGINX, its child, inherits it), as getrlimit's rlim_max; 1024 when unknown. */
function hardOpenFilesLimit(): number {
  try {
    const m = /^Max open files\s+\S+\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : 1024;
  } catch {
    return 1024;
  }
}
