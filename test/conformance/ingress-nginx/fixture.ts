// What most ported Its need, as ingress-nginx's e2e framework gives it: one `ingress-rx local`
// per test file with its own namespace, an echo Service (`echo`, port 80, two endpoints, like
// `NewEchoDeployment` with two replicas), and Ingresses written as manifests and awaited until
// NGINX serves them. Each It uses hosts of its own, so the Its of a file share one controller.
import { startEchoServer, closeAll, type EchoServer } from '../../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController, type PathSpec, type Reply } from '../../support/local-harness.js';

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
  stop(): Promise<void>;
}

/** The headers the echo upstream saw, lower-case names. */
export const upstreamHeaders = (r: Reply): Record<string, string> => (r.json?.headers ?? {}) as Record<string, string>;

export async function startFixture(ns: string, opts: { args?: string[]; files?: Record<string, object[]>; replicas?: number; firstAddress?: string } = {}): Promise<Fixture> {
  const base = opts.firstAddress ?? '127.0.9.';
  const echo = await Promise.all(Array.from({ length: opts.replicas ?? 2 }, (_, i) => startEchoServer({ address: `${base}${10 + i}`, name: `echo-${i}` })));
  const ctl = await startLocal({
    args: opts.args,
    files: { 'echo.json': [service(ns, 'echo'), ...slices(ns, 'echo', echo)], ...opts.files },
  });
  const fx: Fixture = {
    ns, ctl, echo,
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
    async stop() {
      await ctl.stop();
      await closeAll(echo);
    },
  };
  return fx;
}
