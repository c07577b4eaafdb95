// Two NGINX from the production template serving the same one-Ingress cluster, for benches that
// compare a feature on and off (bench/metrics.ts, bench/opentelemetry.ts): the upstream NGINX,
// the store, each variant's runtime, and starting one variant until its host answers.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import type { Store } from '../src/store/types.js';
import { createModelBuilder } from '../src/model/build.js';
import { backendsPayload } from '../src/model/core/payload.js';
import type { Configuration } from '../src/model/core/types.js';
import { defaultRuntime, preparePrefix, type NginxRuntime } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/render/fallback-cert.js';
import { controlChannel, writeControlToken } from '../src/render/control.js';
import type { Renderer } from '../src/render/engine.js';
import { controlRequest } from '../src/actors/control-client.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import { silentLogger } from '../src/log.js';
import { waitFor } from '../test/support/wait.js';
import { generateEvents, hostOf } from './gen.js';
import { failure, get, startNginx, upstreamConf, type WrkResult } from './nginx-tools.js';

/** The `return 200` NGINX on `upstreamPorts` (in `root/upstream`, added to `children`), with `servers` (more server blocks) beside; returns its prefix. */
export function startUpstream(root: string, upstreamPorts: number[], children: ChildProcess[], servers = ''): string {
  const prefix = join(root, 'upstream');
  preparePrefix(defaultRuntime({ prefix }));
  const conf = upstreamConf(prefix, upstreamPorts);
  writeFileSync(join(prefix, 'nginx.conf'), servers ? conf.replace(/\n}\n$/, `\n${servers}\n}\n`) : conf);
  children.push(startNginx(prefix, join(prefix, 'nginx.conf')));
  return prefix;
}

/** One generated plain Ingress (host `hostOf(0)`) whose Service's endpoints are these loopback ports. */
export function oneIngressStore(upstreamPorts: number[]): Store {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
  for (const e of generateEvents({ n: 1, plain: true, tlsFraction: 0, endpoints: () => upstreamPorts.map((p) => ({ address: '127.0.0.1', port: p })) })) store.apply(e);
  return store;
}

/**
 * A variant's runtime under `root/<name>`, on five ports (http, https, status, stream, default
 * server), its prefix ready. The upstream NGINX runs on loopback, as local mode allows.
 */
export async function variantRuntime(root: string, name: string, ports: number[], extra: Partial<NginxRuntime> = {}): Promise<NginxRuntime> {
  const prefix = join(root, name);
  const [http, https, status, stream, def] = ports;
  const rt = defaultRuntime({
    prefix, listenAddresses: ['127.0.0.1'], httpPort: http!, httpsPort: https!, statusPort: status!, streamPort: stream!,
    defaultServerPort: def!, resolvers: ['127.0.0.1'], upstreamAddresses: { allow: ['loopback'], ownPorts: [http!, https!, def!] }, ...extra,
  });
  preparePrefix(rt);
  writeControlToken(rt);
  rt.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
  return rt;
}

/** The model of the store for `rt`, its loopback endpoints allowed as `rt` allows them. */
export function variantConfig(store: Store, rt: NginxRuntime): Configuration {
  return createModelBuilder({
    annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: rt.defaultServerPort, logger: silentLogger(),
    addressPolicy: { allow: new Set(['loopback']), ownPorts: new Set([rt.httpPort, rt.httpsPort, rt.defaultServerPort]) },
  }).build(store).config;
}

/** Renders `config` for `rt`, starts its NGINX (added to `children`) and waits until the backends are posted and the host answers. */
export async function startVariant(renderer: Renderer, config: Configuration, rt: NginxRuntime, name: string, children: ChildProcess[]): Promise<ChildProcess> {
  writeFileSync(rt.confPath, renderer.render(config, rt));
  const master = startNginx(rt.prefix, rt.confPath);
  children.push(master);
  await waitFor(async () => {
    const r = await controlRequest(controlChannel(rt), 'POST', '/configuration/backends', { body: JSON.stringify(backendsPayload(config)), timeoutMs: 10_000 }).catch(() => null);
    return r?.status === 201;
  }, { timeoutMs: 15_000, what: `the ${name} backends POST` }).catch(failure(master, `NGINX (${name})`));
  await waitFor(async () => (await get(rt.httpPort, hostOf(0), '/')).status === 200, { timeoutMs: 10_000, what: `the ${name} host` });
  return master;
}

/** A variant's figures for a table's note. */
export const turnNote = (r: WrkResult): string =>
  `p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, errors ${r.errors}; NGINX CPU ${r.cpuUsPerRequest!.toFixed(1)} µs/request`;

/** How the variants were driven, for a table's note. */
export const turnsNote = (seconds: number, rounds: number): string =>
  `wrk -t2 -c32 -d${seconds}s, ${rounds} turns each (on off off on), 3 endpoints (NGINX return 200); CPU: the median turn`;

/** "on" against "off": requests/s ratio, NGINX CPU per request ratio (off / on) and cost (on / off - 1). */
export function compareTurns(on: WrkResult, off: WrkResult): { rpsRatio: number; cpuRatio: number; cpuCost: number } {
  return { rpsRatio: on.rps / off.rps, cpuRatio: off.cpuUsPerRequest! / on.cpuUsPerRequest!, cpuCost: on.cpuUsPerRequest! / off.cpuUsPerRequest! - 1 };
}
