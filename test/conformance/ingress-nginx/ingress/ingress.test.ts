// ingress-nginx test/e2e/ingress/{pathtype_prefix,pathtype_exact,pathtype_mixed,multiple_rules,
// without_host,deep_inspection}.go, ported on one controller, a host per It. The e2e tests that
// grep nginx.conf for `location = "/exact"` and `location "/exact/"` are ported as the requests
// those locations answer: each Ingress's configuration-snippet names itself in a header the
// upstream receives. The location variables ($namespace, $ingress_name, $service_name,
// $service_port, $location_path) the without-host Its read in nginx.conf are read where NGINX
// uses them: an access-log format that writes them for each request.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress } from '../../../support/local-harness.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

const snippet = (...headers: string[]) => ({ 'configuration-snippet': headers.map((h) => `more_set_input_headers "${h}";`).join('\n') });
const created = (s: number) => `2026-01-01T00:00:0${s}Z`;

test.before(async () => {
  fx = await startFixture('ingress', {
    configmap: {
      // The e2e framework's AllowSnippetConfiguration.
      'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical',
      // ingress-nginx checks strict-validate-path-type only in its admission webhook, which its
      // e2e suite runs without; ingress-rx checks it at model build (docs/differences.md), so
      // the regex paths of Prefix Ingresses below need it off.
      'strict-validate-path-type': 'false',
      'log-format-upstream': 'vars $request_uri ns=$namespace ing=$ingress_name svc=$service_name port=$service_port loc=$location_path',
    },
  });
  const withSnippet = (name: string, host: string, path: string, pathType: string, a: Record<string, string>, t: number) =>
    ({ ...fx.single(name, host, a, { path, pathType }), metadata: { name, namespace: fx.ns, annotations: Object.fromEntries(Object.entries(a).map(([k, v]) => [`nginx.ingress.kubernetes.io/${k}`, v])), creationTimestamp: created(t) } });
  const twoHosts = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: { name: 'simh', namespace: fx.ns, annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'more_set_input_headers "service-name: $service_name";' } },
    spec: {
      rules: ['first', 'second'].map((n) => ({
        host: `${n}.host`,
        http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `${n}-service`, port: { number: 80 } } } }] },
      })),
    },
  };
  const onlyBackend = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'backend', namespace: fx.ns },
    spec: { defaultBackend: { service: { name: 'echo', port: { number: 80 } } }, rules: [{ host: 'only-backend' }] },
  };
  fx.apply('ingresses.json', [
    fx.single('prefix', 'prefix.path', {}, { path: '/aaa' }),
    fx.single('regex-int', 'echo.com.br', { 'use-regex': 'true' }, { path: '/id/[0-9]+' }),
    fx.single('regex-end', 'echo.regex.br', { 'use-regex': 'true' }, { path: '/id/[0-9]+$' }),
    fx.single('regex-size', 'echo.regex.size.br', { 'use-regex': 'true' }, { path: '/id/[0-9]{3}$' }),
    fx.single('regex-segments', 'echo.multi.segment.br', { 'use-regex': 'true' }, { path: '/id/[0-9]+/post/[a-zA-Z]+$' }),
    withSnippet('exact', 'exact.path', '/exact', 'Exact', snippet('pathType: exact'), 1),
    withSnippet('exact-suffix', 'exact.path', '/exact', 'Prefix', snippet('pathType: prefix'), 2),
    // Written after the two above (ingress-nginx's test adds it later): the older Prefix path keeps the location.
    withSnippet('duplicated-prefix', 'exact.path', '/exact', 'Prefix', snippet('pathType: prefix', 'duplicated: true'), 3),
    withSnippet('exact-root', 'mixed.path', '/', 'Exact', snippet('pathType: exact', 'pathheader: /'), 1),
    withSnippet('prefix-root', 'mixed.path', '/', 'Prefix', snippet('pathType: prefix', 'pathheader: /'), 2),
    withSnippet('exact-foo', 'mixed.path', '/foo', 'Exact', snippet('pathType: exact', 'pathheader: /foo'), 3),
    withSnippet('prefix-foo', 'mixed.path', '/foo', 'Prefix', snippet('pathType: prefix', 'pathheader: /foo'), 4),
    ...fx.echoService('first-service'), ...fx.echoService('second-service'), twoHosts,
    onlyBackend,
    fx.single('invalidregex', 'inspection123.com', {}, { path: '/bla{alias /var/run/secrets/;}location ~* ^/abcd' }),
    fx.single('valid', 'inspection123.com', {}, { path: '/xpto' }),
  ]);
  await Promise.all([
    ['prefix.path', '/aaa'], ['echo.com.br', '/id/1'], ['echo.regex.br', '/id/1'], ['echo.regex.size.br', '/id/123'],
    ['echo.multi.segment.br', '/id/1/post/a'], ['exact.path', '/exact'], ['mixed.path', '/foo'], ['first.host', '/'], ['second.host', '/'],
    ['only-backend', '/'], ['inspection123.com', '/xpto'],
  ].map(([h, path]) => fx.ctl.until(h!, path!, (r) => r.backend !== undefined, { what: `${h}${path} served` })));
});
test.after(() => fx.stop());

async function statuses(p: ProtocolClient, host: string, expected: Record<string, number>): Promise<void> {
  const got: Record<string, number> = {};
  for (const path of Object.keys(expected)) got[path] = (await p.request(host, path)).status;
  assert.equal(got, expected, host);
}

/** The headers the upstream received for `path` on `host` (an echo endpoint answered). */
async function upstream(p: ProtocolClient, host: string, path: string): Promise<Record<string, string>> {
  const r = await p.request(host, path);
  assert.is(r.status, 200, `${host}${path}`);
  assert.ok(r.backend?.startsWith('echo-'), `${host}${path} answered by an echo endpoint`);
  return upstreamHeaders(r);
}

its.both('ingress/pathtype_prefix.go:35', async (p) => {
  await statuses(p, 'prefix.path', { '/aaa': 200, '/aaacccc': 404, '/aaa/cccc': 200, '/aaa/': 200 });
});

its.both('ingress/pathtype_prefix.go:72', async (p) => {
  await statuses(p, 'echo.com.br', { '/id/1': 200, '/id/12': 200, '/id/123': 200, '/id/aaa': 404, '/id/123a': 200 });
});

its.both('ingress/pathtype_prefix.go:113', async (p) => {
  await statuses(p, 'echo.regex.br', { '/id/1': 200, '/id/aaa': 404, '/id/123a': 404 });
});

its.both('ingress/pathtype_prefix.go:142', async (p) => {
  await statuses(p, 'echo.regex.size.br', { '/id/99': 404, '/id/123': 200, '/id/9999': 404, '/id/123a': 404 });
});

its.both('ingress/pathtype_prefix.go:177', async (p) => {
  await statuses(p, 'echo.multi.segment.br', { '/id/123/post/abc': 200, '/id/123/post/abc123': 404, '/id/abc/post/abc': 404 });
});

its.both('ingress/pathtype_exact.go:37', async (p) => {
  assert.is((await upstream(p, 'exact.path', '/exact')).pathtype, 'exact');
  const suffix = await upstream(p, 'exact.path', '/exact/suffix');
  assert.is(suffix.pathtype, 'prefix');
  assert.is(suffix.duplicated, undefined, 'the duplicate Prefix path of a newer Ingress is not served');
});

its.both('ingress/pathtype_mixed.go:39', async (p) => {
  const expect = async (path: string, pathtype: string, pathheader: string) => {
    const h = await upstream(p, 'mixed.path', path);
    assert.equal([h.pathtype, h.pathheader], [pathtype, pathheader], path);
  };
  await expect('/', 'exact', '/');
  await expect('/bar', 'prefix', '/');
  await expect('/foo', 'exact', '/foo');
  await expect('/foo/bar', 'prefix', '/foo');
  await expect('/foobar', 'prefix', '/');
});

its.both('ingress/multiple_rules.go:38', async (p) => {
  assert.is((await upstream(p, 'first.host', '/exact'))['service-name'], 'first-service');
  assert.is((await upstream(p, 'second.host', '/exact'))['service-name'], 'second-service');
});

/** The access-log line of the request `send` makes for `uri` (the format above writes the location variables). */
async function variablesLogged(uri: string, send: () => Promise<unknown>): Promise<string> {
  const start = statSync(fx.accessLog).size;
  await send();
  return waitFor(() => readFileSync(fx.accessLog).subarray(start).toString('utf8').split('\n').find((l) => l.startsWith(`vars ${uri} `)), { timeoutMs: 5000, what: `the access-log line of ${uri}` });
}

its.both('ingress/without_host.go:34', async (p) => {
  // A rule without a host serves the default server, which every unknown host reaches; the Its
  // after this one need it gone (ingress-nginx runs each It in a namespace of its own).
  const uri = `/no-host-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}`;
  await fx.applyAndWait('default-host.json', [ingress(fx.ns, 'default-host', { paths: [{ path: '/', service: 'echo' }] })], '127.0.0.1', uri);
  // Awaited over HTTP/1.1 above, and over this protocol here (the HTTP/2 leg reaches the HTTPS
  // default server), with a path of its own so that the line read below is the request's.
  await p.until('127.0.0.1', `${uri}-served`, (r) => r.status === 200);
  try {
    const line = await variablesLogged(uri, async () => assert.is((await p.request('127.0.0.1', uri)).status, 200));
    assert.is(line, `vars ${uri} ns=${fx.ns} ing=default-host svc=echo port=80 loc=/`);
  } finally {
    fx.ctl.remove('default-host.json');
    await fx.ctl.until('127.0.0.1', uri, (r) => r.status === 404, { what: 'the default server without the host-less Ingress' });
  }
});

its.both('ingress/without_host.go:55', async (p) => {
  const uri = `/only-backend-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}`;
  const line = await variablesLogged(uri, async () => assert.is((await p.request('only-backend', uri)).status, 200));
  assert.is(line, `vars ${uri} ns=${fx.ns} ing=backend svc=echo port=80 loc=/`);
  // The Ingress's defaultBackend serves its rule's host only, not the catch-all server.
  const other = await p.request('only-backend-doesnotexist', '/');
  assert.is(other.status, 404);
  assert.is(other.backend, undefined);
});

its.both('ingress/deep_inspection.go:34', async (p) => {
  await statuses(p, 'inspection123.com', { '/xpto': 200, '/bla': 404, '/abcd/': 404 });
  await fx.warned((w) => w.includes('invalidregex'), 'the dropped path named in a warning');
});

test.run();
