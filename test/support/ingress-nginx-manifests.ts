// The objects of ingress-nginx's official install, deploy/static/provider/cloud/deploy.yaml of its
// controller-v1.15.1 release (the Helm chart 4.15.1 with default values), written here as data
// from that release's documented content: the controller's ServiceAccount and RBAC, ConfigMap,
// Services, Deployment, IngressClass and ValidatingWebhookConfiguration. The admission Jobs (which
// make the webhook's certificate) are left out: the tests mount a certificate themselves.
// `helmCommonValues` is the chart's output with the values most installations change.
import type { ContainerManifest } from './pod.js';

export const RELEASE = 'controller-v1.15.1';
export const NAMESPACE = 'ingress-nginx';

const labels = (component?: string) => ({
  ...(component ? { 'app.kubernetes.io/component': component } : {}),
  'app.kubernetes.io/instance': 'ingress-nginx',
  'app.kubernetes.io/name': 'ingress-nginx',
  'app.kubernetes.io/part-of': 'ingress-nginx',
  'app.kubernetes.io/version': '1.15.1',
});
const selector = { 'app.kubernetes.io/component': 'controller', 'app.kubernetes.io/instance': 'ingress-nginx', 'app.kubernetes.io/name': 'ingress-nginx' };

export interface Manifest { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: any }

const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]) =>
  ({ apiGroups, resources, verbs, ...(resourceNames ? { resourceNames } : {}) });

/** The controller container as the Deployment declares it; `image` is what a user swaps. */
export function controllerContainer(image: string): ContainerManifest & { image: string; [k: string]: unknown } {
  return {
    name: 'controller',
    image,
    imagePullPolicy: 'IfNotPresent',
    args: [
      '/nginx-ingress-controller',
      '--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller',
      '--election-id=ingress-nginx-leader',
      '--controller-class=k8s.io/ingress-nginx',
      '--ingress-class=nginx',
      '--configmap=$(POD_NAMESPACE)/ingress-nginx-controller',
      '--validating-webhook=:8443',
      '--validating-webhook-certificate=/usr/local/certificates/cert',
      '--validating-webhook-key=/usr/local/certificates/key',
    ],
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      { name: 'LD_PRELOAD', value: '/usr/local/lib/libmimalloc.so' },
    ],
    lifecycle: { preStop: { exec: { command: ['/wait-shutdown'] } } },
    livenessProbe: { failureThreshold: 5, httpGet: { path: '/healthz', port: 10254, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 1 },
    readinessProbe: { failureThreshold: 3, httpGet: { path: '/healthz', port: 10254, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 1 },
    ports: [
      { containerPort: 80, name: 'http', protocol: 'TCP' },
      { containerPort: 443, name: 'https', protocol: 'TCP' },
      { containerPort: 8443, name: 'webhook', protocol: 'TCP' },
    ],
    resources: { requests: { cpu: '100m', memory: '90Mi' } },
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
      readOnlyRootFilesystem: false,
      runAsGroup: 82,
      runAsNonRoot: true,
      runAsUser: 101,
      seccompProfile: { type: 'RuntimeDefault' },
    } as ContainerManifest['securityContext'],
    volumeMounts: [{ mountPath: '/usr/local/certificates/', name: 'webhook-cert', readOnly: true }],
  };
}

/** The release's objects, with the controller's image replaced by `image` (the only change). */
export function ingressNginxManifests(image: string): Manifest[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, labels: { 'app.kubernetes.io/instance': 'ingress-nginx', 'app.kubernetes.io/name': 'ingress-nginx' } } },
    { apiVersion: 'v1', kind: 'ServiceAccount', automountServiceAccountToken: true, metadata: { name: 'ingress-nginx', namespace: NAMESPACE, labels: labels('controller') } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'ingress-nginx', namespace: NAMESPACE, labels: labels('controller') },
      rules: [
        rule([''], ['namespaces'], ['get']),
        rule([''], ['configmaps', 'pods', 'secrets', 'endpoints'], ['get', 'list', 'watch']),
        rule([''], ['services'], ['get', 'list', 'watch']),
        rule(['networking.k8s.io'], ['ingresses'], ['get', 'list', 'watch']),
        rule(['networking.k8s.io'], ['ingresses/status'], ['update']),
        rule(['networking.k8s.io'], ['ingressclasses'], ['get', 'list', 'watch']),
        rule(['coordination.k8s.io'], ['leases'], ['get', 'update'], ['ingress-nginx-leader']),
        rule(['coordination.k8s.io'], ['leases'], ['create']),
        rule([''], ['events'], ['create', 'patch']),
        rule(['discovery.k8s.io'], ['endpointslices'], ['list', 'watch', 'get']),
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'ingress-nginx', labels: labels() },
      rules: [
        rule([''], ['configmaps', 'endpoints', 'nodes', 'pods', 'secrets', 'namespaces'], ['list', 'watch']),
        rule(['coordination.k8s.io'], ['leases'], ['list', 'watch']),
        rule([''], ['nodes'], ['get']),
        rule([''], ['services'], ['get', 'list', 'watch']),
        rule(['networking.k8s.io'], ['ingresses'], ['get', 'list', 'watch']),
        rule([''], ['events'], ['create', 'patch']),
        rule(['networking.k8s.io'], ['ingresses/status'], ['update']),
        rule(['networking.k8s.io'], ['ingressclasses'], ['get', 'list', 'watch']),
        rule(['discovery.k8s.io'], ['endpointslices'], ['list', 'watch', 'get']),
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'ingress-nginx', namespace: NAMESPACE, labels: labels('controller') },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ingress-nginx' },
      subjects: [{ kind: 'ServiceAccount', name: 'ingress-nginx', namespace: NAMESPACE }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: 'ingress-nginx', labels: labels() },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ingress-nginx' },
      subjects: [{ kind: 'ServiceAccount', name: 'ingress-nginx', namespace: NAMESPACE }],
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ingress-nginx-controller', namespace: NAMESPACE, labels: labels('controller') }, data: null },
    {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'ingress-nginx-controller', namespace: NAMESPACE, labels: labels('controller') },
      spec: {
        externalTrafficPolicy: 'Local', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack',
        ports: [
          { appProtocol: 'http', name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' },
          { appProtocol: 'https', name: 'https', port: 443, protocol: 'TCP', targetPort: 'https' },
        ],
        selector, type: 'LoadBalancer',
      },
    },
    {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'ingress-nginx-controller-admission', namespace: NAMESPACE, labels: labels('controller') },
      spec: { ports: [{ appProtocol: 'https', name: 'https-webhook', port: 443, targetPort: 'webhook' }], selector, type: 'ClusterIP' },
    },
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ingress-nginx-controller', namespace: NAMESPACE, labels: labels('controller') },
      spec: {
        minReadySeconds: 0, revisionHistoryLimit: 10, selector: { matchLabels: selector },
        strategy: { rollingUpdate: { maxUnavailable: 1 }, type: 'RollingUpdate' },
        template: {
          metadata: { labels: labels('controller') },
          spec: {
            automountServiceAccountToken: true, containers: [controllerContainer(image)], dnsPolicy: 'ClusterFirst',
            nodeSelector: { 'kubernetes.io/os': 'linux' }, serviceAccountName: 'ingress-nginx', terminationGracePeriodSeconds: 300,
            volumes: [{ name: 'webhook-cert', secret: { secretName: 'ingress-nginx-admission' } }],
          },
        },
      },
    },
    { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx', labels: labels('controller') }, spec: { controller: 'k8s.io/ingress-nginx' } },
    {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'ingress-nginx-admission', labels: labels('admission-webhook') },
      webhooks: [{
        admissionReviewVersions: ['v1'],
        clientConfig: { service: { name: 'ingress-nginx-controller-admission', namespace: NAMESPACE, path: '/networking/v1/ingresses', port: 443 } },
        failurePolicy: 'Fail', matchPolicy: 'Equivalent', name: 'validate.nginx.ingress.kubernetes.io',
        rules: [{ apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] }],
        sideEffects: 'None',
      }],
    },
  ];
}

/**
 * The chart (4.15.1) with the values installations most often change: `controller.kind=DaemonSet`
 * with `controller.hostPort.enabled=true`, `controller.metrics.enabled=true`,
 * `controller.watchIngressWithoutClass=true` and `controller.extraArgs.default-ssl-certificate`.
 * The chart adds their args after the defaults, in its own order, and the metrics port.
 */
export function helmCommonValues(image: string, defaultCertificate: string): Manifest[] {
  const objects = ingressNginxManifests(image);
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  const container = deployment.spec.template.spec.containers[0] as ReturnType<typeof controllerContainer>;
  container.args = [...container.args!, '--watch-ingress-without-class=true', '--enable-metrics=true', `--default-ssl-certificate=${defaultCertificate}`];
  container.ports = [
    { containerPort: 80, hostPort: 80, name: 'http', protocol: 'TCP' },
    { containerPort: 443, hostPort: 443, name: 'https', protocol: 'TCP' },
    { containerPort: 10254, name: 'metrics', protocol: 'TCP' },
    { containerPort: 8443, name: 'webhook', protocol: 'TCP' },
  ];
  const daemonSet: Manifest = {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { ...deployment.metadata },
    spec: { minReadySeconds: 0, revisionHistoryLimit: 10, selector: deployment.spec.selector, updateStrategy: { rollingUpdate: { maxUnavailable: 1 }, type: 'RollingUpdate' }, template: deployment.spec.template },
  };
  return objects.map((o) => (o === deployment ? daemonSet : o));
}
