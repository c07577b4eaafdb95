// TLS annotations and ConfigMap keys as ingress-nginx answers them (its docs and
// test/e2e/annotations/authtls.go, proxyssl.go): one `ingress-rx local` with a host per scenario,
// certificates made by the openssl CLI, real NGINX and real TLS clients (client certificates,
// SNI apart from Host, cipher offers). docs/fidelity.md names the test of each key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, oneGeneration, service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const NS = 'tls';
const OTHER_NS = 'other';
const P = 'nginx.ingress.kubernetes.io';
const dir = mkdtempSync(join(tmpdir(), 'irx-fidelity-tls-'));
let ctl: LocalController;
let echo: EchoServer;
let backend: HttpsServer;
let backendPort = 0;
/** What the HTTPS backend saw of each TLS connection: the SNI and the client certificate's CN. */
const backendSaw: Array<{ sni: string; clientCN: string }> = [];
let ocspResponder: ChildProcess | undefined;

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const file = (name: string) => readFileSync(join(dir, name), 'utf8');
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** A CA (self-signed, EC) named `name`: name.crt, name.key. */
function makeCA(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`,
    '-days', '2', '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
}

/** A leaf certificate `name` for `cn` (with DNS SANs) signed by `ca`. */
function makeLeaf(name: string, cn: string, ca: string, sans: string[] = [], extra: string[] = []): void {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
  const ext = join(dir, `${name}.ext`);
  execFileSync('sh', ['-c', `printf '%s\\n' "${sans.length ? `subjectAltName=${sans.map((s) => `DNS:${s}`).join(',')}` : 'basicConstraints=CA:FALSE'}" ${extra.map((e) => `"${e}"`).join(' ')} > ${ext}`]);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', ext);
}

const secret = (ns: string, name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])) });
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const HOSTS = [
  'mtls.test', 'no-tls.test', 'crl.test', 'rotated.test', 'cn.test', 'errpage.test', 'optional.test', 'missing.test', 'cross.test', 'inject.test', 'nocacrt.test', 'plain.test',
  'backend.test', 'backend-wrong-ca.test', 'backend-plain.test', 'shared.test', 'ciphers.test', 'later-h1.test', 'later-h2.test', 'ocsp.test',
];
const on = (name: string, host: string, annotations: Record<string, string>, svc = 'echo') =>
  ingress(NS, name, { host, annotations: a(annotations), tls: [{ hosts: [host], secretName: 'server-cert' }], paths: [{ path: '/', service: svc }] });

const over = protocolMatrix(test, () => ctl);

const seen = (r: Reply) => (r.json?.headers ?? {}) as Record<string, string>;

/** One HTTPS request over `p`'s protocol with its own SNI (or none), Host, and client certificate. */
function call(p: ProtocolClient, host: string, opts: { sni?: string | null; client?: string; headers?: Record<string, string>; path?: string } = {}): Promise<Reply> {
  return p.request(host, opts.path ?? '/', {
    https: true, sni: opts.sni, headers: opts.headers,
    ...(opts.client ? { cert: file(`${opts.client}.crt`), key: file(`${opts.client}.key`) } : {}),
  });
}

/** A TLS 1.2 session with `sni`: its ticket/session, and whether it resumed `session`. */
function tlsSession(sni: string, session?: Buffer): Promise<{ session: Buffer; reused: boolean }> {
  return new Promise((resolve, reject) => {
    let got: Buffer | undefined;
    let reused = false;
    const socket = tlsConnect({ host: '127.0.0.1', port: ctl.ports.https, servername: sni, rejectUnauthorized: false, maxVersion: 'TLSv1.2', ...(session ? { session } : {}) });
    socket.on('session', (s: Buffer) => { got = s; });
    socket.on('secureConnect', () => {
      reused = socket.isSessionReused();
      socket.write(`GET / HTTP/1.1\r\nHost: ${sni}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', () => {});
    socket.on('close', () => (got || reused ? resolve({ session: got ?? session!, reused }) : reject(new Error('no TLS session'))));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('session timed out')));
  });
}

/** Rewrites the main ConfigMap and waits until NGINX runs a configuration that has `marker`. */
async function phase(data: Record<string, string>, marker: RegExp): Promise<void> {
  ctl.write('configmap.json', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: NS }, data }]);
  await waitFor(async () => {
    const conf = (await ctl.control('/nginx.conf')).body;
    const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
    return marker.test(conf) && (await ctl.control('/configuration-checksum')).body === checksum;
  }, { timeoutMs: 15_000, what: `NGINX running a configuration with ${marker}` });
  await ctl.until('plain.test', '/', (r) => r.status === 200, { https: true });
}

/** A TLS 1.2 handshake with the controller offering only `ciphers`; resolves to the cipher agreed or the error. */
function handshake(sni: string, opts: { ciphers?: string; maxVersion?: 'TLSv1.2' | 'TLSv1.3' } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket: TLSSocket = tlsConnect({
      host: '127.0.0.1', port: ctl.ports.https, servername: sni, rejectUnauthorized: false,
      ...(opts.ciphers ? { ciphers: opts.ciphers } : {}), maxVersion: opts.maxVersion ?? 'TLSv1.2',
    }, () => {
      resolve(socket.getCipher().name);
      socket.end();
    });
    socket.on('error', (err) => resolve(`error: ${err.message}`));
    socket.setTimeout(5000, () => socket.destroy(new Error('handshake timed out')));
  });
}

/** `openssl ocsp` on `port` (0: any); resolves to the port it listens on. */
async function startOCSPResponder(port: string): Promise<string> {
  const child = spawn('openssl', ['ocsp', '-index', 'index.txt', '-port', port, '-rsigner', 'ocsp-ca.crt', '-rkey', 'ocsp-ca.key', '-CA', 'ocsp-ca.crt', '-nmin', '60'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  ocspResponder = child;
  let said = '';
  let exited = false;
  child.stdout!.on('data', (d: Buffer) => { said += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { said += d.toString(); });
  child.on('exit', () => { exited = true; });
  return waitFor(() => {
    if (exited) throw new Error(`openssl ocsp exited: ${said}`);
    return /ACCEPT .*:(\d+)/.exec(said)?.[1];
  }, { what: 'the OCSP responder to listen' });
}

test.before(async () => {
  makeCA('client-ca');
  makeCA('evil-ca');
  makeCA('backend-ca');
  makeLeaf('alice', 'alice', 'client-ca');
  makeLeaf('mallory', 'mallory', 'client-ca');
  makeLeaf('alice-evil', 'alice', 'evil-ca');
  // mallory's certificate revoked in the CA's CRL.
  writeFileSync(join(dir, 'index-ca.txt'), '');
  writeFileSync(join(dir, 'ca.cnf'), `[ca]\ndefault_ca=d\n[d]\ndatabase=${join(dir, 'index-ca.txt')}\ndefault_md=sha256\ndefault_crl_days=1\n`);
  openssl('ca', '-config', 'ca.cnf', '-keyfile', 'client-ca.key', '-cert', 'client-ca.crt', '-revoke', 'mallory.crt');
  openssl('ca', '-config', 'ca.cnf', '-keyfile', 'client-ca.key', '-cert', 'client-ca.crt', '-gencrl', '-out', 'client-ca.crl');
  makeLeaf('server', 'tls-hosts', 'client-ca', HOSTS);
  makeLeaf('backend', 'backend.internal', 'backend-ca', ['backend.internal']);
  makeLeaf('proxy-client', 'ingress-rx-proxy', 'backend-ca');
  // A certificate naming its OCSP responder, `openssl ocsp` knowing it as valid: a first
  // responder picks a free port, the second serves the index written for the certificate.
  makeCA('ocsp-ca');
  writeFileSync(join(dir, 'index.txt'), '');
  const firstPort = await startOCSPResponder('0');
  ocspResponder!.kill();
  makeLeaf('stapled', 'ocsp.test', 'ocsp-ca', ['ocsp.test'], [`authorityInfoAccess=OCSP;URI:http://127.0.0.1:${firstPort}/`]);
  const serial = openssl('x509', '-in', 'stapled.crt', '-noout', '-serial').trim().replace('serial=', '');
  const end = new Date(openssl('x509', '-in', 'stapled.crt', '-noout', '-enddate').trim().replace('notAfter=', ''));
  const asn1 = end.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1$2$3$4$5$6Z');
  writeFileSync(join(dir, 'index.txt'), `V\t${asn1}\t\t${serial}\tunknown\t/CN=ocsp.test\n`);
  await waitFor(async () => (await startOCSPResponder(firstPort).catch(() => null)) !== null, { what: 'the OCSP responder on its port again' });

  echo = await startEchoServer({ address: '127.0.5.10', name: 'echo' });
  // The HTTPS backend asks for a client certificate (any) and reports what it saw.
  backend = createHttpsServer({ cert: file('backend.crt'), key: file('backend.key'), requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const seen = { sni: (socket as unknown as { servername?: string }).servername || '', clientCN: String(socket.getPeerCertificate()?.subject?.CN ?? '') };
    backendSaw.push(seen);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name: 'https-backend', headers: req.headers, ...seen }));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.5.11', r));
  backendPort = (backend.address() as AddressInfo).port;

  const clientCA = { 'ca.crt': `# the bundle may carry text between certificates\n${file('client-ca.crt')}` };
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [
        service(NS, 'echo'), ...slices(NS, 'echo', [echo]),
        service(NS, 'https'), ...slices(NS, 'https', [{ address: '127.0.5.11', port: backendPort }]),
        // The same endpoint through another Service, without backend TLS settings.
        service(NS, 'https-plain'), ...slices(NS, 'https-plain', [{ address: '127.0.5.11', port: backendPort }]),
      ],
      'secrets.json': [
        tlsSecret(NS, 'server-cert', file('server.crt'), file('server.key')),
        // The chain with its issuer: an OCSP request names the issuer's key.
        tlsSecret(NS, 'stapled-cert', file('stapled.crt') + file('ocsp-ca.crt'), file('stapled.key')),
        secret(NS, 'client-ca', clientCA),
        secret(OTHER_NS, 'client-ca', clientCA),
        secret(NS, 'client-ca-crl', { 'ca.crt': file('client-ca.crt'), 'ca.crl': file('client-ca.crl') }),
        secret(NS, 'no-ca', { 'tls.crt': file('alice.crt') }),
        secret(NS, 'backend-ca', { 'ca.crt': file('backend-ca.crt'), 'tls.crt': file('proxy-client.crt'), 'tls.key': file('proxy-client.key') }),
        secret(NS, 'wrong-ca', { 'ca.crt': file('evil-ca.crt') }),
      ],
      // Its own file, rewritten by a test.
      'rotated.json': [secret(NS, 'rotated-ca', { 'ca.crt': file('client-ca.crt') })],
      'mtls.json': [
        on('mtls', 'mtls.test', { 'auth-tls-secret': `${NS}/client-ca`, 'auth-tls-verify-client': 'on', 'auth-tls-verify-depth': '1', 'auth-tls-pass-certificate-to-upstream': 'true' }),
        // A careless mTLS Ingress: no tls section and ssl-redirect off; and an ACME solver on mtls.test.
        ingress(NS, 'no-tls', { host: 'no-tls.test', annotations: a({ 'auth-tls-secret': 'client-ca', 'ssl-redirect': 'false' }), paths: [{ path: '/', service: 'echo' }] }),
        ingress(NS, 'acme', { host: 'mtls.test', paths: [{ path: '/.well-known/acme-challenge/token', pathType: 'ImplementationSpecific', service: 'echo' }] }),
        on('crl', 'crl.test', { 'auth-tls-secret': 'client-ca-crl' }),
        on('rotated', 'rotated.test', { 'auth-tls-secret': 'rotated-ca' }),
        on('cn', 'cn.test', { 'auth-tls-secret': 'client-ca', 'auth-tls-match-cn': 'CN=(bob|alice)$' }),
        on('errpage', 'errpage.test', { 'auth-tls-secret': 'client-ca', 'auth-tls-error-page': 'http://errors.example/cert-needed' }),
        on('optional', 'optional.test', { 'auth-tls-secret': 'client-ca', 'auth-tls-verify-client': 'optional' }),
        on('missing', 'missing.test', { 'auth-tls-secret': 'no-such-secret' }),
        on('cross', 'cross.test', { 'auth-tls-secret': `${OTHER_NS}/client-ca` }),
        // The CVE-2021-25746 class: a value that would close the `if` and add directives.
        on('inject', 'inject.test', { 'auth-tls-secret': 'client-ca', 'auth-tls-match-cn': 'CN=x") { return 200; } if ($host ~ "y' }),
        on('nocacrt', 'nocacrt.test', { 'auth-tls-secret': 'no-ca' }),
        on('plain', 'plain.test', {}),
        ingress(NS, 'ocsp', { host: 'ocsp.test', tls: [{ hosts: ['ocsp.test'], secretName: 'stapled-cert' }], paths: [{ path: '/', service: 'echo' }] }),
      ],
      'backend.json': [
        on('backend', 'backend.test', {
          'backend-protocol': 'HTTPS', 'proxy-ssl-secret': 'backend-ca', 'proxy-ssl-verify': 'on', 'proxy-ssl-verify-depth': '2',
          'proxy-ssl-name': 'backend.internal', 'proxy-ssl-server-name': 'on', 'proxy-ssl-protocols': 'TLSv1.3 TLSv1.2', 'proxy-ssl-ciphers': 'HIGH:!aNULL',
        }, 'https'),
        on('backend-wrong-ca', 'backend-wrong-ca.test', { 'backend-protocol': 'HTTPS', 'proxy-ssl-secret': 'wrong-ca', 'proxy-ssl-verify': 'on', 'proxy-ssl-name': 'backend.internal' }, 'https'),
        on('backend-plain', 'backend-plain.test', { 'backend-protocol': 'HTTPS' }, 'https-plain'),
        // proxy-ssl-* of the host's oldest Ingress apply to its other Ingresses too, unless proxy-ssl-location-only.
        ingress(NS, 'shared-a', { host: 'shared.test', created: '2024-01-01T00:00:00Z', annotations: a({ 'backend-protocol': 'HTTPS', 'proxy-ssl-secret': 'backend-ca', 'proxy-ssl-verify': 'on', 'proxy-ssl-name': 'backend.internal' }), tls: [{ hosts: ['shared.test'], secretName: 'server-cert' }], paths: [{ path: '/a', service: 'https' }] }),
        ingress(NS, 'shared-b', { host: 'shared.test', created: '2024-02-01T00:00:00Z', annotations: a({ 'backend-protocol': 'HTTPS' }), paths: [{ path: '/b', service: 'https-plain' }] }),
        on('ciphers', 'ciphers.test', { 'ssl-ciphers': 'ECDHE-ECDSA-AES128-GCM-SHA256', 'ssl-prefer-server-ciphers': 'false' }),
      ],
    },
  });
  await ctl.until('plain.test', '/', (r) => r.status === 200 || r.status === 308);
});

test.after(async () => {
  await ctl?.stop();
  ocspResponder?.kill();
  await echo?.close();
  backend?.closeAllConnections();
  await new Promise<void>((r) => (backend ? backend.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

over.both('auth-tls-secret: a client certificate of the CA is accepted and passed upstream; none or another CA\'s is refused (400)', async (p) => {
  await waitFor(async () => (await call(p, 'mtls.test', { client: 'alice' })).status === 200, { what: 'mtls.test with a client certificate' });
  const ok = await call(p, 'mtls.test', { client: 'alice' });
  const h = seen(ok);
  assert.is(h['ssl-client-verify'], 'SUCCESS');
  assert.is(h['ssl-client-subject-dn'], 'CN=alice');
  assert.is(h['ssl-client-issuer-dn'], 'CN=client-ca');
  // auth-tls-pass-certificate-to-upstream: the URL-encoded PEM of the very certificate.
  assert.is(decodeURIComponent(h['ssl-client-cert'] ?? ''), file('alice.crt'));
  assert.is((await call(p, 'mtls.test')).status, 400);
  assert.is((await call(p, 'mtls.test', { client: 'alice-evil' })).status, 400);
  // A host without auth-tls on the same controller: no certificate asked, and the client
  // cannot make its backend believe one was checked.
  const plain = await call(p, 'plain.test', { headers: { 'ssl-client-verify': 'SUCCESS', 'ssl-client-subject-dn': 'CN=admin' } });
  assert.is(plain.status, 200);
  assert.is(seen(plain)['ssl-client-verify'], undefined);
  assert.is(seen(plain)['ssl-client-subject-dn'], undefined);
  // Forged headers towards the mTLS host are replaced by NGINX's own.
  const forged = await call(p, 'mtls.test', { client: 'alice', headers: { 'ssl-client-subject-dn': 'CN=admin' } });
  assert.is(seen(forged)['ssl-client-subject-dn'], 'CN=alice');
});

over.both('SNI of a host without client authentication, or no SNI, with the Host of one that has it: never served unverified', async (p) => {
  // The handshake was made with plain.test's server, which asked for no certificate: 421. A
  // dynamic plain.test has no server block, so NGINX knows no server for that SNI name and the
  // Host's server finds no certificate: 400 (docs/differences.md, Dynamic routes). Unverified either way.
  const misdirected = process.env.IRX_TEST_DYNAMIC_ROUTES === '0' ? 421 : 400;
  assert.is((await call(p, 'mtls.test', { sni: 'plain.test' })).status, misdirected);
  assert.is((await call(p, 'mtls.test', { sni: 'plain.test', client: 'alice-evil' })).status, misdirected);
  // No SNI: the default server's handshake; the Host's server then finds no certificate.
  assert.is((await call(p, 'mtls.test', { sni: null })).status, 400);
  assert.is((await call(p, 'mtls.test', { sni: null, client: 'alice-evil' })).status, 400);
  assert.is((await call(p, 'cn.test', { sni: 'plain.test', client: 'alice' })).status, misdirected);
  // Plain HTTP never reaches a host that requires a certificate: redirected to HTTPS, even with
  // ssl-redirect false and no tls section; an ACME challenge path stays reachable.
  const http = await ctl.request('mtls.test', '/x');
  assert.is(http.status, 308);
  assert.is(http.headers.location, `https://mtls.test:${ctl.ports.https}/x`);
  assert.is((await ctl.request('no-tls.test', '/')).status, 308);
  assert.is((await call(p, 'no-tls.test', { client: 'alice' })).status, 200);
  assert.is((await call(p, 'no-tls.test')).status, 400);
  assert.is((await ctl.request('mtls.test', '/.well-known/acme-challenge/token')).status, 200);
  assert.is((await ctl.request('optional.test', '/')).status, 308);
  // The other way round is fine: an mTLS handshake, then a host without it.
  assert.is((await call(p, 'plain.test', { sni: 'mtls.test', client: 'alice' })).status, 200);
});

over.both('auth-tls-match-cn: a matching CN passes, another CN of the same CA gets 403; auth-tls-error-page redirects; optional lets through', async (p) => {
  assert.is((await call(p, 'cn.test', { client: 'alice' })).status, 200);
  const mallory = await call(p, 'cn.test', { client: 'mallory' });
  assert.is(mallory.status, 403);
  assert.match(mallory.body, /client certificate unauthorized/);
  assert.is((await call(p, 'cn.test')).status, 400);
  const err = await call(p, 'errpage.test');
  assert.is(err.status, 302);
  assert.is(err.headers.location, 'http://errors.example/cert-needed');
  assert.is((await call(p, 'errpage.test', { client: 'alice-evil' })).status, 302);
  assert.is((await call(p, 'errpage.test', { client: 'alice' })).status, 200);
  const none = await call(p, 'optional.test');
  assert.is(none.status, 200);
  assert.is(seen(none)['ssl-client-verify'], 'NONE');
  assert.is(seen((await call(p, 'optional.test', { client: 'alice' })))['ssl-client-verify'], 'SUCCESS');
  // With `optional` a certificate of an unknown CA still fails the handshake's check: 400.
  assert.is((await call(p, 'optional.test', { client: 'alice-evil' })).status, 400);
});

over.both('a missing Secret, one in another namespace, one without ca.crt, or an injected match-cn closes that host (403) and no other', async (p) => {
  for (const host of ['missing.test', 'cross.test', 'nocacrt.test', 'inject.test']) {
    assert.is((await call(p, host, { client: 'alice' })).status, 403, host);
  }
  const out = ctl.output();
  assert.match(out, /Secret tls\/no-such-secret not found/);
  assert.match(out, /Secret other\/client-ca is in another namespace/);
  assert.match(out, /Secret tls\/no-ca has no data\[\\?"ca\.crt\\?"\]/);
  assert.match(out, /auth-tls-match-cn/);
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.not.match(conf, /return 200; \}/);
  // The CA bundle beside nginx.conf: certificates only, readable; one directory per namespace and Secret.
  const caPath = /ssl_client_certificate "([^"]+)"/.exec(conf)![1]!;
  assert.is(readFileSync(caPath, 'utf8'), file('client-ca.crt'));
  assert.match(caPath, /\/ssl-ca\/tls\/client-ca\.crt$/);
  assert.is((await call(p, 'mtls.test', { client: 'alice' })).status, 200);
  assert.is((await call(p, 'plain.test')).status, 200);
});

over.both('auth-tls-secret with ca.crl: a revoked certificate is refused (400); a changed Secret applies without a restart', async (p) => {
  assert.is((await call(p, 'crl.test', { client: 'alice' })).status, 200);
  assert.is((await call(p, 'crl.test', { client: 'mallory' })).status, 400);
  assert.is((await call(p, 'rotated.test', { client: 'alice' })).status, 200);
  // The Secret now trusts the other CA only: the store re-syncs on it as a referenced Secret.
  ctl.write('rotated.json', [secret(NS, 'rotated-ca', { 'ca.crt': file('evil-ca.crt') })]);
  // Old workers finish their connections while new ones accept: wait for one generation.
  await waitFor(async () => oneGeneration(ctl.workdir) && (await call(p, 'rotated.test', { client: 'alice-evil' })).status === 200 && oneGeneration(ctl.workdir), { what: 'rotated.test trusting the new CA' });
  assert.is((await call(p, 'rotated.test', { client: 'alice' })).status, 400);
  assert.is((await call(p, 'mtls.test', { client: 'alice' })).status, 200);
  // The first CA again for the next protocol's run.
  ctl.write('rotated.json', [secret(NS, 'rotated-ca', { 'ca.crt': file('client-ca.crt') })]);
  await waitFor(async () => oneGeneration(ctl.workdir) && (await call(p, 'rotated.test', { client: 'alice' })).status === 200 && oneGeneration(ctl.workdir), { what: 'rotated.test trusting the first CA again' });
});

over.both('proxy-ssl-*: the backend is verified against the Secret\'s CA with the SNI and name given, and sees the client certificate; a wrong CA gives 502', async (p) => {
  backendSaw.length = 0;
  const ok = await p.until('backend.test', '/', (r) => r.status === 200, { https: true });
  assert.is(ok.json?.name, 'https-backend');
  assert.equal(backendSaw.at(-1), { sni: 'backend.internal', clientCN: 'ingress-rx-proxy' });
  // Requests alternate between hosts whose settings differ towards the same endpoint: each
  // gets its own handshake (a kept-alive connection would carry another's certificate and checks).
  for (let i = 0; i < 3; i++) {
    assert.is((await call(p, 'backend-wrong-ca.test')).status, 502);
    assert.is((await call(p, 'backend-plain.test')).status, 200);
    assert.is(backendSaw.at(-1)!.clientCN, '');
    assert.is((await call(p, 'backend.test')).status, 200);
    assert.equal(backendSaw.at(-1), { sni: 'backend.internal', clientCN: 'ingress-rx-proxy' });
  }
  assert.match(ctl.output() + readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8'), /upstream SSL certificate verify error/);
  // The client key beside nginx.conf is readable by its owner only.
  const conf = (await ctl.control('/nginx.conf')).body;
  const keyPath = /proxy_ssl_certificate_key "([^"]+)"/.exec(conf)![1]!;
  assert.is(statSync(keyPath).mode & 0o777, 0o600);
  assert.is(readFileSync(keyPath, 'utf8'), file('proxy-client.key'));
});

over.noRequest('ssl-ciphers and ssl-prefer-server-ciphers: the host\'s own cipher list, other hosts keep the ConfigMap\'s', 'TLS handshakes and the running nginx.conf', async () => {
  assert.is(await handshake('ciphers.test', { ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256' }), 'ECDHE-ECDSA-AES128-GCM-SHA256');
  assert.match(await handshake('ciphers.test', { ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' }), /^error/);
  assert.is(await handshake('plain.test', { ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' }), 'ECDHE-ECDSA-AES256-GCM-SHA384');
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.match(conf, /ssl_prefer_server_ciphers off;/);
});

over.both('proxy-ssl-location-only, ssl-reject-handshake, ssl-session-ticket-key, ssl-dh-param (ConfigMap)', async (p) => {
  const path = (at: string) => call(p, 'shared.test', { path: at });
  // Without proxy-ssl-location-only the newer Ingress's /b inherits the server's settings.
  assert.is((await path('/b')).status, 200);
  assert.is(backendSaw.at(-1)!.clientCN, 'ingress-rx-proxy');
  // The default certificate for a name no host has (ssl-reject-handshake false).
  assert.not.match(await handshake('unknown.example'), /^error/);

  await phase({ 'ssl-session-tickets': 'true' }, /ssl_session_tickets on;/);
  const before = await tlsSession('plain.test');
  const ticketKey = Buffer.alloc(80, 9).toString('base64');
  const dhparam = execFileSync('openssl', ['genpkey', '-genparam', '-algorithm', 'DH', '-pkeyopt', 'dh_param:ffdhe2048']).toString();
  ctl.write('dh.json', [secret(NS, 'dhparam', { 'dhparam.pem': dhparam })]);
  await phase({
    'ssl-session-tickets': 'true', 'ssl-session-ticket-key': ticketKey, 'ssl-dh-param': `${NS}/dhparam`,
    'proxy-ssl-location-only': 'true', 'ssl-reject-handshake': 'true',
  }, /ssl_dhparam[^;]*;[\s\S]*ssl_reject_handshake on;/);
  // NGINX's own ticket keys are new at each reload: the older ticket no longer resumes.
  assert.is((await tlsSession('plain.test', before.session)).reused, false);
  const conf = (await ctl.control('/nginx.conf')).body;
  const dhPath = /ssl_dhparam "([^"]+)"/.exec(conf)![1]!;
  assert.is(readFileSync(dhPath, 'utf8'), dhparam);
  const keyPath = /ssl_session_ticket_key "([^"]+)"/.exec(conf)![1]!;
  assert.equal(readFileSync(keyPath), Buffer.from(ticketKey, 'base64'));
  assert.is(statSync(keyPath).mode & 0o777, 0o600);
  // Unknown names and no name: no handshake at all; known hosts as before.
  assert.match(await handshake('unknown.example'), /^error/);
  assert.is(await handshake('plain.test', { ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' }), 'ECDHE-ECDSA-AES256-GCM-SHA384');
  // proxy-ssl-location-only: /b keeps no TLS settings of /a's Ingress.
  assert.is((await path('/b')).status, 200);
  assert.is(backendSaw.at(-1)!.clientCN, '');
  assert.is((await path('/a')).status, 200);
  assert.is(backendSaw.at(-1)!.clientCN, 'ingress-rx-proxy');
  // With the key, a ticket survives a reload (a new Ingress here).
  const held = await tlsSession('plain.test');
  ctl.write(`later-${p.tag}.json`, [on(`later-${p.tag}`, `later-${p.tag}.test`, {})]);
  await p.until(`later-${p.tag}.test`, '/', (r) => r.status === 200, { https: true });
  assert.is((await tlsSession('plain.test', held.session)).reused, true);
  // The defaults again for the next protocol's run.
  await phase({}, /^(?![\s\S]*ssl_reject_handshake on;)/);
});

/** The OCSP response stapled to a handshake with `sni` (empty when none). */
function stapled(sni: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let response: Buffer = Buffer.alloc(0);
    // requestOCSP is a TLSSocket option tls.connect passes on (not in its typings).
    const options: ConnectionOptions & { requestOCSP: boolean } = { host: '127.0.0.1', port: ctl.ports.https, servername: sni, rejectUnauthorized: false, requestOCSP: true };
    const socket = tlsConnect(options);
    socket.on('OCSPResponse', (r: Buffer | null) => { response = r ?? Buffer.alloc(0); });
    socket.on('secureConnect', () => { socket.end(); resolve(response); });
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('handshake timed out')));
  });
}

over.noRequest('enable-ocsp: the response of the certificate\'s responder is fetched in the background and stapled', 'TLS handshakes', async () => {
  assert.is((await stapled('ocsp.test')).length, 0);
  await phase({ 'enable-ocsp': 'true', 'ssl-reject-handshake': 'true' }, /ocsp_response_cache/);
  // The first handshake starts the fetch; a later one carries the response.
  const response = await waitFor(async () => {
    const r = await stapled('ocsp.test');
    return r.length > 0 ? r : undefined;
  }, { timeoutMs: 10_000, what: 'a stapled OCSP response' });
  const respFile = join(dir, 'stapled.ocsp');
  writeFileSync(respFile, response);
  const text = openssl('ocsp', '-respin', respFile, '-CAfile', 'ocsp-ca.crt', '-issuer', 'ocsp-ca.crt', '-cert', 'stapled.crt');
  assert.match(text, /stapled\.crt: good/);
  // A certificate naming one of the controller's own ports as its responder: never dialled.
  makeLeaf('self', 'ocsp-self.test', 'ocsp-ca', ['ocsp-self.test'], [`authorityInfoAccess=OCSP;URI:http://127.0.0.1:${ctl.ports.http}/`]);
  ctl.write('ocsp-self.json', [
    tlsSecret(NS, 'self-cert', file('self.crt') + file('ocsp-ca.crt'), file('self.key')),
    ingress(NS, 'ocsp-self', { host: 'ocsp-self.test', tls: [{ hosts: ['ocsp-self.test'], secretName: 'self-cert' }], paths: [{ path: '/', service: 'echo' }] }),
  ]);
  await ctl.until('ocsp-self.test', '/', (r) => r.status === 200, { https: true });
  const errorLog = join(ctl.workdir, 'logs', 'error.log');
  // Each handshake staples what is cached and, when nothing is, starts a fetch.
  await waitFor(async () => {
    await stapled('ocsp-self.test');
    return /OCSP responder http:\/\/127\.0\.0\.1:\d+\/: refused: one of the controller's own ports/.test(readFileSync(errorLog, 'utf8'));
  }, { what: 'the own-port responder refused' });
  assert.is((await stapled('ocsp-self.test')).length, 0);
  // A certificate without a responder: nothing stapled, nothing broken.
  assert.is((await stapled('plain.test')).length, 0);
  assert.not.match(await handshake('plain.test'), /^error/);
});

test.run();
