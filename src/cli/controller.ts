// `ingress-rx controller`: the cluster deployment. ingress-nginx's flags; the kube source feeds
// the same pipeline as local mode; the leader writes Ingress status; reloads and invalid
// Ingresses become Kubernetes Events.
import { hostname } from 'node:os';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../log.js';
import { createStore } from '../store/store.js';
import { kubeSource } from '../streams/kube.js';
import { makeKeepAliveApiClient } from '../streams/kube-client.js';
import { createLeaderElector, createStaticLeader, timingsFromElectionTTL } from '../actors/leader-election.js';
import { createStatusWriter, type StatusWriter } from '../actors/status.js';
import { createGatewayStatusWriter, type GatewayStatusWriter } from '../actors/gateway-status.js';
import { createGatewayInfrastructureWriter, serviceDNSName, type GatewayInfrastructureWriter } from '../actors/gateway-infrastructure.js';
import { discoverStatusAddresses, otherReplicasRunning, readControllerPod, type ControllerPod } from '../actors/status-address.js';
import type { SyncResult } from '../actors/sync.js';
import { createEventRecorder, podObject, recordIngressSync, recordInvalidIngress, recordReload } from '../actors/kube-events.js';
import { controllerHelp, parseControllerFlags, toBudgets, toRequestMetricsConfig, toStoreOptions, type ControllerOptions } from './controller-flags.js';
import { observability } from './observability.js';
import { addressPolicyFor, addressPolicyLists, runtimeFor, serve, untilStopped } from './serve.js';
import { ownAddresses } from './own-addresses.js';
import { OPTIONAL_GATEWAY_KINDS, gatewayKindsNotServed, ingressClassesForbidden, reachApiServer } from '../streams/kube-reach.js';
import { parseAllowedClasses, type AddressClass } from '../model/checks/address-policy.js';
import type { NginxRuntime } from '../render/runtime.js';
import { createAdmissionMetrics, type AdmissionMetrics } from '../admission/metrics.js';
import { startWebhookThread, type WebhookThread } from '../admission/webhook-thread.js';
import { isTask } from '../store/events.js';
import type { PipelineHooks } from '../streams/hooks.js';
import type { Ingress } from '../store/kube-types.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';
import { version } from '../version.js';
import { describeForbidden } from '../streams/kube-errors.js';

export function kubeConfigFor(o: Pick<ControllerOptions, 'kubeconfig' | 'apiserverHost' | 'certificateAuthority'>): KubeConfig {
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else if (o.apiserverHost) {
    kc.loadFromClusterAndUser({
      name: 'apiserver', server: o.apiserverHost, skipTLSVerify: false, ...(o.certificateAuthority ? { caFile: o.certificateAuthority } : {}),
    }, { name: 'ingress-rx' });
  } else kc.loadFromCluster();
  if (o.apiserverHost && o.kubeconfig) {
    const cluster = kc.getCurrentCluster();
    if (cluster) kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: o.apiserverHost } : c));
  }
  return kc;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runController(argv: string[]): Promise<number> {
  const parsed = parseControllerFlags(argv);
  if (!parsed.ok) {
    process.stderr.write(`ingress-rx controller: ${parsed.error}\nSee 'ingress-rx controller --help'.\n`);
    return 2;
  }
  const o = parsed.options;
  if (o.help) { process.stdout.write(controllerHelp()); return 0; }
  if (o.version) { process.stdout.write(`ingress-rx ${version()} (a drop-in for ingress-nginx's controller)\n`); return 0; }
  const logger = createLogger({ level: o.logLevel });
  for (const w of parsed.warnings) logger.warn(w);
  const podName = process.env.POD_NAME ?? hostname();
  const podNamespace = process.env.POD_NAMESPACE ?? 'default';

  let kc: KubeConfig;
  try {
    kc = kubeConfigFor(o);
  } catch (err) {
    logger.fatal({ err }, 'no Kubernetes configuration: give --kubeconfig or --apiserver-host, or run in a cluster');
    return 1;
  }
  // As ingress-nginx: nothing starts until the API server answers; if it never does, exit.
  const reach = await reachApiServer(kc, {
    onRetry: (attempt, error, delayMs) => logger.warn({ attempt, err: error, retryInMs: delayMs }, 'the Kubernetes API server does not answer yet'),
  });
  if (!reach.ok) {
    logger.fatal(`cannot reach the Kubernetes API server: ${reach.error}; give --kubeconfig or --apiserver-host, or run in a cluster`);
    return 1;
  }
  logger.info({ version: reach.version }, 'the Kubernetes API server answers');
  // As ingress-nginx: without the right to list IngressClasses, the class annotation (and
  // --watch-ingress-without-class) alone say which Ingresses are served.
  const ingressClassRefusal = await ingressClassesForbidden(kc);
  if (ingressClassRefusal !== undefined) {
    logger.warn({ err: ingressClassRefusal }, 'no permission to list IngressClasses: Ingresses are served by the kubernetes.io/ingress.class annotation only, an ingressClassName is not served');
  }
  // The Gateway API kinds newer than a cluster's CRD bundle may be missing: the rest is served.
  const unservedGatewayKinds = o.enableGatewayApi ? await gatewayKindsNotServed(kc, OPTIONAL_GATEWAY_KINDS) : [];
  if (unservedGatewayKinds.length > 0) {
    logger.warn({ kinds: unservedGatewayKinds }, `the API server does not serve ${unservedGatewayKinds.map((k) => k.replace(/y$/, 'ie') + 's').join(' and ')} (CRD not installed): not watched; Gateways and HTTPRoutes are served without them. Install the CRD and restart the controller to serve it`);
  }
  const core = makeKeepAliveApiClient(kc, CoreV1Api);
  const storeOptions = toStoreOptions(o);
  const store = createStore(storeOptions, ANNOTATION_REFERENCES, logger);
  const pod: ControllerPod = await readControllerPod(core, podName, podNamespace).catch((err: unknown) => {
    logger.warn({ err: describeForbidden(err, `get of pod ${podNamespace}/${podName}`) ?? String(err) }, `cannot read pod ${podNamespace}/${podName}: status addresses from pods are unavailable`);
    return { name: podName, namespace: podNamespace, labels: {} };
  });

  const leader = o.disableLeaderElection
    ? createStaticLeader(true)
    : createLeaderElector({
      coordination: makeKeepAliveApiClient(kc, CoordinationV1Api), namespace: podNamespace, name: o.electionId,
      identity: podName, logger, ...timingsFromElectionTTL(o.electionTTLMs),
    });
  const status: StatusWriter | null = o.updateStatus ? createStatusWriter({
    networking: makeKeepAliveApiClient(kc, NetworkingV1Api),
    addresses: () => discoverStatusAddresses(core, pod, o),
    otherReplicasRunning: () => otherReplicasRunning(core, pod),
    isLeader$: leader.isLeader$,
    intervalMs: o.statusUpdateIntervalMs,
    writesPerSecond: o.statusUpdateRate,
    updateStatusOnShutdown: o.updateStatusOnShutdown,
    logger,
  }) : null;
  const gatewayStatus: GatewayStatusWriter | null = o.updateStatus && o.enableGatewayApi ? createGatewayStatusWriter({
    custom: makeKeepAliveApiClient(kc, CustomObjectsApi), isLeader$: leader.isLeader$, controllerName: o.gatewayControllerName, logger,
    addresses: () => discoverStatusAddresses(core, pod, o),
  }) : null;
  // The Gateways' Services point at the controller's own: only with --publish-service.
  const gatewayInfrastructure: GatewayInfrastructureWriter | null = o.updateStatus && o.enableGatewayApi && o.publishService !== '' ? createGatewayInfrastructureWriter({
    core, isLeader$: leader.isLeader$, logger, target: serviceDNSName(o.publishService),
  }) : null;
  const events = createEventRecorder({ core, logger, host: podName });
  const podRef = podObject({ name: podName, namespace: podNamespace });

  const runtime = runtimeFor(o, {
    prefix: o.workdir, listenAddresses: ['*', '[::]'], geoipDir: o.geoipDir,
    metrics: o.enableMetrics,
  });
  const allowUpstreamAddresses = parseAllowedClasses(o.allowUpstreamAddresses) as Set<AddressClass>;
  const podAddresses = ownAddresses(o.ownAddresses) as Set<string>;
  let obs;
  try {
    obs = await observability({ record: o.record || undefined, recordSecrets: o.recordSecrets, trace: o.trace || undefined }, {
      logger,
      header: {
        storeOptions, syncRateLimit: o.syncRateLimit, annotationsPrefix: o.annotationsPrefix, defaultServerPort: o.defaultServerPort,
        upstreamAddresses: addressPolicyLists(addressPolicyFor(runtime, o.healthzPort, allowUpstreamAddresses, false, storeOptions.gatewayPorts, webhookPorts(o), podAddresses)), hostOwnership: o.hostOwnership, dynamicRoutes: o.dynamicRoutes,
      },
    });
  } catch (err) {
    logger.fatal((err as Error).message);
    return 1;
  }

  // The webhook runs in a thread of its own with its own store, fed the same source events; it
  // reviews once that store holds the informers' initial lists, whether or not NGINX runs a
  // configuration yet: a bad Ingress that keeps NGINX from starting must stay fixable.
  let admissionMetrics: AdmissionMetrics | null = null;
  const webhook: WebhookThread | null = o.validatingWebhook ? startAdmissionWebhook(o, { logger, runtime, storeOptions, metrics: { observe: (...a) => admissionMetrics?.observe(...a) } }) : null;
  const hooks: PipelineHooks[] = webhook ? [...obs.hooks, { received: (it) => { if (!isTask(it.input)) webhook.forward(it.input); } }] : [...obs.hooks];
  // The controller's own status writes come back as events that change the status alone: they
  // take no sync (the store says statusOnly); the status writers compare them with what they want.
  hooks.push({
    statusChanged: ({ input }) => {
      if (isTask(input)) return;
      if (input.kind === 'Ingress') {
        const ing = store.getIngress(input.key);
        if (ing) void status?.statusChanged(ing);
        return;
      }
      // The --publish-service Service: its load balancer's addresses are what both statuses publish.
      if (input.kind === 'Service') void status?.addressesChanged();
      void gatewayStatus?.statusChanged(() => store.gatewayResources?.());
    },
  });
  // As ingress-nginx, unless --disable-sync-events: a Sync Event on each Ingress served, as the
  // store takes it in (added, or changed).
  if (!o.disableSyncEvents) {
    hooks.push({
      queued: ({ input }) => {
        if (isTask(input) || input.kind !== 'Ingress' || input.type === 'delete') return;
        const ing = input.object as Ingress;
        if (store.serves(ing).served) recordIngressSync(events, ing);
      },
    });
  }
  let controller;
  try {
    controller = await serve({
      logger, store, runtime,
      source: (onInitialState) => {
        const watch = {
          kubeConfig: kc, watchNamespaces: storeOptions.watchNamespaces, namespaceSelector: o.watchNamespaceSelector, logger,
          withoutIngressClasses: ingressClassRefusal !== undefined, gatewayKindsNotServed: unservedGatewayKinds,
          onInitialState: () => { webhook?.loaded(); onInitialState(); },
          keep: o.record ? 'all' as const : 'stored' as const,
        };
        return o.enableGatewayApi ? kubeSource({ ...watch, gatewayAPI: true }) : kubeSource(watch);
      },
      healthz: { host: o.healthzHost || '0.0.0.0', port: o.healthzPort },
      otherOwnPorts: webhookPorts(o),
      allowUpstreamAddresses,
      ownAddresses: podAddresses,
      disableServiceExternalName: o.disableSvcExternalName,
      hostOwnership: o.hostOwnership,
      dynamicRoutes: o.dynamicRoutes,
      budgets: toBudgets(o),
      annotationsPrefix: o.annotationsPrefix,
      syncRateLimit: o.syncRateLimit,
      hooks,
      metricsLabels: { controller_namespace: podNamespace, controller_class: o.controllerClass, controller_pod: podName },
      ...(o.enableMetrics ? { requestMetrics: toRequestMetricsConfig(o) } : {}),
      onSync: (r) => {
        obs.onSync?.(r);
        if (r.reload) recordReload(events, podRef, r.reload.ok ? undefined : r.reload.error);
        reportInvalidIngresses(r.warnings, store, events, logger);
        reportQuarantined(r.quarantined, store, events);
        if (r.applied) void status?.sync(store.listIngresses());
        if (r.applied) void gatewayStatus?.sync(r.gatewayStatus, store.gatewayResources?.());
        if (r.applied) void gatewayInfrastructure?.sync(store.gatewayResources?.()?.gateways);
      },
    });
  } catch (err) {
    logger.fatal({ err }, `ingress-rx controller could not start: ${(err as Error).message}`);
    await webhook?.close();
    await obs.close();
    return 1;
  }
  if (webhook) {
    admissionMetrics = createAdmissionMetrics(controller.registry);
    try {
      const port = await webhook.listening;
      logger.info({ address: o.validatingWebhook, port }, 'validating webhook listening (in its own thread)');
    } catch (err) {
      logger.fatal({ err: (err as Error).message }, `the validating webhook could not start: ${(err as Error).message}`);
      await webhook.close();
      await controller.shutdown();
      await obs.close();
      return 1;
    }
  }
  // ingress-nginx reports leader_election_status only when it elects, and exports certificate
  // expiry only while leading.
  const leaderSub = leader.isLeader$.subscribe((v) => controller.metrics.leading(o.disableLeaderElection ? null : o.electionId, v));
  leader.start();
  status?.start();
  logger.info({ pod: `${podNamespace}/${podName}`, class: o.ingressClass, controller: o.controllerClass }, 'ingress-rx controller started');

  const stop = await untilStopped(controller);
  if (stop instanceof Error) {
    // NGINX runs no configuration at all (a port in use, say): exit, so the pod restarts.
    logger.fatal({ err: stop.message }, 'ingress-rx controller cannot serve');
  } else {
    logger.info({ signal: stop, gracePeriodMs: o.shutdownGracePeriodMs }, 'received signal; shutting down');
    // ingress-nginx waits --shutdown-grace-period before stopping, so load balancers notice the
    // failing readiness probe first: /healthz answers 500 meanwhile.
    controller.announceShutdown();
    await sleep(o.shutdownGracePeriodMs);
  }
  await webhook?.close();
  await controller.shutdown(async () => { await status?.shutdown(); });
  leaderSub.unsubscribe();
  gatewayStatus?.stop();
  gatewayInfrastructure?.stop();
  await leader.stop();
  await events.flush();
  await obs.close();
  if (stop instanceof Error) return 1;
  await sleep(o.postShutdownGracePeriodMs);
  return 0;
}

/** A Warning Event (reason Quarantined) on each Ingress NGINX refuses or a budget sets aside, repeated while it stays so (the recorder aggregates). */
function reportQuarantined(entries: SyncResult['quarantined'], store: ReturnType<typeof createStore>, events: ReturnType<typeof createEventRecorder>): void {
  for (const e of entries) {
    const ing = e.kind === 'Ingress' ? store.getIngress(e.key) : undefined;
    const why = e.budget ? e.reason : `NGINX refuses it (${e.reason})`;
    if (ing) recordInvalidIngress(events, ing, `quarantined: ${why}; the other Ingresses are applied without it`, 'Quarantined');
  }
}

/** The validating webhook's port (`<host>:port`), an own port of the controller like its health port. */
function webhookPorts(o: ControllerOptions): number[] {
  const m = /:(\d+)$/.exec(o.validatingWebhook);
  return m ? [Number(m[1])] : [];
}

/** --validating-webhook: a thread reviewing against its own copy of the store, refused until that holds the cluster. */
function startAdmissionWebhook(o: ControllerOptions, ctx: {
  logger: Logger; runtime: NginxRuntime; storeOptions: ReturnType<typeof toStoreOptions>; metrics: AdmissionMetrics;
}): WebhookThread {
  const { runtime } = ctx;
  return startWebhookThread({
    logLevel: o.logLevel,
    storeOptions: ctx.storeOptions,
    server: { address: o.validatingWebhook, certFile: o.validatingWebhookCertificate, keyFile: o.validatingWebhookKey },
    reviewer: {
      annotationsPrefix: o.annotationsPrefix, defaultServerPort: runtime.defaultServerPort,
      reservedPorts: [...addressPolicyFor(runtime, o.healthzPort, undefined, false, ctx.storeOptions.gatewayPorts, webhookPorts(o)).ownPorts],
      addressPolicy: addressPolicyFor(runtime, o.healthzPort, parseAllowedClasses(o.allowUpstreamAddresses) as Set<AddressClass>, o.disableSvcExternalName, ctx.storeOptions.gatewayPorts, webhookPorts(o), ownAddresses(o.ownAddresses) as Set<string>),
      hostOwnership: o.hostOwnership,
      dynamicRoutes: o.dynamicRoutes,
      budgets: toBudgets(o),
    },
  }, { logger: ctx.logger, metrics: ctx.metrics });
}

/** One Warning Event per invalid Ingress named by the model's warnings. */
function reportInvalidIngresses(warnings: ReadonlyArray<{ object: string; field: string; message: string; reason?: string }>, store: ReturnType<typeof createStore>, events: ReturnType<typeof createEventRecorder>, logger: Logger): void {
  for (const w of warnings) {
    const m = /^Ingress (\S+)$/.exec(w.object);
    if (!m) continue;
    const ing = store.getIngress(m[1]);
    if (!ing) continue;
    try {
      recordInvalidIngress(events, ing, `${w.field}: ${w.message}`, w.reason);
    } catch (err) {
      logger.debug({ err: String(err) }, 'event recording failed');
    }
  }
}
