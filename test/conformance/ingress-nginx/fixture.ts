// What most ported Its need, as ingress-nginx's e2e framework gives it: one `ingress-rx local`
// per test file with its own namespace, an echo Service (`echo`, port 80, two endpoints, like
// `NewEchoDeployment` with two replicas), and Ingresses written as manifests and awaited until
// NGINX serves them. Each It uses hosts of its own, so the Its of a file share one controller.
// Settings Its change the main ConfigMap (`configure`), each state awaited until NGINX runs it.
import { startEchoServer, closeAll, type EchoServer } from '../../support/echo-server.js';
import { ingress, oneGeneration, service, slices, startController, startLocal, tlsSecret, type CliProcess, type LocalController, type PathSpec, type Reply } from '../../support/local-harness.js';
// Imported when a file asks for a cluster: @kubernetes/client-node costs every other file ~2 s of CPU.
import type { FakeApiServer, FakeApiServerOptions, FakeObject } from '../../support/fake-apiserver.js';
import { waitFor } from '../../support/wait.js';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificate } from '../../support/lua-nginx.js';
import { connect as tlsConnect } from 'node:tls';

export const PREFIX = 'nginx.ingress.kubernetes.io';

/** Annotation keys without their prefix, as the e2e tests write them with it. */
export const annotations = (a: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k.includes('/') ? k : `${PREFIX}/${k}`, v]));

export interface Fixture {
  readonly ns: string;
  readonly ctl: LocalController;
  readonly echo: readonly EchoServer[];
  /** One Ingress with one rule: `host` → `path` (Prefix) → `svc` (the echo Service by default). */
  single(name: string, host: string, a?: Record<string, string>, opts?: { path?: string; pathType?: string; svc?: string; port?: number }): object;
  /**
   * A Service `name` (port 80) over the echo endpoints, with its EndpointSlices: a backend of its
   * own, as each It of ingress-nginx has in its own namespace (backend-level settings such as
   * affinity are shared by every Ingress using a Service).
   */
  echoService(name: string): object[];
  /** Writes `objects` as the manifest file `file` (replacing what it held). */
  apply(file: string, objects: object[]): void;
  /** Writes a manifest and waits until `check` holds for a reply of `host` (by default: an echo endpoint answered). */
  applyAndWait(file: string, objects: object[], host: string, path?: string, check?: (r: Reply) => boolean): Promise<Reply>;
  /**
   * Makes `data` the main ConfigMap's (startFixture's `configmap`) and waits until a sync after
   * the write is applied and only NGINX workers of that generation accept; nothing happens when
   * it already holds `data`. Call it while the controller is idle (earlier changes awaited).
   */
  configure(data: Record<string, string>): Promise<void>;
  /** The access log NGINX writes when the ConfigMap names none (local mode: under the workdir). */
  readonly accessLog: string;
  /** NGINX's error log (local mode: under the workdir). */
  readonly errorLog: string;
  /** The messages the controller logged as warnings so far (a refused value, say). */
  warnings(): string[];
  /**
   * Waits until a warning satisfies `check`: NGINX serves a sync's configuration before the
   * controller logs that sync's warnings, so a warning is awaited after a request, not read once.
   */
  warned(check: (warning: string) => boolean, what: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The port an HTTPS redirect names: none on 443, as ingress-nginx; local mode's unprivileged
 * HTTPS port is named, so the redirect reaches it (docs/differences.md, "Redirect port").
 */
export const redirectPort = (fx: Pick<Fixture, 'ctl'>): string => (fx.ctl.ports.https === 443 ? '' : `:${fx.ctl.ports.https}`);

/** The main ConfigMap's name, as ingress-nginx's manifests call it. */
export const CONFIGMAP_NAME = 'ingress-nginx-controller';

export const configMap = (ns: string, name: string, data: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });

/** A self-signed certificate for `hosts` (the first is its CN), as framework.CreateIngressTLSSecret makes (an EC key unless `rsa`). */
export async function certificate(hosts: string[], opts: { rsa?: boolean } = {}): Promise<{ cert: string; key: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-conformance-cert-'));
  try {
    const c = await generateCertificate(dir, hosts[0]!, hosts, opts);
    return { cert: readFileSync(c.certPath, 'utf8'), key: readFileSync(c.keyPath, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Issued { cert: string; key: string }
export interface CertificateAuthority extends Issued {
  /** A leaf certificate for `cn` (DNS names `sans`, the CN by default) signed by this CA. */
  issue(cn: string, sans?: string[]): Issued;
}

/**
 * A CA (self-signed, EC) named `name`, as framework.CreateIngressMASecret makes for mutual TLS:
 * its certificate is a Secret's `ca.crt`, the leaves it issues a server's and a client's.
 */
export function certificateAuthority(name: string): CertificateAuthority {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  /** Runs `steps` in a directory of its own holding `files`; answers the pair `base`.crt/.key it made. */
  const inTemp = (files: Record<string, string>, base: string, steps: string[][]): Issued => {
    const dir = mkdtempSync(join(tmpdir(), 'irx-conformance-ca-'));
    try {
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
      for (const args of steps) execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      return { cert: readFileSync(join(dir, `${base}.crt`), 'utf8'), key: readFileSync(join(dir, `${base}.key`), 'utf8') };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const ca = inTemp({}, 'ca', [['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']]);
  return {
    ...ca,
    issue: (cn, sans = [cn]) => inTemp({ 'ca.crt': ca.cert, 'ca.key': ca.key, 'leaf.ext': `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}\n` }, 'leaf', [
      ['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${cn}`],
      ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '2', '-extfile', 'leaf.ext'],
    ]),
  };
}

/** A Secret of `data` (text values, base64-encoded here): a CA bundle's `ca.crt`, a TLS pair. */
export const secret = (ns: string, name: string, data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

/**
 * The syncs the controller logged, each with when it started (its log time less its duration: a
 * sync that started after a write read what the write wrote) and whether it applied.
 */
function syncsLogged(output: string): Array<{ startedMs: number; applied: boolean }> {
  return output.split('\n').filter((l) => /"msg":"sync \d+: /.test(l)).map((l) => {
    const e = JSON.parse(l) as { time: number; durationMs: number; applied: boolean };
    return { startedMs: e.time - e.durationMs, applied: e.applied };
  });
}

/**
 * Waits until a sync that started at or after `sinceMs` (a manifest write's time) is logged as
 * applied, and only one generation of NGINX workers accepts: what the write changes is running.
 */
export async function untilSynced(ctl: LocalController, sinceMs: number): Promise<void> {
  await waitFor(() => syncsLogged(ctl.output()).find((s) => s.startedMs >= sinceMs && s.applied) ?? null, { timeoutMs: 20_000, what: 'the sync of the last write' });
  await waitFor(() => oneGeneration(ctl.workdir), { timeoutMs: 15_000, what: 'the previous NGINX workers to stop accepting' });
}

/** The headers the echo upstream saw, lower-case names. */
export const upstreamHeaders = (r: Reply): Record<string, string> => (r.json?.headers ?? {}) as Record<string, string>;

export async function startFixture(ns: string, opts: {
  args?: string[]; files?: Record<string, object[]>; replicas?: number; firstAddress?: string;
  /** The main ConfigMap's first data (`--configmap <ns>/ingress-nginx-controller`), for `configure`. */
  configmap?: Record<string, string>;
} = {}): Promise<Fixture> {
  const base = opts.firstAddress ?? '127.0.9.';
  const echo = await Promise.all(Array.from({ length: opts.replicas ?? 2 }, (_, i) => startEchoServer({ address: `${base}${10 + i}`, name: `echo-${i}` })));
  const withConfigMap = opts.configmap !== undefined;
  let configured = JSON.stringify(opts.configmap ?? {});
  const ctl = await startLocal({
    args: [...(withConfigMap ? ['--configmap', `${ns}/${CONFIGMAP_NAME}`] : []), ...(opts.args ?? [])],
    files: {
      'echo.json': [service(ns, 'echo'), ...slices(ns, 'echo', echo)],
      ...(withConfigMap ? { 'configmap.json': [configMap(ns, CONFIGMAP_NAME, opts.configmap!)] } : {}),
      ...opts.files,
    },
  });
  const fx: Fixture = {
    ns, ctl, echo,
    accessLog: `${ctl.workdir}/logs/access.log`,
    errorLog: `${ctl.workdir}/logs/error.log`,
    warnings: () => ctl.output().split('\n').filter((l) => l.startsWith('{"level":40')).map((l) => String((JSON.parse(l) as { msg: string }).msg)),
    async warned(check, what) {
      await waitFor(() => fx.warnings().some(check), { timeoutMs: 15_000, what })
        .catch((err: Error) => { throw new Error(`${err.message}; the warnings:\n${fx.warnings().join('\n')}`); });
    },
    single(name, host, a = {}, o = {}) {
      const path: PathSpec = { path: o.path ?? '/', pathType: o.pathType ?? 'Prefix', service: o.svc ?? 'echo', port: o.port };
      return ingress(ns, name, { host, annotations: annotations(a), paths: [path] });
    },
    echoService: (name) => [service(ns, name), ...slices(ns, name, echo)],
    apply: (file, objects) => ctl.write(file, objects),
    async applyAndWait(file, objects, host, path = '/', check = (r: Reply) => r.backend !== undefined) {
      ctl.write(file, objects);
      return ctl.until(host, path, check, { what: `${host}${path} after ${file}` });
    },
    async configure(data) {
      if (!withConfigMap) throw new Error('configure needs startFixture(ns, { configmap: {...} })');
      const next = JSON.stringify(data);
      if (next === configured) return;
      // A sync that started before the write cannot hold it, though it may be logged after (the
      // sync of an Ingress NGINX already serves dynamically): wait for one that started after.
      const writtenMs = Date.now();
      configured = next;
      ctl.write('configmap.json', [configMap(ns, CONFIGMAP_NAME, data)]);
      const sync = await waitFor(() => syncsLogged(ctl.output()).find((s) => s.startedMs >= writtenMs) ?? null, { timeoutMs: 20_000, what: `the sync of ConfigMap ${next.slice(0, 200)}` });
      if (!sync.applied) throw new Error(`the sync of ConfigMap ${next.slice(0, 200)} was not applied:\n${ctl.output().slice(-3000)}`);
      await waitFor(() => oneGeneration(ctl.workdir), { timeoutMs: 15_000, what: 'the previous NGINX workers to stop accepting' });
    },
    async stop() {
      await ctl.stop();
      await closeAll(echo);
    },
  };
  return fx;
}

/** A kubeconfig for the fake API server, in a directory of its own (removed with the cluster). */
function kubeconfigFor(fake: FakeApiServer): { dir: string; kubeconfig: string } {
  const dir = mkdtempSync(join(tmpdir(), 'irx-conformance-cluster-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, fake.kubeConfig().exportConfig());
  return { dir, kubeconfig };
}

/**
 * For Its that need `ingress-rx controller` (a flag local mode lacks, the webhook, the status,
 * the shutdown): the fake API server holding ingress-nginx's IngressClass `nginx` and `objects`,
 * with a kubeconfig for it.
 */
export async function startFakeCluster(objects: object[]): Promise<{ fake: FakeApiServer; kubeconfig: string; close(): Promise<void> }> {
  const { startFakeApiServer } = await import('../../support/fake-apiserver.js');
  const fake = await startFakeApiServer();
  fake.create(ingressClass());
  for (const o of objects) fake.create(o as FakeObject);
  const { dir, kubeconfig } = kubeconfigFor(fake);
  return {
    fake, kubeconfig,
    async close() {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An IngressClass `name` of `controller` (by default the class ingress-nginx's manifests create). */
export const ingressClass = (name = 'nginx', controller = 'k8s.io/ingress-nginx') =>
  ({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller } });

/**
 * The Its about the controller's flags and the cluster (IngressClass objects, namespaces, a
 * flag ingress-rx local does not take): the in-process fake API server with an echo Service per
 * namespace, and `ingress-rx controller`s against it, each with its own flags and, through
 * --watch-namespace, its own namespace, so one file's controllers share one server.
 */
export interface ClusterFixture {
  readonly fake: FakeApiServer;
  readonly echo: readonly EchoServer[];
  /** The echo Service (port 80) and its EndpointSlices in `ns`, created in the fake cluster. */
  echoService(ns: string, name?: string): void;
  /** A controller with `args` after the fixture's (loopback backends allowed, no status updates); stopped with the fixture. */
  controller(args?: string[]): Promise<CliProcess>;
  stop(): Promise<void>;
}

export async function startClusterFixture(opts: {
  replicas?: number; firstAddress?: string;
  /** The fake API server's options: with `tokens` and `rbac`, the controllers use the first token and RBAC applies. */
  api?: FakeApiServerOptions;
  /** The controllers' POD_NAMESPACE (where they hold their election Lease). */
  podNamespace?: string;
} = {}): Promise<ClusterFixture> {
  const base = opts.firstAddress ?? '127.0.9.';
  const echo = await Promise.all(Array.from({ length: opts.replicas ?? 1 }, (_, i) => startEchoServer({ address: `${base}${10 + i}`, name: `echo-${i}` })));
  const { startFakeApiServer } = await import('../../support/fake-apiserver.js');
  const fake = await startFakeApiServer(opts.api);
  const { dir, kubeconfig } = kubeconfigFor(fake);
  const controllers: CliProcess[] = [];
  return {
    fake, echo,
    echoService(ns, name = 'echo') {
      fake.set(service(ns, name));
      for (const s of slices(ns, name, echo)) fake.set(s);
    },
    async controller(args = []) {
      const ctl = await startController({
        kubeconfig,
        args: [
          '--allow-upstream-addresses=loopback', '--update-status=false',
          ...(args.some((a) => a.startsWith('--election-id=')) ? [] : [`--election-id=conformance-${controllers.length}`]), ...args,
        ],
        env: { POD_NAME: `ingress-rx-${controllers.length}`, POD_NAMESPACE: opts.podNamespace ?? 'ingress-rx' },
      });
      controllers.push(ctl);
      return ctl;
    },
    async stop() {
      await Promise.all(controllers.map((c) => c.stop()));
      await fake.close();
      await closeAll(echo);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Serves `host` over HTTPS from the echo Service with a certificate of its own (Secret and
 * Ingress `tls` in the fixture's namespace, manifest `tls.json`); resolves with the certificate,
 * the CA a client trusts, once NGINX answers with it.
 */
export async function serveTlsHost(fx: Fixture, host: string): Promise<string> {
  const { cert, key } = await certificate([host]);
  fx.apply('tls.json', [
    tlsSecret(fx.ns, 'tls', cert, key),
    ingress(fx.ns, 'tls', { host, tls: [{ hosts: [host], secretName: 'tls' }], paths: [{ path: '/', service: 'echo' }] }),
  ]);
  await fx.ctl.until(host, '/', (r) => r.status === 200, { https: true, ca: cert });
  return cert;
}

/** What one TLS handshake gave a client: whether it resumed, the session to resume, the ticket it got. */
export interface TlsSession { reused: boolean; session: Buffer | undefined; ticket: Buffer | undefined; version: string }

/**
 * One TLS 1.2 handshake (a session NGINX may resume by its cache or a ticket) to the HTTPS port,
 * SNI `host`, offering `alpn`; `session` is one to resume.
 */
export function tlsSession(port: number, host: string, opts: { ca?: string; alpn?: string; session?: Buffer } = {}): Promise<TlsSession> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    const s = tlsConnect({
      host: '127.0.0.1', port, servername: host, maxVersion: 'TLSv1.2', ALPNProtocols: [opts.alpn ?? 'http/1.1'],
      ...(opts.ca ? { ca: opts.ca } : { rejectUnauthorized: false }), ...(opts.session ? { session: opts.session } : {}),
    }, () => {
      // A TLS 1.2 session is known once the handshake ends ('session' fires before this callback).
      // The server caches it only after sending its Finished: its first bytes of HTTP (the h2
      // SETTINGS, or the answer to a request) say it has, so the next handshake can resume it.
      if (s.alpnProtocol !== 'h2') s.write(`HEAD / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      s.once('data', () => {
        resolve({ reused: s.isSessionReused(), session: session ?? s.getSession(), ticket: s.getTLSTicket(), version: s.getProtocol() ?? '' });
        s.destroy();
      });
    });
    s.on('session', (b: Buffer) => { session = b; });
    s.on('error', reject);
    s.on('close', () => reject(new Error(`${host}: the connection closed before the server answered`)));
  });
}
