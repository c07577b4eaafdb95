// The Lua wire payloads, as ingress-nginx posts them: /configuration/backends (the backends)
// and /configuration/servers ({ certificates: uid → PEM, servers: hostname → uid }). Hosts
// without a certificate map to EMPTY_UID so Lua forgets any certificate it had for them.
import { wwwRedirectNames } from './www-names.js';
import type { Backend, Configuration } from './types.js';
import type { RoutesPayload } from './routes-payload.js';

export const EMPTY_UID = '-1';
/** The servers payload's key of the certificate of a Gateway HTTPS listener without hostname. */
export const GATEWAY_CATCH_ALL = '_gateway';
/**
 * The certificate of a host whose TLS Secret is missing or unusable without
 * --default-ssl-certificate: NGINX's own fallback certificate (no PEM is posted; Lua keeps the
 * fallback), and the host is still redirected to HTTPS, as in ingress-nginx.
 */
export const FALLBACK_UID = 'fallback';

export interface ServersPayload {
  certificates: Record<string, string>;
  servers: Record<string, string>;
  /** The whole map: Lua forgets the hosts it does not name (and certificates no host names); without it, a POST only adds and changes. */
  complete?: true;
  /** The Gateway API's HTTPS listeners (lua/gateway_frontend.lua); posted with every complete map, absent without any. */
  frontends?: NonNullable<Configuration['frontends']>;
}

/** What one dynamic update posts: each part present is POSTed to /configuration/<part>. */
export interface DynamicUpdate {
  backends?: readonly Backend[];
  servers?: ServersPayload;
  /** The dynamic hosts' route table (./routes-payload.ts), posted after the backends and certificates it names. */
  routes?: RoutesPayload;
}

export type DynamicPart = keyof DynamicUpdate;

/** The backends in the model's order, which is by name. */
export function backendsPayload(config: Configuration): Backend[] {
  return [...config.backends];
}

/** Elements per cached run of the serialised list. */
const RUN = 128;

/**
 * JSON.stringify for a list of backends (or any list), byte for byte, as chunks whose
 * concatenation is the text (the HTTP client writes them one after another, so the 7 MB text at
 * 10k backends is never joined). The text of each run of RUN elements is reused while the run
 * holds the same element objects: the model hands back unchanged backends as the same objects,
 * so after one endpoint change one run of thousands is serialised again. The elements must not
 * be mutated once serialised.
 */
export function createBackendsSerialiser(): (list: readonly unknown[]) => string[] {
  let prevList: readonly unknown[] = [];
  let prevRuns: string[] = [];
  return (list) => {
    const runs = new Array<string>(Math.ceil(list.length / RUN));
    const chunks: string[] = ['['];
    for (let r = 0; r < runs.length; r++) {
      const from = r * RUN;
      const to = Math.min(from + RUN, list.length);
      let same = Math.min(from + RUN, prevList.length) === to;
      for (let i = from; same && i < to; i++) same = list[i] === prevList[i];
      // The elements without the brackets: `[a,b]` → `a,b`.
      runs[r] = same ? prevRuns[r]! : JSON.stringify(list.slice(from, to)).slice(1, -1);
      if (r > 0) chunks.push(',');
      chunks.push(runs[r]!);
    }
    chunks.push(']');
    prevList = list.slice();
    prevRuns = runs;
    return chunks;
  };
}

/** Whether a certificate host name (possibly `*.example.com`) matches `host`. */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (!p.startsWith('*.')) return p === h;
  const dot = h.indexOf('.');
  return dot > 0 && h.slice(dot) === p.slice(1);
}

function sortedRecord(r: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...r.keys()].sort()) out[k] = r.get(k)!;
  return out;
}

/**
 * What changed from the map NGINX accepted last (`held`) to `next`: the hosts whose certificate
 * changed (those gone as EMPTY_UID, which Lua forgets), the PEMs they name, and the Gateway
 * listeners when they changed; null when nothing did. A sync that adds one plain host out of
 * thousands then posts nothing here. The whole map goes when the listeners went away (only a
 * complete map forgets them).
 */
export function serversDelta(held: ServersPayload, next: ServersPayload): ServersPayload | null {
  const servers: Record<string, string> = {};
  const certificates: Record<string, string> = {};
  let changed = false;
  const name = (uid: string) => {
    const pem = next.certificates[uid];
    if (pem !== undefined) certificates[uid] = pem;
  };
  for (const [host, uid] of Object.entries(next.servers)) {
    // Lua holds nothing for EMPTY_UID: a host without a certificate is the same as no host.
    if ((held.servers[host] ?? EMPTY_UID) === uid && (held.certificates[uid] ?? '') === (next.certificates[uid] ?? '')) continue;
    servers[host] = uid;
    name(uid);
    changed = true;
  }
  for (const host of Object.keys(held.servers)) {
    if (next.servers[host] !== undefined || held.servers[host] === EMPTY_UID) continue;
    servers[host] = EMPTY_UID;
    changed = true;
  }
  const frontendsChanged = JSON.stringify(held.frontends) !== JSON.stringify(next.frontends);
  if (frontendsChanged && next.frontends === undefined) return next;
  if (!changed && !frontendsChanged) return null;
  return { certificates, servers, ...(frontendsChanged ? { frontends: next.frontends } : {}) };
}

export function serversPayload(config: Configuration): ServersPayload {
  const servers = new Map<string, string>();
  const certificates = new Map<string, string>();
  const uidFor = (uid: string | null): string => {
    if (uid === null) return EMPTY_UID;
    if (uid === FALLBACK_UID) return uid;
    const cert = config.certificates[uid];
    if (!cert) return EMPTY_UID;
    certificates.set(uid, cert.pem);
    return uid;
  };
  for (const s of config.servers) {
    // A Gateway listener port's host (`host:port`): the certificate of its HTTPS listener, looked up by its port's server; plain HTTP has none.
    if (s.hostname.includes(':')) {
      if (s.certificate !== null) servers.set(s.hostname, uidFor(s.certificate));
      continue;
    }
    servers.set(s.hostname, uidFor(s.certificate));
    const cert = s.certificate ? config.certificates[s.certificate] : undefined;
    for (const alias of s.aliases) {
      const covered = cert !== undefined && cert.hosts.some((h) => hostMatches(h, alias));
      servers.set(alias, covered ? uidFor(s.certificate) : EMPTY_UID);
    }
  }
  // from-to-www: the other name of the host redirects, and needs the host's certificate for HTTPS.
  for (const [s, from] of wwwRedirectNames(config.servers)) servers.set(from, uidFor(s.certificate));
  // The certificate of a Gateway's HTTPS listener without hostname, for names no host has (lua/gateway_frontend.lua).
  if (config.frontends?.catchAll) servers.set(GATEWAY_CATCH_ALL, uidFor(config.frontends.catchAll));
  for (const [port, uid] of Object.entries(config.frontends?.portCatchAll ?? {})) servers.set(`${GATEWAY_CATCH_ALL}${port}`, uidFor(uid));
  const payload: ServersPayload = { certificates: sortedRecord(certificates), servers: sortedRecord(servers), complete: true };
  if (config.frontends) payload.frontends = config.frontends;
  return payload;
}
