// Metrics, access logs and `dbg routes` name the HTTPRoute and its rule (issue 28 item 5):
// `ingress-rx local` with real NGINX, an HTTPRoute `team-a/shop` with two rules and an Ingress of
// the same namespace and name on another host (a migration under way). ingress-nginx's request
// metrics keep their label names; the `ingress` label and `$ingress_name` of a route's requests
// are `httproute/<name>/<rule index>`, so the route's series never merge with the Ingress's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { GATEWAY_MANIFESTS, GATEWAY_V1 } from '../support/gateway-local.js';
import { parsePromText, samples, type PromFamily } from '../support/prom-text.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';
import { runDbg } from '../../src/cli/dbg.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
/** A log format with the location variables, between bars (no value holds one). */
const LOG_FORMAT = '$req_id|$namespace|$ingress_name|$service_name|$location_path|$host|$status';

const shopRoute = {
  apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name: 'shop', namespace: 'team-a' },
  spec: {
    parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: ['shop.test'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/api' } }, { path: { type: 'PathPrefix', value: '/counted' } }, { path: { type: 'PathPrefix', value: '/v2' }, headers: [{ name: 'x-beta', value: '1' }] }],
        backendRefs: [{ name: 'web', port: 80 }],
      },
      { backendRefs: [{ name: 'alt', port: 80 }] },
    ],
  },
};

test.before(async () => {
  for (const [i, name] of ['web', 'alt'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  ctl = await startLocal({
    args: ['--configmap', 'ingress/config'],
    files: {
      'services.json': ['web', 'alt'].flatMap((n) => [service('team-a', n), ...slices('team-a', n, [echo[n]!])]),
      'gateway.json': GATEWAY_MANIFESTS,
      'route.json': [shopRoute],
      'ingress.json': [ingress('team-a', 'shop', { host: 'ing.test', paths: [{ path: '/', service: 'web' }, { path: '/counted', service: 'web' }] })],
      'config.json': [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: 'ingress' }, data: { 'log-format-upstream': LOG_FORMAT } }],
    },
  });
  await ctl.until('shop.test', '/api', (r) => r.backend === 'web', { what: 'the route served' });
  await ctl.until('ing.test', '/', (r) => r.backend === 'web', { what: 'the Ingress served' });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

async function scrape(): Promise<Map<string, PromFamily>> {
  return parsePromText((await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz })).body);
}
const count = (f: Map<string, PromFamily>, match: Record<string, string>) => samples(f, 'nginx_ingress_controller_requests', match).reduce((a, s) => a + s.value, 0);

over.both('request metrics name the HTTPRoute and its rule; an Ingress of the same name keeps series of its own', async (p) => {
  const before = await scrape();
  const host = p.protocol === 'HTTP/1.1' ? 'h1' : 'h2';
  // Paths of their own (/counted, and / of rule 1 until the access log test): what they count is this run's.
  for (let i = 0; i < 6; i++) assert.is((await p.request('shop.test', `/counted/${host}/${i}`)).backend, 'web');
  for (let i = 0; i < 4; i++) assert.is((await p.request('shop.test', `/other/${host}/${i}`)).backend, 'alt');
  for (let i = 0; i < 3; i++) assert.is((await p.request('shop.test', `/v2/${host}`, { headers: { 'x-beta': '1' } })).backend, 'web');
  for (let i = 0; i < 2; i++) assert.is((await p.request('ing.test', `/counted/${host}`)).backend, 'web');
  const since = (f: Map<string, PromFamily>, match: Record<string, string>) => count(f, match) - count(before, match);
  const rule0 = { namespace: 'team-a', ingress: 'httproute/shop/0', service: 'web', host: 'shop.test' };
  const f = await waitFor(async () => {
    const m = await scrape();
    return since(m, { ...rule0, path: '/counted' }) >= 6 && since(m, { ingress: 'httproute/shop/1' }) >= 4 && since(m, { ...rule0, path: '/v2' }) >= 3 && since(m, { ingress: 'shop', path: '/counted' }) >= 2 ? m : null;
  }, { timeoutMs: 10_000, what: 'the requests counted' });
  assert.is(since(f, { ...rule0, path: '/counted', status: '200', method: 'GET' }), 6);
  assert.is(since(f, { ...rule0, path: '/v2', status: '200' }), 3, 'a match with a header condition: the same rule');
  assert.is(since(f, { namespace: 'team-a', ingress: 'httproute/shop/1', service: 'alt', path: '/', host: 'shop.test', status: '200' }), 4);
  assert.is(since(f, { namespace: 'team-a', ingress: 'shop', service: 'web', path: '/counted', host: 'ing.test', status: '200' }), 2, 'the Ingress named shop: its own series');
  assert.is(count(f, { ingress: 'shop', host: 'shop.test' }), 0, "no request of the route is counted as the Ingress's");
  const s = samples(f, 'nginx_ingress_controller_requests', { ...rule0, path: '/counted' })[0]!;
  assert.equal(Object.keys(s.labels).sort(), ['canary', 'controller_class', 'controller_namespace', 'controller_pod', 'host', 'ingress', 'method', 'namespace', 'path', 'service', 'status'], "ingress-nginx's label names");
});

over.both('access log variables name the HTTPRoute and its rule ($namespace, $ingress_name, $service_name, $location_path)', async (p) => {
  const id = p.protocol === 'HTTP/1.1' ? 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1' : 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2';
  const other = p.protocol === 'HTTP/1.1' ? 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb1' : 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2';
  const ing = p.protocol === 'HTTP/1.1' ? 'ccccccccccccccccccccccccccccccc1' : 'ccccccccccccccccccccccccccccccc2';
  assert.is((await p.request('shop.test', '/api/logged', { headers: { 'X-Request-ID': id } })).status, 200);
  assert.is((await p.request('shop.test', '/elsewhere', { headers: { 'X-Request-ID': other } })).status, 200);
  assert.is((await p.request('ing.test', '/logged', { headers: { 'X-Request-ID': ing } })).status, 200);
  // NGINX writes a line after the answer's last byte: await all three.
  const lines = await waitFor(() => {
    const log = readFileSync(join(ctl.workdir, 'logs', 'access.log'), 'utf8').split('\n');
    const found = [id, other, ing].map((r) => log.find((l) => l.startsWith(`${r}|`)));
    return found.every((l) => l !== undefined) ? found : null;
  }, { what: 'the three logged lines' });
  assert.equal(lines, [
    `${id}|team-a|httproute/shop/0|web|/api|shop.test|200`,
    `${other}|team-a|httproute/shop/1|alt|/|shop.test|200`,
    `${ing}|team-a|shop|web|/|ing.test|200`,
  ]);
});

over.noRequest('dbg routes names the front end, the object and the rule each route came from', 'dbg', async () => {
  let text = '';
  assert.is(await runDbg(['routes'], { workdir: ctl.workdir }, (s) => { text += s; }), 0);
  const lines = text.split('\n');
  for (const line of [
    'routes: shop.test: dynamic',
    'route: shop.test Prefix /api → HTTPRoute team-a/shop spec.rules[0]',
    'route: shop.test Prefix /counted → HTTPRoute team-a/shop spec.rules[0]',
    'route: shop.test Prefix /v2 if header x-beta → HTTPRoute team-a/shop spec.rules[0]',
    'route: shop.test Prefix / → HTTPRoute team-a/shop spec.rules[1]',
    'route: ing.test Prefix / → Ingress team-a/shop',
  ]) assert.ok(lines.includes(line), `${line}\n---\n${text}`);
});

test.run();
