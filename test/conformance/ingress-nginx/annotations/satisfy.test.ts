// ingress-nginx test/e2e/annotations/satisfy.go, ported: each It a host of its own on one
// controller; the httpbun Service is a loopback stand-in (../httpbun.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { startHttpBun, type HttpBun } from '../httpbun.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
let bun: HttpBun;
const its = ported(test, () => fx.ctl);

const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
const authHost = (proto: string) => `auth-${proto}.satisfy.test`;

test.before(async () => {
  fx = await startFixture('satisfy');
  bun = await startHttpBun('127.0.9.30');
  const hash = execFileSync('openssl', ['passwd', '-apr1', 'pwd']).toString().trim();
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'basic-secret', namespace: fx.ns }, data: { auth: Buffer.from(`uname:${hash}\n`).toString('base64') } };
  const auth = (host: string) => fx.single(host.split('.')[0]!, host, {
    'auth-type': 'basic', 'auth-secret': 'basic-secret', 'auth-realm': 'test basic auth',
    'auth-url': `http://${bun.authority}/basic-auth/user/password`, 'auth-signin': 'http://$host/auth/start',
    satisfy: 'any',
  });
  fx.apply('ingresses.json', [secret, auth(authHost('h1')), auth(authHost('h2'))]);
  await Promise.all(['h1', 'h2'].map((p) => fx.ctl.until(authHost(p), '/', (r) => r.status === 302, { what: `${authHost(p)} served` })));
});
test.after(async () => { await fx.stop(); await bun.close(); });

/** The running nginx.conf's server block of `host`. */
async function serverBlock(host: string): Promise<string> {
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  const at = conf.search(new RegExp(`server_name "?${host.replace(/\./g, '\\.')}`));
  return at < 0 ? '' : conf.slice(at, conf.indexOf('\n    }\n', at));
}

its.both('annotations/satisfy.go:40', async (p) => {
  // Without an access check, satisfy has no effect a request can show. `all` is NGINX's default
  // (the host may stay with the Lua router, which has no satisfy to print); `any` is read from the
  // running configuration. The host answers either way.
  const host = `directive-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}.satisfy.test`;
  for (const value of ['all', 'any']) {
    fx.apply(`${host}.json`, [fx.single(host.split('.')[0]!, host, { satisfy: value })]);
    if (value === 'any') await waitFor(async () => (await serverBlock(host)).includes('satisfy any;'), { timeoutMs: 20_000, what: `satisfy any in ${host}'s server` });
    else await fx.ctl.until(host, '/', (x) => x.backend !== undefined, { what: `${host} served` });
    const r = await p.request(host, '/');
    assert.is(r.status, 200);
    assert.is(upstreamHeaders(r).host, host);
  }
});

its.both('annotations/satisfy.go:82', async (p) => {
  const host = authHost(p.protocol === 'HTTP/2' ? 'h2' : 'h1');
  // Basic auth passes; the auth service (which wants other credentials) refuses: any one suffices.
  const ok = await p.request(host, '/', { headers: basic('uname', 'pwd') });
  assert.is(ok.status, 200);
  assert.ok(ok.backend?.startsWith('echo-'));
  // Neither passes: the 401 sends the client to auth-signin with the request's URL.
  const denied = await p.request(host, '/?a=b&c=d');
  assert.is(denied.status, 302);
  const scheme = p.protocol === 'HTTP/2' ? 'https' : 'http'; // HTTP/2 clients speak TLS here
  assert.is(denied.headers.location, `http://${host}/auth/start?rd=${scheme}://${host}${encodeURIComponent('/?a=b&c=d')}`);
  // And the auth service alone lets a request through, as satisfy any says.
  const byService = await p.request(host, '/', { headers: basic('user', 'password') });
  assert.is(byService.status, 200);
  assert.ok(bun.requests.some((r) => r.url === '/basic-auth/user/password'), 'the auth service was asked');
});

test.run();
