// Attacks of one tenant on another through the objects it may write, against the real controller
// in local mode with real NGINX (snippets allowed at the Critical risk level, --host-ownership):
// a basic-auth Secret whose file name collides with another namespace's, snippets that try to
// leave their block or reach outside the Ingress, and a canary, regex path and aliases aimed at
// another namespace's host. Each attack fails, is named in a warning, and the victim keeps being
// served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { freePorts } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let victim: EchoServer;
let attacker: EchoServer;
let escapePorts: number[];

const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const htpasswd = (ns: string, name: string, line: string) => ({
  apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: { auth: Buffer.from(`${line}\n`).toString('base64') },
});
const withAuth = (ns: string, name: string, host: string, secret: string) => ingress(ns, name, {
  host, paths: [{ path: '/', service: 'web' }], created: '2026-01-01T00:00:00Z',
  annotations: { [`${P}/auth-type`]: 'basic', [`${P}/auth-secret`]: secret, [`${P}/auth-realm`]: host },
});
const listening = (port: number) => new Promise<boolean>((resolve) => {
  const s = connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); resolve(true); });
  s.once('error', () => resolve(false));
});
const servedByVictim = async (host: string, path = '/') => {
  const r = await ctl.request(host, path);
  assert.is(r.status, 200, `${host}${path}: ${r.status}`);
  assert.is(r.backend, 'victim', `${host}${path} is served by the victim`);
};

test.before(async () => {
  victim = await startEchoServer({ address: '127.0.0.2', name: 'victim' });
  attacker = await startEchoServer({ address: '127.0.0.3', name: 'attacker' });
  escapePorts = await freePorts(2);
  const [pwnPort, againPort] = escapePorts;
  // Issue 14's snippet escape: NGINX reads `${${` and `z}z}` as words, so the two `}` close the
  // location and the server, and the snippet opens servers of its own (a brace counter saw none).
  const escape = `default_type \${\${;\n}\n}\nserver {\n listen 127.0.0.1:${pwnPort};\n location / { return 200 "pwned"; }\n}\n`
    + `server {\n listen 127.0.0.1:${againPort};\n location /y {\nroot z}z};`;
  const snippet = (name: string, host: string, value: string, key = 'configuration-snippet') => ingress('team-b', name, {
    host, paths: [{ path: '/', service: 'evil' }], annotations: { [`${P}/${key}`]: value },
  });
  ctl = await startLocal({
    args: ['--configmap', 'ingress/settings', '--host-ownership'],
    files: {
      'settings.json': [{
        apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ingress' },
        data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' },
      }],
      'victims.json': [
        service('team-a', 'web'), ...slices('team-a', 'web', [victim]),
        ingress('team-a', 'shop', { host: 'shop.test', paths: [{ path: '/', service: 'web' }], created: '2026-01-01T00:00:00Z' }),
        // Two namespaces whose `<namespace>-<name>` spell the same: team-x/auth and team/x-auth.
        service('team-x', 'web'), ...slices('team-x', 'web', [victim]),
        service('team', 'web'), ...slices('team', 'web', [victim]),
        htpasswd('team-x', 'auth', 'alice:{PLAIN}alpha'),
        htpasswd('team', 'x-auth', 'bob:{PLAIN}bravo'),
        withAuth('team-x', 'site', 'x.test', 'auth'),
        withAuth('team', 'site', 'team.test', 'x-auth'),
      ],
      'attacker.json': [
        service('team-b', 'evil'), ...slices('team-b', 'evil', [attacker]),
        snippet('escape', 'escape.test', escape),
        snippet('include', 'include.test', 'include /etc/passwd;'),
        snippet('server', 'server.test', `location /z { return 200; }\n}\nserver { listen 127.0.0.1:${pwnPort}; `, 'server-snippet'),
        snippet('lua-file', 'lua.test', 'content_by_lua_file /tmp/evil.lua;'),
        // Service team/x-web has the ingress-nginx backend name of team-x/web: team-x-web-80.
        service('team', 'x-web'), ...slices('team', 'x-web', [attacker]),
        ingress('team', 'bypass', { host: 'bypass.test', paths: [{ path: '/', service: 'x-web' }], created: '2026-02-01T00:00:00Z' }),
        ingress('team-b', 'canary', {
          host: 'shop.test', paths: [{ path: '/', service: 'evil' }], created: '2026-02-01T00:00:00Z',
          annotations: { [`${P}/canary`]: 'true', [`${P}/canary-weight`]: '100' },
        }),
        ingress('team-b', 'regex', {
          host: 'shop.test', paths: [{ path: '/.*', pathType: 'ImplementationSpecific', service: 'evil' }], created: '2026-02-01T00:00:00Z',
          annotations: { [`${P}/use-regex`]: 'true' },
        }),
        ingress('team-b', 'alias', {
          host: 'evil.test', paths: [{ path: '/', service: 'evil' }], created: '2026-02-01T00:00:00Z',
          annotations: { [`${P}/server-alias`]: 'shop.test' },
        }),
      ],
    },
  });
  await ctl.until('evil.test', '/', (r) => r.backend === 'attacker', { what: "the attacker's plain host" });
});

test.after(async () => {
  await ctl?.stop();
  await victim?.close();
  await attacker?.close();
});

over.both('two namespaces whose names spell the same keep their own basic-auth files', async (p) => {
  const get = (host: string, user: string, pw: string) => p.request(host, '/', { headers: basic(user, pw) }).then((r) => r.status);
  assert.is(await get('x.test', 'alice', 'alpha'), 200, "team-x's password opens team-x's site");
  assert.is(await get('team.test', 'bob', 'bravo'), 200, "team's password opens team's site");
  assert.is(await get('x.test', 'bob', 'bravo'), 401, "team's password does not open team-x's site");
  assert.is(await get('team.test', 'alice', 'alpha'), 401, "team-x's password does not open team's site");
});

over.both("a Service whose backend name is another namespace's does not reach that namespace's endpoints", async (p) => {
  const bypass = await p.request('bypass.test', '/');
  assert.is(bypass.backend, 'attacker', "bypass.test is served by its own Service, not team-x's behind no password");
  assert.is((await p.request('x.test', '/')).status, 401, "team-x's site still asks for its password");
  await ctl.logged(/Ingress team\/bypass.*backend name team-x-web-80 of Service team\/x-web port 80 is already that of Service team-x\/web port 80 \(Ingress team-x\/site\)/);
});

over.both('snippets that leave their block or reach outside the Ingress are refused; everything else is served', async (p) => {
  for (const port of escapePorts) assert.not.ok(await listening(port), `no server of the snippet listens on ${port}`);
  const out = ctl.output();
  assert.match(out, /Ingress team-b\/escape.*configuration-snippet.*snippet line 2: closes a block it did not open/);
  assert.match(out, /Ingress team-b\/include.*include\\?" reads another file/);
  assert.match(out, /Ingress team-b\/server.*server-snippet.*closes a block it did not open/);
  assert.match(out, /Ingress team-b\/lua-file.*loads Lua from a file/);
  // The refused snippets are left out; their Ingresses and everyone else's are served.
  for (const host of ['escape.test', 'include.test', 'server.test', 'lua.test']) {
    const r = await p.request(host, '/');
    assert.is(r.backend, 'attacker', host);
  }
  await servedByVictim('shop.test');
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.not.match(conf, /pwned|include \/etc\/passwd|evil\.lua/);
});

over.both("a canary, a regex path and an alias from another namespace on a tenant's host: refused and named", async (p) => {
  for (let i = 0; i < 8; i++) await servedByVictim('shop.test', `/any-${i}`);
  const out = ctl.output();
  assert.match(out, /Ingress team-b\/canary.*host shop\.test belongs to namespace team-a \(its oldest Ingress is team-a\/shop\); its canary for path \/ is refused/);
  assert.match(out, /Ingress team-b\/regex.*host shop\.test belongs to namespace team-a .*its rules for it are refused/);
  assert.match(out, /Ingress team-b\/alias.*alias shop\.test of host evil\.test is a host of Ingress team-a\/shop \(namespace team-a\); ignored/);
  const evil = await p.request('evil.test', '/');
  assert.is(evil.backend, 'attacker', "the attacker's own host is still served");
});

over.both("an auth-url aimed at the controller's own port or the metadata address: the locations answer 503, NGINX never dials it", async (p) => {
  const authAt = (name: string, url: string) => ingress('team-b', name, {
    host: `${name}.test`, paths: [{ path: '/', service: 'evil' }],
    annotations: { [`${P}/auth-url`]: url, [`${P}/auth-response-headers`]: 'Content-Type' },
  });
  ctl.write('ssrf.json', [
    authAt('own-port', `http://127.0.0.1:${ctl.ports.healthz}/metrics`),
    authAt('metadata', 'http://169.254.169.254/latest/meta-data/'),
    authAt('mapped', `http://[::ffff:127.0.0.1]:${ctl.ports.healthz}/healthz`),
    ingress('team-b', 'after-ssrf', { host: 'after-ssrf.test', paths: [{ path: '/', service: 'evil' }] }),
  ]);
  await p.until('after-ssrf.test', '/', (r) => r.backend === 'attacker', { what: 'the Ingresses written with the SSRF attempts' });
  for (const name of ['own-port', 'metadata', 'mapped']) {
    const r = await p.request(`${name}.test`, '/');
    assert.is(r.status, 503, `${name}: ${r.status} ${r.body.slice(0, 120)}`);
    // The sync's warnings are logged once NGINX has applied it: the line may follow the answer.
    const warning = new RegExp(`Ingress team-b/${name}.*auth-url.*refused by the upstream address policy`);
    await waitFor(() => warning.test(ctl.output()), { what: `the warning for team-b/${name}` });
  }
  // Only a comment naming why a location is denied may mention them.
  const conf = (await ctl.control('/nginx.conf')).body.split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n');
  assert.not.match(conf, /169\.254\.169\.254|ffff:127/, 'the refused addresses are in no directive of nginx.conf');
  assert.not.match(conf, new RegExp(`127\\.0\\.0\\.1:${ctl.ports.healthz}`));
  await servedByVictim('shop.test');
});

test.run();
