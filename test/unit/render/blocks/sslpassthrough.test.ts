// ssl-passthrough rendering: off (no flag, or no passthrough host) leaves nginx.conf as it was;
// on, an SNI stream server owns the HTTPS port and NGINX's HTTPS moves to the proxy port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNginxHarness, type NginxHarness } from '../../../support/nginx-harness.js';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backend, configuration, location, server } from '../../../support/config-builder.js';
import { removeStaleSockets } from '../../../../src/render/runtime.js';

let h: NginxHarness;

test.before(async () => {
  h = await createNginxHarness();
});
test.after(async () => {
  await h.close();
});

const passthroughConfig = () => configuration([
  server('tls.example.com', { sslPassthrough: true, aliases: ['alias.example.com'], locations: [location({ service: { name: 'tls', port: '443' }, ingress: { namespace: 'default', name: 'tls-ing' } })] }),
  server('web.example.com'),
], { backends: [backend('upstream-default-backend'), backend('default-tls-443', [{ address: '10.0.0.7', port: '8443' }], { sslPassthrough: true }), backend('default-web-80', [{ address: '10.0.0.8', port: '80' }])] });

test('without --enable-ssl-passthrough: no stream block, HTTPS on the HTTPS port, a warning naming the Ingress', () => {
  const r = h.renderer.renderWithWarnings(passthroughConfig(), h.runtime);
  assert.not.match(r.text, 'stream {');
  assert.not.match(r.text, 'ssl_preread');
  assert.match(r.text, `listen 127.0.0.1:${h.runtime.httpsPort} ssl`);
  assert.ok(r.warnings.some((w) => w.includes('Ingress default/tls-ing') && w.includes('--enable-ssl-passthrough is off')), r.warnings.join('\n'));
});

test('with the flag but no passthrough host: the configuration is unchanged', () => {
  const cfg = configuration([server('web.example.com')]);
  const off = h.renderer.render(cfg, h.runtime);
  const on = h.renderer.render(cfg, { ...h.runtime, sslPassthrough: { proxyPort: 4442 } });
  // Only the checksum (a hash of the runtime, too) differs.
  const bare = (t: string) => t.replace(/[0-9a-f]{64}/g, 'CHECKSUM');
  assert.is(bare(on), bare(off));
  assert.not.match(on, 'ssl_preread');
});

test('with the flag: SNI map, upstreams, stream listen, HTTPS moved to the proxy port with PROXY protocol; nginx -t passes', async () => {
  const rt = { ...h.runtime, sslPassthrough: { proxyPort: 4442 } };
  const r = h.renderer.renderWithWarnings(passthroughConfig(), rt);
  const text = r.text;
  assert.equal(r.warnings.filter((w) => w.includes('passthrough')), []);
  assert.match(text, 'ngx_stream_module.so');
  assert.match(text, 'map $ssl_preread_server_name $ingress_rx_passthrough {\n        hostnames;\n        alias.example.com ingress_rx_passthrough_0;\n        tls.example.com ingress_rx_passthrough_0;\n        default ingress_rx_https;\n    }');
  assert.match(text, 'upstream ingress_rx_https {\n        server 127.0.0.1:4442;\n    }');
  assert.match(text, `listen 127.0.0.1:${rt.httpsPort};\n        ssl_preread on;\n        proxy_protocol on;\n        proxy_pass $ingress_rx_passthrough;`);
  assert.match(text, 'upstream ingress_rx_passthrough_0_endpoints {\n        server 10.0.0.7:8443;\n    }');
  assert.match(text, `listen "unix:${rt.prefix}/passthrough-0.sock" proxy_protocol;`);
  assert.not.match(text, '10.0.0.8:80;');
  assert.match(text, 'listen 127.0.0.1:4442 proxy_protocol ssl');
  assert.not.match(text, `listen 127.0.0.1:${rt.httpsPort} ssl`);
  assert.match(text, 'set_real_ip_from 127.0.0.1;\n    real_ip_header proxy_protocol;');
  const t = await h.test(text);
  assert.ok(t.ok, t.output);
});

test('a passthrough wildcard host gets the names one label below it that no server has (docs/security.md, SNI)', async () => {
  const cfg = configuration([
    server('*.a.test', { sslPassthrough: true, locations: [location({ service: { name: 'tls', port: '443' }, ingress: { namespace: 'team-a', name: 'wild' } })] }),
    server('www.a.test', { aliases: ['alias.a.test', 'x.alias.b.test'] }),
    server('b.test', { redirectFromToWWW: true }),
    server('*.b.test'),
    server('pass.c.test', { sslPassthrough: true, aliases: ['*.d.test'], locations: [location({ service: { name: 'tls', port: '443' }, ingress: { namespace: 'team-a', name: 'wild' } })] }),
    server('x.y.d.test'),
  ], { backends: [backend('upstream-default-backend'), backend('team-a-tls-443', [{ address: '10.0.0.7', port: '8443' }], { sslPassthrough: true })] });
  const rt = { ...h.runtime, sslPassthrough: { proxyPort: 4442 } };
  const text = h.renderer.render(cfg, rt);
  // Names a server has go to NGINX's HTTPS; wildcards as server_name matches them: a host's one
  // label deep, an alias's at any depth.
  assert.match(text, [
    '        hostnames;', '        alias.a.test ingress_rx_https;', '        pass.c.test ingress_rx_passthrough_0;', '        www.a.test ingress_rx_https;',
    '        x.y.d.test ingress_rx_https;', '        "~*^[\\w-]+\\.a\\.test$" ingress_rx_passthrough_0;', '        *.d.test ingress_rx_passthrough_0;',
    '        default ingress_rx_https;',
  ].join('\n'));
  assert.not.match(text, 'www.b.test ingress_rx', 'not under the passthrough wildcard: the default goes to NGINX already');
  const t = await h.test(text);
  assert.ok(t.ok, t.output);
});

test('with the flag, a passthrough host whose "/" has no backend is warned about and left to NGINX', () => {
  const cfg = configuration([server('tls.example.com', { sslPassthrough: true, locations: [location({ path: '/api' })] })]);
  const r = h.renderer.renderWithWarnings(cfg, { ...h.runtime, sslPassthrough: { proxyPort: 4442 } });
  assert.ok(r.warnings.some((w) => w.includes('tls.example.com') && w.includes('backend for the path "/"')), r.warnings.join('\n'));
  assert.not.match(r.text, 'ingress_rx_passthrough_0');
});

test('a killed master\'s passthrough sockets are removed before a new master starts (NGINX would not bind them)', () => {
  const stale = join(h.runtime.prefix, 'passthrough-3.sock');
  const other = join(h.runtime.prefix, 'passthrough-notes.txt');
  writeFileSync(stale, '');
  writeFileSync(other, '');
  removeStaleSockets(h.runtime);
  assert.not.ok(existsSync(stale));
  assert.ok(existsSync(other));
});

test.run();
