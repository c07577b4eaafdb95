// ingress-nginx test/e2e/annotations/relativeredirects.go, ported: each It a host of its own on
// one controller. relative-redirects is NGINX's `absolute_redirect off`: a redirect NGINX itself
// issues (here permanent-redirect's) keeps a Location that starts with `/` as it is, instead of
// prefixing the request's scheme and host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { service, slices } from '../../../support/local-harness.js';
import { runDbg } from '../../../../src/cli/dbg.js';
import { startFixture, type Fixture } from '../fixture.js';
import { startHttpBun, type HttpBun } from '../httpbun.js';
import { ported } from '../port.js';

let fx: Fixture;
let httpbun: HttpBun;
const its = ported(test, () => fx.ctl);
const NS = 'relative-redirects';
const REDIRECT_PATH = '/something';
const RELATIVE_URL = '/new-location';

test.before(async () => {
  httpbun = await startHttpBun('127.0.9.40');
  fx = await startFixture(NS);
  fx.apply('ingresses.json', [
    service(NS, 'httpbun'), ...slices(NS, 'httpbun', [httpbun]),
    fx.single('configured', 'configured.rr.foo.com', { 'relative-redirects': 'true' }, { svc: 'httpbun' }),
    fx.single('absolute', 'absolute.rr.foo.com', { 'permanent-redirect': RELATIVE_URL, 'relative-redirects': 'false' }, { path: REDIRECT_PATH }),
    fx.single('relative', 'relative.rr.foo.com', { 'permanent-redirect': RELATIVE_URL, 'relative-redirects': 'true' }, { path: REDIRECT_PATH }),
  ]);
  await Promise.all([
    fx.ctl.until('configured.rr.foo.com', '/', (r) => r.status === 200, { what: 'the httpbun host served' }),
    ...['absolute', 'relative'].map((h) => fx.ctl.until(`${h}.rr.foo.com`, REDIRECT_PATH, (r) => r.status === 301, { what: `${h} redirecting` })),
  ]);
});
test.after(async () => {
  await fx.stop();
  await httpbun.close();
});

its.both('annotations/relativeredirects.go:43', async (p) => {
  // The host proxies to httpbun. The setting changes only redirects NGINX issues, and this host
  // has none: where NGINX keeps it is read (`dbg conf --host`): `absolute_redirect off` in the
  // host's server block, or, for a host the Lua router serves, routes with no redirect of their
  // own to make absolute. The permanent-redirect Its below show the effect.
  const before = httpbun.requests.length;
  assert.is((await p.request('configured.rr.foo.com', '/')).status, 200);
  assert.is(httpbun.requests.length, before + 1);
  let conf = '';
  assert.is(await runDbg(['conf'], { workdir: fx.ctl.workdir, host: 'configured.rr.foo.com' }, (s) => { conf += s; }), 0, conf);
  if (conf.includes('is a dynamic host')) {
    const routes = JSON.parse(conf.slice(conf.indexOf('\n') + 1)) as Array<Record<string, unknown>>;
    assert.equal(routes.map((r) => [r.path, r.return ?? null]), [['/', null]]);
  } else {
    assert.match(conf, /\n\s*absolute_redirect off;\n/);
  }
});

its.both('annotations/relativeredirects.go:61', async (p) => {
  const r = await p.request('absolute.rr.foo.com', REDIRECT_PATH);
  assert.is(r.status, 301);
  assert.is(r.headers.location, `${p.scheme}://absolute.rr.foo.com${RELATIVE_URL}`);
});

its.both('annotations/relativeredirects.go:85', async (p) => {
  const r = await p.request('relative.rr.foo.com', REDIRECT_PATH);
  assert.is(r.status, 301);
  assert.is(r.headers.location, RELATIVE_URL);
});

test.run();
