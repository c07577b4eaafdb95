// Every fatal start error of `local` and `controller` ends the process with a non-zero status and
// a message naming what is wrong, instead of serving something else or waiting forever: a control
// socket path NGINX cannot bind, a manifests directory that is not there, a recording or trace
// file that cannot be written, a port in use, a workdir that is a file, no API server or one that
// refuses the credentials, a webhook without its certificate, a flag it does not know.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { freePorts } from '../support/ports.js';
import { cliArgs } from '../support/cli-command.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const base = mkdtempSync(join(tmpdir(), 'irx-fatal-'));
chmodSync(base, 0o711); // NGINX's workers (nobody) must reach the workdirs under it
const manifests = join(base, 'manifests');
mkdirSync(manifests);

/** Runs the CLI from source; resolves with its exit status and output, or fails after `limitMs`. */
function run(args: string[], limitMs = 45_000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    // Outside a cluster: no service account, so the controller cannot fall back to one.
    const { KUBERNETES_SERVICE_HOST: _h, KUBERNETES_SERVICE_PORT: _p, ...env } = process.env;
    const child = spawn(process.execPath, [...cliArgs(), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ingress-rx ${args[0]} still running after ${limitMs} ms:\n${out.slice(-2000)}`));
    }, limitMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

async function localArgs(extra: string[], workdir = mkdtempSync(join(base, 'w-'))): Promise<string[]> {
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  return ['local', '--manifests', manifests, '--workdir', workdir, '--http-port', String(http), '--https-port', String(https),
    '--status-port', String(status), '--stream-port', String(stream), '--healthz-port', String(healthz), '--default-server-port', String(def), ...extra];
}

async function controllerArgs(extra: string[], workdir = mkdtempSync(join(base, 'c-'))): Promise<string[]> {
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  return ['controller', `--workdir=${workdir}`, `--http-port=${http}`, `--https-port=${https}`, `--status-port=${status}`, `--stream-port=${stream}`,
    `--healthz-port=${healthz}`, `--default-server-port=${def}`, '--shutdown-grace-period=0', '--post-shutdown-grace-period=0', ...extra];
}

function listen(handler: Parameters<typeof createServer>[1] = (_q, r) => r.end()): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function kubeconfig(server: string): string {
  const file = join(base, `kubeconfig-${Math.random().toString(16).slice(2)}`);
  writeFileSync(file, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`);
  return file;
}

/** A workdir whose control socket (`<workdir>/run/control.sock`) is longer than sun_path holds. */
const longWorkdir = () => join(base, 'x'.repeat(Math.max(1, 100 - base.length)));

test.after(() => rmSync(base, { recursive: true, force: true }));

test('local: a control socket path over 107 bytes', async () => {
  const r = await run(await localArgs([], longWorkdir()));
  assert.is(r.code, 1, r.out);
  assert.match(r.out, /control socket path .* is longer than 107 bytes; use a shorter --workdir/, r.out.slice(-1500));
});

test('local: a manifests directory that is not there', async () => {
  const args = await localArgs([]);
  args[2] = join(base, 'typo');
  const r = await run(args);
  assert.is(r.code, 1, r.out);
  assert.match(r.out, /--manifests \S+typo: no such directory/, r.out.slice(-1500));
});

test('local: --record and --trace files that cannot be written', async () => {
  const [record, trace] = await Promise.all([
    run(await localArgs(['--record', join(base, 'missing', 'rec.ndjson')])),
    run(await localArgs(['--trace', join(base, 'missing', 'trace.json')])),
  ]);
  assert.is(record.code, 1, record.out);
  assert.match(record.out, /--record \S+rec\.ndjson: cannot write it: ENOENT/, record.out.slice(-1500));
  assert.is(trace.code, 1, trace.out);
  assert.match(trace.out, /--trace \S+trace\.json: cannot write it: ENOENT/, trace.out.slice(-1500));
});

test('local: the health port or the HTTP port in use; a workdir that is a file', async () => {
  const busy = await listen();
  const port = String((busy.address() as AddressInfo).port);
  try {
    const healthz = await localArgs([]);
    healthz[healthz.indexOf('--healthz-port') + 1] = port;
    const http = await localArgs([]);
    http[http.indexOf('--http-port') + 1] = port;
    const file = join(base, 'a-file');
    writeFileSync(file, '');
    const [h, n, f] = await Promise.all([run(healthz), run(http), run(await localArgs([], file))]);
    assert.is(h.code, 1, h.out);
    assert.match(h.out, /ingress-rx local could not start: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+/, h.out.slice(-1500));
    assert.is(n.code, 1, n.out);
    assert.match(n.out, /NGINX could not start: .*Address already in use/, n.out.slice(-1500));
    assert.is(f.code, 1, f.out);
    assert.match(f.out, /ingress-rx local could not start: .*(ENOTDIR|EEXIST)/, f.out.slice(-1500));
  } finally {
    busy.close();
  }
});

test('controller: no API server to ask, or one that refuses the credentials: exits at once', async () => {
  const refusing = await listen((_req, res) => { res.writeHead(401, { 'content-type': 'application/json' }); res.end('{"kind":"Status","code":401}'); });
  try {
    const [none, refused] = await Promise.all([
      run(await controllerArgs([])),
      run(await controllerArgs([`--kubeconfig=${kubeconfig(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}`)}`])),
    ]);
    assert.is(none.code, 1, none.out);
    assert.match(none.out, /cannot reach the Kubernetes API server: the API server \\"https:\/\/undefined:undefined\\" is not a URL; give --kubeconfig or --apiserver-host, or run in a cluster/, none.out.slice(-1500));
    assert.is(refused.code, 1, refused.out);
    assert.match(refused.out, /cannot reach the Kubernetes API server: the API server http:\/\/127\.0\.0\.1:\d+ does not answer: HTTP 401/, refused.out.slice(-1500));
  } finally {
    refusing.close();
  }
});

test('controller: a socket path NGINX cannot bind, a webhook without its certificate, an unknown flag', async () => {
  const api = await listen((req, res) => {
    res.writeHead(req.url === '/version' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(req.url === '/version' ? '{"major":"1","minor":"30","gitVersion":"v1.30.0"}' : '{"kind":"Status","code":404}');
  });
  try {
    const kc = `--kubeconfig=${kubeconfig(`http://127.0.0.1:${(api.address() as AddressInfo).port}`)}`;
    const [socket, webhook, flag] = await Promise.all([
      run(await controllerArgs([kc], longWorkdir())),
      run(await controllerArgs([kc, '--validating-webhook=127.0.0.1:0', `--validating-webhook-certificate=${join(base, 'none.crt')}`, `--validating-webhook-key=${join(base, 'none.key')}`])),
      run(await controllerArgs(['--no-such-flag'])),
    ]);
    assert.is(socket.code, 1, socket.out);
    assert.match(socket.out, /longer than 107 bytes/, socket.out.slice(-1500));
    assert.is(webhook.code, 1, webhook.out);
    assert.match(webhook.out, /the validating webhook could not start/, webhook.out.slice(-1500));
    assert.is(flag.code, 2, flag.out);
    assert.match(flag.out, /no-such-flag/, flag.out.slice(-1500));
  } finally {
    api.close();
  }
});

test.run();
