// Each value the issue lists — ones that passed validation and then broke the whole render or
// nginx -t — on an Ingress (or the ConfigMap) of its own next to good ones, with real NGINX: from
// a cold start every good Ingress serves and the controller is ready; while running, the same
// values arrive with a good change, which is served in that sync (no failed reload). Each bad
// value is refused with a warning naming the Ingress and the annotation, or works.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController, type PathSpec } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let echo: EchoServer;

interface Case {
  name: string;
  annotations?: Record<string, string>;
  /** The host, for the first batch ('') or the second ('-2'); default `<name><suffix>.test`. */
  host?: (suffix: string) => string;
  path?: PathSpec;
  /** A request that shows the Ingress is served as the value allows: path and expected status. */
  expect?: { path: string; status: number; headers?: Record<string, string> };
  /** The refusal is logged naming this Ingress and this text (the annotation or field). */
  warns?: string;
}

const long = (n: number, c = 'a') => c.repeat(n);
/** 251 characters: www. would make 255. */
const host251 = (suffix: string) => `${long(63)}.${long(63, 'b')}.${long(63, 'c')}.${long(54 - suffix.length, 'd')}${suffix}.test`;

function cases(authUrl: string): Case[] {
  const regexPath = (path: string): PathSpec => ({ path, pathType: 'ImplementationSpecific', service: 'web' });
  return [
    { name: 'auth-url-pipe', annotations: { 'auth-url': 'http://a.test/x|y' }, expect: { path: '/', status: 503 }, warns: 'auth-url' },
    { name: 'auth-signin-caret', annotations: { 'auth-url': authUrl, 'auth-signin': 'http://a.test/x^y' }, expect: { path: '/', status: 200 }, warns: 'auth-signin' },
    { name: 'permanent-redirect-caret', annotations: { 'permanent-redirect': 'http://a.test/x^y' }, expect: { path: '/', status: 200 }, warns: 'permanent-redirect' },
    { name: 'temporal-redirect-pipe', annotations: { 'temporal-redirect': 'http://a.test/x|y' }, expect: { path: '/', status: 200 }, warns: 'temporal-redirect' },
    { name: 'app-root-pipe', annotations: { 'app-root': '/a|b' }, expect: { path: '/', status: 200 }, warns: 'app-root' },
    { name: 'auth-url-ipv6', annotations: { 'auth-url': 'http://[::1]:1/auth' }, expect: { path: '/', status: 500 } },
    { name: 'auth-url-variable', annotations: { 'auth-url': 'http://$host/auth' } },
    { name: 'auth-cache-duration', annotations: { 'auth-url': authUrl, 'auth-cache-key': '$host', 'auth-cache-duration': '200 1h30m' }, expect: { path: '/', status: 200 } },
    { name: 'cors-file-origin', annotations: { 'enable-cors': 'true', 'cors-allow-origin': 'file://x' }, expect: { path: '/', status: 200, headers: { origin: 'file://x', 'access-control-allow-origin': 'file://x' } } },
    { name: 'www-wildcard', host: (x) => `*.w${x}.test`, annotations: { 'from-to-www-redirect': 'true' }, warns: 'from-to-www-redirect' },
    { name: 'www-251', host: host251, annotations: { 'from-to-www-redirect': 'true' }, expect: { path: '/', status: 200 }, warns: 'from-to-www-redirect' },
    { name: 'regex-unclosed', annotations: { 'use-regex': 'true' }, path: regexPath('/api/(v1|v2'), warns: 'regular expression NGINX accepts' },
    { name: 'regex-named', annotations: { 'use-regex': 'true' }, path: regexPath('/(?P<n>a)'), warns: 'named groups' },
    { name: 'regex-possessive', annotations: { 'use-regex': 'true' }, path: regexPath('/a++'), expect: { path: '/aaa', status: 200 } },
    { name: 'regex-range', annotations: { 'use-regex': 'true' }, path: regexPath('/[\\w-.]+'), warns: 'invalid range' },
    { name: 'regex-lookbehind', annotations: { 'use-regex': 'true' }, path: regexPath('/(?<=a+)b'), warns: 'lookbehind' },
    { name: 'regex-u', annotations: { 'use-regex': 'true' }, path: regexPath('/\\u0041'), warns: 'PCRE2 does not support' },
    { name: 'path-too-long', path: { path: `/${long(4100)}`, pathType: 'Prefix', service: 'web' }, warns: 'NGINX takes at most' },
    { name: 'custom-http-errors-200', annotations: { 'custom-http-errors': '200' }, expect: { path: '/', status: 200 }, warns: 'custom-http-errors' },
    { name: 'custom-http-errors-100', annotations: { 'custom-http-errors': '100,404' }, expect: { path: '/', status: 200 }, warns: 'custom-http-errors' },
    { name: 'limit-connections', annotations: { 'limit-connections': '70000' }, expect: { path: '/', status: 200 }, warns: 'limit-connections' },
    { name: 'proxy-buffers-number', annotations: { 'proxy-buffers-number': '1' }, expect: { path: '/', status: 200 }, warns: 'proxy-buffers-number' },
    { name: 'proxy-buffer-size', annotations: { 'proxy-buffer-size': '0' }, expect: { path: '/', status: 200 }, warns: 'proxy-buffer-size' },
    { name: 'proxy-body-size', annotations: { 'proxy-body-size': '999999999999g' }, expect: { path: '/', status: 200 }, warns: 'proxy-body-size' },
    { name: 'host-47', host: (x) => `${long(42 - x.length)}${x}.test`, expect: { path: '/', status: 200 } },
  ];
}

function manifests(list: Case[], suffix: string) {
  return list.map((c) => {
    const ing = ingress('app', `${c.name}${suffix}`, {
      host: c.host?.(suffix) ?? `${c.name}${suffix}.test`,
      paths: [c.path ?? { path: '/', service: 'web' }],
      annotations: Object.fromEntries(Object.entries(c.annotations ?? {}).map(([k, v]) => [`${P}/${k}`, v])),
    });
    return ing;
  });
}

/** A backend port named with a newline: the API server would refuse it; a manifest can hold it. */
function badPortIngress(suffix: string) {
  const ing = ingress('app', `port-newline${suffix}`, { host: `port-newline${suffix}.test`, paths: [{ path: '/', service: 'web' }] }) as ReturnType<typeof ingress>;
  (ing.spec.rules![0]!.http.paths[0]!.backend as { service: { name: string; port: Record<string, unknown> } }).service.port = { name: 'ht\ntp' };
  return ing;
}

const configMap = {
  apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' },
  data: {
    'ssl-ciphers': 'NOPE', 'ssl-ecdh-curve': 'nope', 'limit-req-status-code': '200', 'ssl-session-cache-size': '0',
    'worker-shutdown-timeout': '1s1h', 'upstream-keepalive-connections': '0', 'max-worker-connections': '0',
  },
};

let list: Case[];

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  list = cases(`http://${echo.hostPort}/auth`);
  ctl = await startLocal({
    args: ['--configmap', 'ingress/nginx'],
    files: {
      'cm.json': [configMap],
      'svc.json': [service('app', 'web'), ...slices('app', 'web', [echo])],
      'good.json': [ingress('app', 'good', { host: 'good.test', paths: [{ path: '/', service: 'web' }] })],
      'bad.json': [...manifests(list, ''), badPortIngress('')],
    },
  });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

async function checkCases(suffix: string) {
  for (const c of list) {
    if (!c.expect) continue;
    const host = c.host === undefined ? `${c.name}${suffix}.test` : c.host(suffix).replace('*.', 'x.');
    const reply = await ctl.request(host, c.expect.path, c.expect.headers?.origin ? { headers: { Origin: c.expect.headers.origin } } : {});
    assert.is(reply.status, c.expect.status, `${c.name}${suffix}: ${reply.status} ${reply.body.slice(0, 200)}`);
    if (c.expect.headers?.['access-control-allow-origin']) assert.is(reply.headers['access-control-allow-origin'], c.expect.headers['access-control-allow-origin'], c.name);
  }
  const log = ctl.output();
  for (const c of list) {
    if (!c.warns) continue;
    const line = log.split('\n').find((l) => l.includes(`Ingress app/${c.name}${suffix}`) && l.includes(c.warns!));
    assert.ok(line, `${c.name}${suffix}: no warning naming the Ingress and "${c.warns}"`);
  }
  assert.ok(log.split('\n').some((l) => l.includes(`Ingress app/port-newline${suffix}`) && l.includes('port name')), 'the port name with a newline is named');
}

over.both('cold start: ready, every good Ingress serves, each listed value refused by name or working', async (p) => {
  assert.is((await ctl.request('127.0.0.1', '/healthz', { port: ctl.ports.healthz })).status, 200);
  assert.is((await p.request('good.test', '/')).status, 200);
  await checkCases('');
  const log = ctl.output();
  for (const key of ['ssl-ciphers', 'ssl-ecdh-curve', 'limit-req-status-code', 'ssl-session-cache-size', 'worker-shutdown-timeout']) {
    assert.ok(log.split('\n').some((l) => l.includes('ConfigMap ingress/nginx') && l.includes(key)), `ConfigMap ${key} is refused by name`);
  }
  assert.is(await ctl.metric('nginx_ingress_controller_errors'), 0);
  assert.is(await ctl.metric('ingress_rx_quarantined_objects'), 0, 'validation caught them all: nothing reached nginx -t');
});

over.both('running: the same values arrive with a good change; the good change is served in that sync', async (p) => {
  ctl.write('more.json', [...manifests(list, '-2'), badPortIngress('-2'), ingress('app', 'good2', { host: 'good2.test', paths: [{ path: '/', service: 'web' }] })]);
  await p.until('good2.test', '/', (r) => r.status === 200, { what: 'the good change' });
  await waitFor(() => ctl.output().includes('Ingress app/port-newline-2'), { what: 'the second batch to be read' });
  await checkCases('-2');
  assert.is(await ctl.metric('nginx_ingress_controller_errors'), 0, 'no reload failed');
  assert.is((await p.request('good.test', '/')).status, 200);
});

test.run();
