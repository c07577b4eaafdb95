// Cross-namespace takeovers: one namespace's Ingress changing where another namespace's traffic
// goes (a canary on its path, a regex path matched before its paths, an alias on its host or
// under its wildcard). ingress-nginx allows these silently; here each is a warning on both
// Ingresses (an Event in controller mode), and --host-ownership refuses what crosses a host's
// owner.
import type { IngressRef, Location, ModelWarning } from './types.js';
import type { IngressFragment } from './fragments.js';
import { DEFAULT_SERVER } from './paths.js';

/** The Kubernetes Event reason of a takeover warning. */
export const TAKEOVER_REASON = 'Takeover';

const keyOf = (r: IngressRef) => `${r.namespace}/${r.name}`;

/** One warning on each Ingress, each naming the other. */
export function takeoverWarnings(taker: IngressRef, victim: IngressRef, field: string, what: string): ModelWarning[] {
  return [
    { object: `Ingress ${keyOf(taker)}`, field, reason: TAKEOVER_REASON, message: `takes traffic of Ingress ${keyOf(victim)} (namespace ${victim.namespace}): ${what}` },
    { object: `Ingress ${keyOf(victim)}`, field: 'spec.rules', reason: TAKEOVER_REASON, message: `Ingress ${keyOf(taker)} of namespace ${taker.namespace} takes traffic of this Ingress: ${what}` },
  ];
}

/**
 * On a host in regex mode every non-Exact path is `~* ^path`, tried longest first: a path of
 * another namespace that comes first and matches this path's own URI takes its requests.
 */
export function regexTakeovers(host: string, locations: readonly Location[], field: string): ModelWarning[] {
  const out: ModelWarning[] = [];
  const regexes = locations.filter((l) => l.pathType !== 'Exact' && l.ingress !== null && !l.isDefBackend);
  // The renderer's order: longest path first, stable.
  const ordered = regexes.map((l, i) => ({ l, i })).sort((a, b) => b.l.path.length - a.l.path.length || a.i - b.i).map((x) => x.l);
  const reported = new Set<string>();
  for (let i = 0; i < ordered.length; i++) {
    const taker = ordered[i]!;
    let re: RegExp;
    try {
      re = new RegExp(`^${taker.path.replace(/^\(\?i\)/, '')}`, 'i');
    } catch {
      continue;
    }
    for (let j = i + 1; j < ordered.length; j++) {
      const victim = ordered[j]!;
      if (victim.ingress!.namespace === taker.ingress!.namespace || !re.test(victim.path)) continue;
      const id = `${keyOf(taker.ingress!)}|${taker.path}|${keyOf(victim.ingress!)}|${victim.path}`;
      if (reported.has(id)) continue;
      reported.add(id);
      out.push(...takeoverWarnings(taker.ingress!, victim.ingress!, field,
        `on host ${host} the regular expression path ${taker.path} is tried before path ${victim.path} and matches it`));
    }
  }
  return out;
}

/**
 * --host-ownership: each host (not the default server `_`) belongs to the namespace of its
 * oldest Ingress; other namespaces' Ingresses are taken off its list, each with a warning
 * naming both. Returns the owner namespace of each host, and the hosts some namespace was
 * refused (`contested`).
 */
export function claimHosts(byHost: Map<string, IngressFragment[]>, warnings: ModelWarning[]): { owners: Map<string, string>; contested: Set<string> } {
  const owners = new Map<string, string>();
  const contested = new Set<string>();
  byHost.forEach((frags, host) => {
    if (host === DEFAULT_SERVER || frags.length === 0) return;
    const owner = frags[0]!;
    owners.set(host, owner.ref.namespace);
    if (frags.every((f) => f.ref.namespace === owner.ref.namespace)) return;
    contested.add(host);
    byHost.set(host, frags.filter((f) => {
      if (f.ref.namespace === owner.ref.namespace) return true;
      warnings.push(refusedForOwner(f, host, owner.ref));
      return false;
    }));
  });
  return { owners, contested };
}

/** The warning on an Ingress whose rules for `host` are refused because another namespace owns it. */
export function refusedForOwner(f: IngressFragment, host: string, owner: IngressRef, what = 'its rules for it are'): ModelWarning {
  return {
    object: `Ingress ${f.key}`, field: 'spec.rules', reason: TAKEOVER_REASON,
    message: `host ${host} belongs to namespace ${owner.namespace} (its oldest Ingress is ${keyOf(owner)}); ${what} refused (--host-ownership)`,
  };
}

/** Under --host-ownership: whether `f` may serve `host` (the default server belongs to no one). */
export function ownedBy(owners: ReadonlyMap<string, string>, host: string, f: IngressFragment): boolean {
  const owner = owners.get(host);
  return owner === undefined || owner === f.ref.namespace;
}

/** The wildcard host whose server name covers `host` (one label below it, as the server's regex does), or null. */
export function wildcardOver(host: string): string | null {
  if (host === DEFAULT_SERVER || host.startsWith('*.')) return null;
  const dot = host.indexOf('.');
  return dot > 0 ? `*${host.slice(dot)}` : null;
}

/**
 * A host under another namespace's wildcard host is served by its own server block instead of
 * the wildcard's: one warning on each Ingress, as for an alias there. Hosts are their own, so
 * --host-ownership does not refuse it.
 */
export function wildcardHostTakeovers(byHost: ReadonlyMap<string, readonly IngressFragment[]>): ModelWarning[] {
  const out: ModelWarning[] = [];
  byHost.forEach((frags, host) => {
    const wildcard = wildcardOver(host);
    const taker = frags[0];
    const victim = wildcard === null ? undefined : byHost.get(wildcard)?.[0];
    if (!taker || !victim || victim.ref.namespace === taker.ref.namespace) return;
    out.push(...takeoverWarnings(taker.ref, victim.ref, 'spec.rules', `host ${host} is served instead of the wildcard host ${wildcard}`));
  });
  return out;
}
