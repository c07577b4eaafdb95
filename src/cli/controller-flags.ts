// The `controller` command's flags: ingress-nginx's names and defaults where they apply, plus
// ingress-rx's own. CONTROLLER_FLAGS (flags with an effect) and INERT_FLAGS (ingress-nginx's and
// klog's flags accepted without one, each with a warning) are the tables behind parsing, --help
// and docs/flags.md: every flag of an ingress-nginx Deployment starts the controller.
import type { GatewayPortOptions, StoreOptions } from '../store/types.js';
import { GATEWAY_LISTENER_PORTS_HELP, gatewayPortOptions } from './gateway-ports.js';
import {
  DEFAULT_LENGTH_BUCKETS, DEFAULT_MAX_REQUEST_SERIES, DEFAULT_SIZE_BUCKETS, DEFAULT_TIME_BUCKETS, REQUEST_FAMILIES,
  type RequestFamily, type RequestMetricsConfig,
} from '../observability/request-metrics.js';
import type { ServePorts } from './serve.js';
import { parseAllowedClasses } from '../model/checks/address-policy.js';
import { ownAddresses } from './own-addresses.js';
import { BUDGET_HELP, DEFAULT_BUDGETS, parseBudgetBytes, type Budgets } from '../model/core/budgets.js';

/**
 * How a flag's value is read. `duration` and `seconds` both end up in milliseconds; `floats` and
 * `strings` are pflag slices (comma-separated; a repeated flag appends).
 */
export type FlagType = 'string' | 'bool' | 'int' | 'float' | 'duration' | 'seconds' | 'floats' | 'strings' | 'count' | 'bytes';

export interface ControllerOptions extends ServePorts {
  // cluster access
  kubeconfig: string;
  apiserverHost: string;
  certificateAuthority: string;
  // what to watch
  watchNamespace: string;
  watchNamespaceSelector: string;
  ingressClass: string;
  controllerClass: string;
  watchIngressWithoutClass: boolean;
  ingressClassByName: boolean;
  enableGatewayApi: boolean;
  gatewayControllerName: string;
  gatewayListenerPorts: string[];
  configmap: string;
  tcpServicesConfigmap: string;
  udpServicesConfigmap: string;
  defaultBackendService: string;
  defaultSSLCertificate: string;
  disableCatchAll: boolean;
  disableSvcExternalName: boolean;
  disableSyncEvents: boolean;
  annotationsPrefix: string;
  // status and leader election
  publishService: string;
  publishStatusAddress: string;
  updateStatus: boolean;
  updateStatusOnShutdown: boolean;
  electionId: string;
  electionTTLMs: number;
  disableLeaderElection: boolean;
  statusUpdateIntervalMs: number;
  statusUpdateRate: number;
  reportNodeInternalIpAddress: boolean;
  // pacing (the ports: ServePorts)
  syncRateLimit: number;
  enableSslPassthrough: boolean;
  enableMetrics: boolean;
  metricsPerHost: boolean;
  metricsPerUndefinedHost: boolean;
  reportStatusClasses: boolean;
  timeBuckets: number[];
  lengthBuckets: number[];
  sizeBuckets: number[];
  bucketFactor: number;
  maxBuckets: number;
  excludeSocketMetrics: string[];
  metricsMaxSeries: number;
  healthzHost: string;
  // admission webhook
  validatingWebhook: string;
  validatingWebhookCertificate: string;
  validatingWebhookKey: string;
  shutdownGracePeriodMs: number;
  postShutdownGracePeriodMs: number;
  // ingress-rx's own
  logLevel: string;
  record: string;
  recordSecrets: boolean;
  trace: string;
  workdir: string;
  geoipDir: string;
  allowUpstreamAddresses: string;
  ownAddresses: string;
  hostOwnership: boolean;
  dynamicRoutes: boolean;
  maxPathsPerIngress: number;
  maxPathsPerNamespace: number;
  maxBytesPerIngress: number;
  maxBytesPerNamespace: number;
  help: boolean;
  version: boolean;
}

export interface ControllerFlag {
  name: string;
  key: keyof ControllerOptions;
  type: FlagType;
  /** In the option's unit: milliseconds for `duration` and `seconds` flags. */
  default: string | number | boolean | number[] | string[];
  help: string;
  /** True for flags ingress-nginx does not have. */
  ours?: boolean;
}

export const CONTROLLER_FLAGS: readonly ControllerFlag[] = [
  { name: 'kubeconfig', key: 'kubeconfig', type: 'string', default: '', help: 'Path to a kubeconfig file with the API server address and credentials. Empty: the in-cluster configuration (the pod\'s service account).' },
  { name: 'apiserver-host', key: 'apiserverHost', type: 'string', default: '', help: 'Address of the Kubernetes API server, "protocol://address:port". Overrides the server of the kubeconfig.' },
  { name: 'certificate-authority', key: 'certificateAuthority', type: 'string', default: '', help: 'PEM file of the CA that signed the API server\'s certificate; used only with --apiserver-host.' },
  { name: 'watch-namespace', key: 'watchNamespace', type: 'string', default: '', help: 'Namespace to watch for Ingresses, Services and the rest. Empty: all namespaces.' },
  { name: 'watch-namespace-selector', key: 'watchNamespaceSelector', type: 'string', default: '', help: 'Label selector of the namespaces to watch. Exclusive with --watch-namespace.' },
  { name: 'ingress-class', key: 'ingressClass', type: 'string', default: 'nginx', help: 'Ingress class this controller serves (annotation kubernetes.io/ingress.class, and the IngressClass name with --ingress-class-by-name).' },
  { name: 'controller-class', key: 'controllerClass', type: 'string', default: 'k8s.io/ingress-nginx', help: 'IngressClass spec.controller value this controller serves.' },
  { name: 'watch-ingress-without-class', key: 'watchIngressWithoutClass', type: 'bool', default: false, help: 'Also serve Ingresses with neither an IngressClass nor the class annotation.' },
  { name: 'enable-gateway-api', key: 'enableGatewayApi', type: 'bool', default: false, help: 'Also watch and serve the Gateway API (GatewayClass, Gateway, HTTPRoute, ReferenceGrant, ListenerSet, BackendTLSPolicy; docs/gateway-api.md). Its CRDs must be installed (ListenerSet and BackendTLSPolicy may be missing: named once and not watched) and the controller allowed to list and watch them, and Namespaces.', ours: true },
  { name: 'gateway-listener-ports', key: 'gatewayListenerPorts', type: 'strings', default: [], help: GATEWAY_LISTENER_PORTS_HELP, ours: true },
  { name: 'gateway-controller-name', key: 'gatewayControllerName', type: 'string', default: 'ingress-rx.io/gateway', help: 'GatewayClass spec.controllerName value this controller serves (with --enable-gateway-api; local mode and render read Gateway API manifests always).', ours: true },
  { name: 'ingress-class-by-name', key: 'ingressClassByName', type: 'bool', default: false, help: 'Serve Ingresses whose spec.ingressClassName equals --ingress-class, even without a matching IngressClass.' },
  { name: 'configmap', key: 'configmap', type: 'string', default: '', help: 'ConfigMap with the global NGINX settings, "namespace/name".' },
  { name: 'tcp-services-configmap', key: 'tcpServicesConfigmap', type: 'string', default: '', help: 'ConfigMap of TCP services to expose, "namespace/name"; keys are external ports, values "namespace/service:port".' },
  { name: 'udp-services-configmap', key: 'udpServicesConfigmap', type: 'string', default: '', help: 'ConfigMap of UDP services to expose, "namespace/name"; keys are external ports, values "namespace/service:port".' },
  { name: 'default-backend-service', key: 'defaultBackendService', type: 'string', default: '', help: 'Service, "namespace/name", that serves requests matching no server (catch-all). Empty: a built-in 404.' },
  { name: 'default-ssl-certificate', key: 'defaultSSLCertificate', type: 'string', default: '', help: 'Secret, "namespace/name", with the certificate of the default HTTPS server.' },
  { name: 'disable-catch-all', key: 'disableCatchAll', type: 'bool', default: false, help: 'Ignore catch-all Ingresses: every Ingress with a spec.defaultBackend, rules or not (as ingress-nginx).' },
  { name: 'disable-sync-events', key: 'disableSyncEvents', type: 'bool', default: false, help: 'Record no Sync Event on the Ingresses served as they are added or changed.' },
  { name: 'disable-svc-external-name', key: 'disableSvcExternalName', type: 'bool', default: false, help: 'ExternalName Services give no endpoints: a backend of one answers 503, with a warning naming the Service.' },
  { name: 'annotations-prefix', key: 'annotationsPrefix', type: 'string', default: 'nginx.ingress.kubernetes.io', help: 'Prefix of the Ingress annotations this controller reads.' },
  { name: 'publish-service', key: 'publishService', type: 'string', default: '', help: 'Service, "namespace/name", fronting the controller; its addresses become the load-balancer status of the Ingresses. Exclusive with --publish-status-address.' },
  { name: 'publish-status-address', key: 'publishStatusAddress', type: 'string', default: '', help: 'Address or addresses (comma-separated IPs or hostnames) to set as the load-balancer status of the Ingresses.' },
  { name: 'update-status', key: 'updateStatus', type: 'bool', default: true, help: 'Write the load-balancer status of the Ingresses this controller serves.' },
  { name: 'update-status-on-shutdown', key: 'updateStatusOnShutdown', type: 'bool', default: true, help: 'On shutdown, clear the status of the Ingresses when this is the last controller pod.' },
  { name: 'election-id', key: 'electionId', type: 'string', default: 'ingress-controller-leader', help: 'Name of the coordination.k8s.io Lease used to elect the pod that writes Ingress status.' },
  { name: 'election-ttl', key: 'electionTTLMs', type: 'duration', default: 30_000, help: 'Lease duration of the leader election; the renew deadline is half of it, the retry period a quarter.' },
  { name: 'disable-leader-election', key: 'disableLeaderElection', type: 'bool', default: false, help: 'Do not elect a leader: this pod writes the Ingress status as if it were the leader.' },
  { name: 'status-update-interval', key: 'statusUpdateIntervalMs', type: 'seconds', default: 60_000, help: 'Seconds between two checks of the Ingress status (at least 5).' },
  { name: 'status-update-rate', key: 'statusUpdateRate', type: 'float', default: 100, help: 'Ingress status writes started per second at most (at most 10 in flight), so that writing the status of a large cluster leaves the controller to its syncs; 0: no limit.', ours: true },
  { name: 'report-node-internal-ip-address', key: 'reportNodeInternalIpAddress', type: 'bool', default: false, help: 'Report the nodes\' internal addresses instead of external ones in the Ingress status.' },
  { name: 'sync-rate-limit', key: 'syncRateLimit', type: 'float', default: 0.3, help: 'Upper limit of syncs per second (token bucket with a burst of 1).' },
  { name: 'http-port', key: 'httpPort', type: 'int', default: 80, help: 'Port serving HTTP traffic.' },
  { name: 'https-port', key: 'httpsPort', type: 'int', default: 443, help: 'Port serving HTTPS traffic.' },
  { name: 'status-port', key: 'statusPort', type: 'int', default: 10246, help: 'Reserved (tcp-services may not take it); NGINX does not listen on it: the Lua configuration endpoint is on a unix socket in --workdir (docs/security.md).' },
  { name: 'stream-port', key: 'streamPort', type: 'int', default: 10247, help: 'Loopback port of the Lua TCP/UDP configuration endpoint.' },
  { name: 'healthz-port', key: 'healthzPort', type: 'int', default: 10254, help: 'Port of /healthz and /metrics.' },
  { name: 'healthz-host', key: 'healthzHost', type: 'string', default: '', help: 'Address /healthz and /metrics listen on. Empty: every address.' },
  { name: 'default-server-port', key: 'defaultServerPort', type: 'int', default: 8181, help: 'Port of the default server (catch-all).' },
  { name: 'enable-ssl-passthrough', key: 'enableSslPassthrough', type: 'bool', default: false, help: 'Serve the ssl-passthrough annotation: a stream server on the HTTPS port reads the SNI and sends those hosts\' TLS to their backends untouched.' },
  { name: 'ssl-passthrough-proxy-port', key: 'sslPassthroughProxyPort', type: 'int', default: 442, help: 'Loopback port of NGINX\'s HTTPS servers when --enable-ssl-passthrough is on.' },
  { name: 'enable-metrics', key: 'enableMetrics', type: 'bool', default: false, help: 'Collect request, NGINX process and stub_status metrics (NGINX writes a metrics log the controller reads); the controller\'s own metrics are exposed on the healthz port either way. Off by default, as in ingress-nginx since v1.12.' },
  { name: 'metrics-per-host', key: 'metricsPerHost', type: 'bool', default: true, help: 'Label request metrics with the host; requests to hosts no Ingress defines are then not counted.' },
  { name: 'metrics-per-undefined-host', key: 'metricsPerUndefinedHost', type: 'bool', default: false, help: 'Also count requests to hosts no Ingress defines, labelled with their host. Requires --metrics-per-host.' },
  { name: 'report-status-classes', key: 'reportStatusClasses', type: 'bool', default: false, help: 'Label request metrics with status classes (2xx, 3xx, 4xx, 5xx) instead of status codes.' },
  { name: 'time-buckets', key: 'timeBuckets', type: 'floats', default: DEFAULT_TIME_BUCKETS, help: 'Buckets of the request, response, header and connect duration histograms (seconds).' },
  { name: 'length-buckets', key: 'lengthBuckets', type: 'floats', default: DEFAULT_LENGTH_BUCKETS, help: 'Buckets of the request_size and response_size histograms (bytes).' },
  { name: 'size-buckets', key: 'sizeBuckets', type: 'floats', default: DEFAULT_SIZE_BUCKETS, help: 'Buckets of the bytes_sent histogram (bytes).' },
  { name: 'bucket-factor', key: 'bucketFactor', type: 'float', default: 0, help: 'Native histograms\' bucket factor. The text exposition has no native histograms: above 1, a warning says the classic buckets are exported, as ingress-nginx\'s text exposition does.' },
  { name: 'max-buckets', key: 'maxBuckets', type: 'int', default: 100, help: 'Native histograms\' maximum bucket count; without native histograms it has no effect.' },
  { name: 'exclude-socket-metrics', key: 'excludeSocketMetrics', type: 'strings', default: [], help: 'Request metric families neither collected nor exported, e.g. nginx_ingress_controller_request_size,nginx_ingress_controller_header_duration_seconds.' },
  { name: 'metrics-max-series', key: 'metricsMaxSeries', type: 'int', default: DEFAULT_MAX_REQUEST_SERIES, help: 'Label sets the controller keeps across the request metric families; requests of further ones are counted in ingress_rx_metrics_log_lines_total{outcome="dropped"}.', ours: true },
  { name: 'validating-webhook', key: 'validatingWebhook', type: 'string', default: '', help: 'Address of the validating admission webhook, "<host>:port" (":8443": every address). Empty: no webhook. Reviews run the controller\'s own parsers and rules on the Ingress and those sharing its hosts; no program is run on them.' },
  { name: 'validating-webhook-certificate', key: 'validatingWebhookCertificate', type: 'string', default: '', help: 'PEM certificate of the webhook\'s HTTPS server (re-read when the file changes).' },
  { name: 'validating-webhook-key', key: 'validatingWebhookKey', type: 'string', default: '', help: 'PEM key of the webhook\'s HTTPS server (re-read when the file changes).' },
  { name: 'shutdown-grace-period', key: 'shutdownGracePeriodMs', type: 'seconds', default: 0, help: 'Seconds to wait after the shutdown signal before stopping NGINX; /healthz answers 500 meanwhile, so readiness probes fail first.' },
  { name: 'post-shutdown-grace-period', key: 'postShutdownGracePeriodMs', type: 'seconds', default: 10_000, help: 'Seconds to wait after NGINX stopped before the controller exits.' },
  { name: 'log-level', key: 'logLevel', type: 'string', default: 'info', help: 'Log level: trace, debug, info, warn, error, fatal or silent.', ours: true },
  { name: 'record', key: 'record', type: 'string', default: '', help: 'Append every source event and task to this NDJSON file, for `ingress-rx replay`.', ours: true },
  { name: 'record-secrets', key: 'recordSecrets', type: 'bool', default: false, help: 'Keep Secret data in the recording (redacted by default).', ours: true },
  { name: 'trace', key: 'trace', type: 'string', default: '', help: 'Trace every event through the pipeline and write a Chrome trace-event file (Perfetto) here.', ours: true },
  { name: 'workdir', key: 'workdir', type: 'string', default: '/tmp/ingress-rx', help: 'Directory for nginx.conf, NGINX\'s prefix and temporary files.', ours: true },
  { name: 'geoip-dir', key: 'geoipDir', type: 'string', default: '/etc/ingress-controller/geoip', help: 'Directory of the GeoIP2 databases; changes to it reload NGINX.', ours: true },
  { name: 'allow-upstream-addresses', key: 'allowUpstreamAddresses', type: 'string', default: '', help: 'Node-local and metadata upstream addresses to allow, comma-separated: loopback, unspecified, link-local, metadata. Empty: endpoints and ExternalName targets of these classes are refused with a warning (docs/security.md).', ours: true },
  { name: 'own-addresses', key: 'ownAddresses', type: 'string', default: '', help: 'The controller pod\'s own addresses, comma-separated, on which endpoints and other upstreams may not name the controller\'s own ports (as on loopback). Empty: POD_IP and the addresses of the pod\'s interfaces (docs/security.md).', ours: true },
  { name: 'host-ownership', key: 'hostOwnership', type: 'bool', default: false, help: 'The namespace of the oldest Ingress of a host owns it: rules, canaries and aliases for that host from other namespaces are refused with a warning (docs/security.md).', ours: true },
  { name: 'enable-dynamic-routes', key: 'dynamicRoutes', type: 'bool', default: true, help: 'Serve the hosts whose Ingresses Lua can apply per request from a route table the controller POSTs, so adding or changing them needs no reload (docs/dynamic-routes.md). false: every host has a server block, as in ingress-nginx.', ours: true },
  { name: 'max-paths-per-ingress', key: 'maxPathsPerIngress', type: 'count', default: DEFAULT_BUDGETS.maxPathsPerIngress, help: BUDGET_HELP.maxPathsPerIngress, ours: true },
  { name: 'max-paths-per-namespace', key: 'maxPathsPerNamespace', type: 'count', default: DEFAULT_BUDGETS.maxPathsPerNamespace, help: BUDGET_HELP.maxPathsPerNamespace, ours: true },
  { name: 'max-bytes-per-ingress', key: 'maxBytesPerIngress', type: 'bytes', default: DEFAULT_BUDGETS.maxBytesPerIngress, help: BUDGET_HELP.maxBytesPerIngress, ours: true },
  { name: 'max-bytes-per-namespace', key: 'maxBytesPerNamespace', type: 'bytes', default: DEFAULT_BUDGETS.maxBytesPerNamespace, help: BUDGET_HELP.maxBytesPerNamespace, ours: true },
  { name: 'help', key: 'help', type: 'bool', default: false, help: 'Print this help and exit.', ours: true },
  { name: 'version', key: 'version', type: 'bool', default: false, help: 'Print the version and exit.' },
];

/**
 * Flags that ingress-nginx's binary takes (pkg/flags/flags.go of v1.15.1, and klog's, which it
 * adds to its flag set) whose job ingress-rx does differently or never needs. Each is accepted so
 * that an ingress-nginx Deployment starts unchanged, and given it prints one warning at start
 * naming what applies instead. `refuseIfTrue` says why a true value stops the start: running
 * would silently do something the operator did not ask for.
 */
export interface InertFlag {
  name: string;
  from: 'ingress-nginx' | 'klog';
  /** How its value is read (as pflag would: a bad value is refused as ingress-nginx refuses it). */
  type: 'string' | 'bool' | 'int' | 'duration';
  /** What applies instead, or why nothing needs to. */
  instead: string;
  /** For a bool: why it stops the start when true. */
  refuseIfTrue?: string;
}

const GEOIP_INSTEAD = 'GeoIP2 databases are not downloaded: put them in --geoip-dir (they are watched there)';
const KLOG_OUTPUT = 'ingress-rx writes its log as JSON lines to stdout (the container log), whatever the klog output flags say';

export const INERT_FLAGS: readonly InertFlag[] = [
  { name: 'sync-period', from: 'ingress-nginx', type: 'duration', instead: 'watches are relisted when they fail or go silent; there is no forced periodic resync' },
  { name: 'profiling', from: 'ingress-nginx', type: 'bool', instead: 'there is no Go profiler; profile with node --inspect' },
  { name: 'profiler-port', from: 'ingress-nginx', type: 'int', instead: 'there is no Go profiler' },
  { name: 'profiler-address', from: 'ingress-nginx', type: 'string', instead: 'there is no Go profiler' },
  { name: 'health-check-path', from: 'ingress-nginx', type: 'string', instead: 'the controller checks NGINX through its control socket; the probes\' /healthz on --healthz-port is unchanged' },
  { name: 'health-check-timeout', from: 'ingress-nginx', type: 'int', instead: 'the controller checks NGINX through its control socket with a fixed timeout' },
  { name: 'enable-annotation-validation', from: 'ingress-nginx', type: 'bool', instead: 'annotations are always validated' },
  { name: 'enable-ssl-chain-completion', from: 'ingress-nginx', type: 'bool', instead: 'certificate chains are served as the Secret holds them, never completed' },
  { name: 'disable-full-test', from: 'ingress-nginx', type: 'bool', instead: 'the admission webhook always checks only the reviewed Ingress and those sharing its hosts, with the controller\'s own rules; it never runs NGINX on user input' },
  { name: 'internal-logger-address', from: 'ingress-nginx', type: 'string', instead: 'there is no internal syslog listener' },
  { name: 'deep-inspect', from: 'ingress-nginx', type: 'bool', instead: 'annotations and paths are always validated' },
  { name: 'dynamic-configuration-retries', from: 'ingress-nginx', type: 'int', instead: 'dynamic configuration retries on a fixed schedule (15 attempts over about 5 s), then the next sync tries again' },
  { name: 'monitor-max-batch-size', from: 'ingress-nginx', type: 'int', instead: 'NGINX writes request metrics to a log the controller reads; there are no batches to bound (--metrics-max-series bounds the series)' },
  { name: 'enable-topology-aware-routing', from: 'ingress-nginx', type: 'bool', instead: 'topology hints are not read: every ready endpoint gets traffic' },
  { name: 'maxmind-mirror', from: 'ingress-nginx', type: 'string', instead: GEOIP_INSTEAD },
  { name: 'maxmind-license-key', from: 'ingress-nginx', type: 'string', instead: GEOIP_INSTEAD },
  { name: 'maxmind-edition-ids', from: 'ingress-nginx', type: 'string', instead: GEOIP_INSTEAD },
  { name: 'maxmind-retries-count', from: 'ingress-nginx', type: 'int', instead: GEOIP_INSTEAD },
  { name: 'maxmind-retries-timeout', from: 'ingress-nginx', type: 'duration', instead: GEOIP_INSTEAD },
  // klog v2's flags (klog.InitFlags, as of ingress-nginx v1.15.1's klog v2.140).
  { name: 'v', from: 'klog', type: 'int', instead: 'the log level is --log-level; without it, --v picks it: 0-2 info, 3-4 debug, 5 and more trace' },
  { name: 'vmodule', from: 'klog', type: 'string', instead: 'the log level is one for the whole controller (--log-level)' },
  { name: 'logtostderr', from: 'klog', type: 'bool', instead: KLOG_OUTPUT },
  { name: 'alsologtostderr', from: 'klog', type: 'bool', instead: KLOG_OUTPUT },
  { name: 'alsologtostderrthreshold', from: 'klog', type: 'string', instead: KLOG_OUTPUT },
  { name: 'stderrthreshold', from: 'klog', type: 'string', instead: KLOG_OUTPUT },
  { name: 'legacy_stderr_threshold_behavior', from: 'klog', type: 'bool', instead: KLOG_OUTPUT },
  { name: 'one_output', from: 'klog', type: 'bool', instead: KLOG_OUTPUT },
  { name: 'log_dir', from: 'klog', type: 'string', instead: `${KLOG_OUTPUT}; no log file is written` },
  { name: 'log_file', from: 'klog', type: 'string', instead: `${KLOG_OUTPUT}; no log file is written` },
  { name: 'log_file_max_size', from: 'klog', type: 'int', instead: `${KLOG_OUTPUT}; no log file is written` },
  { name: 'skip_log_headers', from: 'klog', type: 'bool', instead: `${KLOG_OUTPUT}; no log file is written` },
  { name: 'skip_headers', from: 'klog', type: 'bool', instead: 'log lines are JSON objects with their time and level as fields' },
  { name: 'add_dir_header', from: 'klog', type: 'bool', instead: 'log lines are JSON objects; they name the actor, not the source file' },
  { name: 'log_backtrace_at', from: 'klog', type: 'string', instead: 'no stack traces are logged on demand; errors carry theirs' },
];

const MIN_STATUS_UPDATE_INTERVAL_MS = 5_000;

export type ParseResult =
  | { ok: true; options: ControllerOptions; warnings: string[] }
  | { ok: false; error: string };

export function defaultControllerOptions(): ControllerOptions {
  const out: Record<string, unknown> = {};
  for (const f of CONTROLLER_FLAGS) out[f.key] = f.default;
  return out as unknown as ControllerOptions;
}

/** Where the manifests' args begin: ingress-nginx's program, which pflag takes as a positional argument. */
const PROGRAM_NAME = /(^|\/)nginx-ingress-controller$/;

/**
 * Parses the args as ingress-nginx's pflag set does: `--flag=value`, `--flag value`, Go-style
 * booleans (`--flag`, `--flag=false`), klog's `-v` shorthand (`-v=2`, `-v 2`, `-v2`), `--` ending
 * the flags, and positional arguments ignored (the manifests' first arg is the program's path).
 */
export function parseControllerFlags(argv: string[]): ParseResult {
  const byName = new Map(CONTROLLER_FLAGS.map((f) => [f.name, f]));
  const inertByName = new Map(INERT_FLAGS.map((f) => [f.name, f]));
  const values: Record<string, unknown> = { ...defaultControllerOptions() };
  const sliceSet = new Set<string>();
  const given = new Map<string, string | number | boolean>();
  const warnings: string[] = [];
  let flagsEnded = false;
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i]!;
    if (!flagsEnded && arg === '--') { flagsEnded = true; continue; }
    if (!flagsEnded && arg === '-h') { values.help = true; continue; }
    if (!flagsEnded && /^-v(=|\d|$)/.test(arg)) arg = `--v${arg.slice(2).replace(/^(\d)/, '=$1')}`;
    if (flagsEnded || !arg.startsWith('-') || arg === '-') {
      if (!PROGRAM_NAME.test(arg)) warnings.push(`positional argument "${arg}" ignored (as ingress-nginx ignores it): flags start with --`);
      continue;
    }
    if (!arg.startsWith('--')) return { ok: false, error: `unknown shorthand flag in "${arg}": long flags start with --` };
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const flag = byName.get(name);
    const inert = inertByName.get(name);
    if (!flag && !inert) return { ok: false, error: `unknown flag --${name} (see \`ingress-rx controller --help\`)` };
    const type = flag?.type ?? inert!.type;
    let raw: string;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else if (type === 'bool') raw = 'true';
    else if (i + 1 < argv.length) raw = argv[++i]!;
    else return { ok: false, error: `flag --${name} needs a value` };
    const parsed = parseValue(name, type, raw);
    if (isError(parsed)) return { ok: false, error: parsed.error };
    if (inert) {
      const value = parsed as string | number | boolean;
      if (value === true && inert.refuseIfTrue) return { ok: false, error: `--${name}=${raw}: ${inert.refuseIfTrue}` };
      if (!given.has(name)) warnings.push(`--${name}=${raw} is ${inert.from === 'klog' ? 'a klog flag' : 'an ingress-nginx flag'} ingress-rx accepts without acting on it: ${inert.instead}`);
      given.set(name, value);
      continue;
    }
    given.set(name, parsed as string);
    if (Array.isArray(parsed)) {
      // pflag: the first occurrence replaces the default, later ones append.
      values[flag!.key] = sliceSet.has(name) ? [...(values[flag!.key] as unknown[]), ...parsed] : parsed;
      sliceSet.add(name);
    } else {
      values[flag!.key] = parsed;
    }
  }
  const verbosity = given.get('v');
  if (typeof verbosity === 'number' && !given.has('log-level')) values.logLevel = verbosity >= 5 ? 'trace' : verbosity >= 3 ? 'debug' : 'info';
  const result = validate(values as unknown as ControllerOptions);
  return result.ok ? { ...result, warnings: [...warnings, ...result.warnings] } : result;
}

const isError = (v: unknown): v is { error: string } => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseValue(name: string, type: FlagType, raw: string): string | number | boolean | number[] | string[] | { error: string } {
  const bad = (what: string) => ({ error: `invalid value "${raw}" for --${name}: ${what}` });
  switch (type) {
    case 'string':
      return raw;
    case 'bool': {
      const b = parseGoBool(raw);
      return b === undefined ? bad('expected true or false') : b;
    }
    case 'int':
      return /^[+-]?\d+$/.test(raw) ? Number(raw) : bad('expected an integer');
    case 'float': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      return Number.isFinite(n) ? n : bad('expected a number');
    }
    case 'duration': {
      const ms = parseGoDuration(raw);
      return ms === undefined ? bad('expected a duration such as 30s, 1m or 1h30m') : ms;
    }
    case 'seconds': {
      if (/^[+-]?\d+$/.test(raw)) return Number(raw) * 1000;
      const ms = parseGoDuration(raw);
      return ms === undefined ? bad('expected a number of seconds (or a duration such as 30s)') : ms;
    }
    case 'floats': {
      const parts = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
      const nums = parts.map((p) => Number(p));
      return nums.every((n) => Number.isFinite(n)) ? nums : bad('expected comma-separated numbers');
    }
    case 'strings':
      return raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
    case 'count':
      return /^\d{1,9}$/.test(raw.trim()) ? Number(raw) : bad('expected a whole number (0: no limit)');
    case 'bytes': {
      const n = parseBudgetBytes(raw);
      return n === null ? bad('expected a size in bytes, or with k, m or g (0: no limit)') : n;
    }
  }
}

function validate(o: ControllerOptions): ParseResult {
  const warnings: string[] = [];
  if (o.publishService !== '' && o.publishStatusAddress !== '') {
    return { ok: false, error: 'flags --publish-service and --publish-status-address are mutually exclusive' };
  }
  if (o.watchNamespace !== '' && o.watchNamespaceSelector !== '') {
    return { ok: false, error: 'flags --watch-namespace and --watch-namespace-selector are mutually exclusive' };
  }
  for (const [flag, value] of [
    ['configmap', o.configmap], ['tcp-services-configmap', o.tcpServicesConfigmap],
    ['udp-services-configmap', o.udpServicesConfigmap], ['default-backend-service', o.defaultBackendService],
    ['default-ssl-certificate', o.defaultSSLCertificate], ['publish-service', o.publishService],
  ] as const) {
    if (value !== '' && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(value)) {
      return { ok: false, error: `invalid value "${value}" for --${flag}: expected "namespace/name"` };
    }
  }
  for (const [flag, port] of [
    ['http-port', o.httpPort], ['https-port', o.httpsPort], ['status-port', o.statusPort],
    ['stream-port', o.streamPort], ['healthz-port', o.healthzPort], ['default-server-port', o.defaultServerPort],
  ] as const) {
    if (port < 1 || port > 65535) return { ok: false, error: `invalid value ${port} for --${flag}: expected a port between 1 and 65535` };
  }
  const allowed = parseAllowedClasses(o.allowUpstreamAddresses);
  if ('error' in allowed) return { ok: false, error: `invalid value "${o.allowUpstreamAddresses}" for --allow-upstream-addresses: ${allowed.error}` };
  const own = ownAddresses(o.ownAddresses);
  if ('error' in own) return { ok: false, error: `invalid value "${o.ownAddresses}" for --own-addresses: ${own.error}` };
  const ports = gatewayPorts(o);
  if ('error' in ports) return { ok: false, error: ports.error };
  if (o.validatingWebhook !== '') {
    if (!/^(\[[^\]]+\]|[^:]*):\d{1,5}$/.test(o.validatingWebhook)) {
      return { ok: false, error: `invalid value "${o.validatingWebhook}" for --validating-webhook: expected "<host>:port", e.g. ":8443"` };
    }
    if (o.validatingWebhookCertificate === '' || o.validatingWebhookKey === '') {
      return { ok: false, error: '--validating-webhook needs --validating-webhook-certificate and --validating-webhook-key' };
    }
  }
  if (!(o.syncRateLimit > 0)) return { ok: false, error: `invalid value ${o.syncRateLimit} for --sync-rate-limit: expected a positive number` };
  if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].includes(o.logLevel)) {
    return { ok: false, error: `invalid value "${o.logLevel}" for --log-level: expected trace, debug, info, warn, error, fatal or silent` };
  }
  if (o.metricsPerUndefinedHost && !o.metricsPerHost) {
    return { ok: false, error: '--metrics-per-undefined-host=true must be passed with --metrics-per-host=true' };
  }
  for (const [flag, buckets] of [['time-buckets', o.timeBuckets], ['length-buckets', o.lengthBuckets], ['size-buckets', o.sizeBuckets]] as const) {
    if (buckets.some((b, i) => b < 0 || (i > 0 && !(b > buckets[i - 1]!)))) {
      return { ok: false, error: `invalid value "${buckets.join(',')}" for --${flag}: expected increasing non-negative numbers` };
    }
    if (buckets.length > 64) return { ok: false, error: `--${flag}: at most 64 buckets` };
  }
  if (o.timeBuckets.length === 0) o.timeBuckets = DEFAULT_TIME_BUCKETS;
  if (o.lengthBuckets.length === 0) o.lengthBuckets = DEFAULT_LENGTH_BUCKETS;
  if (o.sizeBuckets.length === 0) o.sizeBuckets = DEFAULT_SIZE_BUCKETS;
  if (o.bucketFactor > 1) {
    warnings.push(`--bucket-factor=${o.bucketFactor} asks for native histograms, which only Prometheus' protobuf exposition carries; ingress-rx exports the text exposition, with the classic buckets (--time-buckets, --length-buckets, --size-buckets), as ingress-nginx's text exposition does`);
  }
  if (o.metricsMaxSeries < 1) return { ok: false, error: `invalid value ${o.metricsMaxSeries} for --metrics-max-series: expected a positive integer` };
  for (const m of o.excludeSocketMetrics) {
    if (!(REQUEST_FAMILIES as readonly string[]).includes(m.replace(/^nginx_ingress_controller_/, ''))) {
      warnings.push(`--exclude-socket-metrics: ${m} is not a request metric family; ignored`);
    }
  }
  if (o.electionTTLMs <= 0) {
    warnings.push('--election-ttl must be positive; using 30s');
    o.electionTTLMs = 30_000;
  }
  if (o.statusUpdateIntervalMs < MIN_STATUS_UPDATE_INTERVAL_MS) {
    warnings.push(`--status-update-interval of ${o.statusUpdateIntervalMs / 1000}s is too low; using 5s`);
    o.statusUpdateIntervalMs = MIN_STATUS_UPDATE_INTERVAL_MS;
  }
  if (!(o.statusUpdateRate >= 0)) {
    warnings.push(`--status-update-rate of ${o.statusUpdateRate} is not a rate; using 100`);
    o.statusUpdateRate = 100;
  }
  return { ok: true, options: o, warnings };
}

/** strconv.ParseBool's spellings. */
export function parseGoBool(raw: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(raw)) return false;
  return undefined;
}

const DURATION_UNIT_MS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};

/** time.ParseDuration's syntax ("300ms", "1.5h", "2h45m"; a bare "0"), in milliseconds. */
export function parseGoDuration(raw: string): number | undefined {
  const m = /^([+-]?)(.*)$/.exec(raw)!;
  const body = m[2]!;
  if (body === '0') return 0;
  if (body === '') return undefined;
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let total = 0;
  let at = 0;
  while (at < body.length) {
    part.lastIndex = at;
    const p = part.exec(body);
    if (!p) return undefined;
    total += Number(p[1]) * DURATION_UNIT_MS[p[2]!]!;
    at = part.lastIndex;
  }
  return m[1] === '-' ? -total : total;
}

/** The store's view of the options. */
export function toStoreOptions(o: ControllerOptions): StoreOptions {
  return {
    ingressClass: o.ingressClass,
    controllerClass: o.controllerClass,
    watchIngressWithoutClass: o.watchIngressWithoutClass,
    ingressClassByName: o.ingressClassByName,
    watchNamespaces: o.watchNamespace === '' ? [] : [o.watchNamespace],
    watchNamespaceSelector: o.watchNamespaceSelector,
    disableCatchAll: o.disableCatchAll,
    configmap: o.configmap,
    tcpServicesConfigmap: o.tcpServicesConfigmap,
    udpServicesConfigmap: o.udpServicesConfigmap,
    defaultSSLCertificate: o.defaultSSLCertificate,
    defaultBackendService: o.defaultBackendService,
    publishService: o.publishService,
    gatewayControllerName: o.gatewayControllerName,
    gatewayPorts: gatewayPorts(o) as GatewayPortOptions,
  };
}

/** --gateway-listener-ports with every port the controller and NGINX use (checked by validate()). */
function gatewayPorts(o: ControllerOptions): GatewayPortOptions | { error: string } {
  const webhook = /:(\d{1,5})$/.exec(o.validatingWebhook);
  return gatewayPortOptions(o.gatewayListenerPorts, [
    ['http-port', o.httpPort], ['https-port', o.httpsPort], ['status-port', o.statusPort], ['stream-port', o.streamPort],
    ['healthz-port', o.healthzPort], ['default-server-port', o.defaultServerPort],
    ...(o.enableSslPassthrough ? [['ssl-passthrough-proxy-port', o.sslPassthroughProxyPort] as const] : []),
    ...(webhook ? [['validating-webhook', Number(webhook[1])] as const] : []),
  ], false);
}

/** The request metrics these flags ask for (--enable-metrics on). */
/** The budgets of src/model/core/budgets.ts from their flags. */
export function toBudgets(o: Pick<ControllerOptions, keyof Budgets>): Budgets {
  return { maxPathsPerIngress: o.maxPathsPerIngress, maxPathsPerNamespace: o.maxPathsPerNamespace, maxBytesPerIngress: o.maxBytesPerIngress, maxBytesPerNamespace: o.maxBytesPerNamespace };
}

export function toRequestMetricsConfig(o: ControllerOptions): RequestMetricsConfig {
  const excluded = new Set(o.excludeSocketMetrics.map((m) => m.replace(/^nginx_ingress_controller_/, '')));
  return {
    perHost: o.metricsPerHost,
    perUndefinedHost: o.metricsPerUndefinedHost,
    statusClasses: o.reportStatusClasses,
    buckets: { time: o.timeBuckets, length: o.lengthBuckets, size: o.sizeBuckets },
    families: REQUEST_FAMILIES.filter((f: RequestFamily) => !excluded.has(f)),
    maxSeries: o.metricsMaxSeries,
  };
}

function formatDefault(f: ControllerFlag): string {
  if (f.type === 'duration') return formatDuration(f.default as number);
  if (f.type === 'seconds') return String((f.default as number) / 1000);
  if (f.type === 'bytes') return formatSize(f.default as number);
  if (Array.isArray(f.default)) return `[${(f.default as Array<number | string>).join(', ')}]`;
  return typeof f.default === 'string' ? JSON.stringify(f.default) : String(f.default);
}

function formatSize(n: number): string {
  for (const [unit, size] of [['g', 1024 ** 3], ['m', 1024 ** 2], ['k', 1024]] as const) if (n > 0 && n % size === 0) return `${n / size}${unit}`;
  return String(n);
}

function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

const TYPE_HINT: Record<FlagType, string> = {
  string: 'string', bool: '', int: 'int', float: 'float', duration: 'duration', seconds: 'seconds', floats: 'floats', strings: 'strings',
  count: 'int', bytes: 'size',
};

/** --help text: one entry per flag of CONTROLLER_FLAGS, then the flags accepted without effect. */
export function controllerHelp(): string {
  const lines = ['Usage: ingress-rx controller [flags]', '',
    'Runs the Ingress controller against a Kubernetes cluster.', '', 'Flags:'];
  for (const f of CONTROLLER_FLAGS) {
    const hint = TYPE_HINT[f.type];
    const showDefault = !(f.type === 'bool' && f.default === false) && f.default !== '';
    lines.push(`  --${f.name}${hint ? ` ${hint}` : ''}`);
    lines.push(`      ${f.help}${showDefault ? ` (default ${formatDefault(f)})` : ''}`);
  }
  lines.push('', 'Accepted for ingress-nginx\'s Deployments, with a warning at start (docs/flags.md says what applies instead):',
    `  ${INERT_FLAGS.map((f) => `--${f.name}`).join(', ')}`);
  return lines.join('\n') + '\n';
}

/** The flags with an effect as a Markdown table (docs/flags.md, written by scripts/gen-docs.ts). */
export function controllerFlagsMarkdown(): string {
  const rows = CONTROLLER_FLAGS.map((f) =>
    `| \`--${f.name}\` | ${f.type} | ${f.default === '' ? '' : `\`${formatDefault(f).replace(/^"|"$/g, '')}\``} | ${f.ours ? 'ingress-rx' : 'ingress-nginx'} | ${f.help.replace(/\|/g, '\\|')} |`);
  return ['| Flag | Type | Default | From | Description |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
}

/** The flags accepted without effect as a Markdown table (docs/flags.md, written by scripts/gen-docs.ts). */
export function inertFlagsMarkdown(): string {
  const rows = INERT_FLAGS.map((f) =>
    `| \`--${f.name}\` | ${f.from} | ${f.type} | ${f.instead.replace(/\|/g, '\\|')} | ${f.refuseIfTrue ? `\`true\`: ${f.refuseIfTrue}` : ''} |`);
  return ['| Flag | From | Type | What applies instead | Stops the start |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
}
