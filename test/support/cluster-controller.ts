// `ingress-rx controller` against the in-process fake API server, as the controller-mode files run
// it: echo backends, the cluster's objects, a kubeconfig, optionally the validating webhook on a
// loopback port, and one teardown for all of it (also when the start fails half-way).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAll, startEchoServer, type EchoOptions, type EchoServer } from './echo-server.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions, type FakeObject } from './fake-apiserver.js';
import { ingress, service, slices, startController, type CliProcess } from './local-harness.js';
import { freePort } from './ports.js';

const CERTS = new URL('../fixtures/model/_certs/', import.meta.url).pathname;

/** The webhook's default certificate and key (test/fixtures/model/_certs; its name is `WEBHOOK_SERVERNAME`). */
export const WEBHOOK_CERT = { cert: join(CERTS, 'default.crt'), key: join(CERTS, 'default.key') };
/** What a client of the webhook trusts: the default certificate is self-signed. */
export const WEBHOOK_CA = readFileSync(WEBHOOK_CERT.cert);
export const WEBHOOK_SERVERNAME = 'ingress.local';

/** ingress-nginx's IngressClass `nginx`. */
export const NGINX_CLASS: FakeObject = { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } };

/** The Service `ns/name` (port 80) over `echo`, one EndpointSlice per server. */
export const echoService = (ns: string, name: string, echo: ReadonlyArray<Pick<EchoServer, 'address' | 'port'>>): FakeObject[] =>
  [service(ns, name), ...slices(ns, name, [...echo])];

/** The shop cluster: the class `nginx`, the Service shop/web over `echo`, and the Ingress shop/web serving shop.test through it. */
export const shopCluster = (echo: ReadonlyArray<Pick<EchoServer, 'address' | 'port'>>): FakeObject[] => [
  NGINX_CLASS, ...echoService('shop', 'web', echo),
  ingress('shop', 'web', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }),
];

/** What the cluster's objects may be built from. */
export interface ClusterSetup {
  fake: FakeApiServer;
  echo: EchoServer[];
  /** The webhook's port (0 without `webhook`). */
  webhookPort: number;
}

export interface ClusterControllerOptions {
  /** Echo backends started before anything else, in this order. */
  echo?: EchoOptions[];
  /** The fake API server's options; with `tokens`, the kubeconfig carries the first. */
  api?: FakeApiServerOptions;
  /**
   * What the cluster holds before the controller starts, created in order. A function gets the
   * server itself too, for what is more than a create (an update, a `set`).
   */
  objects?: FakeObject[] | ((setup: ClusterSetup) => FakeObject[]);
  /** The validating webhook on a free loopback port, with the default certificate or this one (files). */
  webhook?: boolean | { cert: string; key: string };
  /** The controller's flags (ingress-nginx syntax), after local-harness's and before the webhook's. */
  flags?: string[];
  /** Added to POD_NAME=ingress-rx-0, POD_NAMESPACE=ingress. */
  env?: Record<string, string>;
  /** Resolve once /healthz answers 200 (the default), or as soon as the process runs. */
  untilHealthy?: boolean;
  /** Resolve only once NGINX answers 200 for `host` `/`. */
  serving?: string;
}

export interface ClusterController extends ClusterSetup {
  ctl: CliProcess;
  kubeconfig: string;
  /** Stops the controller, the API server and the echo backends; removes the kubeconfig. */
  stop(): Promise<void>;
}

export async function startClusterController(opts: ClusterControllerOptions = {}): Promise<ClusterController> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-cluster-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const echo: EchoServer[] = [];
  let fake: FakeApiServer | undefined;
  let ctl: CliProcess | undefined;
  const stop = async () => {
    await ctl?.stop();
    await fake?.close();
    await closeAll(echo);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const o of opts.echo ?? []) echo.push(await startEchoServer(o));
    fake = await startFakeApiServer(opts.api);
    const webhookPort = opts.webhook ? await freePort() : 0;
    const setup = { fake, echo, webhookPort };
    const objects = typeof opts.objects === 'function' ? opts.objects(setup) : opts.objects ?? [];
    for (const o of objects) fake.create(o);
    writeFileSync(kubeconfig, fake.kubeConfig().exportConfig());
    const certificate = opts.webhook === true ? WEBHOOK_CERT : opts.webhook || undefined;
    ctl = await startController({
      kubeconfig,
      untilHealthy: opts.untilHealthy,
      args: [
        ...(opts.flags ?? []),
        ...(certificate ? [`--validating-webhook=127.0.0.1:${webhookPort}`, `--validating-webhook-certificate=${certificate.cert}`, `--validating-webhook-key=${certificate.key}`] : []),
      ],
      env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress', ...opts.env },
    });
    if (opts.serving) await ctl.until(opts.serving, '/', (r) => r.status === 200, { what: 'the controller serving' });
    // The webhook starts in a thread of its own, which may listen after the first sync.
    if (certificate) await ctl.logged(/validating webhook listening/, 'the webhook');
    return { ...setup, ctl, kubeconfig, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
