// proxy-ssl-* rendering checked by NGINX itself (nginx -t): each location's settings, the
// server's from the host's oldest Ingress (proxy_ssl_* for HTTPS, grpc_ssl_* for a gRPC location
// that inherits them), proxy-ssl-location-only, and the never-kept upstream for backend TLS.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNginxHarness, type NginxHarness } from '../../../support/nginx-harness.js';
import { configuration, location, server } from '../../../support/config-builder.js';
import type { ProxySSLConfig } from '../../../../src/model/ingress/annotations/proxyssl.js';
import type { Configuration } from '../../../../src/model/core/types.js';
import { auxiliaryFiles } from '../../../../src/render/engine.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { execFileSync } from 'node:child_process';

let h: NginxHarness;
const CA = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-days', '1', '-subj', '/CN=ca'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
const sslConfig: ProxySSLConfig = {
  secret: 'shop/backend-ca', ca: CA, clientCertificate: null, ciphers: 'HIGH:!aNULL', protocols: ['TLSv1.2', 'TLSv1.3'],
  name: 'backend.internal', verify: 'on', verifyDepth: 2, serverName: 'on',
};

test.before(async () => { h = await createNginxHarness(); });
test.after(async () => { await h.close(); });

const config = (locationOnly: boolean): Configuration => configuration([
  server('app.example.com', {
    tlsSettings: { authTLS: null, proxySSL: sslConfig, sslCiphers: '', sslPreferServerCiphers: null },
    locations: [
      location({ path: '/own', backendProtocol: 'HTTPS', proxySSL: sslConfig }),
      location({ path: '/grpc', backendProtocol: 'GRPCS' }),
      location({ path: '/plain', backendProtocol: 'HTTP' }),
    ],
  }),
], {}, { proxySSLLocationOnly: locationOnly });

async function checked(cfg: Configuration): Promise<string> {
  for (const file of auxiliaryFiles(cfg, h.runtime)) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.content, { mode: file.mode ?? 0o644 });
  }
  const text = h.renderer.render(cfg, h.runtime);
  const r = await h.test(text);
  assert.ok(r.ok, r.output);
  return text;
}

const locationBlock = (text: string, path: string) => text.slice(text.indexOf(`location "${path}"`), text.indexOf('\n        }\n', text.indexOf(`location "${path}"`)));

test('server settings for HTTPS, grpc_ssl_* for a gRPC location inheriting them; backend TLS never uses the kept-alive balancer', async () => {
  const text = await checked(config(false));
  assert.match(text, /\n        proxy_ssl_trusted_certificate "[^"]+\/ssl-ca\/shop\/backend-ca\.crt";\n/);
  assert.match(locationBlock(text, '/grpc'), /grpc_ssl_verify on;[\s\S]*grpc_ssl_name "backend.internal";[\s\S]*grpc_pass grpcs:\/\/upstream_balancer_tls;/);
  assert.match(locationBlock(text, '/own'), /proxy_ssl_verify_depth 2;[\s\S]*proxy_pass https:\/\/upstream_balancer_tls;/);
  assert.match(locationBlock(text, '/plain'), /proxy_pass http:\/\/upstream_balancer;/);
  assert.match(text, /upstream upstream_balancer_tls \{[^}]*balancer_by_lua_block \{[^}]*\}\n    \}/);
  assert.not.match(text.slice(text.indexOf('upstream upstream_balancer_tls')).split('\n    }')[0]!, /keepalive/);
});

test('proxy-ssl-location-only: no server settings; the gRPC location keeps the kept-alive balancer and no TLS settings', async () => {
  const text = await checked(config(true));
  assert.not.match(text, /\n        proxy_ssl_trusted_certificate/);
  assert.not.match(locationBlock(text, '/grpc'), /grpc_ssl_/);
  assert.match(locationBlock(text, '/grpc'), /grpc_pass grpcs:\/\/upstream_balancer;/);
  assert.match(locationBlock(text, '/own'), /proxy_pass https:\/\/upstream_balancer_tls;/);
});

test('without proxy-ssl-name the backend is named upstream_balancer, as ingress-nginx\'s (proxy_pass\'s host), not the balancer TLS passes to', async () => {
  const unnamed = { ...sslConfig, name: '' };
  const text = await checked(configuration([
    server('app.example.com', {
      tlsSettings: { authTLS: null, proxySSL: unnamed, sslCiphers: '', sslPreferServerCiphers: null },
      locations: [
        location({ path: '/own', backendProtocol: 'HTTPS', proxySSL: unnamed }),
        location({ path: '/inherits', backendProtocol: 'HTTPS' }),
        location({ path: '/grpc', backendProtocol: 'GRPCS' }),
      ],
    }),
    server('named.example.com', {
      tlsSettings: { authTLS: null, proxySSL: sslConfig, sslCiphers: '', sslPreferServerCiphers: null },
      locations: [location({ path: '/own-unnamed', backendProtocol: 'HTTPS', proxySSL: unnamed })],
    }),
    server('plain.example.com', { locations: [location({ path: '/plain', backendProtocol: 'HTTPS' })] }),
  ], {}, { proxySSLLocationOnly: false }));
  for (const path of ['/own', '/inherits']) assert.match(locationBlock(text, path), /proxy_ssl_name upstream_balancer;[\s\S]*proxy_pass https:\/\/upstream_balancer_tls;/);
  assert.match(locationBlock(text, '/grpc'), /grpc_ssl_name upstream_balancer;/);
  // A location passing to upstream_balancer has that name already; one inheriting the server's name keeps it.
  assert.not.match(locationBlock(text, '/own-unnamed'), /proxy_ssl_name/);
  assert.not.match(locationBlock(text, '/plain'), /ssl_name/);
});

test('without any backend TLS the balancer for it is not rendered', async () => {
  const text = await checked(configuration([server('web.example.com')]));
  assert.not.match(text, 'upstream_balancer_tls');
});

test.run();
