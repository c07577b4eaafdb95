// Cold start of `ingress-rx local`: NGINX starts directly on the first full configuration (no
// bootstrap NGINX, `nginx -t` or reload before it is served), HTTPS gives a TLS host its
// Secret's certificate and every other name the fallback one, later changes still reload, and
// an NGINX that cannot start at all ends the process with its error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../support/ports.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { cliArgs } from '../support/cli-command.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let a: EchoServer;
let cert: GeneratedCertificate;
let certDir: string;

test.before(async () => {
  a = await startEchoServer({ address: '127.0.0.2', name: 'a' });
  certDir = mkdtempSync(join(tmpdir(), 'irx-cold-cert-'));
  cert = await generateCertificate(certDir, 'tls.test');
  ctl = await startLocal({
    files: {
      'app.json': [
        service('app', 'web'), ...slices('app', 'web', [a]),
        tlsSecret('app', 'tls-cert', await readFile(cert.certPath, 'utf8'), await readFile(cert.keyPath, 'utf8')),
        ingress('app', 'tls', { host: 'tls.test', tls: [{ hosts: ['tls.test'], secretName: 'tls-cert' }], paths: [{ path: '/', service: 'web' }] }),
        ingress('app', 'plain', { host: 'plain.test', paths: [{ path: '/', service: 'web' }] }),
      ],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await a?.close();
  rmSync(certDir, { recursive: true, force: true });
});

const errorLog = () => readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8');
const reloads = () => (errorLog().match(/signal 1 \(SIGHUP\) received/g) ?? []).length;

function servedCN(servername: string | null): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: ctl.ports.https, rejectUnauthorized: false, ...(servername === null ? {} : { servername }) }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.end();
      resolve(String(cn));
    });
    socket.on('error', reject);
  });
}

over.both('the first configuration is served by the NGINX started on it: no reload, no failed file', async (p) => {
  await p.until('plain.test', '/', (r) => r.backend === 'a', { what: 'plain.test served' });
  assert.is(reloads(), 0, 'no SIGHUP before the first configuration was served');
  assert.is(readdirSync(ctl.workdir).filter((n) => n.startsWith('nginx.conf.failed-')).length, 0);
  await ctl.logged(/reload: NGINX started/);
});

over.both('HTTPS: the TLS host gets its Secret\'s certificate; other names and no SNI get the fallback', async (p) => {
  assert.is(await servedCN('tls.test'), 'tls.test');
  assert.is(await servedCN('plain.test'), 'Kubernetes Ingress Controller Fake Certificate');
  assert.is(await servedCN('unknown.test'), 'Kubernetes Ingress Controller Fake Certificate');
  assert.is(await servedCN(null), 'Kubernetes Ingress Controller Fake Certificate');
  const r = await p.request('tls.test', '/', { https: true, ca: await readFile(cert.certPath, 'utf8') });
  assert.is(r.backend, 'a');
});

over.both('a later structural change is tested and reloaded as before', async (p) => {
  // proxy-body-size needs a directive: the host gets a server block (a dynamic host would not reload).
  const before = reloads();
  ctl.write(`more-${p.tag}.json`, [ingress('app', `more-${p.tag}`, {
    host: `more-${p.tag}.test`, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' }, paths: [{ path: '/', service: 'web' }],
  })]);
  await p.until(`more-${p.tag}.test`, '/', (r) => r.backend === 'a', { what: 'the new host served' });
  assert.is(reloads(), before + 1);
});

test('NGINX unable to start on any configuration (HTTP port taken): NGINX\'s error, exit code 1', async () => {
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(http, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'irx-cold-taken-'));
  chmodSync(dir, 0o711); // as root, NGINX's workers (nobody) must enter the workdir's parent
  mkdirSync(join(dir, 'manifests')); // an empty cluster (a missing directory is a start error of its own)
  try {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const child = spawn(process.execPath, [...cliArgs(), 'local',
      '--manifests', join(dir, 'manifests'), '--workdir', join(dir, 'work'), '--http-port', String(http), '--https-port', String(https),
      '--status-port', String(status), '--stream-port', String(stream), '--healthz-port', String(healthz), '--default-server-port', String(def),
      '--log-level', 'info'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => { out += d; });
    child.stderr!.on('data', (d) => { out += d; });
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    clearTimeout(killer);
    assert.is(code, 1, out.slice(-2000));
    assert.match(out, /nginx: \[emerg\] bind\(\) to 127\.0\.0\.1:\d+ failed \(98: Address already in use\)/);
    assert.match(out, /cannot serve/);
  } finally {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
