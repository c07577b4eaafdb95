// The dynamic-routes rule's outcome for `ingress-rx dbg routes`: one line per host (dynamic, or
// static and why), written to the workdir after each applied sync whose servers changed, as
// quarantine.json is (dbg reads files there, not the controller's memory).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { routeRuleLines } from '../model/ingress/dynamic-routes.js';
import type { Configuration, Server } from '../model/core/types.js';

export const ROUTES_REPORT_FILE = 'dynamic-routes.txt';

export function routesReport(prefix: string, logger: Logger): (config: Configuration) => void {
  let last: readonly Server[] | null = null;
  const file = join(prefix, ROUTES_REPORT_FILE);
  return (config) => {
    if (config.servers === last) return;
    last = config.servers;
    try {
      writeFileSync(`${file}.tmp`, `${routeRuleLines(config).join('\n')}\n`, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      logger.warn({ err: (err as Error).message, file }, 'could not write the dynamic-routes report');
    }
  };
}
