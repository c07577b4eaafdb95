// A local-mode controller with one GatewayClass and one HTTP Gateway (`infra/gw`, listener
// `http`, routes from every namespace) and echo backends as Services of `team-a`, for the
// Gateway API end-to-end files.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from './echo-server.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions, type FakeObject } from './fake-apiserver.js';
import { service, slices, startController, startLocal, type CliProcess, type LocalController } from './local-harness.js';

export const GATEWAY_V1 = 'gateway.networking.k8s.io/v1';

export const GATEWAY_MANIFESTS = [
  { apiVersion: GATEWAY_V1, kind: 'GatewayClass', metadata: { name: 'rx' }, spec: { controllerName: 'ingress-rx.io/gateway' } },
  {
    apiVersion: GATEWAY_V1, kind: 'Gateway', metadata: { name: 'gw', namespace: 'infra' },
    spec: { gatewayClassName: 'rx', listeners: [{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }] },
  },
];

/** Echo servers named `names` (on 127.0.0.2, .3, …) as Services of team-a, the Gateway, and `files`. */
export async function startGatewayLocal(names: readonly string[], files: Record<string, unknown>): Promise<{ ctl: LocalController; echo: Record<string, EchoServer> }> {
  const echo: Record<string, EchoServer> = {};
  for (const [i, name] of names.entries()) echo[name] = await startEchoServer({ address: `127.0.0.${i + 2}`, name });
  const ctl = await startLocal({
    files: {
      'services.json': names.flatMap((n) => [service('team-a', n), ...slices('team-a', n, [echo[n]!])]),
      'gateway.json': GATEWAY_MANIFESTS,
      ...files,
    },
  });
  return { ctl, echo };
}

/** A rule of `prefixRoute`: `matches` as written, else a PathPrefix match when `path` is given; a backendRef to the Service `to` (port 80); any other rule fields as written. */
export interface PrefixRule { path?: string; matches?: unknown[]; to?: string; filters?: unknown[]; timeouts?: unknown; retry?: unknown }

/** An HTTPRoute of team-a attached to infra/gw for `host`, a rule per entry of `rules`. */
export function prefixRoute(name: string, host: string, rules: readonly PrefixRule[]) {
  return {
    apiVersion: GATEWAY_V1, kind: 'HTTPRoute', metadata: { name, namespace: 'team-a' },
    spec: {
      parentRefs: [{ name: 'gw', namespace: 'infra' }], hostnames: [host],
      rules: rules.map(({ path, matches, to, ...fields }) => ({
        ...(matches ? { matches } : path ? { matches: [{ path: { type: 'PathPrefix', value: path } }] } : {}),
        ...(to ? { backendRefs: [{ name: to, port: 80 }] } : {}),
        ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      })),
    },
  };
}

export async function stopGatewayLocal(ctl: LocalController | undefined, echo: Record<string, EchoServer>): Promise<void> {
  await ctl?.stop();
  await Promise.all(Object.values(echo).map((e) => e.close()));
}

/** The fake API server holding `objects` and `ingress-rx controller --enable-gateway-api` against it (the leader: status is written), its kubeconfig in `dir`, with `extraArgs` after the usual flags. */
export async function startGatewayController(dir: string, objects: readonly FakeObject[], extraArgs: readonly string[] = [], fakeOptions?: FakeApiServerOptions): Promise<{ fake: FakeApiServer; ctl: CliProcess }> {
  const fake = await startFakeApiServer(fakeOptions);
  for (const o of objects) fake.create(o);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, fake.kubeConfig().exportConfig());
  const ctl = await startController({
    kubeconfig,
    args: ['--enable-gateway-api', '--disable-leader-election', '--publish-status-address=192.0.2.10', '--allow-upstream-addresses=loopback', ...extraArgs],
    env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
  });
  return { fake, ctl };
}

/** Stops what `startGatewayController` started, the echo servers, and removes `dir`. */
export async function stopGatewayController(ctl: CliProcess | undefined, fake: FakeApiServer | undefined, echo: Record<string, EchoServer>, dir: string): Promise<void> {
  await ctl?.stop();
  await fake?.close();
  await Promise.all(Object.values(echo).map((e) => e.close()));
  rmSync(dir, { recursive: true, force: true });
}
