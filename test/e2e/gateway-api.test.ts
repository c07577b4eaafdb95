// The Gateway API end to end (docs/gateway-api.md): `ingress-rx local` with real NGINX reads a
// GatewayClass, a Gateway and HTTPRoutes from manifests; their hosts are served by the Lua router
// (no server block), over HTTP/1.1 and HTTP/2; a weighted split reaches both Services; changed,
// new and removed HTTPRoutes are served without a reload; a route to another namespace's Service
// without a ReferenceGrant answers 500 and never reaches it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { protocolMatrix } from '../support/protocols.js';
import { GATEWAY_MANIFESTS, GATEWAY_V1 } from '../support/gateway-local.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
const echo: Record<string, EchoServer> = {};
const reloads = () => ctl.metric('nginx_ingress_controller_success');

type Rule = { path?: [string, string]; backends: Array<[string, number?, string?]> };
function httpRoute(ns: string, name: string, hostnames: string[], rules: Rule[]) {
  return {
    apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: ns },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra', sectionName: 'http' }], hostnames,
      rules: rules.map((r) => ({
        ...(r.path ? { matches: [{ path: { type: r.path[0], value: r.path[1] } }] } : {}),
        backendRefs: r.backends.map(([svc, weight, namespace]) => ({ name: svc, port: 80, ...(weight !== undefined ? { weight } : {}), ...(namespace ? { namespace } : {}) })),
      })),
    },
  };
}

const WEB = httpRoute('team-a', 'web', ['gw.test'], [
  { path: ['PathPrefix', '/app'], backends: [['app']] },
  { path: ['Exact', '/exact'], backends: [['exact']] },
  { backends: [['root']] },
]);

test.before(async () => {
  for (const [name, octet] of [['root', 2], ['app', 3], ['exact', 4], ['canary', 5], ['v2', 6], ['secret', 7]] as const) {
    echo[name] = await startEchoServer({ address: `127.0.0.${octet}`, name });
  }
  const svc = (ns: string, n: string) => [service(ns, n), ...slices(ns, n, [echo[n]!])];
  ctl = await startLocal({
    files: {
      'services.json': ['root', 'app', 'exact', 'canary', 'v2'].flatMap((n) => svc('team-a', n)).concat(svc('team-b', 'secret')),
      'gateway.json': GATEWAY_MANIFESTS,
      'web.json': [WEB],
      'split.json': [httpRoute('team-a', 'split', ['split.test'], [{ backends: [['app', 1], ['canary', 1]] }])],
      'steal.json': [httpRoute('team-a', 'steal', ['steal.test'], [{ backends: [['secret', 1, 'team-b']] }])],
    },
  });
  await ctl.until('gw.test', '/app', (r) => r.backend === 'app', { what: 'gw.test served' });
});

test.after(async () => {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
});

over.noRequest('HTTPRoute hosts have no server block: the Lua router serves them', 'the nginx.conf written', () => {
  const conf = readFileSync(join(ctl.workdir, 'nginx.conf'), 'utf8');
  assert.not.ok(conf.includes('gw.test'), 'gw.test has no server block');
  assert.not.ok(conf.includes('split.test'));
});

over.both('an HTTPRoute\'s PathPrefix (on element boundaries), Exact and default-path rules', async (p) => {
  await p.until('gw.test', '/app', (r) => r.backend === 'app', { what: 'gw.test over this protocol' });
  assert.is((await p.request('gw.test', '/app/x?y=1')).backend, 'app');
  assert.is((await p.request('gw.test', '/apple')).backend, 'root', 'PathPrefix /app does not take /apple');
  assert.is((await p.request('gw.test', '/exact')).backend, 'exact');
  assert.is((await p.request('gw.test', '/exact/more')).backend, 'root', 'Exact takes only its path');
  assert.is((await p.request('GW.test', '/app')).backend, 'app', 'host names are caseless');
  const r = await p.request('gw.test', '/app/a%2Fb?q=1');
  assert.is(r.json?.path, '/app/a%2Fb?q=1', 'the request URI reaches the upstream unchanged');
  assert.is((await p.request('nobody.test', '/app')).status, 404);
});

over.both('a weighted split (1:1) reaches both Services', async (p) => {
  const seen: Record<string, number> = {};
  for (let i = 0; i < 120; i++) {
    const r = await p.request('split.test', `/${i}`);
    seen[r.backend ?? String(r.status)] = (seen[r.backend ?? String(r.status)] ?? 0) + 1;
  }
  assert.equal(Object.keys(seen).sort(), ['app', 'canary'], JSON.stringify(seen));
  // 120 fair coin flips: each side between 30 and 90 but once in about 10^8 runs.
  assert.ok(seen.app! >= 30 && seen.canary! >= 30, JSON.stringify(seen));
});

over.both('attacker: a route to another namespace\'s Service without a ReferenceGrant answers 500, never that Service', async (p) => {
  const before = echo.secret!.hits();
  assert.is((await p.request('steal.test', '/')).status, 500);
  assert.is(echo.secret!.hits(), before, 'team-b\'s Service got no request');
});

over.both('a changed, a new and a removed HTTPRoute are served without a reload', async (p) => {
  const before = await reloads();
  ctl.write('web.json', [httpRoute('team-a', 'web', ['gw.test'], [
    { path: ['PathPrefix', '/app'], backends: [['v2']] },
    { path: ['PathPrefix', '/new'], backends: [['exact']] },
    { backends: [['root']] },
  ])]);
  await p.until('gw.test', '/app', (r) => r.backend === 'v2', { what: 'the changed rule served' });
  await p.until('gw.test', '/new/x', (r) => r.backend === 'exact', { what: 'the new rule served' });
  assert.is((await p.request('gw.test', '/exact')).backend, 'root', 'the removed Exact rule is gone');
  ctl.write('more.json', [httpRoute('team-a', 'more', ['more.test'], [{ backends: [['canary']] }])]);
  await p.until('more.test', '/', (r) => r.backend === 'canary', { what: 'a new HTTPRoute served' });
  // Removed, and gw.test as it was (for the next protocol's run).
  ctl.remove('more.json');
  ctl.write('web.json', [WEB]);
  await p.until('gw.test', '/exact', (r) => r.backend === 'exact', { what: 'gw.test as it was' });
  await p.until('more.test', '/', (r) => r.status === 404, { what: 'more.test gone' });
  assert.is(await reloads(), before, 'no reload');
});

test.run();
