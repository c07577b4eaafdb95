// Names the Ingresses the controller does not serve (IngressClass not found, another
// controller's class, a namespace not watched, …): each is logged once when it is left out or
// its reason changes, and the whole list is kept in a file the status server serves to `dbg`.
import { renameSync, writeFileSync } from 'node:fs';
import type { Logger } from '../log.js';
import type { LeftOutIngress } from '../store/types.js';

export interface LeftOutReporterOptions {
  logger: Logger;
  /** The JSON file (see leftOutPath in src/render/runtime.ts). */
  path: string;
  /** `warn` where every Ingress is meant for us (local mode), `info` in a cluster shared with other controllers. */
  level: 'warn' | 'info';
}

/** Call with the store's list after each sync; it does nothing while the list is the same array. */
export function createLeftOutReporter(opts: LeftOutReporterOptions): (list: readonly LeftOutIngress[]) => void {
  let last: readonly LeftOutIngress[] | null = null;
  let logged = new Map<string, string>();
  return (list) => {
    if (list === last) return;
    last = list;
    const now = new Map<string, string>();
    for (const { key, reason } of list) {
      now.set(key, reason);
      if (logged.get(key) === reason) continue;
      // A class that names nothing is a typo or a missing object wherever we run.
      const level = reason.includes('not found') ? 'warn' : opts.level;
      opts.logger[level]({ ingress: key, reason }, `Ingress ${key} is not served: ${reason}`);
    }
    logged = now;
    const text = `${JSON.stringify(list.map((l) => ({ ingress: l.key, reason: l.reason })), null, 1)}\n`;
    try {
      writeFileSync(`${opts.path}.tmp`, text);
      renameSync(`${opts.path}.tmp`, opts.path);
    } catch (err) {
      opts.logger.warn({ err: String(err) }, `cannot write ${opts.path}`);
    }
  };
}
