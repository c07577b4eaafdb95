// ingress-nginx test/e2e/settings/no_auth_locations.go, ported: no-auth-locations lists paths
// that basic auth of an Ingress does not cover: its `/` asks for credentials, its `/noauth`
// does not. The user's password is stored bcrypt-hashed, as the e2e test does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const NS = 'no-auth-locations';
const HOST = 'no-auth-locations.test';
// The password `bar`, bcrypt-hashed (cost 5) by libxcrypt.
const HTPASSWD = 'foo:$2b$05$abcdefghijklmnopqrstuuUq7qXkDOZJ5Q8HA9wCOH0FErWp6q0b6\n';
const BASIC = `Basic ${Buffer.from('foo:bar').toString('base64')}`;

test.before(async () => {
  fx = await startFixture(NS, { configmap: { 'no-auth-locations': '/noauth' } });
  fx.apply('ingress.json', [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'test-secret', namespace: NS }, data: { auth: Buffer.from(HTPASSWD).toString('base64') } },
    ingress(NS, 'no-auth-locations', {
      host: HOST,
      annotations: { 'nginx.ingress.kubernetes.io/auth-type': 'basic', 'nginx.ingress.kubernetes.io/auth-secret': 'test-secret', 'nginx.ingress.kubernetes.io/auth-realm': 'test auth' },
      paths: [{ path: '/', service: 'echo' }, { path: '/noauth', service: 'echo' }],
    }),
  ]);
  await fx.ctl.until(HOST, '/', (r) => r.status === 401);
});
test.after(() => fx.stop());

its.both('settings/no_auth_locations.go:54', async (p) => {
  const r = await p.request(HOST, '/');
  assert.is(r.status, 401);
  assert.match(r.body, '401 Authorization Required');
  assert.is(r.headers['www-authenticate'], 'Basic realm="test auth"');
});

its.both('settings/no_auth_locations.go:68', async (p) => {
  const r = await p.request(HOST, '/', { headers: { Authorization: BASIC } });
  assert.is(r.status, 200);
  assert.ok(r.backend);
  assert.is((await p.request(HOST, '/', { headers: { Authorization: `Basic ${Buffer.from('foo:wrong').toString('base64')}` } })).status, 401, 'a wrong password');
});

its.both('settings/no_auth_locations.go:82', async (p) => {
  const r = await p.request(HOST, '/noauth', { headers: { Authorization: BASIC } });
  assert.is(r.status, 200);
  const anonymous = await p.request(HOST, '/noauth');
  assert.is(anonymous.status, 200, 'no credentials needed');
  assert.ok(anonymous.backend);
});

test.run();
