// Secret material never lands where it should not: a private key and a password are planted in
// Secrets (in data, in kubectl's last-applied-configuration, in managedFields, in an annotation)
// used for TLS, basic auth and proxy-ssl, and everything ingress-rx writes while serving them —
// the recording, the trace, its logs, dbg's answers, the metrics, the work directory and a replay of
// the recording — is searched for them. The only files allowed to hold them are the ones NGINX must
// read (the proxy-ssl key, the htpasswd file), and those are readable by their owner only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { ingress, sendRequest, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { workerUser } from '../../src/render/worker-access.js';
import { defaultRuntime } from '../../src/render/runtime.js';
import { cliArgs } from '../support/cli-command.js';

const P = 'nginx.ingress.kubernetes.io';
const tmp = mkdtempSync(join(tmpdir(), 'irx-secrets-'));
const recording = join(tmp, 'session.ndjson');
const traceFile = join(tmp, 'trace.json');
const PASSWORD = 'Planted-Password-7f3a9c';
const b64 = (s: string) => Buffer.from(s).toString('base64');

let ctl: LocalController;
let web: EchoServer;
let serverKey = '';
let clientKey = '';
/** What must not be found, by name: each form the planted values take (PEM lines, base64, plain). */
let planted: Array<[string, string]> = [];

/** The PEM body lines of a key (what any copy of it, re-wrapped or not, holds). */
const keyLines = (pem: string) => pem.split('\n').filter((l) => l !== '' && !l.startsWith('-----'));

function lastApplied(obj: object): Record<string, string> {
  return { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(obj) };
}

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliArgs(), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => resolve({ code, out }));
  });
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Names of the planted values `text` holds. */
function leaks(text: string): string[] {
  return planted.filter(([, v]) => text.includes(v)).map(([name]) => name);
}

test.before(async () => {
  web = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  const server = await generateCertificate(tmp, 'secret.test');
  const client = await generateCertificate(tmp, 'client.internal');
  serverKey = readFileSync(server.keyPath, 'utf8');
  clientKey = readFileSync(client.keyPath, 'utf8');
  const htpasswd = `alice:{PLAIN}${PASSWORD}\n`;
  planted = [
    ...keyLines(serverKey).map((l, i): [string, string] => [`TLS key line ${i}`, l]),
    ['TLS key (base64)', b64(serverKey).slice(0, 48)],
    ...keyLines(clientKey).map((l, i): [string, string] => [`proxy-ssl key line ${i}`, l]),
    ['proxy-ssl key (base64)', b64(clientKey).slice(0, 48)],
    ['password', PASSWORD],
    ['htpasswd (base64)', b64(htpasswd).slice(0, 24)],
  ];
  const tls = tlsSecret('team-s', 'site-tls', readFileSync(server.certPath, 'utf8'), serverKey);
  const tlsApplied = { ...tls, metadata: { ...tls.metadata, annotations: lastApplied(tls), managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': { [`v:${PASSWORD}`]: {} } } }] } };
  const auth = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'htpasswd', namespace: 'team-s' }, data: { auth: b64(htpasswd) } };
  const authApplied = { ...auth, metadata: { ...auth.metadata, annotations: { ...lastApplied(auth), 'team-s/note': `the password is ${PASSWORD}` } } };
  const proxySsl = {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'upstream-client', namespace: 'team-s' },
    data: { 'tls.crt': b64(readFileSync(client.certPath, 'utf8')), 'tls.key': b64(clientKey), 'ca.crt': b64(readFileSync(server.certPath, 'utf8')) },
  };
  const proxySslApplied = { ...proxySsl, metadata: { ...proxySsl.metadata, annotations: lastApplied(proxySsl) } };
  ctl = await startLocal({
    args: ['--record', recording, '--trace', traceFile, '--configmap', 'ingress/settings'],
    files: {
      'settings.json': [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ingress' }, data: {} }],
      'site.json': [
        service('team-s', 'web'), ...slices('team-s', 'web', [web]), tlsApplied, authApplied, proxySslApplied,
        ingress('team-s', 'site', {
          host: 'secret.test', paths: [{ path: '/', service: 'web' }], tls: [{ hosts: ['secret.test'], secretName: 'site-tls' }],
          annotations: { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: 'htpasswd' },
        }),
        ingress('team-s', 'upstream', {
          host: 'upstream.test', paths: [{ path: '/', service: 'web' }],
          annotations: { [`${P}/proxy-ssl-secret`]: 'team-s/upstream-client' },
        }),
      ],
    },
  });
  const basic = { Authorization: `Basic ${b64(`alice:${PASSWORD}`)}` };
  await ctl.until('secret.test', '/', (r) => r.status === 200 && r.backend === 'web', { https: true, headers: basic, what: 'the TLS site behind basic auth' });
  await ctl.until('secret.test', '/', (r) => r.status === 401, { https: true, what: 'basic auth asked for' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('in the work directory only the files NGINX reads hold them, readable by their owner only', async () => {
  await ctl.until('upstream.test', '/', (r) => r.status > 0, { what: 'the proxy-ssl host' });
  const holders: string[] = [];
  for (const file of filesUnder(ctl.workdir)) {
    const found = leaks(readFileSync(file, 'latin1'));
    if (found.length === 0) continue;
    const name = relative(ctl.workdir, file);
    holders.push(name);
    assert.ok(/^(ssl-key\/.*\.key|auth\/.*\.passwd)$/.test(name), `${name} holds ${found.join(', ')}`);
    const st = statSync(file);
    assert.is(st.mode & 0o777, 0o600, `${name} is readable by its owner only`);
    // A root master's workers are another user: the htpasswd file they read per request is theirs.
    if (name.endsWith('.passwd') && process.getuid?.() === 0) assert.is(st.uid, workerUser(defaultRuntime({ prefix: ctl.workdir })).uid, `${name} belongs to NGINX's workers`);
  }
  assert.equal([...new Set(holders.map((h) => h.split('/')[0]))].sort(), ['auth', 'ssl-key'], holders.join(', '));
});

test('the metrics and dbg hold no key and no password', async () => {
  const metrics = await sendRequest(ctl.ports.healthz, '127.0.0.1', '/metrics');
  assert.is(metrics.status, 200);
  assert.equal(leaks(metrics.body), [], 'metrics');
  for (const args of [['backends', 'all'], ['general'], ['conf'], ['conf', '--host', 'secret.test'], ['ingresses'], ['quarantine'], ['routes']]) {
    const r = await cli(['dbg', '--workdir', ctl.workdir, ...args]);
    assert.is(r.code, 0, `dbg ${args.join(' ')}: ${r.out.slice(0, 300)}`);
    assert.equal(leaks(r.out), [], `dbg ${args.join(' ')}`);
  }
  // dbg certs get shows the operator a host's certificate and key, as ingress-nginx's does.
  const certs = await cli(['dbg', '--workdir', ctl.workdir, 'certs', 'get', 'secret.test']);
  assert.ok(leaks(certs.out).some((l) => l.startsWith('TLS key line')), 'dbg certs get is where the operator reads a key');
});

test('the recording, the trace and the logs hold none, are private, and the recording replays', async () => {
  assert.is(await ctl.stop('SIGTERM'), 0);
  assert.equal(leaks(ctl.output()), [], "the controller's log");
  for (const file of [recording, traceFile]) {
    const text = readFileSync(file, 'utf8');
    assert.ok(text.length > 0, file);
    assert.equal(leaks(text), [], relative(tmp, file));
    assert.is(statSync(file).mode & 0o777, 0o600, `${relative(tmp, file)} is readable by its owner only`);
  }
  assert.not.ok(readFileSync(recording, 'utf8').includes('last-applied-configuration'), "kubectl's copy of the Secret is dropped");

  const out = join(tmp, 'replay');
  const replayTrace = join(tmp, 'replay-trace.json');
  const replayed = await cli(['replay', recording, '--instant', '--out', out, '--trace', replayTrace]);
  assert.is(replayed.code, 0, replayed.out.slice(-2000));
  assert.match(readFileSync(join(out, 'final', 'nginx.conf'), 'utf8'), /auth_basic/, 'the redacted auth Secret keeps its shape');
  assert.ok(readFileSync(join(out, 'decisions.ndjson'), 'utf8').trim().split('\n').length > 0);
  assert.equal(leaks(replayed.out), [], "replay's output");
  for (const file of [...filesUnder(out), replayTrace]) {
    assert.equal(leaks(readFileSync(file, 'utf8')), [], relative(tmp, file));
    if (!file.endsWith('decisions.ndjson')) assert.is(statSync(file).mode & 0o777, 0o600, `${relative(tmp, file)} is readable by its owner only`);
  }
});

test.run();
