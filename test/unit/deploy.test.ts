// The deployment artefacts: the YAML in deploy/ parses and hangs together, its RBAC is exactly
// what src/streams/kube-api-usage.ts declares, every request the code makes (run against the fake API
// server) is allowed by that RBAC and every permission is used, and the Dockerfile builds the
// image the Deployment expects (checked by reading it: there is no container engine here); the
// admission webhook's Service, configuration and both certificate variants fit the Deployment.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CoordinationV1Api, CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import { BehaviorSubject } from 'rxjs';
import { startFakeApiServer, type RecordedRequest } from '../support/fake-apiserver.js';
import { waitFor } from '../support/wait.js';
import { silentLogger } from '../../src/log.js';
import { parseControllerFlags, toStoreOptions, type ControllerOptions } from '../../src/cli/controller-flags.js';
import { gatewayApiUsage, kubeApiUsage, rbacRules, type PolicyRule } from '../../src/streams/kube-api-usage.js';
import { createGatewayStatusWriter } from '../../src/actors/gateway-status.js';
import { createGatewayInfrastructureWriter } from '../../src/actors/gateway-infrastructure.js';
import type { GatewayAPIStatus } from '../../src/model/gateway/index.js';
import type { GatewayResources } from '../../src/store/types.js';
import { createLeaderElector } from '../../src/actors/leader-election.js';
import { createStatusWriter } from '../../src/actors/status.js';
import { discoverStatusAddresses, otherReplicasRunning, readControllerPod } from '../../src/actors/status-address.js';
import { createEventRecorder, podObject, recordInvalidIngress, recordReload } from '../../src/actors/kube-events.js';
import { kubeSource } from '../../src/streams/kube.js';
import { createStore } from '../../src/store/store.js';
import { createReviewer } from '../../src/admission/review.js';
import { parseListenAddress, startWebhookServer } from '../../src/admission/server.js';
import type { Gateway, Ingress } from '../../src/store/kube-types.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';

const root = new URL('../../', import.meta.url).pathname;

interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [k: string]: any }

function loadManifests(dir = 'deploy'): Manifest[] {
  const out: Manifest[] = [];
  for (const file of readdirSync(join(root, dir)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(root, dir, file), 'utf8'))) {
      assert.equal(doc.errors.map(String), [], `${file} parses`);
      const m = doc.toJS() as Manifest | null;
      if (m) out.push(m);
    }
  }
  return out;
}

const manifests = loadManifests();
function one(kind: string, name?: string, from = manifests): Manifest {
  const found = from.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  assert.is(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ''}`);
  return found[0]!;
}
const CONTROLLER_SERVICE = 'ingress-rx-controller';
const ADMISSION_SERVICE = 'ingress-rx-controller-admission';

const deployment = one('Deployment');
const container = deployment.spec.template.spec.containers[0];
const podNamespace = deployment.metadata.namespace!;
const options: ControllerOptions = (() => {
  const args = (container.args as string[]).map((a) => a.replace(/\$\(POD_NAMESPACE\)/g, podNamespace));
  const r = parseControllerFlags(args);
  if (!r.ok) throw new Error(`the Deployment's args do not parse: ${r.error}`);
  return r.options;
})();

test('every manifest has apiVersion, kind and name; namespaced ones live in the controller namespace', () => {
  const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'IngressClass']);
  const kinds = manifests.map((m) => m.kind).sort();
  assert.equal(kinds, ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'Deployment', 'IngressClass', 'Namespace', 'Role', 'RoleBinding', 'Service', 'Service', 'ServiceAccount']);
  for (const m of manifests) {
    assert.ok(m.apiVersion && m.kind && m.metadata?.name, `${m.kind} ${m.metadata?.name}`);
    if (clusterScoped.has(m.kind)) assert.is(m.metadata.namespace, undefined, `${m.kind} is cluster-scoped`);
    else assert.is(m.metadata.namespace, one('Namespace').metadata.name, `${m.kind} ${m.metadata.name}`);
  }
});

test('the Deployment: service account, env from the downward API, probes, resources, non-root with NET_BIND_SERVICE', () => {
  const spec = deployment.spec.template.spec;
  assert.is(spec.serviceAccountName, one('ServiceAccount').metadata.name);
  assert.equal(deployment.spec.selector.matchLabels, pick(deployment.spec.template.metadata.labels, Object.keys(deployment.spec.selector.matchLabels)));
  const env = Object.fromEntries((container.env as Array<{ name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>).map((e) => [e.name, e.valueFrom?.fieldRef?.fieldPath]));
  assert.is(env.POD_NAME, 'metadata.name');
  assert.is(env.POD_NAMESPACE, 'metadata.namespace');
  for (const probe of [container.livenessProbe, container.readinessProbe]) {
    assert.is(probe.httpGet.path, '/healthz');
    assert.is(probe.httpGet.port, options.healthzPort);
  }
  const ports = (container.ports as Array<{ name: string; containerPort: number }>);
  const webhookPort = parseListenAddress(options.validatingWebhook).port;
  assert.equal(ports.map((p) => p.containerPort).sort((a, b) => a - b), [options.httpPort, options.httpsPort, options.healthzPort, webhookPort].sort((a, b) => a - b));
  assert.ok(container.resources.requests.cpu && container.resources.requests.memory, 'resource requests');
  assert.ok(container.resources.limits.memory, 'memory limit');
  const sc = container.securityContext;
  assert.is(sc.runAsNonRoot, true);
  assert.is(sc.runAsUser, dockerfileUser().uid);
  assert.is(sc.allowPrivilegeEscalation, false, 'no_new_privs, as ingress-nginx\'s manifests');
  assert.equal(sc.capabilities.drop, ['ALL']);
  assert.equal(sc.capabilities.add, ['NET_BIND_SERVICE']);
  assert.is(spec.securityContext.runAsNonRoot, true);
});

test('the args refer to the objects deployed next to them', () => {
  const service = one('Service', CONTROLLER_SERVICE);
  const ingressClass = one('IngressClass');
  assert.is(options.publishService, `${service.metadata.namespace}/${service.metadata.name}`);
  assert.is(options.configmap, `${one('ConfigMap').metadata.namespace}/${one('ConfigMap').metadata.name}`);
  assert.is(ingressClass.metadata.name, 'nginx');
  assert.is(ingressClass.spec.controller, 'k8s.io/ingress-nginx');
  assert.is(options.controllerClass, ingressClass.spec.controller);
  assert.is(options.ingressClass, ingressClass.metadata.name);
  assert.is(service.spec.type, 'LoadBalancer');
  assert.equal(service.spec.selector, pick(deployment.spec.template.metadata.labels, Object.keys(service.spec.selector)));
  const ports = Object.fromEntries((service.spec.ports as Array<{ port: number; targetPort: string }>).map((p) => [p.port, p.targetPort]));
  assert.equal(ports, { 80: 'http', 443: 'https' });
  const named = Object.fromEntries((container.ports as Array<{ name: string; containerPort: number }>).map((p) => [p.name, p.containerPort]));
  assert.is(named.http, options.httpPort);
  assert.is(named.https, options.httpsPort);
});

test('RBAC is exactly the declared API usage (ClusterRole for the cluster, Role for the pod namespace)', () => {
  const want = rbacRules(kubeApiUsage({ electionId: options.electionId }));
  assert.equal(normalise(one('ClusterRole').rules), normalise(want.clusterRole));
  assert.equal(normalise(one('Role').rules), normalise(want.role));
  const sa = one('ServiceAccount');
  for (const [binding, role] of [['ClusterRoleBinding', 'ClusterRole'], ['RoleBinding', 'Role']] as const) {
    const b = one(binding);
    assert.equal(b.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: role, name: one(role).metadata.name });
    assert.equal(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  }
});

test('every request the code makes is allowed by the deployed RBAC, and every permission is used', async () => {
  const fake = await startFakeApiServer();
  const kc = fake.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const ns = podNamespace;
  const labels = deployment.spec.template.metadata.labels as Record<string, string>;
  const readyPod = (name: string) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { ...labels, 'pod-template-hash': 'x' } },
    spec: { nodeName: 'node-1', containers: [] }, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
  fake.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { team: 'edge' } } });
  fake.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: [{ type: 'ExternalIP', address: '203.0.113.1' }] } });
  fake.create(readyPod('ctrl-a'));
  fake.create({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ingress-rx-controller', namespace: ns }, spec: { type: 'NodePort', clusterIP: '10.96.0.1' } });
  fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'shop', namespace: 'apps' }, spec: { ingressClassName: 'nginx' } });

  const stop: Array<() => unknown> = [];
  try {
    // The kube source, with a namespace selector so that it watches Namespaces too.
    const sub = kubeSource({ kubeConfig: kc, watchNamespaces: [], namespaceSelector: 'team=edge', logger: silentLogger(), minWatchGapMs: 10 }).subscribe();
    stop.push(() => sub.unsubscribe());
    await waitFor(() => fake.openWatches >= 7, { timeoutMs: 10_000, what: 'a watch per kind' });

    // Leader election: create, renew, release.
    const elector = createLeaderElector({
      coordination: kc.makeApiClient(CoordinationV1Api), namespace: ns, name: options.electionId, identity: 'ctrl-a',
      logger: silentLogger(), leaseDurationMs: 1000, renewDeadlineMs: 500, retryPeriodMs: 100,
    });
    let leading = false;
    elector.isLeader$.subscribe((l) => { leading = l; });
    elector.start();
    stop.push(() => elector.stop());
    await waitFor(() => leading, { timeoutMs: 5000, what: 'leading' });
    await waitFor(() => fake.count({ verb: 'update', path: '/leases/' }) >= 2, { timeoutMs: 5000, what: 'a renewal' });

    // Status: discovery in every mode, the writer, and the shutdown clear of the last replica.
    const self = await readControllerPod(core, 'ctrl-a', ns);
    const addressOptions = { publishStatusAddress: '', publishService: options.publishService, reportNodeInternalIpAddress: false };
    assert.equal(await discoverStatusAddresses(core, self, addressOptions), [{ ip: '203.0.113.1' }]);
    assert.equal(await discoverStatusAddresses(core, self, { ...addressOptions, publishService: '' }), [{ ip: '203.0.113.1' }]);
    const writer = createStatusWriter({
      networking: kc.makeApiClient(NetworkingV1Api), addresses: () => discoverStatusAddresses(core, self, addressOptions),
      otherReplicasRunning: () => otherReplicasRunning(core, self), isLeader$: elector.isLeader$,
      intervalMs: 60_000, updateStatusOnShutdown: true, logger: silentLogger(),
    });
    writer.start();
    const ingresses = () => fake.list('networking.k8s.io/v1', 'Ingress') as unknown as Ingress[];
    assert.equal((await writer.sync(ingresses())).written, ['apps/shop']);
    await writer.sync(ingresses());
    await writer.shutdown();
    assert.is(fake.count({ verb: 'update', path: '/ingresses/shop/status' }), 2, 'written, then cleared on shutdown');

    // Events: created, then aggregated with a patch.
    const events = createEventRecorder({ core, logger: silentLogger(), host: 'ctrl-a' });
    recordReload(events, podObject(self));
    recordReload(events, podObject(self));
    recordInvalidIngress(events, ingresses()[0]!, 'a problem');
    await events.flush();

    await elector.stop();
    sub.unsubscribe();

    const rules = { cluster: one('ClusterRole').rules as PolicyRule[], role: one('Role').rules as PolicyRule[] };
    const denied = fake.requests.filter((r) => r.verb !== 'other' && !allowed(r, rules, ns)).map((r) => `${r.verb} ${r.path}`);
    assert.equal(denied, [], 'requests the RBAC would refuse');
    assert.equal(fake.requests.filter((r) => r.verb === 'other').map((r) => r.path), []);

    // Least privilege: each (rule, verb) of the RBAC was needed by some request.
    const unused: string[] = [];
    for (const [scope, list] of [['cluster', rules.cluster], ['role', rules.role]] as const) {
      for (const rule of list) {
        for (const verb of rule.verbs) {
          const single = { cluster: scope === 'cluster' ? [{ ...rule, verbs: [verb] }] : [], role: scope === 'role' ? [{ ...rule, verbs: [verb] }] : [] };
          if (!fake.requests.some((r) => r.verb === verb && allowed(r, single, ns))) unused.push(`${scope}: ${verb} ${rule.apiGroups[0] || 'core'}/${rule.resources[0]}`);
        }
      }
    }
    assert.equal(unused, [], 'permissions no request used');
  } finally {
    for (const f of stop.reverse()) await f();
    await fake.close();
  }
});

// ---- the Gateway API's opt-in RBAC (deploy/gateway-api/) ----

const gatewayRBAC = loadManifests('deploy/gateway-api');

test('the Gateway API RBAC is exactly gatewayApiUsage(), bound to the controller\'s service account', () => {
  assert.equal(gatewayRBAC.map((m) => m.kind).sort(), ['ClusterRole', 'ClusterRoleBinding']);
  assert.equal(normalise(one('ClusterRole', undefined, gatewayRBAC).rules), normalise(rbacRules(gatewayApiUsage()).clusterRole));
  assert.equal(rbacRules(gatewayApiUsage()).role, [], 'nothing namespaced');
  const b = one('ClusterRoleBinding', undefined, gatewayRBAC);
  const sa = one('ServiceAccount');
  assert.equal(b.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: one('ClusterRole', undefined, gatewayRBAC).metadata.name });
  assert.equal(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
});

test('with --enable-gateway-api, every request of the kube source and the Gateway status writer is allowed by deploy/ plus deploy/gateway-api/, and every added permission is used', async () => {
  const fake = await startFakeApiServer();
  const kc = fake.kubeConfig();
  const G = 'gateway.networking.k8s.io/v1';
  fake.create({ apiVersion: G, kind: 'GatewayClass', metadata: { name: 'rx', generation: 1 }, spec: { controllerName: 'ingress-rx.io/gateway' } });
  fake.create({ apiVersion: G, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra', generation: 1 }, spec: { gatewayClassName: 'rx', listeners: [] } });
  fake.create({ apiVersion: G, kind: 'HTTPRoute', metadata: { name: 'web', namespace: 'team-a', generation: 1 }, spec: { parentRefs: [{ name: 'gw', namespace: 'infra' }] } });
  fake.create({ apiVersion: G, kind: 'BackendTLSPolicy', metadata: { name: 'tls', namespace: 'team-a', generation: 1 }, spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], validation: { hostname: 'web.test', caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] } } });
  fake.create({ apiVersion: G, kind: 'ListenerSet', metadata: { name: 'extra', namespace: 'infra', generation: 1 }, spec: { parentRef: { name: 'gw' }, listeners: [] } });
  const stop: Array<() => unknown> = [];
  try {
    const sub = kubeSource({ kubeConfig: kc, watchNamespaces: [], namespaceSelector: '', logger: silentLogger(), minWatchGapMs: 10, gatewayAPI: true }).subscribe();
    stop.push(() => sub.unsubscribe());
    await waitFor(() => ['gatewayclasses', 'gateways', 'httproutes', 'referencegrants', 'backendtlspolicies', 'listenersets'].every((p) => fake.requests.some((r) => r.verb === 'watch' && r.path.endsWith(`/${p}`))), { timeoutMs: 10_000, what: 'a watch per Gateway API kind' });
    const writer = createGatewayStatusWriter({ custom: kc.makeApiClient(CustomObjectsApi), isLeader$: new BehaviorSubject(true), controllerName: 'ingress-rx.io/gateway', logger: silentLogger() });
    stop.push(() => writer.stop());
    const cond = [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted', message: 'ok', observedGeneration: 1 }];
    const status: GatewayAPIStatus = {
      classes: new Map([['rx', cond]]),
      gateways: new Map([['infra/gw', { conditions: cond, listeners: [], attachedListenerSets: 1 }]]),
      listenerSets: new Map([['infra/extra', { conditions: cond, listeners: [] }]]),
      routes: new Map([['team-a/web', [{ parentRef: { name: 'gw', namespace: 'infra' }, controllerName: 'ingress-rx.io/gateway', conditions: cond }]]]),
      backendTLSPolicies: new Map([['team-a/tls', [{ ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', namespace: 'infra' }, controllerName: 'ingress-rx.io/gateway', conditions: cond }]]]),
    };
    const resources = {
      classes: fake.list(G, 'GatewayClass'), gateways: fake.list(G, 'Gateway'), httpRoutes: fake.list(G, 'HTTPRoute'), referenceGrants: [], backendTLSPolicies: fake.list(G, 'BackendTLSPolicy'), listenerSets: fake.list(G, 'ListenerSet'),
    } as unknown as GatewayResources;
    const out = await writer.sync(status, resources);
    assert.equal(out.failed, []);
    assert.equal(out.written.length, 5, JSON.stringify(out));
    // The Gateway's Service: created, updated for a new label, deleted with the Gateway.
    const infra = createGatewayInfrastructureWriter({ core: kc.makeApiClient(CoreV1Api), isLeader$: new BehaviorSubject(true), target: 'rx.ingress.svc.cluster.local', logger: silentLogger() });
    stop.push(() => infra.stop());
    const gws = fake.list(G, 'Gateway') as unknown as Gateway[];
    assert.equal((await infra.sync(gws)).created, ['infra/gw-ingress-rx']);
    assert.equal((await infra.sync(gws.map((g) => ({ ...g, spec: { ...g.spec, infrastructure: { labels: { team: 'a' } } } })))).updated, ['infra/gw-ingress-rx']);
    assert.equal((await infra.sync([])).deleted, ['infra/gw-ingress-rx']);
    sub.unsubscribe();

    const added = one('ClusterRole', undefined, gatewayRBAC).rules as PolicyRule[];
    const rules = { cluster: [...(one('ClusterRole').rules as PolicyRule[]), ...added], role: one('Role').rules as PolicyRule[] };
    const denied = fake.requests.filter((r) => r.verb !== 'other' && !allowed(r, rules, podNamespace)).map((r) => `${r.verb} ${r.path}`);
    assert.equal(denied, [], 'requests the RBAC would refuse');
    const unused: string[] = [];
    for (const rule of added) {
      for (const verb of rule.verbs) {
        if (!fake.requests.some((r) => r.verb === verb && allowed(r, { cluster: [{ ...rule, verbs: [verb] }], role: [] }, podNamespace))) unused.push(`${verb} ${rule.resources[0]}`);
      }
    }
    assert.equal(unused, [], 'permissions no request used');
    // Without deploy/gateway-api/, the default RBAC refuses them.
    const base = { cluster: one('ClusterRole').rules as PolicyRule[], role: one('Role').rules as PolicyRule[] };
    assert.ok(fake.requests.some((r) => r.path.includes('/status') && r.path.includes('gateway.networking.k8s.io') && !allowed(r, base, podNamespace)));
  } finally {
    for (const f of stop.reverse()) await f();
    await fake.close();
  }
});

// ---- the admission webhook ----

const webhookMount = () => {
  const mount = (container.volumeMounts as Array<{ name: string; mountPath: string; readOnly?: boolean }>).find((m) => m.name === 'webhook-cert')!;
  const volume = (deployment.spec.template.spec.volumes as Array<{ name: string; secret?: { secretName: string } }>).find((v) => v.name === 'webhook-cert')!;
  return { dir: mount.mountPath.replace(/\/$/, ''), readOnly: mount.readOnly, secretName: volume.secret!.secretName };
};

test('the webhook: served on the container port named webhook, its certificate files in the mounted Secret, the admission Service in front', () => {
  const port = parseListenAddress(options.validatingWebhook).port;
  const named = Object.fromEntries((container.ports as Array<{ name: string; containerPort: number }>).map((p) => [p.name, p.containerPort]));
  assert.is(named.webhook, port);
  const { dir, readOnly, secretName } = webhookMount();
  assert.is(readOnly, true);
  assert.is(secretName, 'ingress-rx-admission');
  assert.is(dirname(options.validatingWebhookCertificate), dir);
  assert.is(dirname(options.validatingWebhookKey), dir);
  const svc = one('Service', ADMISSION_SERVICE);
  assert.is(svc.spec.type, 'ClusterIP');
  assert.equal(svc.spec.selector, pick(deployment.spec.template.metadata.labels, Object.keys(svc.spec.selector)));
  assert.equal(svc.spec.ports.map((p: { port: number; targetPort: string }) => [p.port, p.targetPort]), [[443, 'webhook']]);
});

const variants = { job: loadManifests('deploy/admission/self-signed-job'), certManager: loadManifests('deploy/admission/cert-manager') };

test('both certificate variants register the same webhook: Ingress CREATE/UPDATE to the admission Service, v1 reviews, failing closed', () => {
  const job = one('ValidatingWebhookConfiguration', undefined, variants.job);
  const cm = one('ValidatingWebhookConfiguration', undefined, variants.certManager);
  const { annotations, ...cmMeta } = cm.metadata as Manifest['metadata'] & { annotations: Record<string, string> };
  assert.equal({ ...cm, metadata: cmMeta }, job, 'identical but for the CA-injection annotation');
  assert.equal(Object.keys(annotations), ['cert-manager.io/inject-ca-from']);
  const [hook, ...more] = job.webhooks as Array<Record<string, any>>;
  assert.is(more.length, 0);
  const svc = one('Service', ADMISSION_SERVICE);
  assert.equal(hook!.clientConfig.service, { namespace: svc.metadata.namespace, name: svc.metadata.name, path: '/networking/v1/ingresses', port: svc.spec.ports[0].port });
  assert.equal(hook!.rules, [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] }]);
  assert.equal(hook!.admissionReviewVersions, ['v1']);
  assert.is(hook!.failurePolicy, 'Fail');
  assert.is(hook!.sideEffects, 'None');
  assert.ok(hook!.timeoutSeconds <= 30);
});

const serviceNames = (svc: Manifest) => [svc.metadata.name, `${svc.metadata.name}.${svc.metadata.namespace}`, `${svc.metadata.name}.${svc.metadata.namespace}.svc`];

test('the self-signed Job variant: create writes the mounted Secret with the key names the flags read, for the Service\'s names; patch fills the webhook; RBAC allows just that', () => {
  const flagsOf = (job: Manifest) => {
    const c = job.spec.template.spec.containers[0];
    return { cmd: c.args[0] as string, flags: Object.fromEntries((c.args as string[]).slice(1).map((a) => a.replace(/^--/, '').split('=') as [string, string])), sa: job.spec.template.spec.serviceAccountName as string };
  };
  const create = flagsOf(one('Job', 'ingress-rx-admission-create', variants.job));
  const patch = flagsOf(one('Job', 'ingress-rx-admission-patch', variants.job));
  assert.is(create.cmd, 'create');
  assert.is(patch.cmd, 'patch');
  const { secretName } = webhookMount();
  assert.is(create.flags['secret-name'], secretName);
  assert.is(patch.flags['secret-name'], secretName);
  assert.is(create.flags['cert-name'], basename(options.validatingWebhookCertificate));
  assert.is(create.flags['key-name'], basename(options.validatingWebhookKey));
  const svc = one('Service', ADMISSION_SERVICE);
  const hosts = create.flags.host!.replace(/\$\(POD_NAMESPACE\)/g, podNamespace).split(',');
  for (const h of hosts) assert.ok(serviceNames(svc).includes(h), h);
  assert.ok(hosts.includes(`${svc.metadata.name}.${svc.metadata.namespace}.svc`), 'the name the API server dials');
  assert.is(patch.flags['webhook-name'], one('ValidatingWebhookConfiguration', undefined, variants.job).metadata.name);
  assert.is(patch.flags['patch-mutating'], 'false');
  const sa = one('ServiceAccount', undefined, variants.job);
  assert.is(create.sa, sa.metadata.name);
  assert.is(patch.sa, sa.metadata.name);
  assert.equal(normalise(one('Role', undefined, variants.job).rules), ['|secrets|create|', '|secrets|get|']);
  assert.equal(normalise(one('ClusterRole', undefined, variants.job).rules),
    ['admissionregistration.k8s.io|validatingwebhookconfigurations|get|ingress-rx-admission', 'admissionregistration.k8s.io|validatingwebhookconfigurations|update|ingress-rx-admission']);
  for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
    const b = one(kind, undefined, variants.job);
    assert.equal(b.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
    assert.is(b.roleRef.name, one(kind.replace('Binding', ''), undefined, variants.job).metadata.name);
  }
});

test('the cert-manager variant: the Certificate writes the mounted Secret for the Service\'s names, and the webhook takes its CA from it', () => {
  const cert = one('Certificate', 'ingress-rx-admission', variants.certManager);
  assert.is(cert.spec.secretName, webhookMount().secretName);
  assert.equal([...cert.spec.dnsNames].sort(), serviceNames(one('Service', ADMISSION_SERVICE)).sort());
  const issuer = one('Issuer', cert.spec.issuerRef.name, variants.certManager);
  const ca = one('Certificate', issuer.spec.ca.secretName, variants.certManager);
  assert.is(ca.spec.isCA, true);
  assert.ok(one('Issuer', ca.spec.issuerRef.name, variants.certManager).spec.selfSigned);
  const hook = one('ValidatingWebhookConfiguration', undefined, variants.certManager);
  assert.is(hook.metadata.annotations!['cert-manager.io/inject-ca-from'], `${cert.metadata.namespace}/${cert.metadata.name}`);
  // cert-manager's Secret keys are the ones the flags read.
  assert.equal([basename(options.validatingWebhookCertificate), basename(options.validatingWebhookKey)], ['tls.crt', 'tls.key']);
});

const gatewayVariants = { job: loadManifests('deploy/gateway-api/admission/self-signed-job'), certManager: loadManifests('deploy/gateway-api/admission/cert-manager') };

test('with the Gateway API: both variants register a second webhook for HTTPRoute and Gateway CREATE/UPDATE to the same Service, patched or injected with the same CA', () => {
  const job = one('ValidatingWebhookConfiguration', undefined, gatewayVariants.job);
  const cm = one('ValidatingWebhookConfiguration', undefined, gatewayVariants.certManager);
  const { annotations, ...cmMeta } = cm.metadata as Manifest['metadata'] & { annotations: Record<string, string> };
  assert.equal({ ...cm, metadata: cmMeta }, job, 'identical but for the CA-injection annotation');
  assert.is(annotations['cert-manager.io/inject-ca-from'], one('ValidatingWebhookConfiguration', undefined, variants.certManager).metadata.annotations!['cert-manager.io/inject-ca-from']);
  assert.is.not(job.metadata.name, one('ValidatingWebhookConfiguration', undefined, variants.job).metadata.name, 'its own name: the Ingress webhook is left as it is');
  const [hook, ...more] = job.webhooks as Array<Record<string, any>>;
  assert.is(more.length, 0);
  const ingressHook = (one('ValidatingWebhookConfiguration', undefined, variants.job).webhooks as Array<Record<string, any>>)[0]!;
  assert.equal({ ...hook!.clientConfig.service, path: undefined }, { ...ingressHook.clientConfig.service, path: undefined });
  assert.equal(hook!.rules, [{ apiGroups: ['gateway.networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['httproutes', 'gateways'] }]);
  for (const k of ['admissionReviewVersions', 'failurePolicy', 'sideEffects', 'timeoutSeconds', 'matchPolicy']) assert.equal(hook![k], ingressHook[k], k);
  // The Job variant: a patch Job of its own, as the ServiceAccount of deploy/admission/self-signed-job/, allowed to patch just this configuration.
  const patch = one('Job', undefined, gatewayVariants.job).spec.template.spec;
  const args = patch.containers[0].args as string[];
  assert.is(args[0], 'patch');
  assert.ok(args.includes(`--webhook-name=${job.metadata.name}`));
  assert.ok(args.includes(`--secret-name=${webhookMount().secretName}`));
  const sa = one('ServiceAccount', undefined, variants.job);
  assert.is(patch.serviceAccountName, sa.metadata.name);
  assert.equal(normalise(one('ClusterRole', undefined, gatewayVariants.job).rules),
    [`admissionregistration.k8s.io|validatingwebhookconfigurations|get|${job.metadata.name}`, `admissionregistration.k8s.io|validatingwebhookconfigurations|update|${job.metadata.name}`]);
  const binding = one('ClusterRoleBinding', undefined, gatewayVariants.job);
  assert.equal(binding.subjects, [{ kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace }]);
  assert.is(binding.roleRef.name, one('ClusterRole', undefined, gatewayVariants.job).metadata.name);
});

test('the deployed pieces fit: the API server, trusting the CA, reaches the webhook under the Service\'s DNS name', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'irx-deploy-webhook-'));
  try {
    const svc = one('Service', ADMISSION_SERVICE);
    const dns = serviceNames(svc);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: tmp, stdio: 'ignore' });
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=ca.webhook.ingress-rx');
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=${dns[0]}`);
    writeFileSync(join(tmp, 'san.ext'), `subjectAltName=${dns.map((d) => `DNS:${d}`).join(',')}\n`);
    openssl('x509', '-req', '-in', 'tls.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'tls.crt', '-days', '2', '-extfile', 'san.ext');
    const store = createStore(toStoreOptions(options), ANNOTATION_REFERENCES);
    const server = await startWebhookServer({
      address: '127.0.0.1:0', certFile: join(tmp, basename(options.validatingWebhookCertificate)), keyFile: join(tmp, basename(options.validatingWebhookKey)),
      logger: silentLogger(), reviewer: createReviewer({ store, annotationsPrefix: options.annotationsPrefix, defaultServerPort: options.defaultServerPort }),
    });
    try {
      const hook = one('ValidatingWebhookConfiguration', undefined, variants.job).webhooks[0];
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpsRequest({
          host: '127.0.0.1', port: server.port, method: 'POST', path: hook.clientConfig.service.path, agent: false,
          ca: readFileSync(join(tmp, 'ca.crt')), servername: `${svc.metadata.name}.${svc.metadata.namespace}.svc`,
          headers: { 'content-type': 'application/json' },
        }, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
        req.on('error', reject);
        req.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' }, operation: 'DELETE', object: null } }));
      });
      assert.is(status, 200);
    } finally {
      await server.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

// ---- the Dockerfile ----

interface Instruction { op: string; args: string }

function dockerfile(): Instruction[] {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  return text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))
    .map((l) => { const [op, ...rest] = l.split(/\s+/); return { op: op!.toUpperCase(), args: rest.join(' ') }; });
}

function dockerfileUser(): { uid: number } {
  const users = dockerfile().filter((i) => i.op === 'USER');
  assert.is(users.length, 1);
  const m = /^(\d+)(?::\d+)?$/.exec(users[0]!.args);
  assert.ok(m, 'USER is numeric (runAsNonRoot can only verify a numeric user)');
  return { uid: Number(m![1]) };
}

test('the Dockerfile: Node 20 on bookworm-slim, setup.sh, non-root, ingress-nginx\'s entrypoint and command (built and run: test/e2e/image-pod.test.ts)', () => {
  const ins = dockerfile();
  const from = ins.filter((i) => i.op === 'FROM');
  assert.is(from.length, 1);
  assert.match(from[0]!.args, /^node:20(\.\d+)*-bookworm-slim$/);
  const runs = ins.filter((i) => i.op === 'RUN').map((i) => i.args).join(' && ');
  assert.match(runs, /\bbash scripts\/setup\.sh\b/, 'NGINX and Lua come from the same setup script as the tests');
  assert.match(runs, /apt-get install[^&]*\btini\b/);
  assert.ok(dockerfileUser().uid > 0, 'not root');
  const userIdx = ins.findIndex((i) => i.op === 'USER');
  assert.ok(ins.slice(userIdx + 1).every((i) => i.op !== 'RUN'), 'nothing runs as root after USER');
  const json = (op: string) => JSON.parse(ins.filter((i) => i.op === op).at(-1)!.args) as string[];
  assert.equal(json('ENTRYPOINT'), ['/usr/bin/tini', '--'], 'tini is PID 1');
  assert.equal(json('CMD'), ['/nginx-ingress-controller'], 'what the manifests\' args replace');
  assert.is((container.args as string[])[0], '/nginx-ingress-controller');
  assert.equal(container.lifecycle.preStop.exec.command, ['/wait-shutdown']);
});

test('the Dockerfile copies only what exists, what .dockerignore lets through, and what setup.sh and the CLI need', () => {
  const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const copied: string[] = [];
  for (const i of dockerfile().filter((x) => x.op === 'COPY')) {
    const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
    for (const src of parts.slice(0, -1)) {
      const path = src.replace(/\/$/, '');
      assert.ok(existsSync(join(root, path)), `COPY source ${path} exists`);
      assert.not.ok(ignored.some((pat) => pat === path || path.startsWith(`${pat}/`)), `${path} is not excluded by .dockerignore`);
      copied.push(path);
    }
  }
  // What scripts/setup.sh reads (npm ci, tsc -p tsconfig.json over src and nginx), bin/ingress-rx runs, and image/ builds.
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts', 'src', 'nginx', 'lua', 'bin', 'image']) {
    assert.ok(copied.includes(needed), `${needed} is copied`);
  }
  const setup = readFileSync(join(root, 'scripts/setup.sh'), 'utf8');
  assert.match(setup, /npm ci/);
  assert.match(setup, /tsc -p tsconfig\.json/);
  assert.ok(statSync(join(root, 'bin/ingress-rx')).mode & 0o111, 'bin/ingress-rx is executable');
  assert.match(readFileSync(join(root, 'bin/ingress-rx'), 'utf8'), /dist', 'cli', 'main\.js'/);
  assert.ok(existsSync(join(root, 'src/cli/main.ts')), 'src/cli/main.ts exists, so the build yields dist/cli/main.js');
});

// ---- helpers ----

function pick(o: Record<string, string>, keys: string[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, o[k]!]));
}

function normalise(rules: PolicyRule[]): string[] {
  return rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) =>
    `${g}|${res}|${v}|${[...(r.resourceNames ?? [])].sort().join(',')}`)))).sort();
}

/** RBAC's decision for one recorded request: a ClusterRole rule anywhere, a Role rule in its namespace. */
function allowed(r: RecordedRequest, rules: { cluster: PolicyRule[]; role: PolicyRule[] }, roleNamespace: string): boolean {
  const segs = r.path.split('/').filter(Boolean);
  const [group, rest] = segs[0] === 'api' ? ['', segs.slice(2)] : [segs[1]!, segs.slice(3)];
  let namespace: string | undefined;
  let tail = rest;
  if (tail[0] === 'namespaces' && tail.length >= 3) { namespace = tail[1]; tail = tail.slice(2); }
  const [resource, name, sub] = tail;
  const fullResource = sub ? `${resource}/${sub}` : resource!;
  const match = (rule: PolicyRule) =>
    (rule.apiGroups.includes(group) || rule.apiGroups.includes('*')) &&
    (rule.resources.includes(fullResource) || rule.resources.includes('*')) &&
    (rule.verbs.includes(r.verb) || rule.verbs.includes('*')) &&
    (!rule.resourceNames?.length || (name !== undefined && rule.resourceNames.includes(name)));
  if (rules.cluster.some(match)) return true;
  return namespace === roleNamespace && rules.role.some(match);
}

test.run();
