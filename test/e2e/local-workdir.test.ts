// NGINX's workers must reach the workdir: run as root, a master's workers are `nobody`. A workdir
// under a directory they cannot enter is refused at start with a message naming that directory
// (before, basic auth answered 500, a large POST 500 and dbg conf 403); under one they can
// enter, basic auth, a 900 KB POST (a temp file) and dbg conf work. Lua modules under a directory
// they cannot enter (a checkout in `mktemp -d`) are copied into the prefix and read from there.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync, spawn } from 'node:child_process';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal } from '../support/local-harness.js';
import { runDbg } from '../../src/cli/dbg.js';
import { defaultRuntime } from '../../src/render/runtime.js';
import { withLuaInReach, workerAccessProblem } from '../../src/render/worker-access.js';
import { DEFAULT_LUA_DIR } from '../../src/render/runtime.js';
import { createNginxHarness } from '../support/nginx-harness.js';
import { configuration, server } from '../support/config-builder.js';
import { freePorts } from '../support/ports.js';
import { protocolClient, PROTOCOLS } from '../support/protocols.js';
import { cliArgs } from '../support/cli-command.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const P = 'nginx.ingress.kubernetes.io';
const root = process.getuid?.() === 0;
const base = mkdtempSync(join(tmpdir(), 'irx-workdir-'));
chmodSync(base, 0o711); // mkdtemp makes it 0700: the workers could not enter it either
let echo: EchoServer;
const NOBODY = { name: 'nobody', uid: 65534, gid: 65534 };

/** A copy of the Lua modules the workers can reach, whatever the checkout's directory lets them do. */
function openLua(): string {
  const dir = join(base, 'open-lua');
  if (!existsSync(dir)) {
    cpSync(DEFAULT_LUA_DIR, dir, { recursive: true });
    chmodSync(dir, 0o755);
  }
  return dir;
}

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
});

test.after(async () => {
  await echo?.close();
  rmSync(base, { recursive: true, force: true });
});

test('the check: a workdir under a 0700 directory is refused naming it when run as root; as another user it is the user\'s own', () => {
  const closed = join(base, 'closed');
  mkdirSync(join(closed, 'work'), { recursive: true });
  chmodSync(closed, 0o700);
  const rt = defaultRuntime({ prefix: join(closed, 'work'), luaDir: openLua() });
  const problem = workerAccessProblem(rt, { uid: 0, user: NOBODY });
  assert.match(problem ?? '', new RegExp(`cannot enter ${closed} \\(mode 0700`));
  assert.is(workerAccessProblem(rt, { uid: 1000, user: NOBODY }), null);
  chmodSync(closed, 0o711);
  assert.is(workerAccessProblem(rt, { uid: 0, user: NOBODY }), null);
});


/** A copy of the Lua modules under a directory only its owner may enter. */
function closedLua(name: string): string {
  const closed = join(base, name);
  mkdirSync(closed, { recursive: true });
  cpSync(DEFAULT_LUA_DIR, join(closed, 'lua'), { recursive: true });
  chmodSync(closed, 0o700);
  return join(closed, 'lua');
}

test('Lua modules the workers cannot reach are copied into the prefix; reachable ones, a non-root controller or a closed prefix keep the runtime', () => {
  const luaDir = closedLua('closed-lua-unit');
  const open = join(base, 'open-prefix');
  mkdirSync(open, { recursive: true });
  const rt = defaultRuntime({ prefix: open, luaDir });
  assert.match(workerAccessProblem(rt, { uid: 0, user: NOBODY }) ?? '', /above the Lua modules/);
  const moved = withLuaInReach(rt, { uid: 0, user: NOBODY });
  assert.is(moved.luaDir, join(open, 'lua'));
  assert.ok(existsSync(join(moved.luaDir, 'balancer.lua')));
  assert.is(workerAccessProblem(moved, { uid: 0, user: NOBODY }), null);
  assert.is(withLuaInReach(rt, { uid: 1000, user: NOBODY }), rt, 'the workers are the controller\'s user');
  const reachable = defaultRuntime({ prefix: open, luaDir: openLua() });
  assert.is(withLuaInReach(reachable, { uid: 0, user: NOBODY }), reachable, 'modules the workers reach stay where they are');
  const closedPrefix = defaultRuntime({ prefix: join(luaDir, '..', 'work'), luaDir });
  assert.is(withLuaInReach(closedPrefix, { uid: 0, user: NOBODY }), closedPrefix, 'a closed prefix is refused by the check, not worked around');
});

test('real NGINX as root with the Lua modules under a 0700 directory: its workers load them from the prefix', async () => {
  const h = await createNginxHarness({ runtime: { luaDir: closedLua('closed-lua-nginx') } });
  try {
    if (root) assert.is(h.runtime.luaDir, join(h.prefix, 'lua'));
    writeFileSync(h.runtime.confPath, h.renderer.render(configuration([server('a.example.com')]), h.runtime));
    await h.nginx.start(h.runtime.confPath);
    assert.is((await h.control('/healthz')).status, 200);
    assert.is(await h.postBackends([]), 201, 'the Lua configuration endpoint answers from a worker');
    assert.is((await h.http(h.runtime.defaultServerPort, '/anything')).status, 404);
  } finally {
    await h.close();
  }
});

test('ingress-rx local with --workdir under a 0700 directory: as root it refuses to start, naming the directory', async () => {
  const closed = join(base, 'closed-cli');
  mkdirSync(join(closed, 'work'), { recursive: true });
  chmodSync(closed, 0o700);
  const manifests = mkdtempSync(join(tmpdir(), 'irx-manifests-'));
  const [http, https, status, stream, healthz, def] = await freePorts(6);
  const child = spawn(process.execPath, [...cliArgs(), 'local', '--manifests', manifests,
    '--workdir', join(closed, 'work'), '--http-port', String(http), '--https-port', String(https), '--status-port', String(status),
    '--stream-port', String(stream), '--healthz-port', String(healthz), '--default-server-port', String(def)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGTERM'), 20_000);
    child.on('exit', (c) => { clearTimeout(timer); resolve(c); });
  });
  rmSync(manifests, { recursive: true, force: true });
  if (root) {
    assert.is(code, 1, out.slice(-2000));
    assert.match(out, new RegExp(`cannot enter ${closed} \\(mode 0700`));
  } else {
    // Not root: the workers are this user, who made the directory: nothing to refuse.
    assert.is.not(code, 1, out.slice(-2000));
  }
});

test('under a directory the workers can enter: basic auth answers 401/200, a 900 KB POST goes through a temp file (HTTP/1.1 and HTTP/2), dbg conf works', async () => {
  const open = join(base, 'open');
  mkdirSync(join(open, 'work'), { recursive: true });
  chmodSync(open, 0o711);
  const hash = execFileSync('openssl', ['passwd', '-apr1', 'secret'], { encoding: 'utf8' }).trim();
  const ctl = await startLocal({
    args: ['--workdir', join(open, 'work')],
    files: {
      'svc.json': [service('app', 'web'), ...slices('app', 'web', [echo])],
      'ing.json': [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'basic', namespace: 'app' }, data: { auth: Buffer.from(`bob:${hash}\n`).toString('base64') } },
        ingress('app', 'basic', { host: 'basic.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: 'basic' } }),
        ingress('app', 'upload', { host: 'upload.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/proxy-body-size`]: '2m' } }),
      ],
    },
  });
  try {
    for (const protocol of PROTOCOLS) {
      const p = protocolClient(ctl, protocol);
      assert.is((await p.request('basic.test', '/')).status, 401, protocol);
      const auth = `Basic ${Buffer.from('bob:secret').toString('base64')}`;
      assert.is((await p.request('basic.test', '/', { headers: { Authorization: auth } })).status, 200, protocol);
      const body = 'b'.repeat(900 * 1024);
      const post = await p.request('upload.test', '/', { method: 'POST', body, headers: { 'Content-Length': String(body.length) } });
      assert.is(post.status, 200, `${protocol}: ${post.body.slice(0, 300)}`);
    }
    let conf = '';
    assert.is(await runDbg(['conf'], { workdir: join(open, 'work') }, (s) => { conf += s; }), 0, conf.slice(0, 300));
    assert.match(conf, /## start server basic\.test/);
  } finally {
    await ctl.stop();
  }
});

test.run();
