// The model fixtures (test/fixtures/model/<case>/manifests, with an optional options.json): the
// manifests read into a store and built by the model builder's own API, at a fixed time.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../src/log.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';
import { createModelBuilder, type BuildResult } from '../../src/model/build.js';
import { createStore, defaultStoreOptions } from '../../src/store/store.js';
import type { StoreOptions } from '../../src/store/types.js';
import { readManifests } from '../../src/streams/manifests.js';

export const MODEL_FIXTURES = fileURLToPath(new URL('../fixtures/model/', import.meta.url));
/** The time of every fixture build unless a test gives another. */
export const FIXTURE_NOW = new Date('2026-11-22T00:00:00Z');

/** What a fixture's options.json may say, and what a test may add. */
export interface FixtureOptions {
  /** The main ConfigMap, `namespace/name`. */
  configmap?: string;
  storeOptions?: Partial<StoreOptions>;
  reservedPorts?: number[];
  now?: () => Date;
  logger?: Logger;
}

/** The fixture cases (directories with manifests; `_certs` and the like are not cases). */
export function fixtureCases(): string[] {
  return readdirSync(MODEL_FIXTURES).filter((d) => !d.startsWith('_') && existsSync(join(MODEL_FIXTURES, d, 'manifests'))).sort();
}

export interface FixtureBuild extends BuildResult {
  /** Manifests that could not be read (a fixture should have none). */
  manifestErrors: unknown[];
}

/** Builds a fixture's model: its manifests into a store (Ingresses without class served), then createModelBuilder().build. */
export function buildFixture(name: string, extra: FixtureOptions = {}): FixtureBuild {
  const file = join(MODEL_FIXTURES, name, 'options.json');
  const opts: FixtureOptions = { ...(existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) as FixtureOptions : {}), ...extra };
  const now = opts.now ?? (() => FIXTURE_NOW);
  const { events, errors } = readManifests(join(MODEL_FIXTURES, name, 'manifests'), { logger: opts.logger, now: () => now().getTime() });
  const options: StoreOptions = { ...defaultStoreOptions(), watchIngressWithoutClass: true, ...opts.storeOptions, configmap: opts.configmap ?? opts.storeOptions?.configmap ?? '' };
  const store = createStore(options, ANNOTATION_REFERENCES, opts.logger);
  for (const e of events) store.apply(e);
  const builder = createModelBuilder({ annotationsPrefix: options.annotationsPrefix || 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, now, logger: opts.logger, reservedPorts: opts.reservedPorts });
  return { ...builder.build(store), manifestErrors: errors };
}
