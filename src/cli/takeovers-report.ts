// The cross-namespace takeovers for `ingress-rx dbg takeovers`: one line per warning on an
// Ingress (Event reason Takeover), from the latest sync that built a model, written to the
// workdir when they change, as dynamic-routes.txt is (dbg reads files there).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import type { ModelWarning } from '../model/core/types.js';
import { TAKEOVER_REASON } from '../model/ingress/takeovers.js';

export const TAKEOVERS_REPORT_FILE = 'takeovers.txt';

export function takeoversReport(prefix: string, logger: Logger): (warnings: readonly ModelWarning[]) => void {
  let last: string | null = null;
  const file = join(prefix, TAKEOVERS_REPORT_FILE);
  return (warnings) => {
    const lines = warnings.filter((w) => w.reason === TAKEOVER_REASON).map((w) => `${w.object}: ${w.message}\n`);
    const text = lines.length === 0 ? 'No takeovers.\n' : lines.join('');
    if (text === last) return;
    last = text;
    try {
      writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      logger.warn({ err: (err as Error).message, file }, 'could not write the takeovers report');
    }
  };
}
