// FastCGI end to end, as ingress-nginx's user-guide/fcgi-services.md sets it up: backend-protocol
// FCGI, fastcgi-index and fastcgi-params-configmap, against Debian's php-fpm serving a real PHP
// script that prints what PHP-FPM was given (SCRIPT_FILENAME, a parameter of the ConfigMap), over
// HTTP/1.1 and over HTTP/2 (TLS, ALPN h2). Hostile ConfigMaps (another namespace, `;` or braces in
// a value, none at all) deny the location with a warning naming the Ingress and the annotation;
// a ConfigMap created after the Ingress is picked up without a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { startPhpFpm, type PhpFpm } from '../support/php-fpm.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const NS = 'php';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let fpm: PhpFpm;
let cert: GeneratedCertificate;
const certDir = mkdtempSync(join(tmpdir(), 'irx-fcgi-certs-'));
const over = protocolMatrix(test, () => ctl);

// What PHP-FPM hands the script, as JSON.
const SCRIPT = `<?php
header('Content-Type: application/json');
echo json_encode([
  'script' => $_SERVER['SCRIPT_FILENAME'] ?? null,
  'greeting' => $_SERVER['APP_GREETING'] ?? null,
  'uri' => $_SERVER['REQUEST_URI'] ?? null,
  'method' => $_SERVER['REQUEST_METHOD'] ?? null,
  'protocol' => $_SERVER['SERVER_PROTOCOL'] ?? null,
  'body' => file_get_contents('php://input'),
  'file' => basename(__FILE__),
]);
`;

const configMap = (name: string, data: Record<string, string>, namespace = NS) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
const fcgi = (name: string, host: string, annotations: Record<string, string>, tls = false) => ingress(NS, name, {
  host, ...(tls ? { tls: [{ hosts: [host], secretName: 'tls' }] } : {}), paths: [{ path: '/', service: 'php' }],
  annotations: Object.fromEntries(Object.entries({ 'backend-protocol': 'FCGI', ...annotations }).map(([k, v]) => [`${P}/${k}`, v])),
});

test.before(async () => {
  fpm = await startPhpFpm({ 'index.php': SCRIPT, 'other.php': SCRIPT });
  cert = await generateCertificate(certDir, 'php.test');
  ctl = await startLocal({
    files: {
      'php.json': [
        service(NS, 'php'), ...slices(NS, 'php', [{ address: fpm.address, port: fpm.port }]),
        tlsSecret(NS, 'tls', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
        configMap('php-params', { SCRIPT_FILENAME: `${fpm.root}$fastcgi_script_name`, APP_GREETING: 'hello-from-the-configmap' }),
        fcgi('php', 'php.test', { 'fastcgi-index': 'index.php', 'fastcgi-params-configmap': 'php-params' }, true),
        // Without fastcgi-params-configmap PHP-FPM gets no SCRIPT_FILENAME: the ingress-nginx guide's reason for it.
        fcgi('bare', 'bare.test', { 'fastcgi-index': 'index.php' }),
      ],
      'hostile.json': [
        configMap('stolen', { SCRIPT_FILENAME: `${fpm.root}/index.php` }, 'other-team'),
        fcgi('cross', 'cross.test', { 'fastcgi-params-configmap': 'other-team/stolen' }),
        configMap('injected', { SCRIPT_FILENAME: `${fpm.root}/index.php;\n}\nserver { listen 1; }` }),
        fcgi('injection', 'injection.test', { 'fastcgi-params-configmap': 'injected' }),
        configMap('braces', { SCRIPT_FILENAME: `${fpm.root}/{x}.php` }),
        fcgi('braces', 'braces.test', { 'fastcgi-params-configmap': 'braces' }),
        fcgi('missing', 'missing.test', { 'fastcgi-params-configmap': 'later', 'fastcgi-index': 'index.php' }),
      ],
    },
  });
  await ctl.until('php.test', '/', (r) => r.status === 200, { what: 'php.test served by php-fpm', https: true, ca: readFileSync(cert.certPath, 'utf8') });
});

test.after(async () => {
  await ctl?.stop();
  await fpm?.close();
  rmSync(certDir, { recursive: true, force: true });
});

over.both('fastcgi-index picks index.php for /, SCRIPT_FILENAME and a parameter come from the ConfigMap', async (p) => {
  const ca = readFileSync(cert.certPath, 'utf8');
  const r = await p.request('php.test', '/?q=1', { https: true, ca });
  assert.is(r.status, 200, r.body);
  assert.equal(r.json, {
    script: `${fpm.root}/index.php`, greeting: 'hello-from-the-configmap', uri: '/?q=1', method: 'GET',
    protocol: p.protocol === 'HTTP/2' ? 'HTTP/2.0' : 'HTTP/1.1', body: '', file: 'index.php',
  });
  const other = await p.request('php.test', '/other.php', { https: true, ca, method: 'POST', body: 'a=1' });
  assert.equal([other.json?.file, other.json?.script, other.json?.method, other.json?.body], ['other.php', `${fpm.root}/other.php`, 'POST', 'a=1']);
});

over.both('without the parameters PHP-FPM cannot find the script (why the annotation exists)', async (p) => {
  const unknown = () => readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8').split('FastCGI sent in stderr: "Primary script unknown"').length - 1;
  const before = unknown();
  assert.is((await p.request('bare.test', '/')).status, 404);
  await waitFor(() => unknown() > before, { what: 'PHP-FPM\'s answer in NGINX\'s error log' });
});

over.both('a ConfigMap of another namespace, `;` or braces in a value: the location is denied (503) and the warning names the Ingress and the annotation', async (p) => {
  for (const host of ['cross.test', 'injection.test', 'braces.test']) assert.is((await p.request(host, '/')).status, 503, host);
  const out = ctl.output();
  assert.match(out, /Ingress php\/cross: metadata\.annotations\[\\"nginx\.ingress\.kubernetes\.io\/fastcgi-params-configmap\\"\]: ConfigMap other-team\/stolen is in another namespace/);
  assert.match(out, /Ingress php\/injection: metadata\.annotations\[\\"nginx\.ingress\.kubernetes\.io\/fastcgi-params-configmap\\"\]: ConfigMap php\/injected: the value of SCRIPT_FILENAME holds characters/);
  assert.match(out, /Ingress php\/braces: .*ConfigMap php\/braces: the value of SCRIPT_FILENAME holds characters/);
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.not.match(conf, /listen 1;/);
  assert.match(conf, /# denied: fastcgi-params-configmap: ConfigMap other-team\/stolen is in another namespace/);
});

test('a missing ConfigMap denies the location, naming it; created later, it is used without a restart', async () => {
  assert.is((await ctl.request('missing.test', '/')).status, 503);
  await ctl.logged(/Ingress php\/missing: metadata\.annotations\[\\"nginx\.ingress\.kubernetes\.io\/fastcgi-params-configmap\\"\]: ConfigMap php\/later not found/);
  ctl.write('later.json', [configMap('later', { SCRIPT_FILENAME: `${fpm.root}$fastcgi_script_name`, APP_GREETING: 'late' })]);
  const r = await ctl.until('missing.test', '/', (x) => x.status === 200, { what: 'the ConfigMap picked up' });
  assert.equal([r.json?.script, r.json?.greeting], [`${fpm.root}/index.php`, 'late']);
});

test.run();
