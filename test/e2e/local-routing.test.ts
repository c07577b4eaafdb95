// `ingress-rx local` end to end: routing by host, path and pathType; oldest wins; 404 and 503;
// rewrite and regex; redirects. Real NGINX, real HTTP, echo upstreams on 127.0.0.x.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

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
      // proxy-body-size keeps a server block: a static host beside the router's dynamic ones.
      'static.json': [ingress('app', 'static', { host: 'static.test', annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '2m' }, paths: [{ path: '/', service: 'exact' }] })],
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

// lua/request_id.lua: ids drawn from each worker's pool of RAND_bytes output (256 per draw), the
// same in the header sent upstream and in the access log's $req_id; a client's own is kept.
over.both('X-Request-ID: 32 hex digits, a new one per request, the one the access log names; a client\'s own is passed on', async (p) => {
  const conf = (await ctl.control('/nginx.conf')).body;
  assert.match(conf, 'require("request_id").configure(true)', 'the pool is in use');
  assert.match(conf, '## start server static.test\n', 'static.test has a server block');
  const ids: string[] = [];
  for (let batch = 0; batch < 15; batch++) {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => p.request(i % 2 ? 'routes.test' : 'static.test', `/rid/${batch}/${i}`)));
    for (const r of replies) {
      assert.is(r.status, 200);
      ids.push(String((r.json?.headers as Record<string, string>)['x-request-id']));
    }
  }
  for (const id of ids) assert.match(id, /^[0-9a-f]{32}$/);
  assert.is(new Set(ids).size, ids.length, 'no id twice');
  const given = p.protocol === 'HTTP/1.1' ? 'client-id-h1' : 'client-id-h2';
  for (const host of ['routes.test', 'static.test']) {
    const r = await p.request(host, '/rid/given', { headers: { 'x-request-id': given } });
    assert.is((r.json?.headers as Record<string, string>)['x-request-id'], given, host);
  }
  // The access log's last field is $req_id (ingress-nginx's upstreaminfo format).
  const logged = () => new Set(readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8').split('\n').filter((l) => l.includes(' /rid/')).map((l) => l.slice(l.lastIndexOf(' ') + 1)));
  await waitFor(() => { const l = logged(); return ids.every((id) => l.has(id)) && l.has(given); }, { timeoutMs: 10_000, what: 'every id in the access log' });
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
