// `ingress-rx local` end to end: routing by host, path and pathType; oldest wins; 404 and 503;
// rewrite and regex; redirects. Real NGINX, real HTTP, echo upstreams on 127.0.0.x.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};

test.before(async () => {
  for (const [name, octet] of [['exact', 2], ['prefix', 3], ['root', 4], ['old', 5], ['new', 6], ['rw', 7], ['other', 8]] as const) {
    echo[name] = await startEchoServer({ address: `127.0.0.${octet}`, name });
  }
  const svcs = Object.keys(echo).flatMap((n) => [service('app', n), ...slices('app', n, [echo[n]])]);
  ctl = await startLocal({
    files: {
      'services.json': [...svcs, service('app', 'empty'), service('app', 'notready'), ...slices('app', 'notready', [echo.other], { ready: false })],
      'routes.json': [
        ingress('app', 'routes', {
          host: 'routes.test',
          paths: [
            { path: '/exact', pathType: 'Exact', service: 'exact' },
            { path: '/foo', pathType: 'Prefix', service: 'prefix' },
            { path: '/', pathType: 'Prefix', service: 'root' },
            { path: '/empty', pathType: 'Prefix', service: 'empty' },
            { path: '/notready', pathType: 'Prefix', service: 'notready' },
          ],
        }),
      ],
      'dup.json': [
        ingress('app', 'newer', { host: 'dup.test', created: '2024-02-01T00:00:00Z', paths: [{ path: '/', service: 'new' }] }),
        ingress('app', 'older', { host: 'dup.test', created: '2024-01-01T00:00:00Z', paths: [{ path: '/', service: 'old' }] }),
      ],
      'rewrite.json': [
        ingress('app', 'rewrite', {
          host: 'rw.test',
          annotations: { 'nginx.ingress.kubernetes.io/rewrite-target': '/$2', 'nginx.ingress.kubernetes.io/use-regex': 'true' },
          paths: [{ path: '/api(/|$)(.*)', pathType: 'ImplementationSpecific', service: 'rw' }],
        }),
        ingress('app', 'redirect', {
          host: 'redirect.test',
          annotations: { 'nginx.ingress.kubernetes.io/permanent-redirect': 'https://example.org/moved' },
          paths: [{ path: '/', service: 'other' }],
        }),
        ingress('app', 'approot', {
          host: 'approot.test',
          annotations: { 'nginx.ingress.kubernetes.io/app-root': '/app1' },
          paths: [{ path: '/', service: 'other' }],
        }),
      ],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

over.both('Exact matches only the exact path', async (p) => {
  assert.is((await p.request('routes.test', '/exact')).backend, 'exact');
  assert.is((await p.request('routes.test', '/exact/more')).backend, 'root');
});

over.both('Prefix matches on path-element boundaries: /foo and /foo/bar, not /foobar', async (p) => {
  assert.is((await p.request('routes.test', '/foo')).backend, 'prefix');
  assert.is((await p.request('routes.test', '/foo/bar')).backend, 'prefix');
  assert.is((await p.request('routes.test', '/foobar')).backend, 'root');
});

over.both('the path reaches the upstream unchanged without rewrite', async (p) => {
  const r = await p.request('routes.test', '/foo/bar?x=1');
  assert.is(r.json?.path, '/foo/bar?x=1');
  const headers = r.json?.headers as Record<string, string>;
  assert.is(headers['x-forwarded-host'], 'routes.test');
  assert.is(headers['x-forwarded-proto'], p.scheme);
  assert.ok(headers['x-request-id'], 'X-Request-ID is set');
  assert.is(headers['x-real-ip'], '127.0.0.1');
});

over.both('an unknown host gets 404 from the default server', async (p) => {
  const r = await p.request('nobody.test', '/');
  assert.is(r.status, 404);
});

over.both('a Service without endpoints answers 503; not-ready endpoints are not used', async (p) => {
  assert.is((await p.request('routes.test', '/empty')).status, 503);
  assert.is((await p.request('routes.test', '/notready')).status, 503);
});

over.both('the oldest Ingress wins a duplicate host and path', async (p) => {
  for (let i = 0; i < 5; i++) {
    const r = await p.request('dup.test', '/');
    assert.is(r.backend, 'old', `reply ${i}: ${r.status} ${r.body.slice(0, 200)}`);
  }
});

over.both('rewrite-target with regex captures', async (p) => {
  const r = await p.request('rw.test', '/api/users/7');
  assert.is(r.backend, 'rw');
  assert.is(r.json?.path, '/users/7');
  assert.is((await p.request('rw.test', '/api')).json?.path, '/');
});

over.both('permanent-redirect and app-root redirect', async (p) => {
  const r = await p.request('redirect.test', '/anything');
  assert.is(r.status, 301);
  assert.is(r.headers.location, 'https://example.org/moved');
  const a = await p.request('approot.test', '/');
  assert.is(a.status, 302);
  assert.match(String(a.headers.location), /\/app1$/);
});

test.run();
