// The renderer: golden nginx.conf for hand-built configurations, hostile values at every printed
// field (the config's shape never changes), fragment caching, size per server.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRenderer } from '../../../src/render/engine.js';
import { printsChecksumOnly } from '../../../src/render/main-text.js';
import { defaultRuntime, DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { geoip2Setup } from '../../../src/render/geoip.js';
import { dnsSearch, resolverList, resolvers } from '../../../src/render/engine.js';
import { silentLogger } from '../../../src/log.js';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { configuration, goldenConfigurations, hostileBase, HOSTILE_FIELDS, location, mutable, server } from '../../support/config-builder.js';
import { confStructure } from '../../support/nginx-harness.js';
import { HOSTILE_VALUES } from '../../support/hostile.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { generateEvents, ingressObject, sliceObject } from '../../../bench/gen.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/render/', import.meta.url));
/** A fixed runtime so golden files do not depend on temp paths or free ports. */
const RUNTIME = defaultRuntime({ prefix: '/var/lib/ingress-rx', openFilesLimit: 1048576, listenAddresses: ['*', '[::]'], luaDir: '/opt/ingress-rx/lua', resolvers: ['10.96.0.10', 'fd00::a'] });
const newRenderer = () => createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });

const golden = suite('render golden');

for (const [name, cfg] of Object.entries(goldenConfigurations())) {
  golden(`${name}.conf matches the golden file`, () => {
    const text = newRenderer().render(cfg, RUNTIME).replace(/[0-9a-f]{64}/g, '<checksum>');
    const file = join(FIXTURES, `${name}.conf`);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) {
      mkdirSync(FIXTURES, { recursive: true });
      writeFileSync(file, text);
    }
    assert.fixture(text, readFileSync(file, 'utf8'));
  });
}

golden('worker-processes auto renders the runtime\'s CPU count (a container\'s CPU limit counts, as with ingress-nginx); a number stays', () => {
  const workers = (v: string) => /\nworker_processes (\S+);/.exec(newRenderer().render(configuration([], {}, { workerProcesses: v }), { ...RUNTIME, cpus: 3 }))?.[1];
  assert.is(workers('auto'), '3');
  assert.is(workers('7'), '7');
});

golden('use-forwarded-headers and use-proxy-protocol reach the Lua SSL redirect and the maps of what the client used', () => {
  const on = newRenderer().render(configuration([server('a.example.com')], {}, { useForwardedHeaders: true }), RUNTIME);
  assert.match(on, 'use_forwarded_headers = true, use_proxy_protocol = false })');
  // The first X-Forwarded-Host, as ingress-nginx's Lua splits it.
  assert.match(on, /map \$http_x_forwarded_host \$best_http_host \{\s+"~\^\\s\*\(\?<forwarded_first_host>\[\^,\\s\]\+\)" \$forwarded_first_host;\s+default \$this_host;/);
  const off = newRenderer().render(configuration([server('a.example.com')]), RUNTIME);
  assert.match(off, 'use_forwarded_headers = false, use_proxy_protocol = false })');
  assert.match(off, /map "" \$pass_access_scheme \{\s+default \$scheme;/);
  const proxied = newRenderer().render(configuration([server('a.example.com')], {}, { useProxyProtocol: true }), RUNTIME);
  assert.match(proxied, 'use_proxy_protocol = true })');
  assert.match(proxied, /map \$proxy_protocol_server_port \$pass_access_scheme \{\s+default \$forwarded_access_scheme;\s+443 https;/);
  assert.match(proxied, /map "" \$pass_server_port \{\s+default \$proxy_protocol_server_port;/);
});

golden('the rewrite phase carries the redirect words, the host of a one-name server and the backend; snippets and other names fall back to variables', () => {
  const rw = location().settings.rewrite;
  const text = newRenderer().render(configuration([
    server('one.example.com', { locations: [location({ path: '/a', backend: 'ns-a-80', rewrite: { ...rw, sslRedirect: true, preserveTrailingSlash: true } })] }),
    server('two.example.com', { aliases: ['alias.example.com'], locations: [location({ path: '/f', backend: 'ns-f-80', rewrite: { ...rw, forceSSLRedirect: true } })] }),
    server('*.wild.example.com', { locations: [location({ path: '/w', backend: 'ns-w-80', rewrite: { ...rw, sslRedirect: true } })] }),
    server('snip.example.com', { locations: [location({ path: '/s', backend: 'ns-s-80', configurationSnippet: 'set $proxy_upstream_name "other";' })] }),
  ]), RUNTIME);
  const block = (host: string) => text.slice(text.indexOf(`## start server ${host}`), text.indexOf(`## end server ${host}`));
  assert.match(block('one.example.com'), /rewrite_by_lua_block \{\s+freshness\.catch_up\(\)\s+lua_ingress\.rewrite\("ssl-redirect preserve-trailing-slash", "one\.example\.com"\)\s+balancer\.rewrite\("ns-a-80"\)\s+\}/);
  assert.match(block('one.example.com'), /lua_ingress\.header\("one\.example\.com"\)/);
  assert.match(block('two.example.com alias.example.com'), /lua_ingress\.rewrite\("force-ssl-redirect"\)\s+balancer\.rewrite\("ns-f-80"\)/);
  assert.match(block('two.example.com alias.example.com'), /lua_ingress\.header\(\)/);
  assert.match(block('*.wild.example.com'), /lua_ingress\.rewrite\("ssl-redirect"\)\s+balancer\.rewrite\("ns-w-80"\)/);
  assert.match(block('snip.example.com'), /rewrite_by_lua_block \{\s+freshness\.catch_up\(\)\s+balancer\.rewrite\(\)\s+\}/);
});

golden('the Lua wiring contract is rendered as agreed', () => {
  const text = newRenderer().render(goldenConfigurations().minimal!, RUNTIME);
  assert.ok(text.indexOf('load_module "/usr/lib/nginx/modules/ndk_http_module.so";') < text.indexOf('ngx_http_lua_module.so'));
  assert.ok(text.includes('lua_package_path "/opt/ingress-rx/lua/?.lua;;";'));
  // The control server: a unix socket in the prefix, the token read from its file (never in nginx.conf).
  assert.ok(text.includes('control.load_token("/var/lib/ingress-rx/run/control.token")'));
  assert.ok(text.includes('listen "unix:/var/lib/ingress-rx/run/control.sock";'));
  assert.not.match(text, /listen [^;]*10246/);
  assert.ok(/access_by_lua_block \{\s+control\.authorize\(\)\s+\}/.test(text));
  assert.ok(text.includes('address_policy.configure({ allow = { }, own_ports = { }, default_server_port = 8181 })'));
  assert.ok(text.includes('lua_ingress.set_config({ http_redirect_code = 308, hsts = true, hsts_max_age = 31536000, hsts_include_subdomains = true, hsts_preload = false, https_port = 443, use_forwarded_headers = false, use_proxy_protocol = false })'));
  assert.ok(/init_worker_by_lua_block \{\s+lua_ingress.init_worker\(\)\s+balancer.init_worker\(\)\s+\}/.test(text));
  // Every proxied request first takes up what was posted since (lua/freshness.lua).
  assert.ok(text.includes('freshness = require("freshness")'));
  // Constants where the model knows them: the backend name, the host of a one-name server; no
  // lua_ingress.rewrite where the location cannot redirect, no log phase.
  assert.ok(/rewrite_by_lua_block \{\s+freshness\.catch_up\(\)\s+balancer\.rewrite\("default-web-80"\)\s+\}/.test(text));
  assert.ok(/header_filter_by_lua_block \{\s+balancer\.header_filter\(\)\s+lua_ingress\.header\("app\.example\.com"\)\s+\}/.test(text));
  assert.not.ok(text.includes('lua_ingress.rewrite(') || text.includes('log_by_lua'));
  assert.ok(/upstream upstream_balancer \{\s+server 0\.0\.0\.1;[^\n]*\s+balancer_by_lua_block \{\s+balancer\.balance\(\)\s+\}\s+keepalive 320;\s+keepalive_timeout 60s;\s+keepalive_requests 10000;/.test(text));
  assert.ok(text.includes('## start server app.example.com') && text.includes('## end server app.example.com'));
  assert.ok(text.includes('resolver 10.96.0.10 [fd00::a] valid=30s;'));
  assert.ok(text.includes('listen [::]:443 ssl http2;'));
  assert.not.ok(text.includes('stream {'), 'no stream block without TCP/UDP services');
  assert.not.ok(/^user /m.test(text), 'no user directive unless set');
  for (const dict of ['configuration_data 20m', 'certificate_data 20m', 'certificate_servers 5m', 'balancer_ewma 10m', 'balancer_ewma_last_touched_at 10m', 'balancer_ewma_locks 1m']) {
    assert.ok(text.includes(`lua_shared_dict ${dict};`), dict);
  }
});

golden('stream block and module only with TCP/UDP services', () => {
  const text = newRenderer().render(goldenConfigurations().l4!, RUNTIME);
  assert.ok(text.includes('load_module "/usr/lib/nginx/modules/ngx_stream_module.so";'));
  assert.ok(text.includes('server [fd00::5]:5432;'));
  assert.ok(text.includes('listen [::]:5353 udp;'));
});

golden('GeoIP2: off without databases (warning, no directives); blocks as ingress-nginx names them with them', () => {
  const s = { ...defaultSettings(), useGeoip2: true };
  const none = geoip2Setup(s, RUNTIME, () => false);
  assert.is(none.enabled, false);
  assert.match(none.warnings[0]!, /ngx_http_geoip2_module\.so is missing/);
  const noDb = geoip2Setup(s, RUNTIME, (p) => p.endsWith('.so'));
  assert.match(noDb.warnings[0]!, /no GeoLite2 database/);
  const some = geoip2Setup(s, RUNTIME, (p) => p.endsWith('.so') || p.endsWith('GeoLite2-Country.mmdb') || p.endsWith('GeoLite2-ASN.mmdb'));
  assert.is(some.directives, [
    '    geoip2 "/var/lib/ingress-rx/geoip/GeoLite2-Country.mmdb" {',
    '        $geoip2_country_code source=$remote_addr country iso_code;',
    '        $geoip2_country_name source=$remote_addr country names en;',
    '        $geoip2_continent_code source=$remote_addr continent code;',
    '        $geoip2_continent_name source=$remote_addr continent names en;',
    '    }',
    '    geoip2 "/var/lib/ingress-rx/geoip/GeoLite2-ASN.mmdb" {',
    '        $geoip2_asn source=$remote_addr autonomous_system_number;',
    '        $geoip2_org source=$remote_addr autonomous_system_organization;',
    '    }',
    '',
  ].join('\n'));
  const r = newRenderer().renderWithWarnings(configuration([], {}, { useGeoip2: true }), { ...RUNTIME, geoipDir: '/nonexistent' });
  assert.ok(r.warnings.some((w) => /GeoIP2 variables are not defined/.test(w)));
  assert.not.ok(r.text.includes('geoip2'));
});

golden('resolvers come from resolv.conf, IPv6 bracketed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-resolv-'));
  try {
    const file = join(dir, 'resolv.conf');
    writeFileSync(file, '# comment\nnameserver 10.0.0.10\nnameserver fe80::1%eth0\noptions ndots:5\n');
    assert.is(resolvers({ ...RUNTIME, resolvers: undefined }, file), '10.0.0.10 [fe80::1]');
    // Lua's resolver (lua/dns.lua) asks the same nameservers, its port spelled out.
    assert.equal(resolverList({ ...RUNTIME, resolvers: undefined }, file).map((r) => r.lua), ['10.0.0.10:53', '[fe80::1]:53']);
    assert.equal(resolverList({ ...RUNTIME, resolvers: ['127.0.0.1:5353', '[::1]:5300', '10.0.0.1'] }).map((r) => [r.nginx, r.lua]),
      [['127.0.0.1:5353', '127.0.0.1:5353'], ['[::1]:5300', '[::1]:5300'], ['10.0.0.1', '10.0.0.1:53']]);
    for (const bad of ['127.0.0.1:0', '127.0.0.1:70000', 'dns.example:53', '10.0.0.1; include /x']) {
      assert.throws(() => resolverList({ ...RUNTIME, resolvers: [bad] }), /resolver/, bad);
    }
    // Its search domains and ndots reach Lua (lua/dns.lua), not when the runtime names its resolvers.
    assert.equal(dnsSearch({ ...RUNTIME, resolvers: undefined }, file), { search: [], ndots: 5 });
    writeFileSync(file, 'nameserver 127.0.0.1:5353\nsearch old.example\nsearch ns.svc.cluster.local svc.cluster.local. bad_domain\noptions ndots:99\n');
    assert.equal(dnsSearch({ ...RUNTIME, resolvers: undefined }, file), { search: ['ns.svc.cluster.local', 'svc.cluster.local'], ndots: 15 });
    assert.equal(dnsSearch(RUNTIME, file), { search: [], ndots: 1 });
    const searched = newRenderer().render(configuration([]), { ...RUNTIME, resolvers: undefined, resolvConf: file });
    assert.match(searched, 'configuration.resolvers = { "127.0.0.1:5353", }');
    assert.match(searched, 'configuration.dns_search = { "ns.svc.cluster.local", "svc.cluster.local", }\n        configuration.dns_ndots = 15\n');
    const text = newRenderer().render(configuration([]), { ...RUNTIME, resolvers: ['127.0.0.1:5353'] });
    assert.not.match(text, 'dns_search');
    assert.match(text, 'resolver 127.0.0.1:5353 valid=30s');
    assert.match(text, 'configuration.resolvers = { "127.0.0.1:5353", }');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

golden.run();

const hostile = suite('render hostile values');

hostile('a hostile value at any field is refused naming the field, or leaves the config shape unchanged', () => {
  const renderer = newRenderer();
  let refused = 0;
  let rendered = 0;
  for (const fld of HOSTILE_FIELDS) {
    const benign = hostileBase();
    fld.set(benign, fld.benign ?? `${fld.prefix ?? ''}benign`);
    const shape = confStructure(renderer.render(benign, RUNTIME));
    for (const hv of HOSTILE_VALUES) {
      for (const value of new Set([hv.value, `${fld.prefix ?? ''}${hv.value}`])) {
        const cfg = hostileBase();
        fld.set(cfg, value);
        let text: string;
        try {
          const r = renderer.renderWithWarnings(cfg, RUNTIME);
          // Refused per location (denied) or per server (left out), named by field.
          if (r.problems.length > 0) {
            refused++;
            const said = r.problems.map((p) => `${p.field}: ${p.message}`).join('; ');
            assert.ok(said.includes(fld.label), `${fld.field} = ${hv.name}: the problem does not name the field: ${said.slice(0, 200)}`);
            continue;
          }
          text = r.text;
        } catch (err) {
          refused++;
          assert.ok((err as Error).message.includes(fld.label), `${fld.field} = ${hv.name}: error does not name the field: ${(err as Error).message.slice(0, 200)}`);
          continue;
        }
        rendered++;
        assert.equal(confStructure(text), shape, `${fld.field} = ${hv.name} changed the configuration's shape`);
      }
    }
  }
  assert.ok(refused > 0 && rendered > 0);
});

hostile('htpasswd lines with newlines are refused', async () => {
  const { auxiliaryFiles } = await import('../../../src/render/engine.js');
  const cfg = hostileBase();
  mutable(cfg.servers[1]!.locations[0]!.settings.basicAuth!).users = ['u:x\nroot:y'];
  assert.throws(() => auxiliaryFiles(cfg, RUNTIME), /invalid htpasswd line/);
});

hostile.run();

const cache = suite('render fragment cache and size');

cache('a one-server change re-renders one server', () => {
  const renderer = newRenderer();
  const servers = Array.from({ length: 200 }, (_, i) => server(`s${i}.example.com`));
  const cfg = configuration(servers);
  const first = renderer.render(cfg, RUNTIME);
  const n0 = renderer.stats().serversRendered;
  assert.is(n0, 201);
  const changed = { ...cfg, servers: cfg.servers.map((s) => (s.hostname === 's7.example.com' ? { ...s, locations: [location({ path: '/changed' })] } : s)) };
  const second = renderer.render(changed, RUNTIME);
  assert.is(renderer.stats().serversRendered - n0, 1);
  assert.ok(second.includes('"/changed"'));
  assert.not.equal(first, second);
  // The cache is keyed by identity: an equal but new object is rendered again, to the same
  // text and checksum.
  const copy = { ...changed, servers: changed.servers.map((s) => structuredClone(s)) };
  const again = renderer.renderWithWarnings(copy, RUNTIME);
  assert.is(again.text, second);
  assert.is(again.checksum, renderer.renderWithWarnings(changed, RUNTIME).checksum);
  assert.is(renderer.stats().serversRendered - n0, 1 + 201);
  // The chunks are the text.
  const chunks = renderer.renderChunks(changed, RUNTIME);
  assert.is(chunks.chunks.join(''), second);
  assert.is(renderer.stats().serversRendered - n0, 1 + 201);
});

cache('the checksum changes with any server text and with the www redirect', () => {
  const renderer = newRenderer();
  const cfg = configuration([server('a.example.com', { redirectFromToWWW: true }), server('b.example.com')]);
  const a = renderer.renderWithWarnings(cfg, RUNTIME);
  assert.ok(a.text.includes('server_name www.a.example.com;'));
  const withWww = configuration([...cfg.servers, server('www.a.example.com')]);
  const b = renderer.renderWithWarnings(withWww, RUNTIME);
  assert.not.ok(b.text.includes('return 308 $scheme://a.example.com'), 'the www host is a server of its own now');
  assert.is.not(a.checksum, b.checksum);
  const c = renderer.renderWithWarnings({ ...cfg, servers: [cfg.servers[0]!, server('b.example.com', { locations: [location({ path: '/b' })] })] }, RUNTIME);
  assert.is.not(a.checksum, c.checksum);
  assert.is(renderer.renderWithWarnings(cfg, RUNTIME).checksum, a.checksum);
});

cache('the checksum changes with the htpasswd users too, whose file the text only names', () => {
  const renderer = newRenderer();
  const withUsers = (users: string[]) => configuration([server('a.example.com', {
    locations: [location({ basicAuth: { type: 'basic', realm: 'r', secret: 'default/basic', secretType: 'auth-file', users } })],
  })]);
  const a = renderer.renderWithWarnings(withUsers(['u:$apr1$FTCzEiDL$7Vvl0sDT3hx3nuqVCPoAy/']), RUNTIME);
  const b = renderer.renderWithWarnings(withUsers(['v:$apr1$FTCzEiDL$7Vvl0sDT3hx3nuqVCPoAy/']), RUNTIME);
  assert.is(b.text.replaceAll(b.checksum, ''), a.text.replaceAll(a.checksum, ''), 'the same nginx.conf text');
  assert.is.not(a.checksum, b.checksum);
});

cache('a server.liquid of plain outputs renders without liquidjs, to the same text liquidjs gives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-tpl-'));
  try {
    for (const name of ['nginx.conf', 'server']) writeFileSync(join(dir, `${name}.liquid`), readFileSync(join(DEFAULT_TEMPLATE_DIR, `${name}.liquid`), 'utf8'));
    // A tag makes the template non-plain: every server then goes through liquidjs.
    writeFileSync(join(dir, 'server.liquid'), `${readFileSync(join(dir, 'server.liquid'), 'utf8')}{% if srv.names %}{% endif %}`);
    const viaLiquid = createRenderer({ templateDir: dir, logger: silentLogger() });
    for (const cfg of Object.values(goldenConfigurations())) {
      const strip = (t: string) => t.replace(/[0-9a-f]{64}/g, '<checksum>');
      assert.fixture(strip(newRenderer().render(cfg, RUNTIME)), strip(viaLiquid.render(cfg, RUNTIME)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

cache('across model syncs the identity-keyed cache renders what a fresh renderer renders', () => {
  // The cache trusts the model to hand back a new Server object for every changed server.
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
  const opts = { n: 80, tlsFraction: 0 };
  for (const e of generateEvents(opts)) store.apply(e);
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, logger: silentLogger() });
  const renderer = newRenderer();
  renderer.render(builder.build(store).config, RUNTIME);
  let rerendered = 0;
  for (let k = 0; k < 6; k++) {
    const i = 3 + k * 13;
    if (k % 3 === 2) {
      const slice = sliceObject(i, [{ address: `10.9.${k}.1`, port: 8080 }], opts, 2 + k);
      store.apply({ kind: 'EndpointSlice', type: 'update', key: `${slice.metadata.namespace}/${slice.metadata.name}`, object: slice });
    } else {
      const ing = ingressObject(i, opts, 2 + k);
      const www: Record<string, string> = k % 3 === 1 ? { 'nginx.ingress.kubernetes.io/from-to-www-redirect': 'true' } : {};
      ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${10 + k}m`, ...www };
      store.apply({ kind: 'Ingress', type: 'update', key: `${ing.metadata.namespace}/${ing.metadata.name}`, object: ing });
    }
    const config = builder.build(store).config;
    const n0 = renderer.stats().serversRendered;
    const cached = renderer.renderWithWarnings(config, RUNTIME);
    rerendered += renderer.stats().serversRendered - n0;
    const fresh = newRenderer().renderWithWarnings(config, RUNTIME);
    assert.fixture(cached.text, fresh.text);
    assert.is(cached.checksum, fresh.checksum);
  }
  assert.ok(rerendered >= 1 && rerendered <= 6, `${rerendered} servers re-rendered for 4 Ingress changes`);
});

cache('after a server changed, liquidjs does not render the main template again: only the checksum in it is new', () => {
  const renderer = newRenderer();
  const cfg = configuration([server('a.example.com'), server('b.example.com')]);
  const a = renderer.renderWithWarnings(cfg, RUNTIME);
  const m0 = renderer.stats().mainTextsRendered;
  assert.is(m0, 1);
  const changed = { ...cfg, servers: [cfg.servers[0]!, server('b.example.com', { locations: [location({ path: '/b' })] })] };
  const b = renderer.renderWithWarnings(changed, RUNTIME);
  assert.is(renderer.stats().mainTextsRendered, m0, 'the main text was reused');
  assert.is.not(b.checksum, a.checksum);
  assert.ok(b.text.includes(`# Configuration checksum: ${b.checksum}`));
  assert.ok(b.text.includes(`ngx.print("${b.checksum}")`), 'the status endpoint serves the new checksum');
  assert.not.ok(b.text.includes(a.checksum));
  assert.fixture(b.text, newRenderer().render(changed, RUNTIME));
  // Anything else the main template reads renders it again.
  const settingsChanged = { ...changed, settings: { ...changed.settings, proxySetHeaders: { 'X-A': '1' } } };
  const c = renderer.render(settingsChanged, RUNTIME);
  assert.is(renderer.stats().mainTextsRendered, m0 + 1);
  assert.fixture(c, newRenderer().render(settingsChanged, RUNTIME));
  const withRateLimit = { ...changed, servers: [...changed.servers, server('c.example.com', { locations: [location({ rateLimit: { rps: 5, rpm: 0, connections: 0, burstMultiplier: 1, limitRate: 0, limitRateAfter: 0, allowlist: [] } })] })] };
  const d = renderer.render(withRateLimit, RUNTIME);
  assert.ok(d.includes('limit_req_zone'), 'a rate-limit zone at http level');
  assert.fixture(d, newRenderer().render(withRateLimit, RUNTIME));
});

cache('a main template that reads the checksum other than to print it is rendered every time', () => {
  assert.ok(printsChecksumOnly(readFileSync(join(DEFAULT_TEMPLATE_DIR, 'nginx.conf.liquid'), 'utf8')));
  assert.ok(printsChecksumOnly("{{- checksum -}} {{ checksum | lua_str: 'checksum' }} configuration checksum"));
  for (const source of ['{{ checksum | slice: 0, 12 }}', '{% if checksum %}x{% endif %}', '{% assign c = checksum %}{{ c }}', '{{ checksum | upcase }}']) {
    assert.not.ok(printsChecksumOnly(source), source);
  }
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-tpl-'));
  try {
    writeFileSync(join(dir, 'server.liquid'), readFileSync(join(DEFAULT_TEMPLATE_DIR, 'server.liquid'), 'utf8'));
    writeFileSync(join(dir, 'nginx.conf.liquid'), `${readFileSync(join(DEFAULT_TEMPLATE_DIR, 'nginx.conf.liquid'), 'utf8')}\n# short {{ checksum | slice: 0, 12 }}\n`);
    const renderer = createRenderer({ templateDir: dir, logger: silentLogger() });
    const cfg = configuration([server('a.example.com')]);
    renderer.render(cfg, RUNTIME);
    const changed = configuration([server('a.example.com', { locations: [location({ path: '/a' })] })]);
    const b = renderer.renderWithWarnings(changed, RUNTIME);
    assert.is(renderer.stats().mainTextsRendered, 2);
    assert.ok(b.text.includes(`# short ${b.checksum.slice(0, 12)}\n`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

cache('settings change re-renders every server', () => {
  const renderer = newRenderer();
  const cfg = configuration([server('a.example.com'), server('b.example.com')]);
  renderer.render(cfg, RUNTIME);
  renderer.render({ ...cfg, settings: { ...cfg.settings, proxySetHeaders: { 'X-A': '1' } } }, RUNTIME);
  assert.is(renderer.stats().serversRendered, 6);
});

cache('a simple Ingress costs at most 4 KB of nginx.conf per server', () => {
  const renderer = newRenderer();
  const base = renderer.render(configuration([]), RUNTIME).length;
  const n = 100;
  const text = renderer.render(configuration(Array.from({ length: n }, (_, i) => server(`host-${i}.example.com`))), RUNTIME);
  const perServer = (text.length - base) / n;
  console.log(`  nginx.conf: ${base} bytes base, ${perServer.toFixed(0)} bytes per simple server (N=${n})`);
  assert.ok(perServer <= 4096, `${perServer} bytes per server`);
});

cache.run();
