// ingress-nginx test/e2e/annotations/rewrite.go, ported: each It a host of its own on one
// controller. Where the e2e test reads nginx.conf (the locations of host-wide regex mode), the
// port sends the requests that tell the locations apart and reads the URI the upstream received.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

test.before(async () => { try {
  // ingress-nginx checks strict-validate-path-type only in its admission webhook, which its e2e
  // suite runs without; ingress-rx checks it at model build, so the regex paths of Prefix
  // Ingresses below need it off.
  fx = await startFixture('rewrite', { configmap: { 'strict-validate-path-type': 'false' } });
  fx.apply('ingresses.json', [
    fx.single('log', 'log.rewrite.test', { 'rewrite-target': '/', 'enable-rewrite-log': 'true' }, { path: '/something' }),
    fx.single('regex-plain', 'regex.rewrite.test', {}, { path: '/foo' }),
    fx.single('regex', 'regex.rewrite.test', { 'use-regex': 'true', 'rewrite-target': '/new/backend' }, { path: '/foo.+' }),
    fx.single('warning-plain', 'warning.rewrite.test', {}, { path: '/foo/bar/bar' }),
    fx.single('warning', 'warning.rewrite.test', { 'use-regex': 'true', 'rewrite-target': '/new/backend' }, { path: '/foo/bar/[a-z]{3}' }),
    fx.single('custom', 'custom.rewrite.test', { 'use-regex': 'true', 'rewrite-target': '/new/backend/$1' }, { path: '/foo/bar/(.+)' }),
  ]);
  await Promise.all(['log.rewrite.test/something', 'regex.rewrite.test/foo', 'warning.rewrite.test/foo/bar/bar', 'custom.rewrite.test/foo/bar/x']
    .map((u) => fx.ctl.until(u.slice(0, u.indexOf('/')), u.slice(u.indexOf('/')), (r) => r.backend !== undefined, { what: `${u} served` })));
  } catch (e) { console.error(e); throw e; }
});
test.after(() => fx.stop());

/** The URI the upstream received for `path` on `host`. */
async function upstreamPath(p: ProtocolClient, host: string, path: string): Promise<string> {
  const r = await p.request(host, path);
  assert.is(r.status, 200, `${host}${path}`);
  assert.ok(r.backend?.startsWith('echo-'), `${host}${path} answered by the echo Service`);
  return String(r.json?.path);
}

its.both('annotations/rewrite.go:39', async (p) => {
  // rewrite_log writes each rewrite's match and its result to the error log at notice level.
  const log = join(fx.ctl.workdir, 'logs', 'error.log');
  const logged = () => readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('host: "log.rewrite.test"'));
  const before = logged().length;
  assert.is(await upstreamPath(p, 'log.rewrite.test', '/something'), '/');
  const lines = await waitFor(() => { const l = logged().slice(before); return l.length >= 2 ? l : undefined; }, { timeoutMs: 5000, what: 'the rewrite in the error log' });
  assert.ok(lines.some((l) => l.includes('"(?i)/something" matches "/something", client:')), lines.join('\n'));
  assert.ok(lines.some((l) => l.includes('rewritten data: "/", args: "",')), lines.join('\n'));
});

its.both('annotations/rewrite.go:68', async (p) => {
  const host = `longest-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}.rewrite.test`;
  const plain = fx.single(`acme-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}`, host, {}, { path: '/.well-known/acme/challenge' });
  await fx.applyAndWait(`longest-${host}.json`, [plain], host, '/.well-known/acme/challenge');
  assert.is(await upstreamPath(p, host, '/.well-known/acme/challenge'), '/.well-known/acme/challenge');
  // A rewrite on `/` of another Ingress puts the host in regex mode: the longer plain path is
  // still tried first and is not rewritten.
  const index = fx.single(`index-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}`, host, { 'rewrite-target': '/new/backend' }, { path: '/' });
  await fx.applyAndWait(`longest-${host}.json`, [plain, index], host, '/other', (r) => r.json?.path === '/new/backend');
  assert.is(await upstreamPath(p, host, '/.well-known/acme/challenge'), '/.well-known/acme/challenge');
});

its.both('annotations/rewrite.go:113', async (p) => {
  assert.is(await upstreamPath(p, 'regex.rewrite.test', '/foo'), '/foo');
  assert.is(await upstreamPath(p, 'regex.rewrite.test', '/foo/bar'), '/new/backend');
});

its.both('annotations/rewrite.go:160', async (p) => {
  // ingress-nginx's documented warning: the longer regex is tried first and takes the plain path's request.
  assert.is(await upstreamPath(p, 'warning.rewrite.test', '/foo/bar/bar'), '/new/backend');
});

its.both('annotations/rewrite.go:192', async (p) => {
  assert.is(await upstreamPath(p, 'custom.rewrite.test', '/foo/bar/bar'), '/new/backend/bar');
});

test.run();
