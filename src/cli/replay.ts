// `ingress-rx replay FILE [--speed N | --instant] [--out DIR] [--nginx-test] [--trace [FILE]]`:
// replays a recorded log through the pipeline and writes decisions and configurations to --out.
import { createLogger } from '../log.js';
import { readReplayLog, ReplayLogError } from '../streams/replay-log.js';
import { replay } from './replay-run.js';

export interface ReplayCliOptions {
  speed?: number;
  instant?: boolean;
  out?: string;
  nginxTest?: boolean;
  trace?: string | boolean;
  logLevel?: string;
}

/** Exit codes: 0 done (warnings included), 2 the log cannot be replayed, 1 the replay failed. */
export async function runReplay(file: string, opts: ReplayCliOptions): Promise<number> {
  // `--trace` without a file traces to the log only, which says nothing below trace level.
  const level = opts.trace === true ? 'trace' : opts.logLevel ?? 'warn';
  const logger = createLogger({ level, pretty: false, destination: 2 });
  let log;
  try {
    log = readReplayLog(file);
  } catch (err) {
    process.stderr.write(`ingress-rx replay: ${(err as Error).message}\n`);
    return err instanceof ReplayLogError ? 2 : 1;
  }
  const outDir = opts.out ?? 'replay-out';
  try {
    const report = await replay({
      log, outDir, logger,
      mode: opts.instant ? { instant: true } : { speed: opts.speed ?? 1 },
      nginxTest: opts.nginxTest ?? false,
      trace: opts.trace,
    });
    for (const w of report.warnings) process.stderr.write(`ingress-rx replay: warning: ${w}\n`);
    process.stdout.write(
      `replayed ${report.events} events over ${(report.durationMs / 1000).toFixed(1)} s of log time: ` +
      `${report.syncs} syncs (${report.reloads} reloads, ${report.dynamicUpdates} dynamic updates, ${report.failedSyncs} failed); ` +
      `${report.configs} distinct configurations, ${report.payloads} distinct payloads → ${outDir}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`ingress-rx replay: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}
