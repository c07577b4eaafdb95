// The README's quick start, as a user runs it: examples/quickstart's manifests in `ingress-rx
// local` with real NGINX, its own echo backends (examples/quickstart/echo-backends.mjs, the script
// scripts/quickstart.sh starts), and what the script tells the user to try — the Ingresses, the
// canary, the TLS host and its redirect, and the Gateway API's HTTPRoute beside them — over
// HTTP/1.1 and HTTP/2; an edit of the HTTPRoute is served without a reload.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocal, type LocalController, type Reply } from '../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

const EXAMPLE = 'examples/quickstart';
const SECURE_CA = readFileSync(join(EXAMPLE, 'secure.example.test.crt'));
const SHOP_CA = readFileSync(join(EXAMPLE, 'shop.example.test.crt'));
const GATEWAY = readFileSync(join(EXAMPLE, 'gateway.yaml'), 'utf8');

let ctl: LocalController;
let echo: ChildProcess;
const over = protocolMatrix(test, () => ctl);
const backendOf = (r: Reply) => String(r.json?.backend ?? `(status ${r.status}: ${r.body.slice(0, 200)})`);
const reloads = () => ctl.metric('nginx_ingress_controller_success');

test.before(async () => {
  echo = spawn(process.execPath, [join(EXAMPLE, 'echo-backends.mjs')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  echo.stderr!.on('data', (d: Buffer) => { said += d.toString(); });
  await waitFor(() => said.includes('echo backends:') || echo.exitCode !== null, { what: 'the echo backends listening' });
  if (echo.exitCode !== null) throw new Error(`echo-backends.mjs exited: ${said}`);
  const files = Object.fromEntries(readdirSync(EXAMPLE).filter((f) => f.endsWith('.yaml')).map((f) => [f, readFileSync(join(EXAMPLE, f), 'utf8')]));
  ctl = await startLocal({ files });
  await ctl.until('shop.example.test', '/', (r) => r.status === 200, { what: 'the quickstart served' });
});

test.after(async () => {
  await ctl?.stop();
  echo?.kill();
});

/** The backends `count` requests reach, at most; stops as soon as every one of `want` was seen. */
async function reached(p: ProtocolClient, host: string, path: string, want: string[], opts: Parameters<ProtocolClient['request']>[2] = {}, count = 200): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < count && !want.every((b) => seen.has(b)); i++) seen.add(backendOf(await p.request(host, path, opts)));
  return seen;
}

over.both('web.example.test is balanced over its two endpoints, 1 in 10 to the canary', async (p) => {
  const seen = await reached(p, 'web.example.test', '/', ['web-1', 'web-2', 'web-canary']);
  assert.equal([...seen].sort(), ['web-1', 'web-2', 'web-canary']);
});

over.both('X-Canary: always reaches the canary Ingress\'s Service', async (p) => {
  const r = await p.request('web.example.test', '/', { headers: { 'X-Canary': 'always' } });
  assert.is(backendOf(r), 'web-canary');
});

over.both('api.example.test/v1/users is rewritten to /users (rewrite-target /$2)', async (p) => {
  const r = await p.request('api.example.test', '/v1/users');
  assert.is(backendOf(r), 'api');
  assert.is(r.json?.path, '/users');
});

over.both('secure.example.test answers over TLS with the example\'s certificate', async (p) => {
  const r = await p.request('secure.example.test', '/', { https: true, ca: SECURE_CA });
  assert.is(r.status, 200);
  assert.ok(['web-1', 'web-2'].includes(backendOf(r)), backendOf(r));
});

over.http1Only('secure.example.test on plain HTTP redirects to HTTPS', 'the redirect of the plain-HTTP port', async (p) => {
  // As ingress-nginx: the HTTPS port named when it is not 443, one trailing slash dropped.
  const r = await p.request('secure.example.test', '/a/b?c=1');
  assert.is(r.status, 308);
  assert.is(r.headers.location, `https://secure.example.test:${ctl.ports.https}/a/b?c=1`);
});

over.both('the HTTPRoute sends /api with X-Version: 2 to api, /api stripped', async (p) => {
  const r = await p.request('shop.example.test', '/api/users', { https: p.scheme === 'https', ca: SHOP_CA, headers: { 'X-Version': '2' } });
  assert.is(backendOf(r), 'api');
  assert.is(r.json?.path, '/users');
  const other = await p.request('shop.example.test', '/api/users', { https: p.scheme === 'https', ca: SHOP_CA, headers: { 'X-Version': '1' } });
  assert.ok(['web-1', 'web-2', 'web-canary'].includes(backendOf(other)), backendOf(other));
  assert.is(other.json?.path, '/api/users');
});

over.both('the HTTPRoute\'s 9:1 split reaches web and web-canary', async (p) => {
  const seen = await reached(p, 'shop.example.test', '/', ['web-canary', 'web-1'], { https: p.scheme === 'https', ca: SHOP_CA });
  assert.ok(seen.has('web-canary') && seen.has('web-1'), [...seen].join(' '));
});

over.both('an edited HTTPRoute is served live, without a reload', async (p) => {
  const version = `v-${p.tag}`;
  const before = await reloads();
  ctl.write('gateway.yaml', GATEWAY.replace('headers: [{ name: X-Version, value: "2" }]', `headers: [{ name: X-Version, value: "${version}" }]`));
  try {
    await p.until('shop.example.test', '/api/users', (r) => backendOf(r) === 'api', { https: p.scheme === 'https', ca: SHOP_CA, headers: { 'X-Version': version }, what: 'the edited header match served' });
    assert.is(await reloads(), before);
  } finally {
    ctl.write('gateway.yaml', GATEWAY);
    await p.until('shop.example.test', '/api/users', (r) => backendOf(r) === 'api', { https: p.scheme === 'https', ca: SHOP_CA, headers: { 'X-Version': '2' }, what: 'the example restored' });
  }
});

test.run();
