// The dynamic-routes rule's outcome for `ingress-rx dbg routes`: one line per host (dynamic, or
// static and why), then one per route naming the front end, object and rule it came from (an
// Ingress, or a rule of an HTTPRoute), written to the workdir after each applied sync whose
// servers changed, as quarantine.json is (dbg reads files there, not the controller's memory).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { routeRuleLines } from '../model/ingress/dynamic-routes.js';
import type { Configuration, Location, Server } from '../model/core/types.js';
import { locationOrigin } from '../model/core/origin.js';

export const ROUTES_REPORT_FILE = 'dynamic-routes.txt';

export function routesReport(prefix: string, logger: Logger): (config: Configuration) => void {
  let last: readonly Server[] | null = null;
  const file = join(prefix, ROUTES_REPORT_FILE);
  return (config) => {
    if (config.servers === last) return;
    last = config.servers;
    try {
      writeFileSync(`${file}.tmp`, `${[...routeRuleLines(config), ...routeOriginLines(config)].join('\n')}\n`, { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      logger.warn({ err: (err as Error).message, file }, 'could not write the dynamic-routes report');
    }
  };
}

/**
 * One line per route of every host: `route: <host> <Exact|Prefix> <path>[ if <conditions>] →
 * <origin>`, where the origin is `Ingress ns/name` or `HTTPRoute ns/name spec.rules[i]`.
 */
export function routeOriginLines(config: Configuration): string[] {
  const out: string[] = [];
  for (const s of config.servers) {
    const seen = new Set<string>();
    for (const loc of s.locations) {
      if (!loc.ingress) continue;
      const line = `route: ${s.hostname} ${loc.ingressPath !== undefined ? 'Prefix' : loc.pathType} ${loc.ingressPath ?? loc.path}${conditions(loc)} → ${locationOrigin(loc.ingress)}`;
      if (seen.has(line)) continue;
      seen.add(line);
      out.push(line);
    }
  }
  return out;
}

function conditions(loc: Location): string {
  const w = loc.when;
  if (!w) return '';
  const parts = [
    ...(w.method !== '' ? [`method ${w.method}`] : []),
    ...w.headers.map((h) => `header ${h.name}`),
    ...w.query.map((q) => `query ${q.name}`),
  ];
  return ` if ${parts.join(', ')}`;
}
