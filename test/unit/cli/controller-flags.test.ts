// The controller's flags: ingress-nginx's names and defaults, Go-style values, every ingress-nginx
// and klog flag accepted (with a warning where it has no effect), and the few refusals.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  CONTROLLER_FLAGS, INERT_FLAGS, controllerFlagsMarkdown, controllerHelp, defaultControllerOptions,
  parseControllerFlags, parseGoDuration, inertFlagsMarkdown, toRequestMetricsConfig, toStoreOptions, type ControllerOptions,
} from '../../../src/cli/controller-flags.js';

function parsed(argv: string[]): ControllerOptions {
  const r = parseControllerFlags(argv);
  if (!r.ok) throw new Error(`expected ${argv.join(' ')} to parse: ${r.error}`);
  return r.options;
}
function refused(argv: string[]): string {
  const r = parseControllerFlags(argv);
  if (r.ok) throw new Error(`expected ${argv.join(' ')} to be refused`);
  return r.error;
}

test('defaults are ingress-nginx\'s', () => {
  const o = parsed([]);
  assert.is(o.ingressClass, 'nginx');
  assert.is(o.controllerClass, 'k8s.io/ingress-nginx');
  assert.is(o.electionId, 'ingress-controller-leader');
  assert.is(o.electionTTLMs, 30_000);
  assert.is(o.updateStatus, true);
  assert.is(o.updateStatusOnShutdown, true);
  assert.is(o.statusUpdateIntervalMs, 60_000);
  assert.is(o.syncRateLimit, 0.3);
  assert.equal([o.httpPort, o.httpsPort, o.statusPort, o.streamPort, o.healthzPort, o.defaultServerPort],
    [80, 443, 10246, 10247, 10254, 8181]);
  assert.is(o.annotationsPrefix, 'nginx.ingress.kubernetes.io');
  assert.is(o.enableMetrics, false, 'off since ingress-nginx v1.12 (#12095)');
  assert.is(o.shutdownGracePeriodMs, 0);
  assert.is(o.postShutdownGracePeriodMs, 10_000);
  assert.is(o.watchIngressWithoutClass, false);
  assert.is(o.disableLeaderElection, false);
});

test('every flag of the table has a default of its type and a distinct option key', () => {
  const keys = new Set<string>();
  const defaults = defaultControllerOptions() as unknown as Record<string, unknown>;
  for (const f of CONTROLLER_FLAGS) {
    assert.not.ok(keys.has(f.key), `duplicate key ${f.key}`);
    keys.add(f.key);
    const want = f.type === 'bool' ? 'boolean' : f.type === 'string' ? 'string' : f.type === 'floats' || f.type === 'strings' ? 'array' : 'number';
    assert.is(Array.isArray(defaults[f.key]) ? 'array' : typeof defaults[f.key], want, `--${f.name}`);
    assert.ok(f.help.length > 10, `--${f.name} has help`);
  }
});

const accepted: Array<[string[], Partial<ControllerOptions>]> = [
  [['--ingress-class=internal'], { ingressClass: 'internal' }],
  [['--ingress-class', 'internal'], { ingressClass: 'internal' }],
  [['--watch-ingress-without-class'], { watchIngressWithoutClass: true }],
  [['--watch-ingress-without-class=true'], { watchIngressWithoutClass: true }],
  [['--update-status=false'], { updateStatus: false }],
  [['--update-status=0'], { updateStatus: false }],
  [['--update-status=F'], { updateStatus: false }],
  [['--enable-metrics=FALSE'], { enableMetrics: false }],
  [['--election-ttl=1m'], { electionTTLMs: 60_000 }],
  [['--election-ttl', '1m30s'], { electionTTLMs: 90_000 }],
  [['--election-ttl=1.5s'], { electionTTLMs: 1_500 }],
  [['--election-ttl=250ms'], { electionTTLMs: 250 }],
  [['--status-update-interval=30'], { statusUpdateIntervalMs: 30_000 }],
  [['--status-update-interval=2m'], { statusUpdateIntervalMs: 120_000 }],
  [['--shutdown-grace-period=15'], { shutdownGracePeriodMs: 15_000 }],
  [['--sync-rate-limit=2.5'], { syncRateLimit: 2.5 }],
  [['--http-port=8080', '--https-port', '8443'], { httpPort: 8080, httpsPort: 8443 }],
  [['--enable-ssl-passthrough', '--ssl-passthrough-proxy-port=4442'], { enableSslPassthrough: true, sslPassthroughProxyPort: 4442 }],
  [['--publish-service=ingress-nginx/ingress-nginx-controller'], { publishService: 'ingress-nginx/ingress-nginx-controller' }],
  [['--publish-status-address=1.2.3.4, lb.example.com'], { publishStatusAddress: '1.2.3.4, lb.example.com' }],
  [['--configmap=ingress-nginx/ingress-nginx-controller'], { configmap: 'ingress-nginx/ingress-nginx-controller' }],
  [['--watch-namespace-selector=team in (a,b)'], { watchNamespaceSelector: 'team in (a,b)' }],
  [['--log-level=debug', '--record', '/tmp/r.ndjson', '--record-secrets'], { logLevel: 'debug', record: '/tmp/r.ndjson', recordSecrets: true }],
  [['--ingress-class=a', '--ingress-class=b'], { ingressClass: 'b' }],
  [['--validating-webhook=:8443', '--validating-webhook-certificate=/usr/local/certificates/cert', '--validating-webhook-key=/usr/local/certificates/key'],
    { validatingWebhook: ':8443', validatingWebhookCertificate: '/usr/local/certificates/cert', validatingWebhookKey: '/usr/local/certificates/key' }],
  [['--help'], { help: true }],
  [['-h'], { help: true }],
  [['--metrics-per-host=false'], { metricsPerHost: false }],
  [['--metrics-per-undefined-host'], { metricsPerUndefinedHost: true, metricsPerHost: true }],
  [['--report-status-classes'], { reportStatusClasses: true }],
  [['--time-buckets=0.1,0.5,1'], { timeBuckets: [0.1, 0.5, 1] }],
  [['--time-buckets=0.1', '--time-buckets=2'], { timeBuckets: [0.1, 2] }],
  [['--length-buckets', '100, 1000'], { lengthBuckets: [100, 1000] }],
  [['--size-buckets=1e3,1e6'], { sizeBuckets: [1000, 1e6] }],
  [['--time-buckets='], { timeBuckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] }],
  [['--bucket-factor=0', '--max-buckets=160'], { bucketFactor: 0, maxBuckets: 160 }],
  [['--exclude-socket-metrics=nginx_ingress_controller_request_size,header_duration_seconds'], { excludeSocketMetrics: ['nginx_ingress_controller_request_size', 'header_duration_seconds'] }],
  [['--metrics-max-series=500'], { metricsMaxSeries: 500 }],
  [['--disable-svc-external-name'], { disableSvcExternalName: true }],
];
for (const [argv, want] of accepted) {
  test(`accepts ${argv.join(' ')}`, () => {
    const o = parsed(argv) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries(want)) assert.equal(o[k], v, k);
  });
}

const refusals: Array<[string[], RegExp]> = [
  [['--enable-ssl-passthrough=maybe'], /invalid value "maybe" for --enable-ssl-passthrough/],
  [['--validating-webhook=:8443'], /--validating-webhook needs --validating-webhook-certificate and --validating-webhook-key/],
  [['--validating-webhook=8443', '--validating-webhook-certificate=/c', '--validating-webhook-key=/k'], /--validating-webhook: expected "<host>:port"/],
  [['--sync-period=often'], /invalid value "often" for --sync-period/],
  [['--v=loud'], /invalid value "loud" for --v/],
  [['--no-such-flag'], /unknown flag --no-such-flag/],
  [['-ingress-class=nginx'], /unknown shorthand flag in "-ingress-class=nginx"/],
  [['--update-status=yes'], /invalid value "yes" for --update-status/],
  [['--http-port=eighty'], /invalid value "eighty" for --http-port/],
  [['--http-port=70000'], /--http-port: expected a port/],
  [['--election-ttl=30'], /invalid value "30" for --election-ttl/],
  [['--election-ttl=5x'], /--election-ttl/],
  [['--sync-rate-limit=fast'], /--sync-rate-limit/],
  [['--ingress-class'], /--ingress-class needs a value/],
  [['--publish-service=a/b', '--publish-status-address=1.1.1.1'], /mutually exclusive/],
  [['--watch-namespace=a', '--watch-namespace-selector=x=y'], /mutually exclusive/],
  [['--configmap=justaname'], /--configmap: expected "namespace\/name"/],
  [['--log-level=loud'], /--log-level/],
  [['--metrics-per-host=false', '--metrics-per-undefined-host'], /--metrics-per-undefined-host=true must be passed with --metrics-per-host=true/],
  [['--time-buckets=1,0.5'], /--time-buckets: expected increasing/],
  [['--size-buckets=-1,10'], /--size-buckets: expected increasing non-negative/],
  [['--length-buckets=ten'], /invalid value "ten" for --length-buckets/],
  [['--metrics-max-series=0'], /--metrics-max-series/],
];
test('the metrics flags become the request metrics\' configuration, with ingress-nginx\'s defaults', () => {
  const d = toRequestMetricsConfig(parsed([]));
  assert.equal(d, { perHost: true, perUndefinedHost: false, statusClasses: false,
    buckets: { time: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], length: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100], size: [10, 100, 1000, 10000, 100000, 1e6, 1e7] },
    families: ['requests', 'request_duration_seconds', 'response_duration_seconds', 'header_duration_seconds', 'connect_duration_seconds', 'request_size', 'response_size', 'bytes_sent', 'ingress_upstream_latency_seconds'],
    maxSeries: 10_000 });
  const r = parseControllerFlags(['--exclude-socket-metrics=nginx_ingress_controller_request_size,bytes_sent,nginx_ingress_controller_success,no_such_metric']);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.equal(toRequestMetricsConfig(r.options).families.filter((f) => f === 'request_size' || f === 'bytes_sent'), []);
  assert.is(toRequestMetricsConfig(r.options).families.length, 7);
  // As ingress-nginx, names that are no request family do nothing; ingress-rx says so.
  assert.equal(r.warnings.filter((w) => w.includes('exclude-socket-metrics')).length, 2);
});

for (const [argv, want] of refusals) {
  test(`refuses ${argv.join(' ')}`, () => {
    assert.match(refused(argv), want);
  });
}

// The 72 flags of ingress-nginx's pkg/flags/flags.go (v1.15.1).
const INGRESS_NGINX_FLAGS = [
  'apiserver-host', 'certificate-authority', 'kubeconfig', 'default-backend-service', 'ingress-class',
  'controller-class', 'watch-ingress-without-class', 'ingress-class-by-name', 'configmap', 'publish-service',
  'tcp-services-configmap', 'udp-services-configmap', 'sync-period', 'watch-namespace', 'watch-namespace-selector',
  'profiling', 'default-ssl-certificate', 'health-check-path', 'health-check-timeout', 'update-status',
  'election-id', 'election-ttl', 'update-status-on-shutdown', 'report-node-internal-ip-address', 'version',
  'enable-ssl-passthrough', 'disable-leader-election', 'disable-svc-external-name', 'annotations-prefix',
  'enable-annotation-validation', 'enable-ssl-chain-completion', 'sync-rate-limit', 'publish-status-address',
  'enable-metrics', 'metrics-per-host', 'metrics-per-undefined-host', 'report-status-classes', 'time-buckets',
  'length-buckets', 'size-buckets', 'bucket-factor', 'max-buckets', 'exclude-socket-metrics',
  'monitor-max-batch-size', 'http-port', 'https-port', 'ssl-passthrough-proxy-port', 'default-server-port',
  'healthz-port', 'healthz-host', 'disable-catch-all', 'validating-webhook', 'validating-webhook-certificate',
  'validating-webhook-key', 'disable-full-test', 'status-port', 'stream-port', 'internal-logger-address',
  'profiler-port', 'profiler-address', 'status-update-interval', 'shutdown-grace-period',
  'post-shutdown-grace-period', 'deep-inspect', 'dynamic-configuration-retries', 'disable-sync-events',
  'enable-topology-aware-routing', 'maxmind-mirror', 'maxmind-license-key', 'maxmind-edition-ids',
  'maxmind-retries-count', 'maxmind-retries-timeout',
];
// klog v2.140's InitFlags, which ingress-nginx adds to its flag set.
const KLOG_FLAGS = [
  'log_dir', 'log_file', 'log_file_max_size', 'logtostderr', 'alsologtostderr', 'legacy_stderr_threshold_behavior', 'v',
  'add_dir_header', 'skip_headers', 'one_output', 'skip_log_headers', 'stderrthreshold', 'alsologtostderrthreshold',
  'vmodule', 'log_backtrace_at',
];
/** A value of each flag's type that ingress-nginx's own binary would take. */
const SAMPLE: Record<string, string> = { string: 'x', bool: 'false', int: '3', duration: '10s', float: '0.5', seconds: '12', floats: '1,2', strings: 'a,b' };

test('every ingress-nginx and klog flag is accepted: with an effect, or with one warning naming what applies instead', () => {
  assert.is(INGRESS_NGINX_FLAGS.length, 72);
  const effective = new Set(CONTROLLER_FLAGS.filter((f) => !f.ours).map((f) => f.name));
  const inert = new Map(INERT_FLAGS.map((f) => [f.name, f]));
  for (const name of [...INGRESS_NGINX_FLAGS, ...KLOG_FLAGS]) {
    assert.ok(effective.has(name) !== inert.has(name), `--${name}: exactly one of with effect / without`);
    const type = CONTROLLER_FLAGS.find((f) => f.name === name)?.type ?? inert.get(name)!.type;
    const value = name === 'validating-webhook' ? ':8443' : name.endsWith('configmap') || name.endsWith('-service') || name === 'default-ssl-certificate' ? 'ns/x'
      : name === 'https-port' || name.endsWith('-port') ? '8080' : SAMPLE[type]!;
    const extra = name === 'validating-webhook' ? ['--validating-webhook-certificate=/c', '--validating-webhook-key=/k'] : [];
    const r = parseControllerFlags([`--${name}=${value}`, ...extra]);
    assert.ok(r.ok, `--${name}=${value}: ${r.ok ? '' : r.error}`);
    if (!r.ok) continue;
    const mentions = r.warnings.filter((w) => w.startsWith(`--${name}=`));
    if (inert.has(name)) {
      assert.is(mentions.length, 1, `--${name}: one warning`);
      assert.ok(mentions[0]!.includes(inert.get(name)!.instead), `--${name}: the warning says what applies instead`);
    } else assert.is(mentions.length, 0, `--${name} has an effect: no warning`);
  }
  // Nothing marked as ingress-nginx's or klog's is invented.
  for (const name of effective) assert.ok(INGRESS_NGINX_FLAGS.includes(name), `--${name} is not an ingress-nginx flag`);
  for (const f of INERT_FLAGS) assert.ok((f.from === 'klog' ? KLOG_FLAGS : INGRESS_NGINX_FLAGS).includes(f.name), `--${f.name} is not a ${f.from} flag`);
});

test('an ingress-nginx Deployment\'s args start the controller as they are: the program name, pflag spellings, klog\'s -v', () => {
  const r = parseControllerFlags(['/nginx-ingress-controller', '--publish-service=ingress-nginx/ingress-nginx-controller',
    '--election-id=ingress-nginx-leader', '--v=2', '--logtostderr', '-v', '3', '--enable-metrics=true', '--', 'trailing']);
  assert.ok(r.ok, r.ok ? '' : r.error);
  if (!r.ok) return;
  assert.is(r.options.electionId, 'ingress-nginx-leader');
  assert.is(r.options.enableMetrics, true);
  assert.is(r.options.logLevel, 'debug', 'the last --v (3) picks debug');
  assert.is(r.warnings.filter((w) => w.startsWith('--v=')).length, 1, 'one warning per flag, however often given');
  assert.ok(r.warnings.some((w) => w.includes('positional argument "trailing" ignored')));
  assert.not.ok(r.warnings.some((w) => w.includes('/nginx-ingress-controller')), 'the program\'s own path is expected, not warned about');
  for (const [argv, level] of [[['-v=5'], 'trace'], [['-v2'], 'info'], [['--v=4'], 'debug'], [['--v=9', '--log-level=warn'], 'warn']] as const) {
    const p = parseControllerFlags([...argv]);
    assert.ok(p.ok && p.options.logLevel === level, `${argv.join(' ')} → ${level}`);
  }
});

test('flags whose value has an effect: --healthz-host, --certificate-authority, --version; --bucket-factor above 1 warns', () => {
  const o = parsed(['--healthz-host=127.0.0.1', '--apiserver-host=https://10.0.0.1', '--certificate-authority=/ca.crt', '--version']);
  assert.is(o.healthzHost, '127.0.0.1');
  assert.is(o.certificateAuthority, '/ca.crt');
  assert.is(o.version, true);
  const r = parseControllerFlags(['--bucket-factor=1.1']);
  assert.ok(r.ok && r.warnings.some((w) => /native histograms.*classic buckets/.test(w)));
});

test('a too low status interval is raised to 5 s with a warning, as ingress-nginx does', () => {
  const r = parseControllerFlags(['--status-update-interval=1']);
  assert.ok(r.ok);
  if (r.ok) {
    assert.is(r.options.statusUpdateIntervalMs, 5_000);
    assert.match(r.warnings.join('\n'), 'too low');
  }
});

test('Go durations', () => {
  assert.is(parseGoDuration('0'), 0);
  assert.is(parseGoDuration('1h2m3s'), 3_723_000);
  assert.is(parseGoDuration('.5s'), 500);
  assert.is(parseGoDuration('1000us'), 1);
  assert.is(parseGoDuration('-2s'), -2000);
  assert.is(parseGoDuration(''), undefined);
  assert.is(parseGoDuration('10'), undefined);
  assert.is(parseGoDuration('1d'), undefined);
  assert.is(parseGoDuration('s'), undefined);
});

test('help documents every flag with its default', () => {
  const help = controllerHelp();
  for (const f of CONTROLLER_FLAGS) assert.ok(help.includes(`--${f.name}`), `--${f.name}`);
  assert.match(help, /--election-ttl duration\n.*\(default 30s\)/);
  assert.match(help, /--status-update-interval seconds\n.*\(default 60\)/);
  assert.match(help, /--ingress-class string\n.*\(default "nginx"\)/);
});

test('docs/flags.md shows the flag tables generated from the code', () => {
  const doc = readFileSync(new URL('../../../docs/flags.md', import.meta.url), 'utf8');
  const between = (name: string) => doc.split(`<!-- ${name}:begin -->\n`)[1]?.split(`<!-- ${name}:end -->`)[0];
  assert.is(between('flags'), controllerFlagsMarkdown());
  assert.is(between('inert'), inertFlagsMarkdown());
});

test('tenant isolation flags: node-local upstreams refused and host ownership off unless asked for', () => {
  const o = parsed([]);
  assert.is(o.allowUpstreamAddresses, '');
  assert.is(o.hostOwnership, false);
  const on = parsed(['--allow-upstream-addresses=loopback,link-local', '--host-ownership']);
  assert.is(on.allowUpstreamAddresses, 'loopback,link-local');
  assert.is(on.hostOwnership, true);
  assert.match(refused(['--allow-upstream-addresses=loopback,everything']), /--allow-upstream-addresses: "everything" is not an address class/);
});

test('--own-addresses: the pod\'s addresses given, or POD_IP and the interfaces\' when empty; a name is refused', async () => {
  const { ownAddresses } = await import('../../../src/cli/own-addresses.js');
  assert.equal([...(ownAddresses(' 10.1.2.3, 2001:DB8::7 ') as Set<string>)], ['10.1.2.3', '2001:db8::7']);
  const found = ownAddresses('', { POD_IP: '10.9.8.7' }) as Set<string>;
  assert.ok(found.has('10.9.8.7'), 'POD_IP');
  assert.not.ok(found.has('127.0.0.1'), 'loopback is its own class; the built-in default backend lives there');
  assert.is(parsed(['--own-addresses=10.1.2.3']).ownAddresses, '10.1.2.3');
  assert.match(refused(['--own-addresses=10.1.2.3,pod.local']), /--own-addresses: "pod\.local" is not an IP address/);
});

test('store options come from the flags', () => {
  const s = toStoreOptions(parsed(['--watch-namespace=team-a', '--ingress-class-by-name', '--disable-catch-all']));
  assert.equal(s.watchNamespaces, ['team-a']);
  assert.is(s.ingressClassByName, true);
  assert.is(s.disableCatchAll, true);
  assert.equal(toStoreOptions(parsed([])).watchNamespaces, []);
});

test.run();
