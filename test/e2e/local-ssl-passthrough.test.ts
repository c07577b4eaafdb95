// ssl-passthrough end to end: `ingress-rx local --enable-ssl-passthrough` with real NGINX and
// real TLS. A passthrough host reaches its own TLS backend untouched; a normal TLS host on the
// same port still gets NGINX's certificate, with the client address kept; plain HTTP as ever.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server as TlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { freePort } from '../support/ports.js';
import { tlsExchange } from '../support/tls-exchange.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
const certDir = mkdtempSync(join(tmpdir(), 'irx-certs-'));
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;
let backend: TlsServer;
let nginxCert: string;

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  const own = await generateCertificate(certDir, 'backend.test');
  backend = createServer({ cert: readFileSync(own.certPath), key: readFileSync(own.keyPath) }, (socket) => {
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 16\r\nconnection: close\r\n\r\nfrom the backend');
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const backendPort = (backend.address() as AddressInfo).port;
  const web = await generateCertificate(certDir, 'web.test');
  nginxCert = readFileSync(web.certPath, 'utf8');
  ctl = await startLocal({
    args: ['--enable-ssl-passthrough', '--ssl-passthrough-proxy-port', String(await freePort())],
    files: {
      'web.json': [
        service('app', 'web'), ...slices('app', 'web', [echo]),
        tlsSecret('app', 'web-cert', nginxCert, readFileSync(web.keyPath, 'utf8')),
        ingress('app', 'web', { host: 'web.test', annotations: { [`${P}/ssl-redirect`]: 'false' }, tls: [{ hosts: ['web.test'], secretName: 'web-cert' }], paths: [{ path: '/', service: 'web' }] }),
      ],
      'passthrough.json': [
        service('app', 'secure'),
        ...slices('app', 'secure', [{ address: '127.0.0.1', port: backendPort } as EchoServer]),
        ingress('app', 'secure', { host: 'backend.test', annotations: { [`${P}/ssl-passthrough`]: 'true' }, paths: [{ path: '/', service: 'secure' }] }),
      ],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
  backend?.close();
  rmSync(certDir, { recursive: true, force: true });
});

/** A raw TLS exchange on the HTTPS port: the peer certificate's CN and the answer's body. */
const passthroughRequest = (servername: string) => tlsExchange(ctl.ports.https, servername)
  .then(({ cn, text }) => ({ cn, body: text.slice(text.indexOf('\r\n\r\n') + 4) }));

over.both('the passthrough host gets the backend\'s own certificate and answer, TLS untouched by NGINX', async (p) => {
  await p.until('web.test', '/', (r) => r.status === 200, { what: 'web.test served' });
  const r = await passthroughRequest('backend.test');
  assert.is(r.cn, 'backend.test');
  assert.is(r.body, 'from the backend');
});

over.both('a normal TLS host on the same port gets NGINX\'s certificate and is proxied with the client address kept', async (p) => {
  // Trusting NGINX's certificate for web.test only: the answer came through NGINX's TLS.
  const r = await p.request('web.test', '/', { https: true, ca: nginxCert, localAddress: '127.0.0.9' });
  assert.is(r.status, 200);
  assert.is(r.backend, 'web');
  const headers = r.json?.headers as Record<string, string>;
  assert.is(headers['x-real-ip'], '127.0.0.9');
  assert.is(headers['x-forwarded-for'], '127.0.0.9');
});

over.both('plain HTTP is unaffected, and nginx.conf has the SNI stream server', async (p) => {
  const r = await p.request('web.test', '/');
  assert.is(r.status, 200);
  assert.is(r.backend, 'web');
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  assert.match(conf, `listen 127.0.0.1:${ctl.ports.https};\n        ssl_preread on;`);
});

test.run();
