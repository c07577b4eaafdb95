// The `controller` command's flags: ingress-nginx's names and defaults where they apply, plus
// ingress-rx's own. CONTROLLER_FLAGS is the single table behind parsing, --help and the docs;
// every other ingress-nginx flag is refused by name, never silently ignored.
import type { StoreOptions } from '../store/types.js';
import {
  DEFAULT_LENGTH_BUCKETS, DEFAULT_MAX_REQUEST_SERIES, DEFAULT_SIZE_BUCKETS, DEFAULT_TIME_BUCKETS, REQUEST_FAMILIES,
  type RequestFamily, type RequestMetricsConfig,
} from '../observability/request-metrics.js';
import type { ServePorts } from './serve.js';
import { parseAllowedClasses } from '../model/address-policy.js';
import { BUDGET_HELP, DEFAULT_BUDGETS, parseBudgetBytes, type Budgets } from '../model/budgets.js';

/**
 * How a flag's value is read. `duration` and `seconds` both end up in milliseconds; `floats` and
 * `strings` are pflag slices (comma-separated; a repeated flag appends).
 */
export type FlagType = 'string' | 'bool' | 'int' | 'float' | 'duration' | 'seconds' | 'floats' | 'strings' | 'count' | 'bytes';

export interface ControllerOptions extends ServePorts {
  // cluster access
  kubeconfig: string;
  apiserverHost: string;
  // what to watch
  watchNamespace: string;
  watchNamespaceSelector: string;
  ingressClass: string;
  controllerClass: string;
  watchIngressWithoutClass: boolean;
  ingressClassByName: boolean;
  configmap: string;
  tcpServicesConfigmap: string;
  udpServicesConfigmap: string;
  defaultBackendService: string;
  defaultSSLCertificate: string;
  disableCatchAll: boolean;
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
  hostOwnership: boolean;
  dynamicRoutes: boolean;
  maxPathsPerIngress: number;
  maxPathsPerNamespace: number;
  maxBytesPerIngress: number;
  maxBytesPerNamespace: number;
  help: boolean;
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
  { name: 'watch-namespace', key: 'watchNamespace', type: 'string', default: '', help: 'Namespace to watch for Ingresses, Services and the rest. Empty: all namespaces.' },
  { name: 'watch-namespace-selector', key: 'watchNamespaceSelector', type: 'string', default: '', help: 'Label selector of the namespaces to watch. Exclusive with --watch-namespace.' },
  { name: 'ingress-class', key: 'ingressClass', type: 'string', default: 'nginx', help: 'Ingress class this controller serves (annotation kubernetes.io/ingress.class, and the IngressClass name with --ingress-class-by-name).' },
  { name: 'controller-class', key: 'controllerClass', type: 'string', default: 'k8s.io/ingress-nginx', help: 'IngressClass spec.controller value this controller serves.' },
  { name: 'watch-ingress-without-class', key: 'watchIngressWithoutClass', type: 'bool', default: false, help: 'Also serve Ingresses with neither an IngressClass nor the class annotation.' },
  { name: 'ingress-class-by-name', key: 'ingressClassByName', type: 'bool', default: false, help: 'Serve Ingresses whose spec.ingressClassName equals --ingress-class, even without a matching IngressClass.' },
  { name: 'configmap', key: 'configmap', type: 'string', default: '', help: 'ConfigMap with the global NGINX settings, "namespace/name".' },
  { name: 'tcp-services-configmap', key: 'tcpServicesConfigmap', type: 'string', default: '', help: 'ConfigMap of TCP services to expose, "namespace/name"; keys are external ports, values "namespace/service:port".' },
  { name: 'udp-services-configmap', key: 'udpServicesConfigmap', type: 'string', default: '', help: 'ConfigMap of UDP services to expose, "namespace/name"; keys are external ports, values "namespace/service:port".' },
  { name: 'default-backend-service', key: 'defaultBackendService', type: 'string', default: '', help: 'Service, "namespace/name", that serves requests matching no server (catch-all). Empty: a built-in 404.' },
  { name: 'default-ssl-certificate', key: 'defaultSSLCertificate', type: 'string', default: '', help: 'Secret, "namespace/name", with the certificate of the default HTTPS server.' },
  { name: 'disable-catch-all', key: 'disableCatchAll', type: 'bool', default: false, help: 'Ignore catch-all Ingresses (a spec.defaultBackend and no rules).' },
  { name: 'annotations-prefix', key: 'annotationsPrefix', type: 'string', default: 'nginx.ingress.kubernetes.io', help: 'Prefix of the Ingress annotations this controller reads.' },
  { name: 'publish-service', key: 'publishService', type: 'string', default: '', help: 'Service, "namespace/name", fronting the controller; its addresses become the load-balancer status of the Ingresses. Exclusive with --publish-status-address.' },
  { name: 'publish-status-address', key: 'publishStatusAddress', type: 'string', default: '', help: 'Address or addresses (comma-separated IPs or hostnames) to set as the load-balancer status of the Ingresses.' },
  { name: 'update-status', key: 'updateStatus', type: 'bool', default: true, help: 'Write the load-balancer status of the Ingresses this controller serves.' },
  { name: 'update-status-on-shutdown', key: 'updateStatusOnShutdown', type: 'bool', default: true, help: 'On shutdown, clear the status of the Ingresses when this is the last controller pod.' },
  { name: 'election-id', key: 'electionId', type: 'string', default: 'ingress-controller-leader', help: 'Name of the coordination.k8s.io Lease used to elect the pod that writes Ingress status.' },
  { name: 'election-ttl', key: 'electionTTLMs', type: 'duration', default: 30_000, help: 'Lease duration of the leader election; the renew deadline is half of it, the retry period a quarter.' },
  { name: 'disable-leader-election', key: 'disableLeaderElection', type: 'bool', default: false, help: 'Do not elect a leader: this pod writes the Ingress status as if it were the leader.' },
  { name: 'status-update-interval', key: 'statusUpdateIntervalMs', type: 'seconds', default: 60_000, help: 'Seconds between two checks of the Ingress status (at least 5).' },
  { name: 'report-node-internal-ip-address', key: 'reportNodeInternalIpAddress', type: 'bool', default: false, help: 'Report the nodes\' internal addresses instead of external ones in the Ingress status.' },
  { name: 'sync-rate-limit', key: 'syncRateLimit', type: 'float', default: 0.3, help: 'Upper limit of syncs per second (token bucket with a burst of 1).' },
  { name: 'http-port', key: 'httpPort', type: 'int', default: 80, help: 'Port serving HTTP traffic.' },
  { name: 'https-port', key: 'httpsPort', type: 'int', default: 443, help: 'Port serving HTTPS traffic.' },
  { name: 'status-port', key: 'statusPort', type: 'int', default: 10246, help: 'Reserved (tcp-services may not take it); NGINX does not listen on it: the Lua configuration endpoint is on a unix socket in --workdir (docs/security.md).' },
  { name: 'stream-port', key: 'streamPort', type: 'int', default: 10247, help: 'Loopback port of the Lua TCP/UDP configuration endpoint.' },
  { name: 'healthz-port', key: 'healthzPort', type: 'int', default: 10254, help: 'Port of /healthz and /metrics.' },
  { name: 'default-server-port', key: 'defaultServerPort', type: 'int', default: 8181, help: 'Port of the default server (catch-all).' },
  { name: 'enable-ssl-passthrough', key: 'enableSslPassthrough', type: 'bool', default: false, help: 'Serve the ssl-passthrough annotation: a stream server on the HTTPS port reads the SNI and sends those hosts\' TLS to their backends untouched.' },
  { name: 'ssl-passthrough-proxy-port', key: 'sslPassthroughProxyPort', type: 'int', default: 442, help: 'Loopback port of NGINX\'s HTTPS servers when --enable-ssl-passthrough is on.' },
  { name: 'enable-metrics', key: 'enableMetrics', type: 'bool', default: true, help: 'Collect request, NGINX process and stub_status metrics (NGINX writes a metrics log the controller reads); the controller\'s own metrics are exposed on the healthz port either way.' },
  { name: 'metrics-per-host', key: 'metricsPerHost', type: 'bool', default: true, help: 'Label request metrics with the host; requests to hosts no Ingress defines are then not counted.' },
  { name: 'metrics-per-undefined-host', key: 'metricsPerUndefinedHost', type: 'bool', default: false, help: 'Also count requests to hosts no Ingress defines, labelled with their host. Requires --metrics-per-host.' },
  { name: 'report-status-classes', key: 'reportStatusClasses', type: 'bool', default: false, help: 'Label request metrics with status classes (2xx, 3xx, 4xx, 5xx) instead of status codes.' },
  { name: 'time-buckets', key: 'timeBuckets', type: 'floats', default: DEFAULT_TIME_BUCKETS, help: 'Buckets of the request, response, header and connect duration histograms (seconds).' },
  { name: 'length-buckets', key: 'lengthBuckets', type: 'floats', default: DEFAULT_LENGTH_BUCKETS, help: 'Buckets of the request_size and response_size histograms (bytes).' },
  { name: 'size-buckets', key: 'sizeBuckets', type: 'floats', default: DEFAULT_SIZE_BUCKETS, help: 'Buckets of the bytes_sent histogram (bytes).' },
  { name: 'bucket-factor', key: 'bucketFactor', type: 'float', default: 0, help: 'Native histograms\' bucket factor; only values up to 1 (native histograms off) are accepted: the text exposition has no native histograms.' },
  { name: 'max-buckets', key: 'maxBuckets', type: 'int', default: 100, help: 'Native histograms\' maximum bucket count; without native histograms it has no effect.' },
  { name: 'exclude-socket-metrics', key: 'excludeSocketMetrics', type: 'strings', default: [], help: 'Request metric families neither collected nor exported, e.g. nginx_ingress_controller_request_size,nginx_ingress_controller_header_duration_seconds.' },
  { name: 'metrics-max-series', key: 'metricsMaxSeries', type: 'int', default: DEFAULT_MAX_REQUEST_SERIES, help: 'Label sets the controller keeps across the request metric families; requests of further ones are counted in ingress_rx_metrics_log_lines_total{outcome="dropped"}.', ours: true },
  { name: 'validating-webhook', key: 'validatingWebhook', type: 'string', default: '', help: 'Address of the validating admission webhook, "<host>:port" (":8443": every address). Empty: no webhook. Reviews run the controller\'s own parsers and rules on the Ingress and those sharing its hosts; no program is run on them.' },
  { name: 'validating-webhook-certificate', key: 'validatingWebhookCertificate', type: 'string', default: '', help: 'PEM certificate of the webhook\'s HTTPS server (re-read when the file changes).' },
  { name: 'validating-webhook-key', key: 'validatingWebhookKey', type: 'string', default: '', help: 'PEM key of the webhook\'s HTTPS server (re-read when the file changes).' },
  { name: 'shutdown-grace-period', key: 'shutdownGracePeriodMs', type: 'seconds', default: 0, help: 'Seconds to wait after the shutdown signal before stopping NGINX.' },
  { name: 'post-shutdown-grace-period', key: 'postShutdownGracePeriodMs', type: 'seconds', default: 10_000, help: 'Seconds to wait after NGINX stopped before the controller exits.' },
  { name: 'log-level', key: 'logLevel', type: 'string', default: 'info', help: 'Log level: trace, debug, info, warn, error, fatal or silent.', ours: true },
  { name: 'record', key: 'record', type: 'string', default: '', help: 'Append every source event and task to this NDJSON file, for `ingress-rx replay`.', ours: true },
  { name: 'record-secrets', key: 'recordSecrets', type: 'bool', default: false, help: 'Keep Secret data in the recording (redacted by default).', ours: true },
  { name: 'trace', key: 'trace', type: 'string', default: '', help: 'Trace every event through the pipeline and write a Chrome trace-event file (Perfetto) here.', ours: true },
  { name: 'workdir', key: 'workdir', type: 'string', default: '/tmp/ingress-rx', help: 'Directory for nginx.conf, NGINX\'s prefix and temporary files.', ours: true },
  { name: 'geoip-dir', key: 'geoipDir', type: 'string', default: '/etc/ingress-controller/geoip', help: 'Directory of the GeoIP2 databases; changes to it reload NGINX.', ours: true },
  { name: 'allow-upstream-addresses', key: 'allowUpstreamAddresses', type: 'string', default: '', help: 'Node-local upstream addresses to allow, comma-separated: loopback, unspecified, link-local. Empty: endpoints and ExternalName targets of these classes are refused with a warning (docs/security.md).', ours: true },
  { name: 'host-ownership', key: 'hostOwnership', type: 'bool', default: false, help: 'The namespace of the oldest Ingress of a host owns it: rules, canaries and aliases for that host from other namespaces are refused with a warning (docs/security.md).', ours: true },
  { name: 'enable-dynamic-routes', key: 'dynamicRoutes', type: 'bool', default: true, help: 'Serve the hosts whose Ingresses Lua can apply per request from a route table the controller POSTs, so adding or changing them needs no reload (docs/dynamic-routes.md). false: every host has a server block, as in ingress-nginx.', ours: true },
  { name: 'max-paths-per-ingress', key: 'maxPathsPerIngress', type: 'count', default: DEFAULT_BUDGETS.maxPathsPerIngress, help: BUDGET_HELP.maxPathsPerIngress, ours: true },
  { name: 'max-paths-per-namespace', key: 'maxPathsPerNamespace', type: 'count', default: DEFAULT_BUDGETS.maxPathsPerNamespace, help: BUDGET_HELP.maxPathsPerNamespace, ours: true },
  { name: 'max-bytes-per-ingress', key: 'maxBytesPerIngress', type: 'bytes', default: DEFAULT_BUDGETS.maxBytesPerIngress, help: BUDGET_HELP.maxBytesPerIngress, ours: true },
  { name: 'max-bytes-per-namespace', key: 'maxBytesPerNamespace', type: 'bytes', default: DEFAULT_BUDGETS.maxBytesPerNamespace, help: BUDGET_HELP.maxBytesPerNamespace, ours: true },
  { name: 'help', key: 'help', type: 'bool', default: false, help: 'Print this help and exit.', ours: true },
];

/** ingress-nginx controller flags that ingress-rx refuses (pkg/flags/flags.go), with the reason. */
export const REFUSED_INGRESS_NGINX_FLAGS: Readonly<Record<string, string>> = {
  'certificate-authority': 'put the CA in the kubeconfig (--kubeconfig)',
  'sync-period': 'watches relist on their own; there is no forced resync',
  'profiling': 'there is no Go profiler; use node --inspect',
  'profiler-port': 'there is no Go profiler',
  'profiler-address': 'there is no Go profiler',
  'health-check-path': '/healthz is fixed',
  'health-check-timeout': 'the health check has a fixed timeout',
  'healthz-host': '/healthz listens on all addresses',
  'version': 'the controller command prints no version',
  'disable-svc-external-name': 'ExternalName Services are handled as ingress-nginx does by default',
  'enable-annotation-validation': 'annotations are always validated',
  'enable-ssl-chain-completion': 'certificate chains are not completed',
  'disable-full-test': 'the admission webhook never builds the full configuration: it always builds only the reviewed Ingress\'s hosts',
  'internal-logger-address': 'there is no internal syslog listener',
  'deep-inspect': 'annotations and paths are always validated',
  'dynamic-configuration-retries': 'the retry schedule of dynamic configuration is fixed',
  'disable-sync-events': 'ingress-rx records no Sync events',
  'monitor-max-batch-size': 'NGINX writes request metrics to a buffered log the controller reads; there are no batches to bound (--metrics-max-series bounds the series)',
  'enable-topology-aware-routing': 'topology aware routing is not implemented',
  'maxmind-mirror': 'GeoIP databases are not downloaded; put them in --geoip-dir',
  'maxmind-license-key': 'GeoIP databases are not downloaded; put them in --geoip-dir',
  'maxmind-edition-ids': 'GeoIP databases are not downloaded; put them in --geoip-dir',
  'maxmind-retries-count': 'GeoIP databases are not downloaded; put them in --geoip-dir',
  'maxmind-retries-timeout': 'GeoIP databases are not downloaded; put them in --geoip-dir',
};

/** The Go logging (klog) flags ingress-nginx's binary also accepts. */
export const REFUSED_KLOG_FLAGS: readonly string[] = [
  'v', 'vmodule', 'logtostderr', 'alsologtostderr', 'log_dir', 'log_file', 'log_file_max_size',
  'skip_headers', 'skip_log_headers', 'stderrthreshold', 'one_output', 'add_dir_header', 'log_backtrace_at',
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

/** Parses `--flag=value`, `--flag value` and Go-style booleans (`--flag`, `--flag=false`). */
export function parseControllerFlags(argv: string[]): ParseResult {
  const byName = new Map(CONTROLLER_FLAGS.map((f) => [f.name, f]));
  const values: Record<string, unknown> = { ...defaultControllerOptions() };
  const sliceSet = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h') { values.help = true; continue; }
    if (!arg.startsWith('--') || arg === '--') {
      return { ok: false, error: `unexpected argument "${arg}": the controller command takes only --flags` };
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const flag = byName.get(name);
    if (!flag) return { ok: false, error: refusal(name) };
    let raw: string;
    if (eq >= 0) raw = arg.slice(eq + 1);
    else if (flag.type === 'bool') raw = 'true';
    else if (i + 1 < argv.length) raw = argv[++i]!;
    else return { ok: false, error: `flag --${name} needs a value` };
    const parsed = parseValue(flag, raw);
    if (isError(parsed)) return { ok: false, error: parsed.error };
    if (Array.isArray(parsed)) {
      // pflag: the first occurrence replaces the default, later ones append.
      values[flag.key] = sliceSet.has(flag.name) ? [...(values[flag.key] as unknown[]), ...parsed] : parsed;
      sliceSet.add(flag.name);
    } else {
      values[flag.key] = parsed;
    }
  }
  return validate(values as unknown as ControllerOptions);
}

function refusal(name: string): string {
  const reason = REFUSED_INGRESS_NGINX_FLAGS[name];
  if (reason !== undefined) {
    return `--${name} is an ingress-nginx flag that ingress-rx does not support (${reason}); remove it (see docs/differences.md)`;
  }
  if (REFUSED_KLOG_FLAGS.includes(name)) {
    return `--${name} is an ingress-nginx (klog) logging flag that ingress-rx does not support; use --log-level`;
  }
  return `unknown flag --${name} (see \`ingress-rx controller --help\`)`;
}

const isError = (v: unknown): v is { error: string } => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseValue(flag: ControllerFlag, raw: string): string | number | boolean | number[] | string[] | { error: string } {
  const bad = (what: string) => ({ error: `invalid value "${raw}" for --${flag.name}: ${what}` });
  switch (flag.type) {
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
    return { ok: false, error: `--bucket-factor=${o.bucketFactor} asks for native histograms, which ingress-rx does not export (the text exposition format has none); leave it at 0` };
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
  };
}

/** The request metrics these flags ask for (--enable-metrics on). */
/** The budgets of src/model/budgets.ts from their flags. */
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

/** --help text: one entry per flag of CONTROLLER_FLAGS. */
export function controllerHelp(): string {
  const lines = ['Usage: ingress-rx controller [flags]', '',
    'Runs the Ingress controller against a Kubernetes cluster.', '', 'Flags:'];
  for (const f of CONTROLLER_FLAGS) {
    const hint = TYPE_HINT[f.type];
    const showDefault = !(f.type === 'bool' && f.default === false) && f.default !== '';
    lines.push(`  --${f.name}${hint ? ` ${hint}` : ''}`);
    lines.push(`      ${f.help}${showDefault ? ` (default ${formatDefault(f)})` : ''}`);
  }
  lines.push('', `ingress-nginx flags that ingress-rx refuses: ${Object.keys(REFUSED_INGRESS_NGINX_FLAGS).map((n) => `--${n}`).join(', ')}.`);
  return lines.join('\n') + '\n';
}

/** The flags as a Markdown table (docs/controller.md is checked against it). */
export function controllerFlagsMarkdown(): string {
  const rows = CONTROLLER_FLAGS.map((f) =>
    `| \`--${f.name}\` | ${f.type} | ${f.default === '' ? '' : `\`${formatDefault(f).replace(/^"|"$/g, '')}\``} | ${f.ours ? 'ingress-rx' : 'ingress-nginx'} | ${f.help.replace(/\|/g, '\\|')} |`);
  return ['| Flag | Type | Default | From | Description |', '|---|---|---|---|---|', ...rows].join('\n') + '\n';
}

/** The refused ingress-nginx flags as a Markdown table (docs/controller.md is checked against it). */
export function refusedFlagsMarkdown(): string {
  const rows = Object.entries(REFUSED_INGRESS_NGINX_FLAGS).map(([name, why]) => `| \`--${name}\` | ${why} |`);
  return ['| ingress-nginx flag | Why ingress-rx refuses it |', '|---|---|', ...rows].join('\n') + '\n';
}
