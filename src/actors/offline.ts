// Stand-ins for the reload and dynamic-config actors when no NGINX runs (replay, and tests of
// recording): the reload actor renders nginx.conf with the real renderer — and, when asked,
// runs `nginx -t` once per distinct configuration — and the dynamic actor keeps the payloads
// it would have POSTed. Both answer at once, so they take no virtual time.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { writePrivateFile } from '../streams/record-writer.js';
import { dirname, join } from 'node:path';
import { of, type Observable } from 'rxjs';
import type { Logger } from '../log.js';
import { createBackendsSerialiser } from '../model/core/payload.js';
import type { Configuration } from '../model/core/types.js';
import type { ActorOutcome } from './sync.js';
import type { DynamicUpdate } from '../model/core/payload.js';
import type { Renderer } from '../render/engine.js';
import { testOffline } from '../render/offline.js';
import type { NginxRuntime } from '../render/runtime.js';

export const contentChecksum = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

export interface NginxTestOptions {
  /** A scratch prefix (with ssl/default-fake-certificate.{pem,key} in place). */
  runtime: NginxRuntime;
  nginxBinary?: string;
}

export interface OfflineActorsOptions {
  renderer: Renderer;
  /** The runtime of the written configurations. */
  runtime: NginxRuntime;
  logger: Logger;
  /** Writes configs/<checksum>.conf and payloads/<checksum>.json there as they first appear. */
  outDir?: string;
  /** Runs `nginx -t` on each distinct configuration, rendered for this scratch runtime. */
  nginxTest?: NginxTestOptions;
}

export interface OfflineActors {
  reload(config: Configuration): Observable<ActorOutcome>;
  dynamic(update: DynamicUpdate): Observable<ActorOutcome>;
  /** What NGINX would run now: the last configuration reloaded and the last payloads posted. */
  readonly nginxConf: string | null;
  /** The backends list as NGINX would hold it (joined when read). */
  readonly backends: string | null;
  readonly servers: string | null;
  /** The dynamic hosts' route table last posted. */
  readonly routes: string | null;
  /** Distinct configurations seen, by checksum. */
  readonly configs: ReadonlyMap<string, string>;
  /**
   * Checksums of the distinct payloads seen: the backends as posted (the whole list, then each
   * change to it), the servers and routes whole. Their text is written to `outDir`, not kept: a
   * storm makes one backends payload per sync (a 100k-event replay at 1k Ingresses: 293 of
   * 0.75 MB each), and holding them all made the replay's memory grow with the log (peak RSS
   * of that replay 579 MB; 430 MB without).
   */
  readonly payloads: ReadonlySet<string>;
}

/** Compact: a storm writes one backends payload per sync, and they are large. */
export const payloadText = (payload: unknown): string => `${JSON.stringify(payload)}\n`;


export function createOfflineActors(opts: OfflineActorsOptions): OfflineActors {
  const { renderer, runtime, logger, outDir } = opts;
  const configs = new Map<string, string>();
  const payloads = new Set<string>();
  const tested = new Map<string, ActorOutcome>();
  // As the dynamic-config actor posts them: the whole list, then what changed (a constant id:
  // the same change twice is the same payload).
  const serialiseBackends = createBackendsSerialiser(() => 'offline');
  let nginxConf: string | null = null;
  let servers: string | null = null;
  let routes: string | null = null;

  const write = (path: string, text: string) => {
    if (!outDir) return;
    const full = join(outDir, path);
    mkdirSync(dirname(full), { recursive: true });
    writePrivateFile(full, text);
  };

  const keepConfig = (text: string): string => {
    const sum = contentChecksum(text);
    if (!configs.has(sum)) {
      configs.set(sum, text);
      write(`configs/${sum}.conf`, text);
    }
    return sum;
  };
  const keepPayload = (text: string): void => {
    const sum = contentChecksum(text);
    if (payloads.has(sum)) return;
    payloads.add(sum);
    write(`payloads/${sum}.json`, text);
  };

  function nginxTest(sum: string, config: Configuration): ActorOutcome {
    const known = tested.get(sum);
    if (known) return known;
    const test = opts.nginxTest!;
    const outcome: ActorOutcome = testOffline(renderer, config, test.runtime, test.nginxBinary);
    if (!outcome.ok) logger.warn({ config: sum, error: outcome.error }, `replay: configuration ${sum} fails nginx -t`);
    tested.set(sum, outcome);
    return outcome;
  }

  return {
    reload(config) {
      let rendered: { text: string; checksum: string };
      try {
        rendered = renderer.renderWithWarnings(config, runtime);
      } catch (err) {
        return of({ ok: false, error: `render: ${(err as Error).message}`, durationMs: 0 });
      }
      const { text, checksum } = rendered;
      const sum = keepConfig(text);
      const outcome = opts.nginxTest ? nginxTest(sum, config) : { ok: true };
      if (!outcome.ok) return of({ ...outcome, durationMs: 0 });
      nginxConf = text;
      return of({ ...outcome, durationMs: 0, checksum });
    },
    dynamic(update) {
      if (update.backends) {
        const post = serialiseBackends.post(update.backends);
        if (!post.delta || post.changes > 0) keepPayload(`${post.body.join('')}\n`);
        post.accepted();
      }
      if (update.servers) {
        const text = payloadText(update.servers);
        keepPayload(text);
        servers = text;
      }
      if (update.routes) {
        const text = payloadText(update.routes);
        keepPayload(text);
        routes = text;
      }
      return of({ ok: true, attempts: 1, durationMs: 0 });
    },
    get nginxConf() { return nginxConf; },
    get backends() {
      const held = serialiseBackends.held();
      return held === null ? null : `${held}\n`;
    },
    get servers() { return servers; },
    get routes() { return routes; },
    configs,
    payloads,
  };
}
