// One container of a pod, run from a built image the way the kubelet runs it through containerd
// and runc: the image's root filesystem (a buildah working container, so writes go to its own
// layer), the command from the image's entrypoint and the manifest's args ($(VAR) expanded),
// the image's env plus the manifest's (downward API fields resolved) and the API server's
// service variables, its own pid, network, uts and ipc namespaces (PID 1 is the entrypoint), the
// Secret volumes and the service-account token mounted read-only where Kubernetes mounts them,
// and the securityContext's uid, gid, capabilities and no_new_privs set by pod-init.c as runc
// sets them. Seccomp (RuntimeDefault) is not applied.
//
// The network namespace has only `lo`; pod-network.ts inside it pipes the API server in and the
// container ports out through unix sockets, and the test reaches each container port on a free
// port of its own loopback (as a hostPort mapping does).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, type Server } from 'node:net';
import { pipeServer } from './pipe.js';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './ports.js';
import type { PodNetworkConfig } from './pod-network.js';

const REPO = new URL('../../', import.meta.url).pathname;

export interface EnvVar { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }
export interface ContainerManifest {
  name: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: Array<{ name?: string; containerPort: number; hostPort?: number; protocol?: string }>;
  securityContext?: {
    runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean; allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}

export interface PodOptions {
  image: string;
  pod: { name: string; namespace: string; ip: string };
  container: ContainerManifest;
  /** Volume name → a host directory holding its files (a Secret volume's keys). */
  volumes: Record<string, string>;
  serviceAccount: { token: string; caCert: string };
  /** The API server, as the pod reaches it: KUBERNETES_SERVICE_HOST=127.0.0.1, this port, piped to this unix socket. */
  apiServer: { port: number; socket: string };
  /** Echo backends inside the pod's network, on addresses of their own. */
  backends?: PodNetworkConfig['backends'];
}

export interface PodProcess { pid: number; argv: string[]; status: Record<string, string>; maps: string }

export interface RunningPod {
  /** The host pid of the container's PID 1. */
  pid: number;
  /** Container port → the test's loopback port reaching it. */
  ports: Record<number, number>;
  /** The container's stdout and stderr so far. */
  output(): string;
  /** Every process in the container's pid namespace, with its /proc status and maps. */
  processes(): PodProcess[];
  /** Runs a command in the container as the kubelet runs a preStop exec hook: same namespaces, user and capabilities. */
  exec(command: string[]): Promise<{ code: number | null; output: string }>;
  /** Sends a signal to PID 1, as the kubelet does to stop the container. */
  kill(signal: NodeJS.Signals): void;
  /** The container's exit code. */
  exited: Promise<number | null>;
  /** Its exit code once it exited, undefined while it runs. */
  exitCode(): number | null | undefined;
  /** The test's port reaching the container's :10254 (the probes' port). */
  healthzPort: number;
  remove(): Promise<void>;
}

const CAPABILITY_NUMBERS: Record<string, number> = { CHOWN: 0, DAC_OVERRIDE: 1, FOWNER: 3, KILL: 5, SETGID: 6, SETUID: 7, SETPCAP: 8, NET_BIND_SERVICE: 10, NET_RAW: 13, SYS_CHROOT: 18, SYS_ADMIN: 21, MKNOD: 27, AUDIT_WRITE: 29, SETFCAP: 31 };
/** containerd's default set, kept when a securityContext drops nothing. */
const DEFAULT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

let initBinary: string | undefined;
/** pod-init.c, built once per test process (static: it runs inside the image). */
function podInit(dir: string): string {
  if (initBinary) return initBinary;
  const out = join(dir, 'pod-init');
  execFileSync('cc', ['-static', '-O2', '-o', out, join(REPO, 'test/support/pod-init.c')], { stdio: 'pipe' });
  initBinary = out;
  return out;
}

/** The kernel's capability sets and ids as the container's user and runtime leave them. */
function capabilityList(sc: ContainerManifest['securityContext']): number[] {
  const drop = new Set(sc?.capabilities?.drop ?? []);
  const base = drop.has('ALL') ? [] : DEFAULT_CAPABILITIES.filter((c) => !drop.has(c));
  const names = [...new Set([...base, ...(sc?.capabilities?.add ?? [])])];
  return names.map((n) => {
    const num = CAPABILITY_NUMBERS[n.replace(/^CAP_/, '')];
    if (num === undefined) throw new Error(`pod: capability ${n} is not known to this test runtime`);
    return num;
  }).sort((a, b) => a - b);
}

function imageConfig(image: string): { Env?: string[]; Entrypoint?: string[]; Cmd?: string[]; WorkingDir?: string; User?: string } {
  return (JSON.parse(execFileSync('buildah', ['inspect', '--type', 'image', image], { encoding: 'utf8', maxBuffer: 64 << 20 })) as { OCIv1: { config: never } }).OCIv1.config;
}

/** Kubernetes' $(VAR) expansion of command and args ($$ escapes; unknown names stay as written). */
export function expandVars(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) => (name === undefined ? '$' : env[name] ?? m));
}


/** A path inside the root filesystem with its symlinks followed (Debian's /var/run → /run), as a runtime resolves a mount's destination. */
function inRoot(rootfs: string, path: string): string {
  const out: string[] = [];
  const todo = path.split('/').filter(Boolean);
  for (let hops = 0; todo.length > 0;) {
    const part = todo.shift()!;
    let target: string | undefined;
    try { target = readlinkSync(join(rootfs, ...out, part)); } catch { /* not a symlink, or not there yet */ }
    if (target === undefined || ++hops > 40) { out.push(part); continue; }
    if (target.startsWith('/')) out.length = 0;
    todo.unshift(...target.split('/').filter(Boolean));
  }
  return `/${out.join('/')}`;
}

export async function runPod(opts: PodOptions): Promise<RunningPod> {
  const { container, pod } = opts;
  const sc = container.securityContext ?? {};
  const config = imageConfig(opts.image);
  const uid = sc.runAsUser ?? Number((config.User ?? '0').split(':')[0]);
  const gid = sc.runAsGroup ?? Number((config.User ?? '0:0').split(':')[1] ?? 0);
  if (sc.runAsNonRoot && uid === 0) throw new Error('pod: runAsNonRoot and the user is root (the kubelet refuses to start it)');
  const nnp = sc.allowPrivilegeEscalation === false;
  const caps = capabilityList(sc);

  const dir = mkdtempSync('/tmp/irxpod-');
  const ctr = execFileSync('buildah', ['from', '--pull=never', '--quiet', opts.image], { encoding: 'utf8' }).trim();
  const rootfs = execFileSync('buildah', ['mount', ctr], { encoding: 'utf8' }).trim();

  // What the kubelet writes for every pod.
  const sa = join(dir, 'serviceaccount');
  mkdirSync(sa);
  writeFileSync(join(sa, 'token'), opts.serviceAccount.token);
  writeFileSync(join(sa, 'ca.crt'), opts.serviceAccount.caCert);
  writeFileSync(join(sa, 'namespace'), pod.namespace);
  // As the kubelet writes volumes (defaultMode 0644), whatever this process's umask.
  for (const f of ['token', 'ca.crt', 'namespace']) chmodSync(join(sa, f), 0o644);
  chmodSync(sa, 0o755);
  writeFileSync(join(dir, 'hosts'), `127.0.0.1\tlocalhost\n${pod.ip}\t${pod.name}\n`);
  writeFileSync(join(dir, 'hostname'), `${pod.name}\n`);
  // Every name resolves through 127.0.0.1 in a network namespace with only `lo`: nothing leaves it.
  writeFileSync(join(dir, 'resolv.conf'), `search ${pod.namespace}.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\n`);

  const fields: Record<string, string> = { 'metadata.name': pod.name, 'metadata.namespace': pod.namespace, 'status.podIP': pod.ip };
  const env: Record<string, string> = {};
  for (const e of config.Env ?? []) env[e.slice(0, e.indexOf('='))] = e.slice(e.indexOf('=') + 1);
  Object.assign(env, {
    HOSTNAME: pod.name,
    KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(opts.apiServer.port), KUBERNETES_SERVICE_PORT_HTTPS: String(opts.apiServer.port),
    KUBERNETES_PORT: `tcp://127.0.0.1:${opts.apiServer.port}`,
  });
  for (const e of container.env ?? []) {
    const from = e.valueFrom?.fieldRef?.fieldPath;
    env[e.name] = from !== undefined ? fields[from] ?? '' : expandVars(e.value ?? '', env);
  }
  const command = container.command ?? config.Entrypoint ?? [];
  const args = container.args ?? (container.command ? [] : config.Cmd ?? []);
  const argv = [...command, ...args].map((a) => expandVars(a, env));

  // Mount points made as the runtime makes them (bwrap would make missing parents 0700).
  const mountPoint = (path: string) => {
    const target = inRoot(rootfs, path);
    mkdirSync(join(rootfs, target), { recursive: true, mode: 0o755 });
    return target;
  };
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]);
  const mounts: string[] = [
    '--ro-bind', podInit(dir), '/dev/.pod-init',
    '--ro-bind', sa, mountPoint('/var/run/secrets/kubernetes.io/serviceaccount'),
    '--ro-bind', join(dir, 'hosts'), '/etc/hosts', '--ro-bind', join(dir, 'hostname'), '/etc/hostname',
    '--ro-bind', join(dir, 'resolv.conf'), '/etc/resolv.conf',
  ];
  for (const m of container.volumeMounts ?? []) {
    const src = opts.volumes[m.name];
    if (!src) throw new Error(`pod: volume ${m.name} has no source`);
    mounts.push(m.readOnly ? '--ro-bind' : '--bind', src, mountPoint(m.mountPath));
  }
  const initArgs = (program: string[], withEnv: string[] = []) => ['/dev/.pod-init', String(uid), String(gid), String(gid), caps.length ? caps.join(',') : '-', nnp ? '1' : '0', ...withEnv, '--', ...program];
  const bwrap = [
    '--bind', rootfs, '/', '--proc', '/proc', '--dev', '/dev', ...mounts,
    '--unshare-pid', '--unshare-net', '--unshare-uts', '--unshare-ipc', '--hostname', pod.name, '--as-pid-1', '--die-with-parent',
    '--cap-add', 'ALL', '--clearenv', ...envArgs, '--chdir', config.WorkingDir || '/',
    '--info-fd', '3', '--block-fd', '4', '--', ...initArgs(argv),
  ];
  const child: ChildProcess = spawn('bwrap', bwrap, { stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
  let output = '';
  for (const fd of [3, 4]) (child.stdio[fd] as NodeJS.EventEmitter).on('error', () => undefined);
  child.stdout!.on('data', (d: Buffer) => { output += d; });
  child.stderr!.on('data', (d: Buffer) => { output += d; });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => { exitCode = code ?? (signal ? 128 : null); resolve(exitCode); }));
  const info = await new Promise<{ 'child-pid': number }>((resolve, reject) => {
    let text = '';
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
      text += d;
      try { resolve(JSON.parse(text) as { 'child-pid': number }); } catch { /* more to come */ }
    });
    void exited.then((code) => reject(new Error(`bwrap exited with ${code}: ${output}`)));
  });
  const pid = info['child-pid'];

  // The pod's network, then let the container start.
  const sockets = join(dir, 'sock');
  mkdirSync(sockets);
  // The declared ports, and the probes' (the kubelet reaches it whether declared or not).
  const containerPorts = [...new Set([...(container.ports ?? []).map((p) => p.containerPort), 10254])];
  const network: PodNetworkConfig = {
    addresses: [pod.ip, ...new Set((opts.backends ?? []).map((b) => b.address))],
    outbound: [{ port: opts.apiServer.port, socket: opts.apiServer.socket }],
    inbound: containerPorts.map((port) => ({ port, socket: join(sockets, `${port}.sock`) })),
    backends: opts.backends ?? [],
  };
  const helper = spawn('nsenter', [`--net=/proc/${pid}/ns/net`, '--', process.execPath, '--import', 'tsx', join(REPO, 'test/support/pod-network.ts'), JSON.stringify(network)],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let helperErr = '';
  helper.stderr!.on('data', (d: Buffer) => { helperErr += d; });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: helper.stdout! }).once('line', () => resolve());
    helper.on('exit', (code) => reject(new Error(`pod network helper exited with ${code}: ${helperErr}`)));
  });
  const ports: Record<number, number> = {};
  const mapped: Server[] = [];
  for (const p of network.inbound) {
    const server = pipeServer(() => createConnection(p.socket));
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    ports[p.port] = port;
    mapped.push(server);
  }
  (child.stdio[4] as NodeJS.WritableStream).write('go');

  const pidNamespace = readlinkSync(`/proc/${pid}/ns/pid`);
  const processes = (): PodProcess[] => {
    const out: PodProcess[] = [];
    for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (readlinkSync(`/proc/${entry}/ns/pid`) !== pidNamespace) continue;
        const status = Object.fromEntries(readFileSync(`/proc/${entry}/status`, 'utf8').split('\n').filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]));
        out.push({ pid: Number(entry), argv: readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean), status, maps: readFileSync(`/proc/${entry}/maps`, 'utf8') });
      } catch { /* gone meanwhile */ }
    }
    return out;
  };

  let removed = false;
  return {
    pid, ports, processes, exited,
    exitCode: () => exitCode,
    healthzPort: ports[10254]!,
    output: () => output,
    kill(signal) { try { process.kill(pid, signal); } catch { /* gone */ } },
    exec(cmd) {
      return new Promise((resolve) => {
        // The container's environment is set by pod-init, not given to nsenter (a host program).
        const p = spawn('nsenter', [`--target=${pid}`, '--mount', '--uts', '--ipc', '--net', '--pid', '--root', '--wd', '--',
          ...initArgs(cmd, Object.entries(env).map(([k, v]) => `${k}=${v}`))], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        p.stdout!.on('data', (d: Buffer) => { out += d; });
        p.stderr!.on('data', (d: Buffer) => { out += d; });
        p.on('exit', (code) => resolve({ code, output: out }));
      });
    },
    async remove() {
      if (removed) return;
      removed = true;
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      child.kill('SIGKILL');
      await exited;
      helper.kill('SIGTERM');
      for (const s of mapped) s.close();
      try { execFileSync('buildah', ['rm', ctr], { stdio: 'ignore' }); } catch { /* already gone */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
