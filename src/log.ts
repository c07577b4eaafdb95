// The logger factory: JSON by default, pretty when stdout is a terminal. Passed in everywhere;
// no module keeps a logger of its own.
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export function createLogger(opts: { level?: string; pretty?: boolean; destination?: number | string } = {}): Logger {
  const level = (opts.level ?? 'info') as LevelWithSilent;
  const pretty = opts.pretty ?? process.stdout.isTTY === true;
  if (pretty) {
    return pino({ level, transport: { target: 'pino-pretty', options: { colorize: true, destination: 1 } } });
  }
  return pino({ level }, pino.destination(opts.destination ?? 1));
}

/** A logger that discards everything (tests, benches). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
