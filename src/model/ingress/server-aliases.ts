// Server aliases (the server-alias annotation): a host's aliases come from its oldest Ingress
// naming any. An alias belongs to the first host (oldest Ingress) claiming it and never shadows
// a host; an alias under another namespace's wildcard host takes that name's traffic from it
// (a takeover, refused under --host-ownership).
import type { IngressFragment } from './fragments.js';
import { rawAliases } from './servers.js';
import { refusedForOwner, takeoverWarnings, wildcardOver } from './takeovers.js';
import type { ModelWarning } from '../core/types.js';

export interface ServerAliases {
  /** Host → its aliases (sorted). */
  byHost: Map<string, string[]>;
  /** Every alias any Ingress asks for, kept or not. */
  names: Set<string>;
  warnings: ModelWarning[];
}

/**
 * The aliases of every host, hosts taken in the order of `byHost` (the first to claim an alias
 * keeps it). `field` names the annotation in warnings.
 */
export function resolveAliases(byHost: ReadonlyMap<string, readonly IngressFragment[]>, owners: ReadonlyMap<string, string> | null, field: string): ServerAliases {
  const owner = new Map<string, { host: string; by: IngressFragment }>();
  const names = new Set<string>();
  const warnings: ModelWarning[] = [];
  const out = new Map<string, string[]>();
  // forEach: destructuring a map's entries allocates a pair per host.
  byHost.forEach((frags, host) => {
    const raw = rawAliases(frags);
    const aliases: string[] = [];
    out.set(host, aliases);
    if (raw.length === 0) return;
    const by = frags.find((f) => f.parsed.serverAliases.length > 0)!;
    for (const a of [...new Set(raw)].sort()) {
      names.add(a);
      if (a === host) continue;
      const named = byHost.get(a)?.[0];
      if (named) {
        warnings.push({
          object: `Ingress ${by.key}`, field,
          message: `alias ${a} of host ${host} is a host of Ingress ${named.key} (namespace ${named.ref.namespace}); ignored`,
        });
        continue;
      }
      const taken = owner.get(a);
      if (taken !== undefined && taken.host !== host) {
        warnings.push({
          object: `Ingress ${by.key}`, field,
          message: `alias ${a} of host ${host} is already an alias of ${taken.host} (Ingress ${taken.by.key}); ignored`,
        });
        continue;
      }
      const wildcard = wildcardOver(a);
      const victim = wildcard === null ? undefined : byHost.get(wildcard)?.[0];
      if (wildcard !== null && victim && victim.ref.namespace !== by.ref.namespace) {
        if (owners) {
          warnings.push(refusedForOwner(by, wildcard, victim.ref, `its alias ${a}, a name under that wildcard host, is`));
          continue;
        }
        warnings.push(...takeoverWarnings(by.ref, victim.ref, field, `alias ${a} of host ${host} is served instead of the wildcard host ${wildcard}`));
      }
      owner.set(a, { host, by });
      aliases.push(a);
    }
  });
  return { byHost: out, names, warnings };
}
