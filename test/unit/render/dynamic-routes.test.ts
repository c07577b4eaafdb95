// Where nginx.conf hands dynamic hosts to the Lua router (src/render/dynamic-routes.ts): in the
// default server's own `/` when that is its only location, else by the server-level hook; and
// whether the router must write the location variables, read from the rendered text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auxiliaryFiles, createRenderer } from '../../../src/render/engine.js';
import { defaultRuntime, DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { readsLocationVariables, readsProxyHost, routerPlacement } from '../../../src/render/dynamic-routes.js';
import { silentLogger } from '../../../src/log.js';
import type { Configuration, Location, Server } from '../../../src/model/core/types.js';
import type { NginxSettings } from '../../../src/model/core/config/settings.js';
import { configuration, location, server, type LocationOverrides } from '../../support/config-builder.js';

const RUNTIME = defaultRuntime({ prefix: '/var/lib/ingress-rx', listenAddresses: ['*'], luaDir: '/opt/ingress-rx/lua', resolvers: ['10.96.0.10'] });
const METRICS = { ...RUNTIME, metricsLog: '/var/lib/ingress-rx/logs/metrics.log' };

const defaultRoot = () => location({ ingress: null, service: null, backend: 'upstream-default-backend', isDefBackend: true });
const hostless = () => location({ path: '/api' });

function dynamic(servers: Server[] = [], settings: Partial<NginxSettings> = {}, over: Partial<Configuration> = {}): Configuration {
  return configuration(servers.map((s) => ({ ...s, staticBecause: 'a server block' })), { dynamicRoutes: true, ...over }, settings);
}
const render = (config: Configuration, runtime = RUNTIME) => createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, runtime);
const serverText = (conf: string, host: string) => conf.slice(conf.indexOf(`## start server ${host}\n`), conf.indexOf(`## end server ${host}\n`));
const configured = (conf: string) => /router\.configure\(\{ location_variables_read = (\w+), route_labels = (\w+), backend_tls = \{[^}]*\} \}\)/.exec(conf)?.slice(1);

test('placement: the default server routes in its `/` only when that is the built-in default backend\'s and its only location', () => {
  assert.is(routerPlacement(server('_', { locations: [defaultRoot()] }), true, [defaultRoot()]), 'root');
  assert.is(routerPlacement(server('_'), true, [defaultRoot(), hostless()]), 'hook', 'a host-less Ingress path');
  assert.is(routerPlacement(server('_'), true, [location()]), 'hook', 'a catch-all Ingress\'s own `/`');
  assert.is(routerPlacement(server('*.w.test'), true, [location()]), 'hook', 'a static wildcard server');
  assert.is(routerPlacement(server('a.test'), true, [location()]), 'none');
  assert.is(routerPlacement(server('_'), false, [defaultRoot()]), 'none', 'dynamic routes off');
});

test('the default server\'s `/` is the router; the default backend\'s location becomes a named one it hands other hosts to', () => {
  const conf = render(dynamic());
  const s = serverText(conf, '_');
  assert.ok(s.includes('location @ingress_rx_default_backend {\n            set $namespace "";'), s);
  assert.ok(s.includes('location "/" {'), s);
  assert.ok(s.includes('router.route("@ingress_rx_default_backend")'), s);
  assert.ok(s.includes('router.route("@ingress_rx_default_backend")\n            }'), s);
  assert.ok(/location "\/" \{[^}]*\}[^}]*\}[^}]*proxy_pass http:\/\/upstream_balancer;\n        \}/.test(s), 'a bare proxy_pass: the request URI goes upstream unchanged');
  assert.not.ok(s.includes('set_by_lua_block'), 'no server-level hook');
  assert.not.ok(s.includes('location = /.ingress-rx/dynamic-route {'), s);
});

test('the router\'s variant locations: one per set of retried codes, and HTTP/2 cleartext ones, in every server that serves dynamic hosts', () => {
  const s = serverText(render(dynamic()), '_');
  assert.is(s.match(/location = \/\.ingress-rx\/dynamic-route-(h2c-)?retry-\d+ \{/g)?.length, 32);
  assert.ok(s.includes('location = /.ingress-rx/dynamic-route-retry-0 {\n            internal;'), s);
  assert.ok(/dynamic-route-retry-5 \{[^}]*proxy_next_upstream error timeout http_500 http_503;\n\s*proxy_next_upstream_tries 0;/.test(s), 'bits: 500, 502, 503, 504');
  assert.ok(/dynamic-route-retry-15 \{[^}]*proxy_next_upstream error timeout http_500 http_502 http_503 http_504;/.test(s));
  assert.ok(/dynamic-route-h2c \{(?:(?!location )[\s\S])*grpc_pass grpc:\/\/upstream_balancer;/.test(s), 'h2c: grpc_pass');
  assert.not.ok(/dynamic-route-h2c \{(?:(?!location )[\s\S])*grpc_set_header (Connection|Upgrade)/.test(s), 'no hop-by-hop header over HTTP/2');
  assert.ok(/dynamic-route-h2c-retry-2 \{[^}]*grpc_next_upstream error timeout http_502;/.test(s));
  const hook = serverText(render({ ...dynamic(), servers: [server('_', { locations: [defaultRoot(), hostless()] })] }), '_');
  assert.ok(hook.includes('rewrite ^ $dynamic_route_uri last;'), 'the hook moves a request to the location find() names');
  assert.is(hook.match(/location = \/\.ingress-rx\/dynamic-route-/g)?.length, 33);
  assert.not.ok(serverText(render(dynamic([server('a.test')])), 'a.test').includes('dynamic-route'), 'a static host has none');
});

test('with a host-less path the default server keeps its locations and asks the router first', () => {
  const withHostless = render({ ...dynamic(), servers: [server('_', { locations: [defaultRoot(), hostless()] })] });
  const s = serverText(withHostless, '_');
  assert.ok(s.includes('return router.find()'), s);
  assert.ok(s.includes('location = /.ingress-rx/dynamic-route {'), s);
  assert.ok(s.includes('location "/api" {'), s);
  assert.ok(s.includes('location "/" {\n            set $namespace "";'), 'the default backend\'s `/` as it is');
  assert.not.ok(s.includes('router.route('));
});

test('the router writes the location variables only where nginx.conf reads them', () => {
  assert.equal(configured(render(dynamic())), ['false', 'false'], 'nothing reads them');
  assert.equal(configured(render(dynamic([]), METRICS)), ['false', 'true'], 'the metrics log reads the routed format\'s one variable');
  assert.equal(configured(render(configuration())), ['true', 'false'], 'dynamic routes off: every location sets them itself');
  const upstream = '$remote_addr [$namespace/$ingress_name] $status';
  assert.equal(configured(render(dynamic([], { logFormatUpstream: upstream })))?.[0], 'true', 'log-format-upstream');
  assert.equal(configured(render(dynamic([], { httpSnippet: 'map ${service_name} $svc_class { default a; }' })))?.[0], 'true', 'http-snippet, ${} form');
  const snippet = { serverSnippet: 'add_header X-Port $service_port;' };
  assert.equal(configured(render(dynamic([server('a.test', snippet)])))?.[0], 'false', 'a host\'s own server block sets them for its own requests');
  assert.equal(configured(render(dynamic([server('*.w.test', snippet)])))?.[0], 'true', 'a wildcard server also serves dynamic hosts');
});

test('readsLocationVariables: reads, not writes or longer names', () => {
  assert.ok(readsLocationVariables('log_format x \'$location_path\';'));
  assert.ok(readsLocationVariables('set $x $namespace;'), 'read into another variable');
  assert.ok(readsLocationVariables('"${ingress_name}-x"'));
  assert.not.ok(readsLocationVariables('set $namespace "a";\n            set $service_port "80";'));
  assert.not.ok(readsLocationVariables('$namespace_id $service_names $location_paths'));
});

test('the router\'s locations give $proxy_host the route\'s backend only where nginx.conf reads it', () => {
  const sets = (conf: string) => conf.match(/set_by_lua_block \$proxy_host \{\n\s*return router\.proxy_host\((\w*)\)/g) ?? [];
  assert.equal(sets(render(dynamic())), [], 'nothing reads it: no Lua entry per request');
  assert.equal(sets(render(dynamic([server('a.test', { serverSnippet: 'add_header X-P $proxy_host;' })]))), [], 'a host\'s own server block: its locations set it');
  // Each server serving dynamic hosts has 33 variant locations (retries, h2c), moved to as the hook's.
  const moved = (n: number) => Array<string>(n).fill('set_by_lua_block $proxy_host {\n                return router.proxy_host(true)');
  assert.equal(sets(render(dynamic([], { logFormatUpstream: '$remote_addr $proxy_host' }))), ['set_by_lua_block $proxy_host {\n                return router.proxy_host()', ...moved(33)], 'log-format-upstream, the default server\'s `/`');
  const hook = render({ ...dynamic([], { httpSnippet: 'map ${proxy_host} $x { default a; }' }), servers: [server('_', { locations: [defaultRoot(), hostless()] })] });
  assert.equal(sets(hook), moved(34), 'http-snippet, ${} form: the hook\'s location takes find()\'s route');
  assert.equal(sets(render(dynamic([server('*.w.test', { serverSnippet: 'add_header X-P $proxy_host;' })]))).length, 2 * 34, 'a wildcard server serves dynamic hosts too');
  assert.ok(render(dynamic([server('a.test')])).includes('set $proxy_host $proxy_upstream_name;'), 'a static location sets it, as ingress-nginx\'s');
  assert.not.ok(readsProxyHost('set $proxy_host $proxy_upstream_name;'), 'a write');
  assert.not.ok(readsProxyHost('$proxy_hosts'));
});

test('with the metrics log the router\'s location logs the routed format, and the access log as the http level does', () => {
  const conf = render(dynamic(), METRICS);
  const s = serverText(conf, '_');
  const root = s.slice(s.indexOf('location "/" {'));
  assert.ok(root.includes('access_log "/var/lib/ingress-rx/logs/access.log" upstreaminfo;'), root);
  assert.ok(root.includes('access_log "/var/lib/ingress-rx/logs/metrics.log" ingress_rx_metrics_routed buffer=64k flush=1s;'), root);
  assert.ok(conf.includes("log_format ingress_rx_metrics_routed '$irx_labels\\t$proxy_alternative_upstream_name\\t"), 'the routed format');
  assert.ok(conf.includes('map "" $irx_labels {\n        default "-";'), 'unset until the router sets it');
  const quiet = serverText(render(dynamic([], { enableAccessLog: false }), METRICS), '_');
  assert.not.ok(quiet.includes('upstreaminfo'), 'no access log where the http level has none');
  assert.ok(quiet.includes('ingress_rx_metrics_routed'));
  assert.not.ok(serverText(render(dynamic()), '_').includes('access_log'), 'without the metrics log the http level\'s access log is inherited');
});

test('a denied location of a server block answers its deniedStatus (an HTTPRoute rule: 500), else 503', () => {
  const denied = (over: LocationOverrides) => location({ path: '/x', denied: 'no backend', ...over });
  const conf = render(configuration([server('a.test', { locations: [denied({ deniedStatus: 500 }), denied({ path: '/y' })] })]));
  const text = serverText(conf, 'a.test');
  assert.match(text, /location "\/x" \{\n\s+# denied: no backend\n\s+return 500;/);
  assert.match(text, /location "\/y" \{\n\s+# denied: no backend\n\s+return 503;/);
});

test('BackendTLSPolicy: each TLS location is in every server the router serves in, named in router.configure, its files written', () => {
  const tls = { id: '0123456789abcdef', hostname: 'web.internal', ca: 'CA PEM\n', clientCertificate: { cert: 'CERT PEM\n', key: 'KEY PEM\n' } };
  const config = dynamic([server('*.w.test')], {}, { backendTLSLocations: [tls], listenerPorts: [{ port: 8080, local: 18080 }, { port: 8090, local: 18090 }] });
  const conf = render(config);
  const block = /location = \/\.ingress-rx\/dynamic-route-tls-0123456789abcdef \{[\s\S]*?\n        \}/g;
  for (const [where, text] of [['default server', serverText(conf, '_')], ['wildcard server', serverText(conf, '*.w.test')], ['listener port', serverText(conf, 'Gateway listener port 8080')], ['second listener port', serverText(conf, 'Gateway listener port 8090')]]) {
    const found = text!.match(block) ?? [];
    assert.is(found.length, 1, where);
    assert.match(found[0]!, /internal;[\s\S]*proxy_ssl_trusted_certificate "[^"]+";\n\s+proxy_ssl_verify on;[\s\S]*proxy_ssl_name "web\.internal";\n\s+proxy_ssl_server_name on;\n\s+proxy_ssl_certificate "[^"]+";\n\s+proxy_ssl_certificate_key "[^"]+";[\s\S]*proxy_pass https:\/\/upstream_balancer_tls\$dynamic_upstream_uri;/, where);
  }
  assert.not.match(conf, '@@ingress-rx-backend-tls@@');
  assert.match(conf, 'backend_tls = { ["0123456789abcdef"] = true }');
  assert.match(conf, 'upstream upstream_balancer_tls {');
  const files = auxiliaryFiles(config, RUNTIME).filter((f) => f.path.includes('0123456789abcdef')).map((f) => [f.content, f.mode ?? null]).sort();
  assert.equal(files, [['CA PEM\n', null], ['CERT PEM\n', null], ['KEY PEM\n', 0o600]]);
  assert.not.match(render(dynamic()), 'dynamic-route-tls-', 'none without policies');
});

test.run();
