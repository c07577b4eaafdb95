// `ingress-rx local`: a directory of manifests is the cluster, and real NGINX serves it on
// loopback. Ingresses without a class are served, as a developer trying them expects.
import { gatewayPortOptions } from './gateway-ports.js';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLogger } from '../log.js';
import { createStore, defaultStoreOptions, DEFAULT_ANNOTATIONS_PREFIX } from '../store/store.js';
import { manifestsSource } from '../streams/manifests.js';
import { addressPolicyFor, addressPolicyLists, runtimeFor, serve, untilStopped, type ServePorts } from './serve.js';
import type { AddressClass } from '../model/checks/address-policy.js';
import { observability, type ObservabilityOptions } from './observability.js';
import { defaultRequestMetricsConfig } from '../observability/request-metrics.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';
import { DEFAULT_BUDGETS } from '../model/core/budgets.js';

export interface LocalOptions extends ObservabilityOptions, ServePorts {
  manifests: string;
  workdir?: string;
  configmap: string;
  /** --default-backend-service: `namespace/name` of the Service of the default server ('' : the built-in 404). */
  defaultBackendService?: string;
  /** --tcp-services-configmap: `namespace/name` of the TCP services ConfigMap ('' : none). */
  tcpServicesConfigmap?: string;
  syncRateLimit: number;
  geoipDir?: string;
  /** --resolv-conf: the nameservers (IP[:PORT]), search domains and ndots NGINX and Lua use. */
  resolvConf?: string;
  logLevel: string;
  /** --allow-upstream-addresses, already parsed (local mode allows loopback by default). */
  allowUpstreamAddresses: Set<AddressClass>;
  hostOwnership: boolean;
  /** --gateway-listener-ports, e.g. `8080=18080,8090=18090` ('' or absent: none). */
  gatewayListenerPorts?: string;
  /** --enable-dynamic-routes (on unless false) */
  enableDynamicRoutes?: boolean;
  /** --max-paths-per-ingress and the other budgets (src/model/core/budgets.ts); the defaults when absent. */
  maxPathsPerIngress?: number;
  maxPathsPerNamespace?: number;
  maxBytesPerIngress?: number;
  maxBytesPerNamespace?: number;
}

export async function runLocal(opts: LocalOptions): Promise<number> {
  // `--trace` without a file traces to the log, which says nothing below trace level.
  const logger = createLogger({ level: opts.trace === true ? 'trace' : opts.logLevel });
  // A directory that is not there is a typo: serving an empty cluster would hide it.
  const manifests = resolve(opts.manifests);
  if (!statSync(manifests, { throwIfNoEntry: false })?.isDirectory()) {
    logger.fatal(`--manifests ${opts.manifests}: no such directory`);
    return 1;
  }
  if (opts.resolvConf !== undefined && !statSync(opts.resolvConf, { throwIfNoEntry: false })?.isFile()) {
    logger.fatal(`--resolv-conf ${opts.resolvConf}: no such file`);
    return 1;
  }
  const ownWorkdir = opts.workdir === undefined;
  const prefix = resolve(opts.workdir ?? mkdtempSync(join(tmpdir(), 'ingress-rx-')));
  // Ingresses without a class, and with ingressClassName nginx but no IngressClass manifest, are
  // what a developer trying their Ingresses expects to see served.
  const gatewayPorts = gatewayPortOptions((opts.gatewayListenerPorts ?? '').split(','), [
    ['http-port', opts.httpPort], ['https-port', opts.httpsPort], ['status-port', opts.statusPort], ['stream-port', opts.streamPort],
    ['healthz-port', opts.healthzPort], ['default-server-port', opts.defaultServerPort],
    ...(opts.enableSslPassthrough ? [['ssl-passthrough-proxy-port', opts.sslPassthroughProxyPort] as const] : []),
  ], true);
  if ('error' in gatewayPorts) {
    logger.fatal(gatewayPorts.error);
    return 1;
  }
  const storeOptions = {
    ...defaultStoreOptions(), watchIngressWithoutClass: true, ingressClassByName: true, configmap: opts.configmap,
    defaultBackendService: opts.defaultBackendService ?? '', tcpServicesConfigmap: opts.tcpServicesConfigmap ?? '', gatewayPorts,
  };
  const store = createStore(storeOptions, ANNOTATION_REFERENCES, logger);
  const runtime = runtimeFor(opts, {
    prefix, listenAddresses: ['127.0.0.1'], ...(opts.geoipDir ? { geoipDir: resolve(opts.geoipDir) } : {}),
    ...(opts.resolvConf ? { resolvConf: resolve(opts.resolvConf) } : {}),
    metrics: true,
  });
  let obs;
  try {
    obs = await observability(opts, {
      logger,
      header: {
        storeOptions, syncRateLimit: opts.syncRateLimit, annotationsPrefix: DEFAULT_ANNOTATIONS_PREFIX, defaultServerPort: opts.defaultServerPort,
        upstreamAddresses: addressPolicyLists(addressPolicyFor(runtime, opts.healthzPort, opts.allowUpstreamAddresses, false, gatewayPorts)), hostOwnership: opts.hostOwnership,
        dynamicRoutes: opts.enableDynamicRoutes !== false,
      },
    });
  } catch (err) {
    logger.fatal((err as Error).message);
    if (ownWorkdir) rmSync(prefix, { recursive: true, force: true });
    return 1;
  }

  let controller;
  try {
    controller = await serve({
      logger,
      store,
      source: (onInitialState) => manifestsSource({ dir: manifests, logger, onInitialState }),
      runtime,
      healthz: { host: '127.0.0.1', port: opts.healthzPort },
      allowUpstreamAddresses: opts.allowUpstreamAddresses,
      hostOwnership: opts.hostOwnership,
      dynamicRoutes: opts.enableDynamicRoutes !== false,
      budgets: {
        maxPathsPerIngress: opts.maxPathsPerIngress ?? DEFAULT_BUDGETS.maxPathsPerIngress,
        maxPathsPerNamespace: opts.maxPathsPerNamespace ?? DEFAULT_BUDGETS.maxPathsPerNamespace,
        maxBytesPerIngress: opts.maxBytesPerIngress ?? DEFAULT_BUDGETS.maxBytesPerIngress,
        maxBytesPerNamespace: opts.maxBytesPerNamespace ?? DEFAULT_BUDGETS.maxBytesPerNamespace,
      },
      annotationsPrefix: DEFAULT_ANNOTATIONS_PREFIX,
      syncRateLimit: opts.syncRateLimit,
      hooks: obs.hooks,
      onSync: obs.onSync,
      // Every manifest of the directory is meant for this controller.
      leftOutLogLevel: 'warn',
      metricsLabels: { controller_namespace: 'local', controller_class: 'k8s.io/ingress-nginx', controller_pod: 'local' },
      metricsLeader: true,
      requestMetrics: defaultRequestMetricsConfig(),
    });
  } catch (err) {
    logger.fatal({ err }, `ingress-rx local could not start: ${(err as Error).message}`);
    await obs.close();
    return 1;
  }
  logger.info({ http: opts.httpPort, https: opts.httpsPort, healthz: opts.healthzPort, workdir: prefix }, `serving ${opts.manifests} on 127.0.0.1`);

  const stop = await untilStopped(controller);
  if (stop instanceof Error) logger.fatal({ err: stop.message }, 'ingress-rx local cannot serve');
  else logger.info({ signal: stop }, 'received signal');
  await controller.shutdown();
  await obs.close();
  if (ownWorkdir) rmSync(prefix, { recursive: true, force: true });
  return stop instanceof Error ? 1 : 0;
}
