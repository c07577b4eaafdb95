// Gateway listener ports in local mode (docs/gateway-api.md, "Listener ports"): a listener port is
// served on 127.0.0.1 at the port --gateway-listener-ports maps it to; one below 1024 without a
// mapping, and one on the controller's own --http-port, are refused and named; an Ingress keeps
// its host on --http-port while an HTTPRoute of a listener on 8080 serves the same host there.
// Listener ports other than 80 and 443 are plain HTTP: HTTP/1.1 only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { GATEWAY_MANIFESTS, GATEWAY_V1 as V1, stopGatewayLocal } from '../support/gateway-local.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { freePorts } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';
import { waitFor } from '../support/wait.js';

let ctl: LocalController;
const echo: Record<string, EchoServer> = {};
const over = protocolMatrix(test, () => ctl);
let mapped = 0;

const listener = (name: string, port: number) => ({ name, port, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } });
const route = (name: string, sectionName: string, host: string, rules: object[]) => ({
  apiVersion: V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
  spec: { parentRefs: [{ name: 'ports', namespace: 'infra', sectionName }], hostnames: [host], rules },
});

const PORTS = [
  { apiVersion: V1, kind: 'Gateway', metadata: { name: 'ports', namespace: 'infra' }, spec: { gatewayClassName: 'rx', listeners: [listener('alt', 8080), listener('low', 81)] } },
  route('on-alt', 'alt', 'shared.ports', [
    { matches: [{ path: { type: 'PathPrefix', value: '/redirect' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { hostname: 'example.org' } }] },
    { backendRefs: [{ name: 'v2', port: 80 }] },
  ]),
  route('on-low', 'low', 'low.ports', [{ backendRefs: [{ name: 'v2', port: 80 }] }]),
  ingress('team-a', 'shared', { host: 'shared.ports', paths: [{ path: '/', service: 'v1' }] }),
];

test.before(async () => {
  [mapped] = await freePorts(1);
  for (const [i, name] of ['v1', 'v2'].entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  ctl = await startLocal({
    files: {
      'services.json': ['v1', 'v2'].flatMap((n) => [service('team-a', n), ...slices('team-a', n, [echo[n]!])]),
      'gateway.json': GATEWAY_MANIFESTS,
      'ports.json': PORTS,
    },
    args: ['--gateway-listener-ports', `8080=${mapped}`],
  });
});

test.after(async () => { await stopGatewayLocal(ctl, echo); });

over.http1Only('local mode: listener port 8080 is served at its mapped port; the Ingress keeps the same host on --http-port', 'listeners other than 80 and 443 are plain HTTP', async () => {
  await waitFor(async () => (await ctl.request('shared.ports', '/', { port: mapped })).backend === 'v2', { what: 'port 8080 served at its mapped port' });
  assert.is((await ctl.request('shared.ports', '/')).backend, 'v1', 'the Ingress on --http-port');
  const r = await ctl.request('shared.ports', '/redirect/x?q=1', { port: mapped });
  assert.is(r.status, 302);
  assert.is(r.headers.location, 'http://example.org:8080/redirect/x?q=1', 'the listener\'s port, not the mapped one');
});

over.http1Only('local mode: a listener below 1024 without a mapping is refused and named; its route is not served', 'listeners other than 80 and 443 are plain HTTP', async () => {
  await ctl.logged(/listener infra\/ports\/low: port 81 is below 1024, which local mode cannot bind: map it with --gateway-listener-ports 81=<port>/, 'the refused listener named');
  assert.is((await ctl.request('low.ports', '/')).status, 404);
});

test.run();
