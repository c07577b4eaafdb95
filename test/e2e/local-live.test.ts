// `ingress-rx local` end to end while running: files added, edited and deleted; endpoints
// changed without a reload; bad input next to good input; metrics, dbg and graceful shutdown.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { runDbg } from '../../src/cli/dbg.js';
import { waitFor } from '../support/wait.js';
import { protocolClient, protocolMatrix, PROTOCOLS } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let a: EchoServer;
let b: EchoServer;
const P = 'nginx.ingress.kubernetes.io';

/** The config hash metric as NGINX's running nginx.conf gives it: the first 48 bits of its checksum. */
async function runningConfHash(): Promise<number> {
  const sum = (await ctl.control('/configuration-checksum')).body.trim();
  return Number.parseInt(sum.slice(0, 12), 16);
}

/** Waits until the config hash metric is the running nginx.conf's, and returns it. */
async function configHashOfRunningConf(): Promise<number> {
  return waitFor(async () => {
    const running = await runningConfHash();
    return (await ctl.metric('nginx_ingress_controller_config_hash')) === running ? running : null;
  }, { what: 'nginx_ingress_controller_config_hash to be the running nginx.conf\'s checksum' });
}

let firstConfHash = 0;

test.before(async () => {
  a = await startEchoServer({ address: '127.0.0.2', name: 'a' });
  b = await startEchoServer({ address: '127.0.0.3', name: 'b' });
  ctl = await startLocal({
    files: {
      'svc.json': [service('app', 'web'), ...slices('app', 'web', [a])],
      'web.json': [ingress('app', 'web', { host: 'web.test', paths: [{ path: '/', service: 'web' }] })],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all([a, b].map((e) => e?.close()));
});

over.noRequest('healthz is 200 and metrics use ingress-nginx names', "the controller's health and metrics", async () => {
  assert.is((await ctl.request('127.0.0.1', '/healthz', { port: ctl.ports.healthz })).status, 200);
  assert.ok((await ctl.metric('nginx_ingress_controller_success')) >= 1);
  assert.is(await ctl.metric('nginx_ingress_controller_config_last_reload_successful'), 1);
  firstConfHash = await configHashOfRunningConf();
  assert.ok(firstConfHash > 0);
});

over.both('an endpoint change is applied without a reload', async (p) => {
  // From a to b (the next run: back to a).
  const [from, to] = p.protocol === 'HTTP/1.1' ? [a, b] : [b, a];
  assert.is((await p.request('web.test', '/')).backend, from.name);
  const reloads = await ctl.metric('nginx_ingress_controller_success');
  ctl.write('svc.json', [service('app', 'web'), ...slices('app', 'web', [to])]);
  await p.until('web.test', '/', (r) => r.backend === to.name, { what: `endpoint ${to.name} to serve` });
  assert.is(await ctl.metric('nginx_ingress_controller_success'), reloads);
  assert.is(await configHashOfRunningConf(), firstConfHash, 'a dynamic update keeps the config hash');
});

over.both('a file added, edited and deleted while running', async (p) => {
  // proxy-body-size needs a directive: the host gets a server block (a dynamic host would not reload).
  const annotations = { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' };
  ctl.write('new.json', [ingress('app', 'new', { host: 'new.test', annotations, paths: [{ path: '/', service: 'web' }] })]);
  await p.until('new.test', '/', (r) => r.status === 200, { what: 'new.test to be served' });
  assert.is.not(await configHashOfRunningConf(), firstConfHash, 'a reload brings the new nginx.conf\'s hash');
  ctl.write('new.json', [ingress('app', 'new', { host: 'new.test', annotations, paths: [{ path: '/only', pathType: 'Exact', service: 'web' }] })]);
  await p.until('new.test', '/', (r) => r.status === 404, { what: 'edited new.test to drop /' });
  assert.is((await p.request('new.test', '/only')).status, 200);
  ctl.remove('new.json');
  await p.until('new.test', '/only', (r) => r.status === 404, { what: 'new.test to be gone' });
});

over.noRequest("a rotated certificate is served, and a deleted TLS Ingress's host loses its certificate in NGINX", 'the certificates NGINX holds', async () => {
  const dir = join(ctl.workdir, 'test-certs');
  const [first, second] = [await generateCertificate(dir, 'tls-gone.test'), await generateCertificate(dir, 'tls-gone.test')];
  const tlsIngress = (c: typeof first) => [
    tlsSecret('app', 'gone-cert', readFileSync(c.certPath, 'utf8'), readFileSync(c.keyPath, 'utf8')),
    ingress('app', 'tls-gone', { host: 'tls-gone.test', tls: [{ hosts: ['tls-gone.test'], secretName: 'gone-cert' }], paths: [{ path: '/', service: 'web' }] }),
  ];
  const servedPem = async () => {
    const r = await ctl.control('/configuration/certs?hostname=tls-gone.test');
    return r.status === 200 ? r.body : null;
  };
  ctl.write('tls-gone.json', tlsIngress(first));
  await waitFor(async () => (await servedPem())?.includes(readFileSync(first.certPath, 'utf8').trim().split('\n')[1]!), { what: 'the first certificate in NGINX', timeoutMs: 15_000 });
  ctl.write('tls-gone.json', tlsIngress(second));
  await waitFor(async () => (await servedPem())?.includes(readFileSync(second.certPath, 'utf8').trim().split('\n')[1]!), { what: 'the rotated certificate in NGINX', timeoutMs: 15_000 });
  ctl.remove('tls-gone.json');
  // Before, the host kept its certificate (and its key) in NGINX's shared memory until a restart.
  await waitFor(async () => (await servedPem()) === null, { what: 'the deleted host to lose its certificate', timeoutMs: 15_000 });
});

over.both('a changed auth Secret applies to the Ingress that names it, the Ingress unchanged', async (p) => {
  // The store knows auth-secret names a Secret from the annotation groups (ANNOTATION_REFERENCES,
  // wired in by the CLI); without it the Secret's change would count as irrelevant.
  const htpasswd = (user: string, password: string) => ({
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'users', namespace: 'app' },
    data: { auth: Buffer.from(`${user}:${execFileSync('openssl', ['passwd', '-apr1', password]).toString().trim()}\n`).toString('base64') },
  });
  const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
  ctl.write('auth.json', [htpasswd('bob', 'one'), ingress('app', 'auth', {
    host: 'auth.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: 'users' },
  })]);
  await p.until('auth.test', '/', (r) => r.status === 200, { what: 'bob to be let in', headers: basic('bob', 'one') });
  ctl.write('auth.json', [htpasswd('carol', 'two'), ingress('app', 'auth', {
    host: 'auth.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: 'users' },
  })]);
  await p.until('auth.test', '/', (r) => r.status === 200, { what: 'carol to be let in', headers: basic('carol', 'two') });
  assert.is((await p.request('auth.test', '/', { headers: basic('bob', 'one') })).status, 401);
  ctl.remove('auth.json');
});

over.both('a malformed file and an Ingress with hostile annotations: the good ones keep serving', async (p) => {
  ctl.write('broken.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: x\n  - : [\n');
  ctl.write('hostile.json', [
    ingress('app', 'hostile', {
      host: 'hostile.test',
      annotations: {
        [`${P}/rewrite-target`]: '/x; } server { listen 1; } #',
        [`${P}/proxy-body-size`]: '1m; include /etc/passwd',
        [`${P}/cors-allow-origin`]: '"; return 200 "pwned',
        [`${P}/configuration-snippet`]: 'return 200 "snippet";',
        [`${P}/auth-url`]: 'http://x/"\n}',
      },
      paths: [{ path: '/', service: 'web' }],
    }),
    ingress('app', 'after-hostile', { host: 'good2.test', paths: [{ path: '/', service: 'web' }] }),
  ]);
  await p.until('good2.test', '/', (r) => r.status === 200, { what: 'good2.test next to the hostile Ingress' });
  assert.is((await p.request('web.test', '/')).status, 200);
  const h = await p.request('hostile.test', '/');
  assert.not.match(h.body, /pwned|snippet/);
  assert.is(await ctl.metric('nginx_ingress_controller_config_last_reload_successful'), 1);
  const conf = await ctl.control('/nginx.conf');
  assert.not.match(conf.body, /include \/etc\/passwd|pwned|listen 1;/);
  await ctl.logged(/broken\.yaml/);
});

over.noRequest('dbg reads backends, certificates and the running configuration', 'dbg', async () => {
  let out = '';
  const write = (s: string) => { out += s; };
  assert.is(await runDbg(['backends', 'list'], { workdir: ctl.workdir }, write), 0);
  assert.match(out, /app-web-80/);
  out = '';
  assert.is(await runDbg(['backends', 'get', 'nope'], { workdir: ctl.workdir }, write), 1);
  assert.is(out, 'A backend of this name was not found.\n');
  out = '';
  assert.is(await runDbg(['certs', 'get', 'web.test'], { workdir: ctl.workdir }, write), 1);
  assert.is(out, 'No cert found for host web.test\n');
  out = '';
  assert.is(await runDbg(['conf'], { workdir: ctl.workdir, host: 'web.test' }, write), 0);
  if (process.env.IRX_TEST_DYNAMIC_ROUTES === '0') {
    assert.match(out, /^\s*## start server web\.test\n/);
    assert.match(out, /## end server web\.test\n$/);
    assert.not.match(out, /server_name good2\.test/);
  } else {
    // A dynamic host has no server block; dbg shows its routes as the router holds them.
    assert.match(out, /^# web\.test is a dynamic host/);
    assert.match(out, /"backend": "app-web-80"/);
    assert.not.match(out, /good2\.test/);
  }
  out = '';
  assert.is(await runDbg(['conf'], { workdir: ctl.workdir, host: 'nobody.test' }, write), 1);
  assert.is(out, 'No server found for host nobody.test\n');
});

test('SIGTERM: healthz stops, NGINX quits, exit 0 (neither HTTP/1.1 nor HTTP/2 is answered)', async () => {
  const code = await ctl.stop('SIGTERM');
  assert.is(code, 0);
  for (const protocol of PROTOCOLS) {
    const r = await protocolClient(ctl, protocol).request('web.test', '/').catch((err: Error) => err);
    assert.instance(r, Error, `NGINX no longer listens (${protocol})`);
  }
});

test.run();
