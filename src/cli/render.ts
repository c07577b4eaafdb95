// `ingress-rx render`: a manifests directory → the model and the Lua payloads, offline, as
// deterministic JSON files (model.json, backends.json, servers.json) and nginx.conf rendered for
// fixed paths; `--test` runs `nginx -t` on it in a scratch prefix. Warnings go to stderr.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { writePrivateFile } from '../streams/record-writer.js';
import { join } from 'node:path';
import { createLogger, type Logger } from '../log.js';
import { createModelBuilder, type BuildResult } from '../model/build.js';
import { stableJSON } from '../model/core/json.js';
import { backendsPayload, serversPayload } from '../model/core/payload.js';
import { routesPayload } from '../model/core/routes-payload.js';
import { routeRuleLines } from '../model/ingress/dynamic-routes.js';
import type { ModelWarning } from '../model/core/types.js';
import { createStore, defaultStoreOptions } from '../store/store.js';
import type { LeftOutIngress, StoreOptions } from '../store/types.js';
import { readManifests, type ManifestError } from '../streams/manifests.js';
import { createRenderer } from '../render/engine.js';
import { offlineRuntime, scratchRuntime, testOffline } from '../render/offline.js';
import { DEFAULT_TEMPLATE_DIR } from '../render/runtime.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';

export const DEFAULT_SERVER_PORT = 8181;

export interface RenderModelOptions {
  /** The main ConfigMap, `namespace/name` ('' = none). */
  configmap?: string;
  defaultServerPort?: number;
  /** Other store flags (tcp/udp services ConfigMaps, default certificate, …). */
  storeOptions?: Partial<StoreOptions>;
  /** Ports TCP/UDP services may not take (default: ingress-nginx's). */
  reservedPorts?: number[];
  /** Clock for certificate expiry and for manifests without creationTimestamp. */
  now?: () => Date;
  logger?: Logger;
  /** --enable-dynamic-routes (src/model/ingress/dynamic-routes.ts). */
  dynamicRoutes?: boolean;
}

export interface RenderedModel extends BuildResult {
  manifestErrors: ManifestError[];
  /** Ingresses of the manifests this controller does not serve, and why. */
  leftOut: readonly LeftOutIngress[];
}

/** Reads a manifests directory into a store (Ingresses without class are served) and builds the model. */
export function renderModel(dir: string, opts: RenderModelOptions = {}): RenderedModel {
  const now = opts.now ?? (() => new Date());
  const { events, errors } = readManifests(dir, { logger: opts.logger, now: () => now().getTime() });
  const options: StoreOptions = {
    ...defaultStoreOptions(),
    watchIngressWithoutClass: true,
    ...opts.storeOptions,
    configmap: opts.configmap ?? opts.storeOptions?.configmap ?? '',
  };
  const store = createStore(options, ANNOTATION_REFERENCES, opts.logger);
  for (const e of events) store.apply(e);
  const builder = createModelBuilder({
    annotationsPrefix: options.annotationsPrefix ?? 'nginx.ingress.kubernetes.io',
    defaultServerPort: opts.defaultServerPort ?? DEFAULT_SERVER_PORT,
    now,
    logger: opts.logger,
    reservedPorts: opts.reservedPorts,
    dynamicRoutes: opts.dynamicRoutes,
  });
  return { ...builder.build(store), manifestErrors: errors, leftOut: store.leftOutIngresses() };
}

export function formatLeftOut(l: LeftOutIngress): string {
  return `Ingress ${l.key} is not served: ${l.reason}`;
}

export function formatWarning(w: ModelWarning): string {
  return `${w.object}${w.field ? ` ${w.field}` : ''}: ${w.message}`;
}

export async function runRender(opts: {
  manifests: string;
  configmap?: string;
  out: string;
  defaultServerPort?: number;
  storeOptions?: Partial<StoreOptions>;
  logger?: Logger;
  logLevel?: string;
  /** Run `nginx -t` on the rendered configuration (exit 1 when it fails). */
  test?: boolean;
  /** --enable-dynamic-routes (on unless false) */
  enableDynamicRoutes?: boolean;
}): Promise<number> {
  const logger = opts.logger ?? createLogger({ level: opts.logLevel ?? 'warn' });
  try {
    if (!statSync(opts.manifests, { throwIfNoEntry: false })?.isDirectory()) {
      process.stderr.write(`render: ${opts.manifests} is not a directory\n`);
      return 2;
    }
    const r = renderModel(opts.manifests, {
      configmap: opts.configmap, defaultServerPort: opts.defaultServerPort, storeOptions: opts.storeOptions, logger, dynamicRoutes: opts.enableDynamicRoutes !== false,
    });
    for (const e of r.manifestErrors) process.stderr.write(`warning: ${e.file}:${e.line}: ${e.reason}\n`);
    for (const w of r.warnings) process.stderr.write(`warning: ${formatWarning(w)}\n`);
    for (const l of r.leftOut) process.stderr.write(`left out: ${formatLeftOut(l)}\n`);
    mkdirSync(opts.out, { recursive: true });
    // The model and the servers payload hold the certificates' keys.
    writePrivateFile(join(opts.out, 'model.json'), stableJSON(r.config));
    writePrivateFile(join(opts.out, 'backends.json'), stableJSON(backendsPayload(r.config)));
    writePrivateFile(join(opts.out, 'servers.json'), stableJSON(serversPayload(r.config)));
    writePrivateFile(join(opts.out, 'routes.json'), stableJSON(routesPayload(r.config)));
    for (const line of routeRuleLines(r.config)) process.stderr.write(`${line}\n`);
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    const rendered = renderer.renderWithWarnings(r.config, offlineRuntime(opts.defaultServerPort ?? DEFAULT_SERVER_PORT));
    for (const w of rendered.warnings) process.stderr.write(`warning: ${w}\n`);
    for (const p of rendered.problems) {
      const who = p.ingresses.map((i) => `Ingress ${i.namespace}/${i.name}`).join(', ') || `server ${p.host}`;
      process.stderr.write(`warning: ${who}: host ${p.host}${p.path === undefined ? '' : ` path ${p.path}`}: ${p.field}: ${p.message}; ${p.outcome}\n`);
    }
    writeFileSync(join(opts.out, 'nginx.conf'), rendered.text);
    process.stderr.write(`render: ${r.config.servers.length} servers, ${r.config.backends.length} backends, ${r.warnings.length} warnings, ${r.leftOut.length} Ingresses left out → ${opts.out}\n`);
    if (!opts.test) return 0;
    const scratch = await scratchRuntime(opts.defaultServerPort ?? DEFAULT_SERVER_PORT);
    try {
      const tested = testOffline(renderer, r.config, scratch);
      process.stderr.write(tested.ok ? 'render: nginx -t: the configuration is valid\n' : `render: ${tested.error}\n`);
      return tested.ok ? 0 : 1;
    } finally {
      rmSync(scratch.prefix, { recursive: true, force: true });
    }
  } catch (err) {
    process.stderr.write(`render: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
