// Cross-namespace takeovers: one namespace's Ingress changing where another namespace's traffic
// goes (a canary on its path, a path of its own that NGINX chooses for requests an older
// Ingress's path matches: ./path-takeovers.ts, an alias on its host or under its wildcard).
// ingress-nginx allows these silently; here each is a warning on both Ingresses (an Event in
// controller mode), and --host-ownership refuses what crosses a host's owner.
import type { IngressRef, ModelWarning } from '../core/types.js';
import type { IngressFragment } from './fragments.js';
import { DEFAULT_SERVER } from '../core/paths.js';

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

/** A host some namespace was refused under --host-ownership: those Ingresses and the warnings naming them. */
export interface ContestedHost { refused: IngressFragment[]; warnings: ModelWarning[] }

/**
 * --host-ownership for one host: its Ingresses (oldest first) of the namespace of the oldest,
 * and the others refused with a warning naming both (null when none is).
 */
export function claimHost(host: string, frags: readonly IngressFragment[]): { kept: IngressFragment[]; contested: ContestedHost | null } {
  const owner = frags[0]!;
  if (frags.every((f) => f.ref.namespace === owner.ref.namespace)) return { kept: frags as IngressFragment[], contested: null };
  const kept: IngressFragment[] = [];
  const contested: ContestedHost = { refused: [], warnings: [] };
  for (const f of frags) {
    if (f.ref.namespace === owner.ref.namespace) { kept.push(f); continue; }
    contested.refused.push(f);
    contested.warnings.push(refusedForOwner(f, host, owner.ref));
  }
  return { kept, contested };
}

/**
 * --host-ownership: each host (not the default server `_`) belongs to the namespace of its
 * oldest Ingress; other namespaces' Ingresses are taken off its list, each with a warning
 * naming both. Returns the owner namespace of each host, and the hosts some namespace was
 * refused (`contested`, in the order of `byHost`).
 */
export function claimHosts(byHost: Map<string, IngressFragment[]>, warnings: ModelWarning[]): { owners: Map<string, string>; contested: Map<string, ContestedHost> } {
  const owners = new Map<string, string>();
  const contested = new Map<string, ContestedHost>();
  byHost.forEach((frags, host) => {
    if (host === DEFAULT_SERVER || frags.length === 0) return;
    owners.set(host, frags[0]!.ref.namespace);
    const claim = claimHost(host, frags);
    if (!claim.contested) return;
    contested.set(host, claim.contested);
    byHost.set(host, claim.kept);
    for (const w of claim.contested.warnings) warnings.push(w);
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
