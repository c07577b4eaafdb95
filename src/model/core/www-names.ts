// The from-to-www other name of a server (from-to-www-redirect): one rule for the redirect
// server in nginx.conf, the certificate map the Lua side gets and the SNI routes.
import type { Server } from './types.js';

/** Why a host cannot have a www twin: a wildcard, or a twin longer than a DNS name may be. */
export function fromToWWWProblem(host: string): string | null {
  if (host.startsWith('*.')) return `host ${host} is a wildcard`;
  if (!host.startsWith('www.') && host.length + 4 > 253) return `www.${host.slice(0, 40)}… would be longer than 253 characters`;
  return null;
}

/**
 * from-to-www-redirect: the other name of each server that asks for it (`www.` added or taken
 * off), unless that name is already a server or an alias. The redirect server (nginx.conf) and
 * the certificate map (Lua) both use this one rule.
 */
export function wwwRedirectNames(servers: readonly Server[]): Map<Server, string> {
  const out = new Map<Server, string>();
  let taken: Set<string> | null = null;
  for (const s of servers) {
    if (!s.redirectFromToWWW || s.hostname === '_' || fromToWWWProblem(s.hostname) !== null) continue;
    taken ??= new Set(servers.flatMap((x) => [x.hostname, ...x.aliases]));
    const other = s.hostname.startsWith('www.') ? s.hostname.slice(4) : `www.${s.hostname}`;
    if (!taken.has(other)) out.set(s, other);
  }
  return out;
}
