// ingress-nginx test/e2e/settings/ocsp/ocsp.go, ported: with enable-ocsp a host's certificate
// (leaf and intermediate in its Secret) gets its responder's answer fetched in the background and
// stapled to later handshakes; the answer says "good". ingress-nginx runs cfssl's ocspserve in
// the cluster; here `openssl ocsp` answers on 127.0.0.1 for the intermediate CA that issued the
// leaf, whose Authority Information Access names it. Requests and handshakes over HTTP/1.1 and
// HTTP/2 (ALPN).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { startFixture, type Fixture } from '../../fixture.js';
import { ported } from '../../port.js';
import { ingress, tlsSecret } from '../../../../support/local-harness.js';
import { freePort } from '../../../../support/ports.js';
import { waitFor } from '../../../../support/wait.js';
import type { ProtocolClient } from '../../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'www.example.com';
const dir = mkdtempSync(join(tmpdir(), 'irx-ocsp-'));
let responder: ChildProcess | undefined;
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const file = (name: string) => readFileSync(join(dir, name), 'utf8');

/** A root CA, an intermediate it signs, and a leaf for HOST the intermediate signs naming `ocspUrl`. */
function makeChain(ocspUrl: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const caExt = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n';
  writeFileSync(join(dir, 'ca.ext'), caExt);
  writeFileSync(join(dir, 'leaf.ext'), `subjectAltName=DNS:${HOST}\nauthorityInfoAccess=OCSP;URI:${ocspUrl}\n`);
  openssl('req', '-x509', ...ec, '-keyout', 'root.key', '-out', 'root.crt', '-days', '2', '-subj', '/CN=ocsp-root');
  openssl('req', ...ec, '-keyout', 'intermediate.key', '-out', 'intermediate.csr', '-subj', '/CN=ocsp-intermediate');
  openssl('x509', '-req', '-in', 'intermediate.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-CAcreateserial', '-out', 'intermediate.crt', '-days', '2', '-extfile', 'ca.ext');
  openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${HOST}`);
  openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'intermediate.crt', '-CAkey', 'intermediate.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '2', '-extfile', 'leaf.ext');
}

test.before(async () => {
  const port = await freePort();
  makeChain(`http://127.0.0.1:${port}/`);
  // The responder's index: the leaf is valid ("V", its expiry, its serial).
  const serial = openssl('x509', '-in', 'leaf.crt', '-noout', '-serial').trim().replace('serial=', '');
  const end = new Date(openssl('x509', '-in', 'leaf.crt', '-noout', '-enddate').trim().replace('notAfter=', ''));
  const expiry = end.toISOString().replace(/^\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d).*$/, '$1$2$3$4$5$6Z');
  writeFileSync(join(dir, 'index.txt'), `V\t${expiry}\t\t${serial}\tunknown\t/CN=${HOST}\n`);
  const child = spawn('openssl', ['ocsp', '-index', 'index.txt', '-port', String(port), '-rsigner', 'intermediate.crt', '-rkey', 'intermediate.key', '-CA', 'intermediate.crt', '-nmin', '60'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  responder = child;
  let said = '';
  child.stdout!.on('data', (d: Buffer) => { said += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { said += d.toString(); });
  await waitFor(() => /ACCEPT/.test(said), { what: 'the OCSP responder to listen' });
  fx = await startFixture('ocsp', { configmap: { 'enable-ocsp': 'true' } });
  fx.apply('tls.json', [
    tlsSecret(fx.ns, HOST, `${file('leaf.crt')}\n${file('intermediate.crt')}`, file('leaf.key')),
    ingress(fx.ns, HOST, { host: HOST, tls: [{ hosts: [HOST], secretName: HOST }], paths: [{ path: '/', service: 'echo' }] }),
  ]);
  await fx.ctl.until(HOST, '/', (r) => r.status === 200, { https: true, ca: file('root.crt') });
});
test.after(async () => {
  await fx.stop();
  responder?.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** The OCSP staple of one handshake offering `p`'s protocol by ALPN (empty when none), and the protocol agreed. */
function stapled(p: ProtocolClient): Promise<{ staple: Buffer; alpn: string }> {
  return new Promise((resolve, reject) => {
    let staple: Buffer = Buffer.alloc(0);
    // requestOCSP is a TLSSocket option tls.connect passes on (not in its typings).
    const options: ConnectionOptions & { requestOCSP: boolean } = {
      host: '127.0.0.1', port: fx.ctl.ports.https, servername: HOST, ca: file('root.crt'), requestOCSP: true,
      ALPNProtocols: [p.protocol === 'HTTP/2' ? 'h2' : 'http/1.1'],
    };
    const socket: TLSSocket = tlsConnect(options);
    socket.on('OCSPResponse', (r: Buffer | null) => { staple = r ?? Buffer.alloc(0); });
    socket.on('secureConnect', () => { socket.end(); resolve({ staple, alpn: String(socket.alpnProtocol) }); });
    socket.on('error', reject);
  });
}

its.both('settings/ocsp/ocsp.go:50', async (p) => {
  // The first handshake starts the fetch; a later one carries the answer.
  assert.is((await p.request(HOST, '/', { https: true, ca: file('root.crt') })).status, 200);
  const { staple, alpn } = await waitFor(async () => {
    const r = await stapled(p);
    return r.staple.length > 0 ? r : undefined;
  }, { timeoutMs: 10_000, what: 'a stapled OCSP response' });
  assert.is(alpn, p.protocol === 'HTTP/2' ? 'h2' : 'http/1.1');
  writeFileSync(join(dir, `staple-${p.tag}.der`), staple);
  const verified = openssl('ocsp', '-respin', `staple-${p.tag}.der`, '-CAfile', 'root.crt', '-issuer', 'intermediate.crt', '-cert', 'leaf.crt');
  assert.match(verified, /leaf\.crt: good/);
});

test.run();
